/* np: 2 3 4 */
/* vms: v2 v2net h2v2 */
/* net: h2 */
/* Accumulate, Get_accumulate and Fetch_and_op on the value/index pair types
 * (MPI_SHORT_INT, MPI_LONG_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT have
 * padding between value and index, so their size is less than their
 * extent; MPI_FLOAT_INT and MPI_2INT have none), with MAXLOC, MINLOC,
 * REPLACE and NO_OP, as basic and as vector target types, on windows made
 * by allocate, create and create_dynamic. Every rank works on its right
 * neighbour only, so each result is exact. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

enum { N = 24, VN = 4 }; /* pairs per window; vector blocks (stride 2) */

struct si { short v; int i; };
struct li { long v; int i; };
struct di { double v; int i; };
struct ldi { long double v; int i; };
struct fi { float v; int i; };
struct ii { int v; int i; };

enum kind { SI, LI, DI, LDI, FI, II, NKIND };
static const struct {
    MPI_Datatype t;
    const char *name;
    size_t vsize, ext, ioff;
} pt[NKIND] = {
    {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short), sizeof(struct si), offsetof(struct si, i)},
    {MPI_LONG_INT, "MPI_LONG_INT", sizeof(long), sizeof(struct li), offsetof(struct li, i)},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double), sizeof(struct di), offsetof(struct di, i)},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double), sizeof(struct ldi),
     offsetof(struct ldi, i)},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float), sizeof(struct fi), offsetof(struct fi, i)},
    {MPI_2INT, "MPI_2INT", sizeof(int), sizeof(struct ii), offsetof(struct ii, i)},
};
static enum kind k;

/* Pair j of buffer b: values are small integers, exact in every type. */
static void put_pair(void *b, int j, int v, int idx)
{
    char *p = (char *)b + (size_t)j * pt[k].ext;
    switch (k) {
    case SI: { short x = (short)v; memcpy(p, &x, sizeof x); break; }
    case LI: { long x = v; memcpy(p, &x, sizeof x); break; }
    case DI: { double x = v; memcpy(p, &x, sizeof x); break; }
    case LDI: { long double x = v; memcpy(p, &x, sizeof x); break; }
    case FI: { float x = (float)v; memcpy(p, &x, sizeof x); break; }
    default: memcpy(p, &v, sizeof v); break;
    }
    memcpy(p + pt[k].ioff, &idx, sizeof idx);
}

static void get_pair(const void *b, int j, int *v, int *idx)
{
    const char *p = (const char *)b + (size_t)j * pt[k].ext;
    switch (k) {
    case SI: { short x; memcpy(&x, p, sizeof x); *v = x; break; }
    case LI: { long x; memcpy(&x, p, sizeof x); *v = (int)x; break; }
    case DI: { double x; memcpy(&x, p, sizeof x); *v = (int)x; break; }
    case LDI: { long double x; memcpy(&x, p, sizeof x); *v = (int)x; break; }
    case FI: { float x; memcpy(&x, p, sizeof x); *v = (int)x; break; }
    default: memcpy(v, p, sizeof *v); break;
    }
    memcpy(idx, p + pt[k].ioff, sizeof *idx);
}

static void expect_pair(const void *b, int j, int v, int idx, const char *what)
{
    int gv, gi;
    get_pair(b, j, &gv, &gi);
    CHECK(gv == v && gi == idx, "%s %s pair %d = (%d, %d), want (%d, %d)", pt[k].name, what, j,
          gv, gi, v, idx);
}

/* The target's state, modelled: after MAXLOC with value 60/50/40 by j % 3
 * (index j) on (50, 1000 + j), then MINLOC with (55, 7) on the vector's
 * pairs 0, 2, 4, 6. */
static void model(int j, int step, int *v, int *idx)
{
    *v = 50;
    *idx = 1000 + j;
    if (step >= 1 && j % 3 == 0)
        *v = 60, *idx = j;
    else if (step >= 1 && j % 3 == 1)
        *idx = j; /* equal values: the smaller index */
    if (step >= 2 && j < 2 * VN && j % 2 == 0 && *v > 55)
        *v = 55, *idx = 7;
}

enum flavor { ALLOCATE, CREATE, DYNAMIC, NFLAV };
static const char *const flav_name[NFLAV] = {"allocate", "create", "create_dynamic"};

static void run(enum flavor f)
{
    size_t bytes = N * pt[k].ext;
    MPI_Win win;
    char *mem = NULL;
    MPI_Aint base = 0;
    if (f == ALLOCATE) {
        OK(MPI_Win_allocate((MPI_Aint)bytes, (int)pt[k].ext, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &win));
    } else {
        CHECK((mem = malloc(bytes)) != NULL, "malloc");
        if (f == CREATE) {
            OK(MPI_Win_create(mem, (MPI_Aint)bytes, (int)pt[k].ext, MPI_INFO_NULL,
                              MPI_COMM_WORLD, &win));
        } else {
            OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            OK(MPI_Win_attach(win, mem, (MPI_Aint)bytes));
        }
    }
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int j = 0; j < N; j++)
        put_pair(mem, j, 50, 1000 + j);
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Get_address(mem, &base));
    MPI_Aint *bases = malloc(sizeof(MPI_Aint) * (size_t)size);
    CHECK(bases != NULL, "malloc");
    OK(MPI_Allgather(&base, 1, MPI_AINT, bases, 1, MPI_AINT, MPI_COMM_WORLD));
    int t = (rank + 1) % size;
    /* displacement of pair j at t: in pairs (disp_unit = extent) or bytes */
