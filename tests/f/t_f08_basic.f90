! np: 2 4
! vms: v2
! The mpi_f08 module: handle types and their comparison, TYPE(MPI_Status)
! components, optional ierror, MPI_IN_PLACE, MPI_STATUSES_IGNORE, a derived
! type, MPI_Comm_split, a user reduction with the f08 callback signature,
! and an error class returned under MPI_ERRORS_RETURN.
module t_f08_ops
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
contains
  ! Keeps the element of larger magnitude (negatives win ties of size).
  subroutine maxabs(invec, inoutvec, len, datatype)
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    integer :: i
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    do i = 1, len
      if (abs(a(i)) > abs(b(i))) b(i) = a(i)
    end do
  end subroutine
end module

program t_f08_basic
  use mpi_f08
  use t_f08_ops
  implicit none
  integer :: ierr, rank, size, i, n, peer, cls
  integer :: buf(6), got(6), tot(2)
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: pair
  type(MPI_Comm) :: half, dup
  type(MPI_Op) :: op

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_size with ierror')
  peer = ieor(rank, 1)

  if (peer < size) then
    buf = [(rank * 100 + i, i = 1, 6)]
    got = -1
    call MPI_Irecv(got, 6, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(buf, 4, MPI_INTEGER, peer, 5, MPI_COMM_WORLD, reqs(2))
    call MPI_Wait(reqs(1), st)
    call MPI_Get_count(st, MPI_INTEGER, n)
    call check(st%MPI_SOURCE == peer .and. st%MPI_TAG == 5 .and. n == 4, 'status of MPI_Wait')
    call check(all(got(1:4) == [(peer * 100 + i, i = 1, 4)]) .and. all(got(5:6) == -1), &
               'MPI_Irecv data')
    call MPI_Waitall(1, reqs(2:2), MPI_STATUSES_IGNORE)
    call check(reqs(2) == MPI_REQUEST_NULL .and. reqs(1) == MPI_REQUEST_NULL, &
               'completed requests are not MPI_REQUEST_NULL')

    ! Every other integer, as a vector type.
    call MPI_Type_vector(3, 1, 2, MPI_INTEGER, pair)
    call MPI_Type_commit(pair)
    got = 0
    call MPI_Sendrecv(buf, 1, pair, peer, 6, got, 1, pair, peer, 6, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE)
    call check(all(got(1:5:2) == [(peer * 100 + i, i = 1, 5, 2)]) .and. all(got(2:6:2) == 0), &
               'vector type')
    call MPI_Type_free(pair)
    call check(pair == MPI_DATATYPE_NULL, 'MPI_Type_free handle')
  end if

  tot = [rank, 1]
  call MPI_Allreduce(MPI_IN_PLACE, tot, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(tot(1) == size * (size - 1) / 2 .and. tot(2) == size, 'MPI_Allreduce in place')

  call MPI_Op_create(maxabs, .true., op)
  tot(1) = -rank
  call MPI_Allreduce(tot(1:1), tot(2:2), 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(tot(2) == -(size - 1), 'f08 user reduction')
  call MPI_Op_free(op)

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, n)
  call check(n == (size + 1 - mod(rank, 2)) / 2, 'MPI_Comm_split size')
  call MPI_Comm_dup(half, dup)
  call check(dup /= half .and. half /= MPI_COMM_NULL, 'handle comparison')
  call MPI_Comm_free(dup)
  call MPI_Comm_free(half)
  call check(half == MPI_COMM_NULL, 'MPI_Comm_free handle')

  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Send(buf, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_RANK, 'bad rank is not MPI_ERR_RANK')

  call MPI_Finalize()
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
