! np: 3 4
! vms: v2
! Collectives through mpif.h in fixed form: MPI_IN_PLACE, a user
! reduction from MPI_Op_create, an attribute copied and deleted
! through Fortran callbacks, and a predefined attribute (MPI_TAG_UB)
! as a value.
      program tfcoll
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, i, op, key, dup
      integer buf(4), tot(4)
      integer(kind=MPI_ADDRESS_KIND) val, extra
      logical flag
      integer ncopy, ndel
      common /cnt/ ncopy, ndel
      external maxabs, cpfn, delfn
      call MPI_Init(ierr)
      call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
      call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
      do i = 1, 4
        buf(i) = rank + i
      end do
      call MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      do i = 1, 4
        if (buf(i) .ne. size * (size - 1) / 2 + size * i)
     &     call fail(rank, 'MPI_Allreduce in place')
      end do
      buf(1) = rank
      call MPI_Bcast(buf, 1, MPI_INTEGER, size - 1, MPI_COMM_WORLD,
     &     ierr)
      if (buf(1) .ne. size - 1) call fail(rank, 'MPI_Bcast')
C     The user operation keeps the larger magnitude: -rank wins.
      call MPI_Op_create(maxabs, .true., op, ierr)
      buf(1) = -rank
      call MPI_Reduce(buf, tot, 1, MPI_INTEGER, op, 0, MPI_COMM_WORLD,
     &     ierr)
      if (rank .eq. 0 .and. tot(1) .ne. -(size - 1))
     &     call fail(rank, 'MPI_Op_create reduction')
      call MPI_Op_free(op, ierr)
      if (op .ne. MPI_OP_NULL) call fail(rank, 'MPI_Op_free handle')
C     Attributes: MPI_Comm_dup calls the copy callback, MPI_Comm_free
C     the delete callback, each with Fortran arguments.
      ncopy = 0
      ndel = 0
      extra = 7
      call MPI_Comm_create_keyval(cpfn, delfn, key, extra, ierr)
      val = 41
      call MPI_Comm_set_attr(MPI_COMM_WORLD, key, val, ierr)
      call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
      if (ncopy .ne. 1) call fail(rank, 'copy callback not called')
      call MPI_Comm_get_attr(dup, key, val, flag, ierr)
      if (.not. flag .or. val .ne. 42)
     &     call fail(rank, 'copied attribute is not 42')
      call MPI_Comm_free(dup, ierr)
      if (ndel .ne. 1) call fail(rank, 'delete callback not called')
      call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
      call MPI_Comm_free_keyval(key, ierr)
      call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag,
     &     ierr)
      if (.not. flag .or. val .lt. 32767)
     &     call fail(rank, 'MPI_TAG_UB is not a value >= 32767')
      call MPI_Finalize(ierr)
      if (rank .eq. 0) print *, 'No Errors'
      end

      subroutine maxabs(invec, inout, n, dtype)
      integer n, dtype, i
      integer invec(n), inout(n)
      do i = 1, n
        if (abs(invec(i)) .gt. abs(inout(i))) inout(i) = invec(i)
      end do
      end

      subroutine cpfn(comm, key, extra, vin, vout, flag, ierr)
      include 'mpif.h'
      integer comm, key, ierr
      integer(kind=MPI_ADDRESS_KIND) extra, vin, vout
      logical flag
      integer ncopy, ndel
      common /cnt/ ncopy, ndel
      if (extra .ne. 7) print *, 'copy callback: extra_state', extra
      ncopy = ncopy + 1
      vout = vin + 1
      flag = .true.
      ierr = MPI_SUCCESS
      end

      subroutine delfn(comm, key, val, extra, ierr)
      include 'mpif.h'
      integer comm, key, ierr
      integer(kind=MPI_ADDRESS_KIND) val, extra
      integer ncopy, ndel
      common /cnt/ ncopy, ndel
      if (val .eq. 42) ndel = ndel + 1
      ierr = MPI_SUCCESS
      end

      subroutine fail(rank, what)
      include 'mpif.h'
      integer rank, ierr
      character*(*) what
      print *, 'rank', rank, ': check failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end
