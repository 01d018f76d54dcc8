! np: 2 4
! vms: v2
! Point-to-point through the `mpi` module: status contents, MPI_Get_count,
! MPI_STATUS_IGNORE, a strided derived type, LOGICAL and string arguments,
! 1-based request indices, info keys and values (blanks stripped, no value
! written when the key is missing), MPI_SIZEOF, MPI_Aint_add/diff, and an
! error returned (with its message) under MPI_ERRORS_RETURN.
program t_f_p2p
  use mpi
  implicit none
  integer :: ierr, rank, size, peer, n, i, vec, cls, len
  integer :: st(MPI_STATUS_SIZE), buf(8), got(8)
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: cname
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=MPI_MAX_INFO_VAL) :: val
  integer :: info, sz, reqs(3), idx, idx2
  double precision :: d

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  peer = ieor(rank, 1)

  ! Pairs (0,1), (2,3): the even rank sends 5 of 8 integers with tag 10+rank.
  if (peer < size) then
    if (mod(rank, 2) == 0) then
      buf = [(100 * rank + i, i = 1, 8)]
      call MPI_Send(buf, 5, MPI_INTEGER, peer, 10 + rank, MPI_COMM_WORLD, ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_Send returned an error')
    else
      got = -1
      call MPI_Recv(got, 8, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_INTEGER, n, ierr)
      call check(st(MPI_SOURCE) == peer, 'status MPI_SOURCE is not the sender')
      call check(st(MPI_TAG) == 10 + peer, 'status MPI_TAG is not the tag sent')
      call check(n == 5, 'MPI_Get_count is not 5')
      call check(all(got(1:5) == [(100 * peer + i, i = 1, 5)]) .and. all(got(6:8) == -1), &
                 'received data differ from what was sent')
    end if
  end if

  ! A vector type (every other integer) both ways with Sendrecv and
  ! MPI_STATUS_IGNORE; a probe first sees the message (LOGICAL flag).
  call MPI_Type_vector(4, 1, 2, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  if (peer < size) then
    buf = [(rank * 10 + i, i = 1, 8)]
    got = 0
    call MPI_Send(buf, 1, vec, peer, 3, MPI_COMM_WORLD, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(peer, 3, MPI_COMM_WORLD, flag, st, ierr)
    end do
    call check(st(MPI_SOURCE) == peer, 'MPI_Iprobe status names another source')
    call MPI_Recv(got, 1, vec, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(got(1:7:2) == [(peer * 10 + i, i = 1, 7, 2)]) .and. all(got(2:8:2) == 0), &
               'vector type moved the wrong elements')
  end if
  call MPI_Type_free(vec, ierr)
  call check(vec == MPI_DATATYPE_NULL, 'MPI_Type_free did not reset the handle')

  ! Strings: the name set (blank-padded) comes back trimmed and padded.
  call MPI_Comm_set_name(MPI_COMM_WORLD, 'fortran world   ', ierr)
  cname = 'x'
  call MPI_Comm_get_name(MPI_COMM_WORLD, cname, len, ierr)
  call check(cname == 'fortran world' .and. len == 13, 'MPI_Comm_get_name: '//trim(cname))

  ! Request indices count from 1; MPI_UNDEFINED when none is active.
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(got, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Isend(buf, 1, MPI_INTEGER, rank, 9, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call MPI_Waitany(3, reqs, idx2, st, ierr)
  call check(min(idx, idx2) == 2 .and. max(idx, idx2) == 3, 'MPI_Waitany indices are not 2 and 3')
  call MPI_Waitany(3, reqs, idx, st, ierr)
  call check(idx == MPI_UNDEFINED, 'MPI_Waitany with no active request')

  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, '  color ', ' blue  ', ierr)
  call MPI_Info_get(info, 'color', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(flag .and. val == 'blue', 'MPI_Info_get: "'//trim(val)//'"')
  val = 'untouched'
  call MPI_Info_get(info, 'size', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(.not. flag .and. val == 'untouched', 'MPI_Info_get of a missing key')
  call MPI_Info_free(info, ierr)
  call MPI_Sizeof(d, sz, ierr)
  call check(sz == 8 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof of a double precision')
  call MPI_Sizeof(buf, sz, ierr)
  call check(sz == 4, 'MPI_Sizeof of an integer array')
  call check(MPI_Aint_add(1000_MPI_ADDRESS_KIND, 24_MPI_ADDRESS_KIND) == 1024 .and. &
             MPI_Aint_diff(1000_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND) == 992, &
             'MPI_Aint_add or MPI_Aint_diff')

  ! A bad destination returns MPI_ERR_RANK with a message naming MPI_Send.
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(buf, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'bad rank is not MPI_ERR_RANK')
  call MPI_Send(buf, 1, MPI_INTEGER, size + 5, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_string(ierr, msg, len, ierr)
  call check(index(msg, 'MPI_Send') > 0 .and. len == len_trim(msg), 'message: '//trim(msg))

  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
