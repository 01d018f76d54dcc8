! np: 2 4
! vms: v2
! MPI-IO through the `mpi` module: open with a file name padded with
! blanks, a strided view (each rank's blocks of N integers interleaved),
! write_at_all, seek + write through the individual pointer, get_position,
! get_view's datarep string, get_size, the whole file read back and checked
! by every rank, close setting MPI_FILE_NULL; a view of a sequential file
! at MPI_DISPLACEMENT_CURRENT; opening a missing file without
! MPI_MODE_CREATE gives MPI_ERR_NO_SUCH_FILE naming MPI_File_open.
program t_f_io
  use mpi
  implicit none
  integer, parameter :: N = 4
  integer :: ierr, rank, size, fh, blk, ftype, gtype, etype, cls, mlen, i, p, b, r
  integer :: sfh, setype, sftype
  integer :: st(MPI_STATUS_SIZE), cnt, buf(N)
  integer, allocatable :: all(:)
  integer(kind=MPI_OFFSET_KIND) :: disp, pos, fsize
  integer(kind=MPI_ADDRESS_KIND) :: lb, ext
  character(len=200) :: fname
  character(len=MPI_MAX_DATAREP_STRING) :: rep
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  ! One name for the job, left in the variable with trailing blanks.
  if (rank == 0) write (fname, '(a,i0,a)') '/tmp/vmpi_t_f_io_', getpid(), '.dat'
  call MPI_Bcast(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh /= MPI_FILE_NULL, 'open')
  call MPI_Type_contiguous(N, MPI_INTEGER, blk, ierr)
  lb = 0
  ext = 4 * N * size
  call MPI_Type_create_resized(blk, lb, ext, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  disp = 4 * N * rank
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'set_view')

  ! Block 0 collectively at offset 0, block 1 through the individual pointer.
  buf = [(rank * 1000 + i, i = 1, N)]
  pos = 0
  call MPI_File_write_at_all(fh, pos, buf, N, MPI_INTEGER, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
  call check(ierr == MPI_SUCCESS .and. cnt == N, 'write_at_all count')
  pos = N
  call MPI_File_seek(fh, pos, MPI_SEEK_SET, ierr)
  buf = [(rank * 1000 + 100 + i, i = 1, N)]
  call MPI_File_write(fh, buf, N, MPI_INTEGER, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
  call check(ierr == MPI_SUCCESS .and. cnt == N, 'write count')
  call MPI_File_get_position(fh, pos, ierr)
  call check(pos == 2 * N, 'get_position after write')
  call MPI_File_get_view(fh, disp, etype, gtype, rep, ierr)
  call check(disp == 4 * N * rank .and. etype == MPI_INTEGER .and. rep == 'native', &
             'get_view: '//trim(rep))
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)

  ! Every rank reads the whole file through a plain view and checks it.
  call MPI_File_get_size(fh, fsize, ierr)
  call check(fsize == 4 * 2 * N * size, 'get_size')
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native  ', MPI_INFO_NULL, ierr)
  allocate(all(2 * N * size))
  all = -1
  pos = 0
  call MPI_File_read_at_all(fh, pos, all, 2 * N * size, MPI_INTEGER, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
  call check(ierr == MPI_SUCCESS .and. cnt == 2 * N * size, 'read_at_all count')
  do p = 0, 2 * N * size - 1
    b = p / (N * size)
    r = mod(p, N * size) / N
    call check(all(p + 1) == r * 1000 + 100 * b + mod(p, N) + 1, 'file contents')
  end do
  deallocate(all)

  ! A sequential file: the view from where the shared pointer stands after
  ! an ordered write (MPI_DISPLACEMENT_CURRENT, of MPI_OFFSET_KIND: the
  ! binding reads 8 bytes).
  call MPI_File_open(MPI_COMM_WORLD, trim(fname)//'.seq', MPI_MODE_CREATE + MPI_MODE_WRONLY + &
                     MPI_MODE_SEQUENTIAL + MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, sfh, ierr)
  call check(ierr == MPI_SUCCESS, 'open sequential')
  buf(1) = rank + 7
  call MPI_File_write_ordered(sfh, buf, 1, MPI_INTEGER, st, ierr)
  call check(ierr == MPI_SUCCESS, 'write_ordered')
  call MPI_File_set_view(sfh, MPI_DISPLACEMENT_CURRENT, MPI_INTEGER, MPI_INTEGER, 'native', &
                         MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'set_view at MPI_DISPLACEMENT_CURRENT')
  call MPI_File_get_view(sfh, disp, setype, sftype, rep, ierr)
  call check(disp == 4 * size, 'view displacement after the ordered write')
  call MPI_File_close(sfh, ierr)

  call MPI_File_close(fh, ierr)
  call check(ierr == MPI_SUCCESS .and. fh == MPI_FILE_NULL, 'close')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! A missing file without MPI_MODE_CREATE: MPI_ERR_NO_SUCH_FILE (files
  ! return errors by default).
  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_NO_SUCH_FILE .and. fh == MPI_FILE_NULL, 'missing file')
  call MPI_Error_string(ierr, msg, mlen, i)
  call check(index(msg, 'MPI_File_open') > 0, 'message: '//trim(msg))

  call MPI_Type_free(ftype, ierr)
  call MPI_Type_free(gtype, ierr)
  call MPI_Type_free(blk, ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