#define DISP(j) (f == DYNAMIC ? bases[t] + (MPI_Aint)((j) * pt[k].ext) : (MPI_Aint)(j))

    char *o = malloc(bytes), *r = malloc(bytes);
    CHECK(o && r, "malloc");
    MPI_Datatype vec;
    OK(MPI_Type_vector(VN, 1, 2, pt[k].t, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));

    /* MAXLOC over all N pairs */
    for (int j = 0; j < N; j++)
        put_pair(o, j, j % 3 == 0 ? 60 : j % 3 == 1 ? 50 : 40, j);
    OK(MPI_Accumulate(o, N, pt[k].t, t, DISP(0), N, pt[k].t, MPI_MAXLOC, win));
    OK(MPI_Win_flush(t, win));
    /* MINLOC into a vector target, fetching what was there */
    for (int j = 0; j < VN; j++)
        put_pair(o, j, 55, 7);
    memset(r, 0, bytes);
    OK(MPI_Get_accumulate(o, VN, pt[k].t, r, VN, pt[k].t, t, DISP(0), 1, vec, MPI_MINLOC,
                          win));
    OK(MPI_Win_flush(t, win));
    for (int j = 0; j < VN; j++) {
        int v, idx;
        model(2 * j, 1, &v, &idx);
        expect_pair(r, j, v, idx, "Get_accumulate(MINLOC, vector) fetched");
    }
    /* everything, by Get_accumulate(NO_OP) */
    memset(r, 0, bytes);
    OK(MPI_Get_accumulate(NULL, 0, pt[k].t, r, N, pt[k].t, t, DISP(0), N, pt[k].t, MPI_NO_OP,
                          win));
    OK(MPI_Win_flush(t, win));
    for (int j = 0; j < N; j++) {
        int v, idx;
        model(j, 2, &v, &idx);
        expect_pair(r, j, v, idx, "after MAXLOC and MINLOC");
    }
    /* Fetch_and_op: MAXLOC, REPLACE and NO_OP on the last pair */
    int v, idx;
    model(N - 1, 2, &v, &idx);
    put_pair(o, 0, 70, rank);
    OK(MPI_Fetch_and_op(o, r, pt[k].t, t, DISP(N - 1), MPI_MAXLOC, win));
    OK(MPI_Win_flush(t, win));
    expect_pair(r, 0, v, idx, "Fetch_and_op(MAXLOC) fetched");
    put_pair(o, 0, -3, 2 * rank);
    OK(MPI_Fetch_and_op(o, r, pt[k].t, t, DISP(N - 1), MPI_REPLACE, win));
    OK(MPI_Win_flush_all(win));
    expect_pair(r, 0, 70, rank, "Fetch_and_op(REPLACE) fetched");
    OK(MPI_Fetch_and_op(NULL, r, pt[k].t, t, DISP(N - 1), MPI_NO_OP, win));
    OK(MPI_Win_flush_all(win));
    expect_pair(r, 0, -3, 2 * rank, "Fetch_and_op(NO_OP) fetched");
    /* Accumulate(REPLACE) into the vector, then check the memory itself */
    for (int j = 0; j < VN; j++)
        put_pair(o, j, 90 + j, 3 * j);
    OK(MPI_Accumulate(o, VN, pt[k].t, t, DISP(1), 1, vec, MPI_REPLACE, win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    int l = (rank + size - 1) % size; /* whose operations landed here */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int j = 0; j < N; j++) {
        model(j, 2, &v, &idx);
        if (j == N - 1)
            v = -3, idx = 2 * l;
        if (j >= 1 && j < 1 + 2 * VN && (j - 1) % 2 == 0)
            v = 90 + (j - 1) / 2, idx = 3 * ((j - 1) / 2);
        char what[64];
        snprintf(what, sizeof what, "%s window memory", flav_name[f]);
        expect_pair(mem, j, v, idx, what);
    }
    OK(MPI_Win_unlock(rank, win));
#undef DISP
    OK(MPI_Type_free(&vec));
    if (f == DYNAMIC)
        OK(MPI_Win_detach(win, mem));
    OK(MPI_Win_free(&win));
    if (f != ALLOCATE)
        free(mem);
    free(o);
    free(r);
    free(bases);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (k = 0; k < NKIND; k++) {
        int sz;
        MPI_Aint lb, ext, tlb, text;
        OK(MPI_Type_size(pt[k].t, &sz));
        OK(MPI_Type_get_extent(pt[k].t, &lb, &ext));
        OK(MPI_Type_get_true_extent(pt[k].t, &tlb, &text));
        CHECK(ext == (MPI_Aint)pt[k].ext && lb == 0 && tlb == 0 &&
                  text == (MPI_Aint)(pt[k].ioff + sizeof(int)),
              "%s: lb %ld extent %ld true extent %ld", pt[k].name, (long)lb, (long)ext,
              (long)text);
        CHECK((size_t)sz == pt[k].vsize + sizeof(int), "%s: size %d", pt[k].name, sz);
        for (enum flavor f = 0; f < NFLAV; f++)
            run(f);
    }
    MPI_Finalize();
    if (rank == 0)
        printf("t_rma_pairs: ok (np %d)\n", size);
    return 0;
}
