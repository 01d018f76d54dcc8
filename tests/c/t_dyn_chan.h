/* Helpers of the tests of dynamic processes by locality (t_dyn_region,
 * t_dyn_connect): messages whose bytes depend on sender and number, the
 * channel two processes should use by their processor names, and the
 * bytes each channel received while a peer sent. */
#ifndef VMPI_TESTS_T_DYN_CHAN_H
#define VMPI_TESTS_T_DYN_CHAN_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_mpit_util.h"

enum { T_DYN_SMALL = 1000, T_DYN_BIG = 256 * 1024, T_DYN_TAG = 5, T_DYN_NCHAN = 3 };

static const char *t_dyn_chan[T_DYN_NCHAN] = {"smp", "ivshmem", "ofi"};

/* The bytes of one exchange: 3 eager messages and one rendezvous. */
#define T_DYN_BYTES (3ull * T_DYN_SMALL + T_DYN_BIG)

/* Sends (send) or receives and checks 3 small and a big message from or
 * to peer of c, whose bytes depend on `who` and the message number. */
static inline void t_dyn_exchange(MPI_Comm c, int peer, int who, int send)
{
    char *buf = malloc(T_DYN_BIG);
    CHECK(buf != NULL, "no memory");
    for (int m = 0; m < 4; m++) {
        int n = m < 3 ? T_DYN_SMALL : T_DYN_BIG, len;
        if (send) {
            for (int i = 0; i < n; i++)
                buf[i] = (char)(who * 31 + m * 7 + i);
            OK(MPI_Send(buf, n, MPI_CHAR, peer, T_DYN_TAG, c));
            continue;
        }
        MPI_Status st;
        OK(MPI_Recv(buf, n, MPI_CHAR, peer, T_DYN_TAG, c, &st));
        OK(MPI_Get_count(&st, MPI_CHAR, &len));
        CHECK(len == n, "message %d from %d: %d bytes", m, peer, len);
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == (char)(who * 31 + m * 7 + i), "message %d from %d byte %d", m, peer,
                  i);
    }
    free(buf);
}

/* Receives an exchange from peer of c (see above) and the bytes each
 * channel received meanwhile into got. */
static inline void t_dyn_counted(MPI_Comm c, int peer, int who,
                                 unsigned long long got[T_DYN_NCHAN])
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h[T_DYN_NCHAN];
    OK(MPI_T_pvar_session_create(&s));
    for (int k = 0; k < T_DYN_NCHAN; k++)
        h[k] = t_counter(s, t_dyn_chan[k], "bytes_recvd");
    t_dyn_exchange(c, peer, who, 0);
    for (int k = 0; k < T_DYN_NCHAN; k++)
        got[k] = t_read(s, h[k]);
    OK(MPI_T_pvar_session_free(&s));
}

/* Whether a process named me (h<i>-vm<j> in emulated VMs) reaches other
 * jobs in other VMs of its host through the region: yes, with integrity
 * checks too, unless the test says T_DYN_REGION=off (a run where the jobs
 * lack their domain's secret, so their messages go over the network). */
static inline int t_dyn_region_on(const char *me)
{
    const char *on = getenv("T_DYN_REGION");
    return strstr(me, "-vm") && !(on && !strcmp(on, "off"));
}

/* The channel (index into t_dyn_chan) between processes named a and b of
 * different jobs. */
static inline int t_dyn_channel(const char *a, const char *b)
{
    if (!strcmp(a, b))
        return 0;
    const char *da = strstr(a, "-vm"), *db = strstr(b, "-vm");
    if (t_dyn_region_on(a) && db && da - a == db - b && !strncmp(a, b, (size_t)(da - a)))
        return 1;
    return 2;
}

/* Checks that the bytes of one exchange came over channel k alone (the
 * network may count more than the messages, shared memory may not). */
static inline void t_dyn_check(const unsigned long long got[T_DYN_NCHAN], int k, const char *me,
                               const char *peer)
{
    for (int j = 0; j < T_DYN_NCHAN; j++)
        CHECK(j == k ? (k == 2 ? got[j] >= T_DYN_BYTES : got[j] == T_DYN_BYTES) : got[j] == 0,
              "%s from %s: want %s; smp %llu, ivshmem %llu, ofi %llu bytes", me, peer,
              t_dyn_chan[k], got[0], got[1], got[2]);
}

#endif
