/* np: 1 2 4 */
/* vms: v2 h2v2 */
/* User-defined data representations (MPI_Register_datarep, MPI-3.1
 * 13.5.3). "be8" stores MPI_INT as 8 bytes big-endian (sign-extended),
 * MPI_DOUBLE as its 8 bytes big-endian then 4 bytes 0xd0, MPI_BYTE as
 * itself; its conversion functions handle any datatype of those, tiled,
 * from any position (they pack the elements touched with MPI_Pack). Each
 * part checks the file's bytes through a "native" handle:
 *  - contiguous ints: write_at, file extents from get_type_extent
 *    (scaled vector, struct with byte displacements kept), iread_at of
 *    another rank's block, the individual pointer in file etypes, a read
 *    past the end counting the whole ints read;
 *  - a vector filetype scaled to 8-byte ints (blocks of every rank
 *    interleaved), written collectively from a strided memory type,
 *    read back with read_all and iread_at_all;
 *  - a struct {int, double, int} (28 file bytes) through a byte view with
 *    the hint vmpi_datarep_buffer_size 20: the conversion is called on
 *    chunks of at most 2 items with consecutive positions;
 *  - write_ordered / read_ordered through the shared pointer;
 *  - MPI_CONVERSION_FN_NULL: native bytes when the extents are native,
 *    MPI_ERR_CONVERSION when they are not;
 *  - errors: a name registered twice or predefined (MPI_ERR_DUP_DATAREP),
 *    NULL, empty, too long, NULL extent function (MPI_ERR_ARG), an
 *    unknown name in set_view (MPI_ERR_UNSUPPORTED_DATAREP), the extent
 *    and conversion functions failing (MPI_ERR_CONVERSION). */
#include "t_io_util.h"

#include <stddef.h>
#include <stdint.h>

enum { N = 40, B = 3, NB = 8, K = 7, M = 5, CAP = 4096 };
enum { K_BYTE, K_INT, K_DOUBLE };
static const int fsz[] = {1, 8, 12}, nsz[] = {1, 4, 8};
static int rank, size;

/* What the callbacks saw (extra_state). */
struct state {
    int calls, maxcount, badpos, fail;
    MPI_Offset next;
};
static struct state be8;

static void kinds(MPI_Datatype dt, MPI_Offset rep, char *k, int *n)
{
    int ni, na, nt, comb;
    OK(MPI_Type_get_envelope(dt, &ni, &na, &nt, &comb));
    if (comb == MPI_COMBINER_NAMED) {
        int kind = dt == MPI_INT ? K_INT : dt == MPI_DOUBLE ? K_DOUBLE : K_BYTE;
        CHECK(*n + rep <= CAP, "element of more than %d items", CAP);
        for (MPI_Offset r = 0; r < rep; r++)
            k[(*n)++] = (char)kind;
        return;
    }
    int ints[ni + 1];
    MPI_Aint aints[na + 1];
    MPI_Datatype types[nt + 1];
    OK(MPI_Type_get_contents(dt, ni, na, nt, ints, aints, types));
    for (MPI_Offset r = 0; r < rep; r++) {
        switch (comb) {
        case MPI_COMBINER_CONTIGUOUS: kinds(types[0], ints[0], k, n); break;
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR: kinds(types[0], (MPI_Offset)ints[0] * ints[1], k, n); break;
        case MPI_COMBINER_STRUCT:
            for (int i = 0; i < ints[0]; i++)
                kinds(types[i], ints[1 + i], k, n);
            break;
        case MPI_COMBINER_RESIZED:
        case MPI_COMBINER_DUP: kinds(types[0], 1, k, n); break;
        default: CHECK(0, "combiner %d not handled by the test", comb);
        }
    }
    for (int i = 0; i < nt; i++) {
        OK(MPI_Type_get_envelope(types[i], &ni, &na, &nt, &comb));
        if (comb != MPI_COMBINER_NAMED)
            OK(MPI_Type_free(&types[i]));
    }
}

static void encode(int kind, const unsigned char *nat, unsigned char *f)
{
    if (kind == K_INT) {
        int32_t v;
        memcpy(&v, nat, 4);
        uint64_t u = (uint64_t)(int64_t)v;
        for (int j = 0; j < 8; j++)
            f[j] = (unsigned char)(u >> (56 - 8 * j));
    } else if (kind == K_DOUBLE) {
        for (int j = 0; j < 8; j++)
            f[j] = nat[7 - j];
        memset(f + 8, 0xd0, 4);
    } else {
        f[0] = nat[0];
    }
}

