! np: 4
! vms: v2
! A periodic 2-D Cartesian halo exchange (Cart_create with LOGICAL periods,
! Cart_shift, Sendrecv of a column type) and one-sided put/get with fence,
! through the `mpi` module.
program t_f_halo
  use mpi
  implicit none
  integer, parameter :: n = 4
  integer :: ierr, rank, size, cart, dims(2), coords(2), ncoords(2), i, j
  integer :: north, south, west, east, col, win, left
  logical :: periods(2), gp(2)
  integer :: a(0:n+1, 0:n+1), ring(4), got
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  dims = 0
  call MPI_Dims_create(size, 2, dims, ierr)
  periods = [.true., .true.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Comm_rank(cart, rank, ierr)
  call MPI_Cart_get(cart, 2, dims, gp, coords, ierr)
  call check(all(gp), 'MPI_Cart_get: periods are not .TRUE.')
  call MPI_Cart_shift(cart, 0, 1, north, south, ierr)
  call MPI_Cart_shift(cart, 1, 1, west, east, ierr)

  ! Interior a(1:n,1:n) = rank; halos filled from the neighbours.
  a = -1
  a(1:n, 1:n) = rank
  call MPI_Type_vector(n, 1, n + 2, MPI_INTEGER, col, ierr)
  call MPI_Type_commit(col, ierr)
  ! Rows are contiguous in the first index: a(1:n, j) is one column of memory.
  call MPI_Sendrecv(a(1, n), n, MPI_INTEGER, east, 1, a(1, 0), n, MPI_INTEGER, west, 1, &
                    cart, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(a(1, 1), n, MPI_INTEGER, west, 2, a(1, n + 1), n, MPI_INTEGER, east, 2, &
                    cart, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(a(n, 1), 1, col, south, 3, a(0, 1), 1, col, north, 3, &
                    cart, MPI_STATUS_IGNORE, ierr)
  call MPI_Sendrecv(a(1, 1), 1, col, north, 4, a(n + 1, 1), 1, col, south, 4, &
                    cart, MPI_STATUS_IGNORE, ierr)
  call MPI_Type_free(col, ierr)
  call check(all(a(1:n, 0) == west) .and. all(a(1:n, n + 1) == east), 'west/east halo')
  call check(all(a(0, 1:n) == north) .and. all(a(n + 1, 1:n) == south), 'north/south halo')
  call MPI_Cart_coords(cart, east, 2, ncoords, ierr)
  call check(ncoords(1) == coords(1) .and. ncoords(2) == mod(coords(2) + 1, dims(2)), &
             'east neighbour coordinates')

  ! One-sided: each rank puts its rank into ring(2) of the next rank,
  ! then gets ring(2) of the previous one back after a fence.
  ring = 0
  wsize = 4 * 4
  call MPI_Win_create(ring, wsize, 4, MPI_INFO_NULL, cart, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  disp = 1
  call MPI_Put(rank, 1, MPI_INTEGER, mod(rank + 1, size), disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  left = mod(rank + size - 1, size)
  call check(ring(2) == left, 'MPI_Put did not land in ring(2)')
  got = -1
  call MPI_Get(got, 1, MPI_INTEGER, left, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(got == mod(left + size - 1, size), 'MPI_Get read the wrong value')
  call MPI_Win_free(win, ierr)
  call MPI_Comm_free(cart, ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'No Errors'
contains
  include 't_check.inc'
end program
