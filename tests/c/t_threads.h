/* Scaffolding of the MPI_THREAD_MULTIPLE tests (t_thread_*.c). */
#ifndef VMPI_TESTS_T_THREADS_H
#define VMPI_TESTS_T_THREADS_H

#include "t_check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* MPI_Init_thread asking for MULTIPLE, which must be granted; returns the
 * threads per rank, T_THREADS (default 4, at most 64). */
static inline int t_threads_init(int *argc, char ***argv)
{
    int provided;
    OK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    const char *e = getenv("T_THREADS");
    int n = e ? atoi(e) : 4;
    CHECK(n >= 1 && n <= 64, "T_THREADS %d", n);
    return n;
}

/* Runs fn(k) in n threads at once, k = 0 .. n-1, and joins them. */
static inline void t_run_threads(void *(*fn)(void *), int n)
{
    pthread_t th[64];
    for (int t = 0; t < n; t++)
        CHECK(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
}

#endif