static void decode(int kind, const unsigned char *f, unsigned char *nat)
{
    if (kind == K_INT) {
        uint32_t u = 0;
        for (int j = 4; j < 8; j++)
            u = u << 8 | f[j];
        memcpy(nat, &u, 4);
    } else if (kind == K_DOUBLE) {
        for (int j = 0; j < 8; j++)
            nat[j] = f[7 - j];
    } else {
        nat[0] = f[0];
    }
}

/* count items of (userbuf, datatype tiled) from item pos on, to (write)
 * or from the file bytes fbuf. */
static int convert(int write, void *userbuf, MPI_Datatype dt, int count, void *fbuf,
                   MPI_Offset pos, void *extra)
{
    struct state *s = extra;
    s->calls++;
    s->maxcount = count > s->maxcount ? count : s->maxcount;
    if (pos != 0 && pos != s->next)
        s->badpos++;
    s->next = pos + count;
    if (s->fail)
        return MPI_ERR_OTHER;
    static char k[CAP];
    int n = 0, tsize, psz, p = 0, noff[CAP + 1];
    kinds(dt, 1, k, &n);
    noff[0] = 0;
    for (int j = 0; j < n; j++)
        noff[j + 1] = noff[j] + nsz[(int)k[j]];
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(dt, &lb, &ext));
    OK(MPI_Type_size(dt, &tsize));
    MPI_Offset e0 = pos / n, e1 = (pos + count - 1) / n;
    int ne = (int)(e1 - e0 + 1);
    char *base = (char *)userbuf + e0 * ext;
    OK(MPI_Pack_size(ne, dt, MPI_COMM_SELF, &psz));
    unsigned char *tmp = malloc((size_t)psz), *f = fbuf;
    OK(MPI_Pack(base, ne, dt, tmp, psz, &p, MPI_COMM_SELF));
    for (MPI_Offset i = pos; i < pos + count; i++) {
        int j = (int)(i % n);
        unsigned char *nat = tmp + (i / n - e0) * tsize + noff[j];
        if (write)
            encode(k[j], nat, f);
        else
            decode(k[j], f, nat);
        f += fsz[(int)k[j]];
    }
    p = 0;
    if (!write)
        OK(MPI_Unpack(tmp, psz, &p, base, ne, dt, MPI_COMM_SELF));
    free(tmp);
    return MPI_SUCCESS;
}

static int be8_write(void *userbuf, MPI_Datatype dt, int count, void *fbuf, MPI_Offset pos,
                     void *extra)
{
    return convert(1, userbuf, dt, count, fbuf, pos, extra);
}

static int be8_read(void *userbuf, MPI_Datatype dt, int count, void *fbuf, MPI_Offset pos,
                    void *extra)
{
    return convert(0, userbuf, dt, count, fbuf, pos, extra);
}

static int be8_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    if (dt != MPI_INT && dt != MPI_DOUBLE && dt != MPI_BYTE)
        return MPI_ERR_TYPE;
    *extent = fsz[dt == MPI_INT ? K_INT : dt == MPI_DOUBLE ? K_DOUBLE : K_BYTE];
    return MPI_SUCCESS;
}

/* The native sizes: MPI_CONVERSION_FN_NULL moves the data as it is. */
static int same_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)extra;
    int sz;
    MPI_Type_size(dt, &sz);
    *extent = sz;
    return MPI_SUCCESS;
}

static int int_value(int owner, int i)
{
    return (owner * 1000 + i) * (i % 2 ? -1 : 1);
}

/* The file's bytes (n of them, checked) through its own "native" handle. */
static unsigned char *raw(const char *path, int n)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Offset fsize;
    int got;
    unsigned char *b = malloc((size_t)n + 1);
    OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == n, "%s: %ld bytes, want %d", path, (long)fsize, n);
    OK(MPI_File_read_at(fh, 0, b, n, MPI_BYTE, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &got));
    CHECK(got == n, "raw read of %d bytes gave %d", n, got);
    OK(MPI_File_close(&fh));
    return b;
}

