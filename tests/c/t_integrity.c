/* np: 4 2 */
/* env: VMPI_INTEGRITY=crc32c */
/* vms: v2 h2v2 */
/* VMPI_INTEGRITY=crc32c: every path still delivers verified data (ring
 * records, bulk chunks into contiguous and strided buffers, MPI_Alloc_mem
 * buffers, node collectives by messages, one-sided operations by
 * messages), and memory is shared only inside a VM: MPI_COMM_TYPE_SHARED
 * holds the ranks of one VM (one processor name), and a shared window
 * over ranks of several VMs is refused. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "t_check.h"

static unsigned char val(size_t i, int from, int round)
{
    return (unsigned char)(i * 31 + (size_t)from * 7 + (size_t)round * 13 + (i >> 12));
}

static void p2p(int rank, int size)
{
    static const size_t sizes[] = {0, 1, 8, 100, 4000, 8192, 8193, 65536, 1 << 20,
                                   (3 << 20) + 5};
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    unsigned char *s = malloc(4 << 20), *r = malloc(4 << 20), *am;
    CHECK(s && r, "out of memory");
    OK(MPI_Alloc_mem(4 << 20, MPI_INFO_NULL, &am));
    for (int round = 0; round < 20; round++) {
        size_t n = sizes[round % 10];
        unsigned char *rb = round >= 10 ? am : r;
        for (size_t i = 0; i < n; i++)
            s[i] = val(i, rank, round);
        memset(rb, 0, n + 1);
        OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, round, rb, (int)n, MPI_BYTE, peer, round,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < n; i++)
            CHECK(rb[i] == val(i, peer, round), "round %d: byte %zu of %zu", round, i, n);
    }
    /* A strided receive of 1 MiB: chunks go through the bounce buffer. */
    enum { N = 1 << 18 };
    int *ints = (int *)s, *strided = malloc(2 * sizeof(int) * N);
    CHECK(strided, "out of memory");
    MPI_Datatype vec;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    for (int i = 0; i < N; i++)
        ints[i] = i * 3 + rank;
    for (int i = 0; i < 2 * N; i++)
        strided[i] = -1;
    OK(MPI_Sendrecv(ints, N, MPI_INT, peer, 99, strided, 1, vec, peer, 99, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(strided[2 * i] == i * 3 + peer && strided[2 * i + 1] == -1, "strided int %d", i);
    OK(MPI_Type_free(&vec));
    free(strided);
    OK(MPI_Free_mem(am));
    free(s);
    free(r);
}

/* 2x2 integer matrices under multiplication: not commutative, so the
 * order of the reduction shows. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void mat_of(int *m, int rank, int k)
{
    m[0] = 1;
    m[1] = (rank + k) % 3;
    m[2] = rank % 2;
    m[3] = 1 + (k % 2);
}

static void colls(int rank, int size)
{
    enum { M = 4096 };
    int *x = malloc(sizeof(int) * 4 * M), *y = malloc(sizeof(int) * 4 * M);
    CHECK(x && y, "out of memory");
    MPI_Datatype mat;
    MPI_Op op;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    OK(MPI_Op_create(matmul, 0, &op));
    for (int k = 0; k < M; k++)
        mat_of(x + 4 * k, rank, k);
    OK(MPI_Allreduce(x, y, M, mat, op, MPI_COMM_WORLD));
    OK(MPI_Allreduce(MPI_IN_PLACE, x, M, mat, op, MPI_COMM_WORLD));
    for (int k = 0; k < M; k++) {
        int want[4], m[4];
        mat_of(want, 0, k);
        for (int r = 1; r < size; r++) {
            int one = 1;
            mat_of(m, r, k);
            matmul(want, m, &one, &mat);
            memcpy(want, m, sizeof m);
        }
        CHECK(!memcmp(y + 4 * k, want, sizeof want), "allreduce matrix %d", k);
        CHECK(!memcmp(x + 4 * k, want, sizeof want), "in-place allreduce matrix %d", k);
    }
    for (int i = 0; i < 4 * M; i++)
        x[i] = rank == size - 1 ? i * 5 : 0;
    OK(MPI_Bcast(x, 4 * M, MPI_INT, size - 1, MPI_COMM_WORLD));
    for (int i = 0; i < 4 * M; i++)
        CHECK(x[i] == i * 5, "bcast int %d", i);
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&mat));
    free(x);
    free(y);
}

static void rma(int rank, int size)
{
    enum { W = 8192 };
    int *base;
    MPI_Win win;
    OK(MPI_Win_allocate(W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                        &win));
    for (int i = 0; i < W; i++)
        base[i] = 0;
    int *src = malloc(W * sizeof(int)), *got = malloc(W * sizeof(int));
    CHECK(src && got, "out of memory");
    for (int i = 0; i < W; i++)
        src[i] = rank * 100000 + i;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(src, W, MPI_INT, to, 0, W, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < W; i++)
        CHECK(base[i] == from * 100000 + i, "put int %d", i);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* the next epoch's accumulates change base */
    OK(MPI_Accumulate(src, W, MPI_INT, to, 0, W, MPI_INT, MPI_SUM, win));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Get(got, W, MPI_INT, from, 0, W, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    int before = (from + size - 1) % size;
    for (int i = 0; i < W; i++)
        CHECK(got[i] == 2 * (before * 100000 + i), "get int %d", i);
    OK(MPI_Win_free(&win));
    free(src);
    free(got);
}

static void sharing(int rank, int size)
{
    MPI_Comm shm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    char name[MPI_MAX_PROCESSOR_NAME], *all;
    int len, n;
    memset(name, 0, sizeof name);
    OK(MPI_Get_processor_name(name, &len));
    OK(MPI_Comm_size(shm, &n));
    all = malloc((size_t)n * sizeof name);
    CHECK(all, "out of memory");
    OK(MPI_Allgather(name, sizeof name, MPI_CHAR, all, sizeof name, MPI_CHAR, shm));
    for (int i = 0; i < n; i++)
        CHECK(!strcmp(all + (size_t)i * sizeof name, name), "shared comm spans %s and %s", name,
              all + (size_t)i * sizeof name);
    free(all);
    OK(MPI_Comm_free(&shm));
    /* Rank 0 counts the VMs by processor name; across VMs a shared window
     * over all ranks is refused. */
    char *names = malloc((size_t)size * sizeof name);
    CHECK(names, "out of memory");
    OK(MPI_Allgather(name, sizeof name, MPI_CHAR, names, sizeof name, MPI_CHAR, MPI_COMM_WORLD));
    bool one_vm = true;
    for (int i = 0; i < size; i++)
        one_vm = one_vm && !strcmp(names + (size_t)i * sizeof name, names);
    free(names);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *mem;
    MPI_Win win;
    int rc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (one_vm) {
        OK(rc);
        OK(MPI_Win_free(&win));
    } else {
        t_expect_err(rc, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared", "shared window across VMs");
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    (void)rank;
}

int main(int argc, char **argv)
{
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    p2p(rank, size);
    colls(rank, size);
    rma(rank, size);
    sharing(rank, size);
    OK(MPI_Finalize());
    if (rank == 0)
        printf("t_integrity: ok (np %d)\n", size);
    return 0;
}
