! np: 1 2
! vms: v2
! MPI_Register_datarep through the `mpi` module: "neg" stores each
! INTEGER negated (Fortran conversion and extent functions, which check
! they get extra_state, 42, and count their calls); the file read with "native" holds the
! negated values and "neg" gives them back; "fnull" registered with
! MPI_CONVERSION_FN_NULL moves the native bytes; get_type_extent; a name
! registered twice gives MPI_ERR_DUP_DATAREP naming MPI_Register_datarep.
module t_f_io_datarep_fns
  use mpi
  implicit none
  integer :: calls = 0
contains
  subroutine neg_write(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra /= 42) ierror = MPI_ERR_TYPE
    do i = 1, count
      filebuf(i) = -userbuf(position + i)
    end do
    calls = calls + 1
  end subroutine

  subroutine neg_read(userbuf, datatype, count, filebuf, position, extra, ierror)
    integer :: userbuf(*), filebuf(*), datatype, count, ierror, i
    integer(kind=MPI_OFFSET_KIND) :: position
    integer(kind=MPI_ADDRESS_KIND) :: extra
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra /= 42) ierror = MPI_ERR_TYPE
    do i = 1, count
      userbuf(position + i) = -filebuf(i)
    end do
    calls = calls + 1
  end subroutine

  subroutine int_extent(datatype, extent, extra, ierror)
    integer :: datatype, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extent, extra
    extent = 4
    ierror = MPI_SUCCESS
    if (datatype /= MPI_INTEGER .or. extra /= 42) ierror = MPI_ERR_TYPE
  end subroutine
end module

program t_f_io_datarep
  use mpi
  use t_f_io_datarep_fns
  implicit none
  integer, parameter :: N = 6
  integer :: ierr, rank, size, fh, cls, mlen, i, buf(N), back(N)
  integer :: st(MPI_STATUS_SIZE)
  integer(kind=MPI_OFFSET_KIND) :: pos
  integer(kind=MPI_ADDRESS_KIND) :: extra, ext
  character(len=200) :: fname
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (rank == 0) write (fname, '(a,i0,a)') '/tmp/vmpi_t_f_io_datarep_', getpid(), '.dat'
  call MPI_Bcast(fname, len(fname), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  extra = 42
  call MPI_Register_datarep('neg', neg_read, neg_write, int_extent, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'register neg')
  call MPI_Register_datarep('fnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, &
                            int_extent, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'register fnull')
  call MPI_Register_datarep('neg', neg_read, neg_write, int_extent, extra, ierr)
  call MPI_Error_class(ierr, cls, i)
  call check(cls == MPI_ERR_DUP_DATAREP, 'neg registered twice')
  call MPI_Error_string(ierr, msg, mlen, i)
  call check(index(msg, 'MPI_Register_datarep') > 0, 'message: '//trim(msg))

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  pos = 0
  call MPI_File_set_view(fh, pos, MPI_INTEGER, MPI_INTEGER, 'neg', MPI_INFO_NULL, ierr)
  call check(ierr == MPI_SUCCESS, 'set_view neg')
  call MPI_File_get_type_extent(fh, MPI_INTEGER, ext, ierr)
  call check(ierr == MPI_SUCCESS .and. ext == 4, 'get_type_extent')
  buf = [(rank * 100 + i, i = 1, N)]
  pos = N * rank
  call MPI_File_write_at(fh, pos, buf, N, MPI_INTEGER, st, ierr)
  call check(ierr == MPI_SUCCESS .and. calls == 1, 'write_at through neg')
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_File_read_at(fh, pos, back, N, MPI_INTEGER, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(back == buf) .and. calls == 2, 'read back via neg')

  pos = 0
  call MPI_File_set_view(fh, pos, MPI_INTEGER, MPI_INTEGER, 'fnull', MPI_INFO_NULL, ierr)
  pos = N * rank
  call MPI_File_read_at(fh, pos, back, N, MPI_INTEGER, st, ierr)
  call check(ierr == MPI_SUCCESS .and. all(back == -buf) .and. calls == 2, &
             'fnull reads the stored (negated) integers')

  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