/* The big-endian 8-byte int at b. */
static long be64(const unsigned char *b)
{
    uint64_t u = 0;
    for (int j = 0; j < 8; j++)
        u = u << 8 | b[j];
    return (long)(int64_t)u;
}

/* Every rank's writes visible to every rank (13.6.1: sync-barrier-sync). */
static void settle(MPI_File fh)
{
    OK(MPI_File_sync(fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_sync(fh));
}

/* Closes *fh (unless NULL) and, once every rank has, deletes path. */
static void finish(MPI_File *fh, const char *path)
{
    if (fh)
        OK(MPI_File_close(fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        OK(MPI_File_delete(path, MPI_INFO_NULL));
}

static void check_count(const MPI_Status *st, MPI_Datatype dt, int want, const char *what)
{
    int n = -1;
    OK(MPI_Get_count(st, dt, &n));
    CHECK(n == want, "%s: count %d, want %d", what, n, want);
}

static void contiguous(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    int v[N], back[N + 10];
    t_io_path(path, "a");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "be8", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "be8") && et == MPI_INT && ft == MPI_INT, "get_view: %s", rep);

    /* File extents: the vector's stride scales, the struct's bytes stay. */
    MPI_Aint x;
    MPI_Datatype vec, str;
    OK(MPI_File_get_type_extent(fh, MPI_INT, &x));
    CHECK(x == 8, "extent of MPI_INT %ld, want 8", (long)x);
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    OK(MPI_File_get_type_extent(fh, vec, &x));
    CHECK(x == 40, "extent of vector(3, 1, 2) %ld, want 40", (long)x);
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype tp[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, dp, tp, &str));
    OK(MPI_File_get_type_extent(fh, str, &x));
    CHECK(x == 20, "extent of struct {int at 0, double at 8} %ld, want 20", (long)x);
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&str));

    for (int i = 0; i < N; i++)
        v[i] = int_value(rank, i);
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * N, v, N, MPI_INT, &st));
    check_count(&st, MPI_INT, N, "write_at");
    settle(fh);
    unsigned char *b = raw(path, 8 * N * size);
    for (int i = 0; i < N * size; i++)
        CHECK(be64(b + 8 * i) == int_value(i / N, i % N), "file int %d is %ld, want %d", i,
              be64(b + 8 * i), int_value(i / N, i % N));
    free(b);

    int other = (rank + 1) % size;
    OK(MPI_File_iread_at(fh, (MPI_Offset)other * N, back, N, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    check_count(&st, MPI_INT, N, "iread_at");
    for (int i = 0; i < N; i++)
        CHECK(back[i] == int_value(other, i), "iread_at: [%d] %d", i, back[i]);

    /* The individual pointer counts etypes of the view. */
    MPI_Offset pos;
    memset(back, 0, sizeof back);
    OK(MPI_File_seek(fh, (MPI_Offset)rank * N, MPI_SEEK_SET));
    OK(MPI_File_read(fh, back, N / 2, MPI_INT, &st));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)rank * N + N / 2, "position %ld after N/2 ints", (long)pos);
    OK(MPI_File_read(fh, back + N / 2, N - N / 2, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == int_value(rank, i), "read: [%d] %d", i, back[i]);
    OK(MPI_File_get_byte_offset(fh, 3, &pos));
    CHECK(pos == 24, "byte offset of etype 3: %ld", (long)pos);

    /* Past the end: the whole ints there are. */
    OK(MPI_File_read_at(fh, (MPI_Offset)size * N - 3, back, 10, MPI_INT, &st));
    check_count(&st, MPI_INT, 3, "read_at past the end");
    CHECK(back[2] == int_value(size - 1, N - 1), "last int %d", back[2]);

    /* A conversion function failing. */
    be8.fail = 1;
    T_IO_EXPECT(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_CONVERSION,
                "MPI_File_write_at");
    T_IO_EXPECT(MPI_File_read_at(fh, 0, back, 1, MPI_INT, &st), MPI_ERR_CONVERSION,
                "MPI_File_read_at");
    T_IO_EXPECT(MPI_File_write_at_all(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_CONVERSION,
                "MPI_File_write_at_all");
    be8.fail = 0;
    /* The extent function failing (MPI_FLOAT is not in "be8"). */
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_FLOAT, MPI_FLOAT, "be8", MPI_INFO_NULL),
                MPI_ERR_CONVERSION, "MPI_File_set_view");
    T_IO_EXPECT(MPI_File_write_at(fh, 0, v, 1, MPI_FLOAT, &st), MPI_ERR_CONVERSION,
                "MPI_File_write_at");
    T_IO_EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
    finish(&fh, path);
}

