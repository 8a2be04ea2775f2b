! Copyright (c) 2026 The pnbc developers
! SPDX-License-Identifier: BSD-3-Clause
!
! ompi5_f08.f90: a persistent collective and partitioned communication from
! Fortran through Open MPI 5.0's "use mpi_f08" names (MPI_Allreduce_init,
! MPI_Psend_init, MPI_Precv_init, MPI_Pready, MPI_Parrived), built with plain
! mpifort.  Whichever component Open MPI selects serves the calls; the cases
! (cases.d/ompi5.sh) check from the verbose output which one did.
!   - MPI_Allreduce_init (sum) at two counts, started 5 times each with new
!     data, every element checked against the sum computed locally;
!   - each rank sends NPART partitions to its right neighbour and receives
!     from its left one, 10 rounds; the sender marks partitions ready in
!     reverse order; on even rounds the receiver polls MPI_Parrived and
!     checks each partition as soon as flag is true, on odd rounds it only
!     waits; every element is checked after MPI_Wait too.
! Open MPI 5.0.7's mpi_f08 module declares MPI_Psend_init and MPI_Precv_init
! without the info argument (MPI-4.0 errata) while the library's routines
! take it: a call as the standard writes it does not compile, one as the
! module writes it crashes.  psend_init_std / precv_init_std below call the
! library's MPI_Psend_init_f08 / MPI_Precv_init_f08 with the standard's
! arguments through an interface of their own.
! Prints "PASS ompi5_f08 (np N)" on rank 0, "FAIL ..." lines otherwise
! (exit status 1).
module ompi5_f08_std
  use mpi_f08, only : MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request, MPI_COUNT_KIND
  implicit none
  private
  public :: psend_init_std, precv_init_std
  ! the library's MPI_Psend_init_f08 and MPI_Precv_init_f08 as they are
  abstract interface
    subroutine p_init(buf, partitions, count, datatype, peer, tag, comm, info, request, ierror)
      import :: MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request, MPI_COUNT_KIND
      integer, intent(in), asynchronous :: buf(*)
      integer, intent(in) :: partitions, peer, tag
      integer(MPI_COUNT_KIND), intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Info), intent(in) :: info
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine p_init
  end interface
  procedure(p_init) :: MPI_Psend_init_f08, MPI_Precv_init_f08
contains
  ! MPI_Psend_init with the standard's arguments (see the header comment)
  subroutine psend_init_std(buf, partitions, count, datatype, dest, tag, comm, info, request)
    integer, intent(in), asynchronous :: buf(*)
    integer, intent(in) :: partitions, dest, tag
    integer(MPI_COUNT_KIND), intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(MPI_Request), intent(out) :: request
    call MPI_Psend_init_f08(buf, partitions, count, datatype, dest, tag, comm, info, request)
  end subroutine psend_init_std

  ! MPI_Precv_init with the standard's arguments
  subroutine precv_init_std(buf, partitions, count, datatype, source, tag, comm, info, request)
    integer, intent(in), asynchronous :: buf(*)
    integer, intent(in) :: partitions, source, tag
    integer(MPI_COUNT_KIND), intent(in) :: count
    type(MPI_Datatype), intent(in) :: datatype
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Info), intent(in) :: info
    type(MPI_Request), intent(out) :: request
    call MPI_Precv_init_f08(buf, partitions, count, datatype, source, tag, comm, info, request)
  end subroutine precv_init_std
end module ompi5_f08_std

