! np: 2 4
! vms: v2
! MPI-IO through `mpi_f08`: TYPE(MPI_File), each rank writes its block at
! an explicit offset (write_at_all) and a second block through a view and
! the individual pointer, every rank reads the whole file back; a missing
! file gives MPI_ERR_NO_SUCH_FILE and leaves MPI_FILE_NULL; a view of a
! sequential file at MPI_DISPLACEMENT_CURRENT.
program t_f08_io
  use mpi_f08
  implicit none
  integer, parameter :: N = 3
  integer :: ierr, rank, size, cnt, cls, i, p
  type(MPI_File) :: fh, sfh
  type(MPI_Datatype) :: setype, sftype
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  type(MPI_Status) :: st
  integer :: buf(N)
  integer, allocatable :: all(:)
  integer(kind=MPI_OFFSET_KIND) :: off
  character(len=200) :: fname

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  if (rank == 0) write (fname, '(a,i0,a)') '/tmp/vmpi_t_f08_io_', getpid(), '.dat'
  call MPI_Bcast(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD)

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'open')
  buf = [(rank * 10 + i, i = 1, N)]
  off = 4 * N * rank
  call MPI_File_write_at_all(fh, off, buf, N, MPI_INTEGER, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == N, 'write_at_all count')
  ! The second half of the file through a view starting there.
  off = 4 * N * (size + rank)
  call MPI_File_set_view(fh, off, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL)
  buf = -buf
  call MPI_File_write(fh, buf, N, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'write')
  call MPI_File_close(fh)
  call check(fh == MPI_FILE_NULL, 'close')
  call MPI_Barrier(MPI_COMM_WORLD)

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY + MPI_MODE_DELETE_ON_CLOSE, &
                     MPI_INFO_NULL, fh)
  allocate(all(2 * N * size))
  call MPI_File_read_all(fh, all, 2 * N * size, MPI_INTEGER, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == 2 * N * size, 'read_all count')
  do p = 0, N * size - 1
    call check(all(p + 1) == (p / N) * 10 + mod(p, N) + 1, 'first half')
    call check(all(N * size + p + 1) == -all(p + 1), 'second half')
  end do
  deallocate(all)
  call MPI_File_close(fh)
  call MPI_Barrier(MPI_COMM_WORLD)

  ! A sequential file's view from where the shared pointer stands
  ! (MPI_DISPLACEMENT_CURRENT is of MPI_OFFSET_KIND, as the argument).
  call MPI_File_open(MPI_COMM_WORLD, trim(fname)//'.seq', MPI_MODE_CREATE + MPI_MODE_WRONLY + &
                     MPI_MODE_SEQUENTIAL + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, sfh, ierr)
  call check(ierr == MPI_SUCCESS, 'open sequential')
  buf(1) = rank
  call MPI_File_write_ordered(sfh, buf, 1, MPI_INTEGER, MPI_STATUS_IGNORE)
  call MPI_File_set_view(sfh, MPI_DISPLACEMENT_CURRENT, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'set_view at MPI_DISPLACEMENT_CURRENT')
  call MPI_File_get_view(sfh, off, setype, sftype, rep)
  call check(off == 4 * size, 'view displacement after the ordered write')
  call MPI_File_close(sfh)

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_NO_SUCH_FILE .and. fh == MPI_FILE_NULL, 'missing file')

  call MPI_Finalize()
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