/* Rank r owns blocks r, r + size, ... of B ints; NB of them. */
static void strided(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Datatype ft, mem;
    int v[2 * NB * B], back[2 * NB * B];
    t_io_path(path, "b");
    OK(MPI_Type_vector(NB, B, B * size, MPI_INT, &ft));
    OK(MPI_Type_vector(NB * B, 1, 2, MPI_INT, &mem));
    OK(MPI_Type_commit(&ft));
    OK(MPI_Type_commit(&mem));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* The displacement is in file bytes: B ints of 8 bytes per rank. */
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * 8, MPI_INT, ft, "be8", MPI_INFO_NULL));
    for (int i = 0; i < 2 * NB * B; i++)
        v[i] = i % 2 ? -7 : int_value(rank, i / 2);
    OK(MPI_File_write_at_all(fh, 0, v, 1, mem, &st));
    check_count(&st, mem, 1, "write_at_all");
    settle(fh);
    unsigned char *b = raw(path, 8 * NB * B * size);
    for (int i = 0; i < NB * B * size; i++) {
        int owner = i / B % size, k = i / (B * size) * B + i % B;
        CHECK(be64(b + 8 * i) == int_value(owner, k), "file int %d is %ld, want %d", i,
              be64(b + 8 * i), int_value(owner, k));
    }
    free(b);
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_all(fh, back, NB * B, MPI_INT, &st));
    check_count(&st, MPI_INT, NB * B, "read_all");
    for (int i = 0; i < NB * B; i++)
        CHECK(back[i] == int_value(rank, i), "read_all: [%d] %d", i, back[i]);
    for (int i = 0; i < 2 * NB * B; i++)
        back[i] = 99;
    OK(MPI_File_iread_at_all(fh, 0, back, 1, mem, &req));
    OK(MPI_Wait(&req, &st));
    for (int i = 0; i < 2 * NB * B; i++)
        CHECK(back[i] == (i % 2 ? 99 : int_value(rank, i / 2)), "iread_at_all: [%d] %d", i,
              back[i]);
    OK(MPI_File_close(&fh));
    OK(MPI_Type_free(&ft));
    OK(MPI_Type_free(&mem));
    finish(NULL, path);
}

struct s { int a; double d; int b; };

static void structs(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    MPI_Info info;
    MPI_Datatype stype;
    struct s v[K], back[K];
    int bl[3] = {1, 1, 1};
    MPI_Aint dp[3] = {offsetof(struct s, a), offsetof(struct s, d), offsetof(struct s, b)};
    MPI_Datatype tp[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(3, bl, dp, tp, &stype));
    OK(MPI_Type_commit(&stype));
    t_io_path(path, "c");
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "vmpi_datarep_buffer_size", "20"));
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "be8", info));
    for (int i = 0; i < K; i++)
        v[i] = (struct s){int_value(rank, i), rank + i / 8.0, -int_value(rank, i)};
    be8 = (struct state){0};
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * K * 28, v, K, stype, &st));
    check_count(&st, stype, K, "write_at of structs");
    /* 20 bytes: an int and a double at most. */
    CHECK(be8.calls >= 3 * K / 2 && be8.maxcount == 2 && be8.badpos == 0,
          "write: %d calls, at most %d items, %d bad positions", be8.calls, be8.maxcount,
          be8.badpos);
    settle(fh);
    unsigned char *b = raw(path, 28 * K * size);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < K; i++) {
            const unsigned char *e = b + 28 * (r * K + i);
            double d = r + i / 8.0;
            unsigned char be[8], *nat = (unsigned char *)&d;
            for (int j = 0; j < 8; j++)
                be[j] = nat[7 - j];
            CHECK(be64(e) == int_value(r, i) && !memcmp(e + 8, be, 8) && e[16] == 0xd0 &&
                  e[19] == 0xd0 && be64(e + 20) == -int_value(r, i),
                  "struct %d of rank %d in the file", i, r);
        }
    free(b);
    memset(back, 0, sizeof back);
    be8 = (struct state){0};
    int other = (rank + 1) % size;
    OK(MPI_File_read_at(fh, (MPI_Offset)other * K * 28, back, K, stype, &st));
    check_count(&st, stype, K, "read_at of structs");
    CHECK(be8.maxcount == 2 && be8.badpos == 0, "read: at most %d items, %d bad positions",
          be8.maxcount, be8.badpos);
    for (int i = 0; i < K; i++)
        CHECK(back[i].a == int_value(other, i) && back[i].d == other + i / 8.0 &&
              back[i].b == -int_value(other, i), "read_at: struct %d", i);
    OK(MPI_File_close(&fh));
    OK(MPI_Info_free(&info));
    OK(MPI_Type_free(&stype));
    finish(NULL, path);
}