program ompi5_f08
  use mpi_f08
  use ompi5_f08_std
  implicit none
  integer, parameter :: nstarts = 5, nrounds = 10, npart = 6, pcount = 100
  integer, parameter :: poison = -1515870810
  integer :: rank, nprocs, nerr, total, ic
  integer, parameter :: counts(2) = [7, 5000]

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  nerr = 0

  do ic = 1, size(counts)
    call check_allreduce(counts(ic))
  end do
  call check_partitioned()

  call MPI_Allreduce(nerr, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write (*, '(a,i0)') 'inits per rank: allreduce_init=', size(counts)
  if (rank == 0) write (*, '(a)') 'part inits per rank: psend_init=1 precv_init=1'
  if (rank == 0) then
    if (total == 0) then
      write (*, '(a,i0,a)') 'PASS ompi5_f08 (np ', nprocs, ')'
    else
      write (*, '(a,i0,a,i0,a)') 'FAIL ompi5_f08 (np ', nprocs, '): ', total, ' check(s) failed'
    end if
  end if
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  ! element i (0-based) of rank r's contribution in start s
  integer function cval(s, r, i)
    integer, intent(in) :: s, r, i
    cval = mod(s * 7919 + r * 104729 + i * 31, 1000003) - 500000
  end function cval

  ! element i (0-based) of the message rank r sends in round s
  integer function pval(s, r, i)
    integer, intent(in) :: s, r, i
    pval = (s + 1) * 1000003 + r * 7907 + i * 13
  end function pval

  subroutine report(msg)
    character(len=*), intent(in) :: msg
    nerr = nerr + 1
    if (nerr <= 12) write (*, '(a,i0,a,a)') 'FAIL rank ', rank, ': ', msg
  end subroutine report

  subroutine check_allreduce(n)
    integer, intent(in) :: n
    integer, allocatable, asynchronous :: sbuf(:), rbuf(:)
    type(MPI_Request) :: req
    integer :: s, i, r, want, ierr
    character(len=160) :: msg

    allocate (sbuf(0:n - 1), rbuf(0:n - 1))
    call MPI_Allreduce_init(sbuf, rbuf, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                            MPI_INFO_NULL, req, ierr)
    if (ierr /= MPI_SUCCESS) call report('MPI_Allreduce_init failed')
    do s = 0, nstarts - 1
      do i = 0, n - 1
        sbuf(i) = cval(s, rank, i)
      end do
      rbuf = poison
      call MPI_Start(req)
      call MPI_Wait(req, MPI_STATUS_IGNORE)
      if (.not. MPI_ASYNC_PROTECTS_NONBLOCKING) call MPI_F_sync_reg(rbuf)
      do i = 0, n - 1
        want = 0
        do r = 0, nprocs - 1
          want = want + cval(s, r, i)
        end do
        if (rbuf(i) /= want) then
          write (msg, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'allreduce count ', n, ' start ', s, &
            ' elem ', i, ': got ', rbuf(i), ' want ', want
          call report(trim(msg))
          exit
        end if
      end do
    end do
    call MPI_Request_free(req)
    deallocate (sbuf, rbuf)
  end subroutine check_allreduce

  subroutine check_part(rbuf, p, src, s, when)
    integer, intent(in) :: rbuf(0:), p, src, s
    character(len=*), intent(in) :: when
    integer :: i, e
    character(len=200) :: msg
    do i = 0, pcount - 1
      e = p * pcount + i
      if (rbuf(e) /= pval(s, src, e)) then
        write (msg, '(a,i0,a,i0,a,i0,a,i0,a,a,a,i0,a,i0)') 'part round ', s, ' from ', src, &
          ' partition ', p, ' elem ', i, ' (', when, '): got ', rbuf(e), ' want ', pval(s, src, e)
        call report(trim(msg))
        return
      end if
    end do
  end subroutine check_part

  subroutine check_partitioned()
    integer, allocatable, asynchronous :: sbuf(:), rbuf(:)
    type(MPI_Request) :: sreq, rreq
    integer :: right, left, s, p, i, nleft
    logical :: flag, seen(0:npart - 1)
    double precision :: t0

    right = mod(rank + 1, nprocs)
    left = mod(rank + nprocs - 1, nprocs)
    allocate (sbuf(0:npart * pcount - 1), rbuf(0:npart * pcount - 1))
    call precv_init_std(rbuf, npart, int(pcount, MPI_COUNT_KIND), MPI_INTEGER, left, 7, &
                        MPI_COMM_WORLD, MPI_INFO_NULL, rreq)
    call psend_init_std(sbuf, npart, int(pcount, MPI_COUNT_KIND), MPI_INTEGER, right, 7, &
                        MPI_COMM_WORLD, MPI_INFO_NULL, sreq)
    do s = 0, nrounds - 1
      rbuf = poison
      call MPI_Start(rreq)
      call MPI_Start(sreq)
      do p = npart - 1, 0, -1
        do i = p * pcount, (p + 1) * pcount - 1
          sbuf(i) = pval(s, rank, i)
        end do
        call MPI_Pready(p, sreq)
      end do
      if (mod(s, 2) == 0) then
        seen = .false.
        nleft = npart
        t0 = MPI_Wtime()
        do while (nleft > 0 .and. MPI_Wtime() - t0 < 5d0)
          do p = 0, npart - 1
            if (seen(p)) cycle
            call MPI_Parrived(rreq, p, flag)
            if (flag) then
              if (.not. MPI_ASYNC_PROTECTS_NONBLOCKING) call MPI_F_sync_reg(rbuf)
              call check_part(rbuf, p, left, s, 'right after MPI_Parrived flag=.true.')
              seen(p) = .true.
              nleft = nleft - 1
            end if
          end do
        end do
        if (nleft > 0) call report('MPI_Parrived never said flag=.true. for some partition in 5 s')
      end if
      call MPI_Wait(rreq, MPI_STATUS_IGNORE)
      if (.not. MPI_ASYNC_PROTECTS_NONBLOCKING) call MPI_F_sync_reg(rbuf)
      do p = 0, npart - 1
        call check_part(rbuf, p, left, s, 'after MPI_Wait')
      end do
      call MPI_Wait(sreq, MPI_STATUS_IGNORE)
    end do
    call MPI_Request_free(sreq)
    call MPI_Request_free(rreq)
    deallocate (sbuf, rbuf)
  end subroutine check_partitioned

end program ompi5_f08

