/* np: 1 2 3 4 5 */
/* net: h2 h4 */
/* Barrier, Bcast, Reduce and Allreduce: every root, small and large
 * messages (eager and rendezvous sizes), several ops and types, MINLOC and
 * MAXLOC on pair types, MPI_IN_PLACE, a derived datatype, sub-communicators. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size;

#include "t_check.h"

static void test_barrier(void)
{
    for (int i = 0; i < 20; i++)
        OK(MPI_Barrier(MPI_COMM_WORLD));
    /* nobody leaves a barrier before the last rank has entered it */
    double t0 = MPI_Wtime();
    if (rank == size - 1) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    double dt = MPI_Wtime() - t0;
    CHECK(dt > 0.15, "left the barrier after %.3f s, before the late rank arrived", dt);
    OK(MPI_Barrier(MPI_COMM_SELF));
}

static void test_bcast(void)
{
    const int counts[] = {0, 1, 7, 1000, 300000};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int n = counts[ci];
        int *buf = malloc(sizeof(int) * (size_t)(n + 1));
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank == root ? i * 3 + root : -1;
            buf[n] = 12345; /* guard past the end */
            OK(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == i * 3 + root, "bcast n %d root %d: [%d] = %d", n, root, i,
                      buf[i]);
            CHECK(buf[n] == 12345, "bcast wrote past the end");
        }
        free(buf);
    }
    /* doubles and chars */
    double d[3] = {0};
    char s[16] = "";
    if (rank == size / 2) {
        d[0] = 1.5, d[1] = -2.25, d[2] = 1e300;
        strcpy(s, "hello, bcast");
    }
    OK(MPI_Bcast(d, 3, MPI_DOUBLE, size / 2, MPI_COMM_WORLD));
    OK(MPI_Bcast(s, 16, MPI_CHAR, size / 2, MPI_COMM_WORLD));
    CHECK(d[0] == 1.5 && d[1] == -2.25 && d[2] == 1e300, "double bcast");
    CHECK(!strcmp(s, "hello, bcast"), "char bcast '%s'", s);
    /* a strided derived type: every other int */
    MPI_Datatype vec;
    OK(MPI_Type_vector(5, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int v[10];
    for (int i = 0; i < 10; i++)
        v[i] = rank == 0 ? i : -1;
    OK(MPI_Bcast(v, 1, vec, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++)
        CHECK(v[i] == (i % 2 == 0 || rank == 0 ? i : -1), "vector bcast [%d] = %d", i, v[i]);
    OK(MPI_Type_free(&vec));
}

static void test_reduce(void)
{
    const int counts[] = {1, 5, 100000};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int n = counts[ci];
        int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++) {
                in[i] = rank + i;
                out[i] = -1;
            }
            OK(MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            if (rank == root) {
                for (int i = 0; i < n; i++)
                    CHECK(out[i] == size * (size - 1) / 2 + size * i, "sum n %d root %d [%d] = %d",
                          n, root, i, out[i]);
            } else {
                CHECK(out[0] == -1, "non-root recvbuf written");
            }
            OK(MPI_Reduce(in, out, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < n; i++)
                    CHECK(out[i] == size - 1 + i, "max [%d] = %d", i, out[i]);
            /* in place at the root */
            for (int i = 0; i < n; i++)
                out[i] = rank == root ? rank * 2 + i : -5;
            for (int i = 0; i < n; i++)
                in[i] = rank * 2 + i;
            OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : in, out, n, MPI_INT, MPI_MIN, root,
                          MPI_COMM_WORLD));
            if (rank == root)
                for (int i = 0; i < n; i++)
                    CHECK(out[i] == i, "in-place min [%d] = %d", i, out[i]);
        }
        free(in);
        free(out);
    }
    /* products, doubles, logical and bitwise ops */
    double dp = 1.0 + rank, dres = 0;
    OK(MPI_Reduce(&dp, &dres, 1, MPI_DOUBLE, MPI_PROD, 0, MPI_COMM_WORLD));
    double fact = 1;
    for (int i = 1; i <= size; i++)
        fact *= i;
    if (rank == 0)
        CHECK(dres == fact, "prod %g, want %g", dres, fact);
    unsigned bits = 1u << rank, bor = 0, band = 0;
    OK(MPI_Reduce(&bits, &bor, 1, MPI_UNSIGNED, MPI_BOR, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        CHECK(bor == (1u << size) - 1, "bor 0x%x", bor);
    unsigned all = ~0u ^ bits;
    OK(MPI_Reduce(&all, &band, 1, MPI_UNSIGNED, MPI_BAND, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(band == ~((1u << size) - 1), "band 0x%x", band);
    int lt = rank == 1, land = -1, lor = -1;
    OK(MPI_Reduce(&lt, &land, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD));
    OK(MPI_Reduce(&lt, &lor, 1, MPI_INT, MPI_LOR, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(land == 0 && lor == (size > 1), "land %d lor %d", land, lor);
    long long ll = (long long)rank << 40, llsum = 0;
    OK(MPI_Reduce(&ll, &llsum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(llsum == ((long long)size * (size - 1) / 2) << 40, "long long sum");
}

static void test_allreduce(void)
{
    const int counts[] = {1, 3, 4096, 70000};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        int n = counts[ci];
        double *in = malloc(sizeof(double) * (size_t)n), *out = malloc(sizeof(double) * (size_t)n);
        for (int i = 0; i < n; i++)
            in[i] = rank * 0.5 + i;
        OK(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == 0.5 * size * (size - 1) / 2 + (double)size * i,
                  "allreduce sum n %d [%d] = %g", n, i, out[i]);
        /* in place */
        for (int i = 0; i < n; i++)
            out[i] = (double)((rank + i) % size);
        OK(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == size - 1, "in-place max [%d] = %g", i, out[i]);
        free(in);
        free(out);
    }
    /* every rank gets bit-identical floating-point sums */
    double x = 1.0 / (3.0 + rank), s = 0, smin = 0, smax = 0;
    OK(MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&s, &smin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&s, &smax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(smin == smax, "ranks disagree on the sum: %.17g vs %.17g", smin, smax);

    /* MINLOC / MAXLOC on MPI_DOUBLE_INT: values with ties */
    struct { double v; int i; } p[2], q[2];
    p[0].v = (double)(rank % 3), p[0].i = rank;       /* min 0 first at rank 0 */
    p[1].v = -(double)(rank / 2), p[1].i = rank;      /* min at the last pair */
    OK(MPI_Allreduce(p, q, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(q[0].v == 0 && q[0].i == 0, "minloc[0] = (%g, %d)", q[0].v, q[0].i);
    int lastpair = ((size - 1) / 2) * 2;
    CHECK(q[1].v == -(double)((size - 1) / 2) && q[1].i == lastpair, "minloc[1] = (%g, %d)",
          q[1].v, q[1].i);
    OK(MPI_Allreduce(p, q, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int maxv = size >= 3 ? 2 : size - 1;
    CHECK(q[0].v == maxv && q[0].i == maxv, "maxloc[0] = (%g, %d)", q[0].v, q[0].i);
    CHECK(q[1].v == 0 && q[1].i == 0, "maxloc[1] = (%g, %d)", q[1].v, q[1].i);
    /* MPI_2INT MAXLOC through Reduce at every root */
    for (int root = 0; root < size; root++) {
        int a[2] = {rank == root ? 100 : rank, rank}, b[2] = {-1, -1};
        OK(MPI_Reduce(a, b, 1, MPI_2INT, MPI_MAXLOC, root, MPI_COMM_WORLD));
        if (rank == root)
            CHECK(b[0] == 100 && b[1] == root, "2int maxloc (%d, %d)", b[0], b[1]);
    }
    /* floats and shorts and unsigned chars */
    float f = 0.25f * rank, fs = 0;
    OK(MPI_Allreduce(&f, &fs, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(fs == 0.25f * size * (size - 1) / 2, "float sum %g", fs);
    short sh = (short)(rank - 2), shmin = 0;
    OK(MPI_Allreduce(&sh, &shmin, 1, MPI_SHORT, MPI_MIN, MPI_COMM_WORLD));
    CHECK(shmin == -2, "short min %d", shmin);
    unsigned char uc = (unsigned char)(1u << (rank % 8)), ucx = 0;
    OK(MPI_Allreduce(&uc, &ucx, 1, MPI_UNSIGNED_CHAR, MPI_BXOR, MPI_COMM_WORLD));
    unsigned char want = 0;
    for (int i = 0; i < size; i++)
        want ^= (unsigned char)(1u << (i % 8));
    CHECK(ucx == want, "bxor 0x%x want 0x%x", ucx, want);
    /* count 0 */
    OK(MPI_Allreduce(&f, &fs, 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
}

/* The same collectives on a split communicator, concurrently per color. */
static void test_subcomm(void)
{
    MPI_Comm c;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c));
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    for (int root = 0; root < s; root++) {
        int v = r == root ? 1000 + rank : -1;
        OK(MPI_Bcast(&v, 1, MPI_INT, root, c));
        /* reversed keys: comm rank root holds the root-th largest world rank
         * of this parity */
        int hi = size - 1;
        if (hi % 2 != rank % 2)
            hi--;
        CHECK(v == 1000 + hi - 2 * root, "sub bcast root %d gave %d", root, v);
        int one = 1, cnt = 0;
        OK(MPI_Reduce(&one, &cnt, 1, MPI_INT, MPI_SUM, root, c));
        if (r == root)
            CHECK(cnt == s, "sub reduce count %d", cnt);
    }
    OK(MPI_Barrier(c));
    OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_barrier();
    test_bcast();
    test_reduce();
    test_allreduce();
    test_subcomm();
    MPI_Finalize();
    if (rank == 0)
        printf("t_coll_basic: ok (np %d)\n", size);
    return 0;
}