static void shared(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    int v[M], back[M];
    t_io_path(path, "d");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "be8", MPI_INFO_NULL));
    for (int i = 0; i < M; i++)
        v[i] = int_value(rank, i);
    OK(MPI_File_write_ordered(fh, v, M, MPI_INT, &st));
    MPI_Offset pos;
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)M * size, "shared position %ld", (long)pos);
    settle(fh);
    unsigned char *b = raw(path, 8 * M * size);
    for (int i = 0; i < M * size; i++)
        CHECK(be64(b + 8 * i) == int_value(i / M, i % M), "file int %d", i);
    free(b);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_ordered(fh, back, M, MPI_INT, &st));
    for (int i = 0; i < M; i++)
        CHECK(back[i] == v[i], "read_ordered: [%d] %d", i, back[i]);
    finish(&fh, path);
}

/* MPI_CONVERSION_FN_NULL: the data is native. */
static void null_functions(void)
{
    char path[128];
    MPI_File fh;
    MPI_Status st;
    int v[N], back[N];
    t_io_path(path, "e");
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "same", MPI_INFO_NULL));
    for (int i = 0; i < N; i++)
        v[i] = int_value(rank, i);
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, v, N, MPI_INT, &st));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, back, N, MPI_INT, &st));
    CHECK(!memcmp(v, back, sizeof v), "\"same\" read back");
    settle(fh);
    unsigned char *b = raw(path, 4 * N * size);
    CHECK(!memcmp(b + 4 * N * rank, v, sizeof v), "\"same\" stores native ints");
    free(b);
    /* "wide": native data cannot fill 8-byte file ints. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide", MPI_INFO_NULL));
    T_IO_EXPECT(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &st), MPI_ERR_CONVERSION,
                "MPI_File_write_at");
    finish(&fh, path);
}

static void register_errors(void)
{
    char longname[MPI_MAX_DATAREP_STRING + 8];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    static const char *fn = "MPI_Register_datarep";
    T_IO_EXPECT(MPI_Register_datarep("be8", be8_read, be8_write, be8_extent, &be8),
                MPI_ERR_DUP_DATAREP, fn);
    T_IO_EXPECT(MPI_Register_datarep("native", NULL, NULL, same_extent, NULL),
                MPI_ERR_DUP_DATAREP, fn);
    T_IO_EXPECT(MPI_Register_datarep("external32", NULL, NULL, same_extent, NULL),
                MPI_ERR_DUP_DATAREP, fn);
    T_IO_EXPECT(MPI_Register_datarep(NULL, NULL, NULL, same_extent, NULL), MPI_ERR_ARG, fn);
    T_IO_EXPECT(MPI_Register_datarep("", NULL, NULL, same_extent, NULL), MPI_ERR_ARG, fn);
    T_IO_EXPECT(MPI_Register_datarep(longname, NULL, NULL, same_extent, NULL), MPI_ERR_ARG,
                fn);
    T_IO_EXPECT(MPI_Register_datarep("noextent", NULL, NULL, NULL, NULL), MPI_ERR_ARG, fn);
}

static int wide_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)dt;
    (void)extra;
    *extent = 8;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    t_io_init(&argc, &argv, &rank, &size);
    OK(MPI_Register_datarep("be8", be8_read, be8_write, be8_extent, &be8));
    OK(MPI_Register_datarep("same", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                            same_extent, NULL));
    OK(MPI_Register_datarep("wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                            wide_extent, NULL));
    register_errors();
    contiguous();
    strided();
    structs();
    shared();
    null_functions();
    return t_io_finish("t_io_datarep");
}
