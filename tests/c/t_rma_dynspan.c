/* np: 2 4 */
/* vms: v2 v2net h2v2 */
/* net: h2 */
/* Dynamic windows: one operation may cover several attached regions that
 * touch each other (all its bytes are attached), whatever order they were
 * attached in; Put, Get, Accumulate, Get_accumulate, Fetch_and_op and
 * Compare_and_swap across the seams complete at flush and flush_all. An
 * operation reaching into memory that is not attached is still refused
 * (MPI_ERR_RMA_RANGE at the flush) and leaves that memory alone. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

/* mem: regions A [0, M), B [M, 2M), C [2M, 3M) touching, then GAP ints
 * not attached, then D [3M + GAP, 4M + GAP). */
enum { M = 3000, GAP = 16, TOTAL = 4 * M + GAP, GAP_AT = 3 * M, D_AT = 3 * M + GAP };
static int mem[TOTAL];

static int init_v(int r, int i) { return 100000 * (r + 1) + i; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 0; i < TOTAL; i++)
        mem[i] = init_v(rank, i);
    MPI_Win win;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    const MPI_Aint rb = M * (MPI_Aint)sizeof(int);
    OK(MPI_Win_attach(win, mem + M, rb));     /* B */
    OK(MPI_Win_attach(win, mem + D_AT, rb));  /* D */
    OK(MPI_Win_attach(win, mem + 2 * M, rb)); /* C */
    OK(MPI_Win_attach(win, mem, rb));         /* A */
    MPI_Aint base, *bases = malloc(sizeof(MPI_Aint) * (size_t)size);
    CHECK(bases != NULL, "malloc");
    OK(MPI_Get_address(mem, &base));
    OK(MPI_Allgather(&base, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD));
    int t = (rank + 1) % size, l = (rank + size - 1) % size;
#define AT(i) (bases[t] + (MPI_Aint)(i) * (MPI_Aint)sizeof(int))
    int *o = malloc(sizeof(int) * TOTAL), *r = malloc(sizeof(int) * TOTAL);
    CHECK(o && r, "malloc");
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));

    /* Put over the A|B seam, Get it back over the same seam */
    const int p0 = M / 2, pn = M; /* [M/2, 3M/2) */
    for (int i = 0; i < pn; i++)
        o[i] = -(i + 1);
    OK(MPI_Put(o, pn, MPI_INT, t, AT(p0), pn, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    memset(r, 0, sizeof(int) * pn);
    OK(MPI_Get(r, pn, MPI_INT, t, AT(p0), pn, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    for (int i = 0; i < pn; i++)
        CHECK(r[i] == -(i + 1), "Get over the A|B seam: [%d] = %d, want %d", p0 + i, r[i],
              -(i + 1));

    /* Accumulate(SUM) over both seams, A|B|C, completed by flush_all */
    const int a0 = M / 2, an = 2 * M; /* [M/2, 5M/2) */
    for (int i = 0; i < an; i++)
        o[i] = 1;
    OK(MPI_Accumulate(o, an, MPI_INT, t, AT(a0), an, MPI_INT, MPI_SUM, win));
    OK(MPI_Win_flush_all(win));

    /* Get_accumulate(REPLACE) of all of A, B and C, fetching the old values */
    for (int i = 0; i < 3 * M; i++)
        o[i] = 7 * i;
    OK(MPI_Get_accumulate(o, 3 * M, MPI_INT, r, 3 * M, MPI_INT, t, AT(0), 3 * M, MPI_INT,
                          MPI_REPLACE, win));
    OK(MPI_Win_flush(t, win));
    for (int i = 0; i < 3 * M; i++) {
        int want = i >= p0 && i < p0 + pn ? -(i - p0 + 1) : init_v(t, i);
        if (i >= a0 && i < a0 + an)
            want += 1;
        CHECK(r[i] == want, "Get_accumulate over A|B|C fetched [%d] = %d, want %d", i, r[i],
              want);
    }

    /* Fetch_and_op and Compare_and_swap on the elements at the B|C seam */
    int one = 1, got = 0, cmp = 7 * (2 * M), nv = -5;
    OK(MPI_Fetch_and_op(&one, &got, MPI_INT, t, AT(2 * M - 1), MPI_SUM, win));
    OK(MPI_Win_flush(t, win));
    CHECK(got == 7 * (2 * M - 1), "Fetch_and_op at the B|C seam fetched %d", got);
    OK(MPI_Compare_and_swap(&nv, &cmp, &got, MPI_INT, t, AT(2 * M), win));
    OK(MPI_Win_flush(t, win));
    CHECK(got == cmp, "Compare_and_swap at the B|C seam fetched %d, want %d", got, cmp);

    /* a Put from C into the gap after it is refused at the flush */
    int bad[4] = {-9, -9, -9, -9};
    int rc = MPI_Put(bad, 4, MPI_INT, t, AT(GAP_AT - 2), 4, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(t, win);
    t_expect_err(rc, MPI_ERR_RMA_RANGE, "MPI_Win_", "Put from C into the unattached gap");
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* what the left neighbour left here */
    for (int i = 0; i < TOTAL; i++) {
        int want = i < 3 * M ? 7 * i : init_v(rank, i);
        if (i == 2 * M - 1)
            want += 1;
        if (i == 2 * M)
            want = -5;
        CHECK(mem[i] == want, "memory [%d] = %d after rank %d's operations, want %d%s", i,
              mem[i], l, want, i >= GAP_AT && i < D_AT ? " (not attached)" : "");
    }
#undef AT
    OK(MPI_Win_detach(win, mem));
    OK(MPI_Win_detach(win, mem + M));
    OK(MPI_Win_detach(win, mem + 2 * M));
    OK(MPI_Win_detach(win, mem + D_AT));
    OK(MPI_Win_free(&win));
    free(o);
    free(r);
    free(bases);
    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_dynspan: ok (np %d)\n", size);
    return 0;
}
