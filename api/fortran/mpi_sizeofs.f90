! MPI_SIZEOF (MPI-3.1 17.1.9) for the `mpi` module: a generic over the
! intrinsic types. Module and procedure names are MPICH's, so a program
! built with MPICH's mpi module finds them in libmpichfort.so.12 as well.
! Written by hand; the library compiles it (its object, unlike mpi.f90's,
! has code).
module mpi_sizeofs
  implicit none
  private
  public :: mpi_sizeof
  interface mpi_sizeof
    module procedure mpi_sizeof_ch, mpi_sizeof_chv, mpi_sizeof_cx, mpi_sizeof_cxv, &
        mpi_sizeof_d, mpi_sizeof_dv, mpi_sizeof_i, mpi_sizeof_iv, &
        mpi_sizeof_i1, mpi_sizeof_i1v, mpi_sizeof_i2, mpi_sizeof_i2v, &
        mpi_sizeof_i8, mpi_sizeof_i8v, mpi_sizeof_l, mpi_sizeof_lv, &
        mpi_sizeof_r, mpi_sizeof_rv
  end interface
contains
  subroutine mpi_sizeof_ch(x, size, ierror)
    character(len=1) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_ch

  subroutine mpi_sizeof_chv(x, size, ierror)
    character(len=1), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_chv

  subroutine mpi_sizeof_cx(x, size, ierror)
    complex(kind=4) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_cx

  subroutine mpi_sizeof_cxv(x, size, ierror)
    complex(kind=4), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_cxv

  subroutine mpi_sizeof_d(x, size, ierror)
    real(kind=8) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_d

  subroutine mpi_sizeof_dv(x, size, ierror)
    real(kind=8), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_dv

  subroutine mpi_sizeof_i(x, size, ierror)
    integer :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_i

  subroutine mpi_sizeof_iv(x, size, ierror)
    integer, dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_iv

  subroutine mpi_sizeof_i1(x, size, ierror)
    integer(kind=1) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_i1

  subroutine mpi_sizeof_i1v(x, size, ierror)
    integer(kind=1), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_i1v

  subroutine mpi_sizeof_i2(x, size, ierror)
    integer(kind=2) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_i2

  subroutine mpi_sizeof_i2v(x, size, ierror)
    integer(kind=2), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_i2v

  subroutine mpi_sizeof_i8(x, size, ierror)
    integer(kind=8) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_i8

  subroutine mpi_sizeof_i8v(x, size, ierror)
    integer(kind=8), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_i8v

  subroutine mpi_sizeof_l(x, size, ierror)
    logical :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_l

  subroutine mpi_sizeof_lv(x, size, ierror)
    logical, dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_lv

  subroutine mpi_sizeof_r(x, size, ierror)
    real(kind=4) :: x
    integer :: size, ierror
    size = storage_size(x) / 8
    ierror = 0
  end subroutine mpi_sizeof_r

  subroutine mpi_sizeof_rv(x, size, ierror)
    real(kind=4), dimension(*) :: x
    integer :: size, ierror
    size = storage_size(x(1)) / 8
    ierror = 0
  end subroutine mpi_sizeof_rv
end module mpi_sizeofs
