/* np: 1 2 */
/* vms: v2 */
/* Info objects (MPI-3.1 9) and MPI_INFO_ENV:
 *  - set/get/nkeys/nthkey/valuelen/delete: keys numbered in insertion
 *    order, set overwrites in place, get truncates to valuelen with flag
 *    true, a missing key gives flag false, nkeys and the numbering after a
 *    delete, keys and values of the maximum lengths;
 *  - dup copies and the copy is independent of the original, both ways;
 *  - free sets the handle to MPI_INFO_NULL and the old handle is invalid;
 *  - MPI_INFO_ENV is readable: host is this process's host name, wdir its
 *    working directory, maxprocs the world size, thread_level and command
 *    present; it can be duplicated but not freed;
 *  - bad input for every argument class, with MPI_ERRORS_RETURN on
 *    MPI_COMM_WORLD: the error class, and a message naming the function;
 *  - a real info object accepted by MPI_Alloc_mem, MPI_Win_create,
 *    MPI_Win_allocate, MPI_Win_allocate_shared, MPI_Win_create_dynamic and
 *    MPI_Comm_split_type, and an invalid one refused with MPI_ERR_INFO;
 *  - MPI_Comm_set_info/get_info, MPI_Comm_dup_with_info and
 *    MPI_Win_set_info/get_info: hints taken, none reported in use. */
#define _POSIX_C_SOURCE 200809L /* gethostname, getcwd */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#include "t_check.h"

static int nchecks;

static void expect_err(int rc, int want, const char *fname, const char *what, int line)
{
    nchecks++;
    CHECK(rc != MPI_SUCCESS, "line %d: %s: returned MPI_SUCCESS, want class %d", line, what,
          want);
    int cls = -1;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == want, "line %d: %s: error class %d, want %d", line, what, cls, want);
    char msg[MPI_MAX_ERROR_STRING];
    int len = -1;
    OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, fname) != NULL, "line %d: %s: message '%s' does not name %s", line, what,
          msg, fname);
}
#define EXPECT(call, cls, fname) expect_err((call), (cls), (fname), #call, __LINE__)

/* The value of key in info, which must be there. */
static void expect_value(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = -1, len = -1;
    OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag == 1, "key '%s' missing", key);
    CHECK(!strcmp(v, want), "key '%s' = '%s', want '%s'", key, v, want);
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 1 && len == (int)strlen(want), "valuelen of '%s' = %d (flag %d), want %zu", key,
          len, flag, strlen(want));
}

static void expect_absent(MPI_Info info, const char *key)
{
    char v[8] = "unset";
    int flag = -1, len = 12345;
    OK(MPI_Info_get(info, key, (int)sizeof v - 1, v, &flag));
    CHECK(flag == 0 && !strcmp(v, "unset"), "key '%s' present (flag %d) or value touched '%s'",
          key, flag, v);
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 0 && len == 12345, "valuelen of missing '%s': flag %d len %d", key, flag, len);
}

/* The keys of info are exactly keys[0..n), in this order. */
static void expect_keys(MPI_Info info, const char *const *keys, int n)
{
    int nk = -1;
    OK(MPI_Info_get_nkeys(info, &nk));
    CHECK(nk == n, "nkeys %d, want %d", nk, n);
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        OK(MPI_Info_get_nthkey(info, i, k));
        CHECK(!strcmp(k, keys[i]), "key %d is '%s', want '%s'", i, k, keys[i]);
    }
}

static void semantics(void)
{
    MPI_Info info;
    OK(MPI_Info_create(&info));
    CHECK(info != MPI_INFO_NULL && info != MPI_INFO_ENV, "Info_create gave %#x", (unsigned)info);
    expect_keys(info, NULL, 0);
    expect_absent(info, "a");

    OK(MPI_Info_set(info, "zeta", "1"));
    OK(MPI_Info_set(info, "alpha", "two"));
    OK(MPI_Info_set(info, "mid", "three"));
    const char *order[] = {"zeta", "alpha", "mid"};
    expect_keys(info, order, 3); /* insertion order, not sorted */
    expect_value(info, "alpha", "two");

    /* Overwrite: same position, new value, same count. */
    OK(MPI_Info_set(info, "zeta", "a longer value"));
    expect_keys(info, order, 3);
    expect_value(info, "zeta", "a longer value");
    OK(MPI_Info_set(info, "zeta", ""));
    expect_value(info, "zeta", "");
    OK(MPI_Info_set(info, "zeta", "1"));
    /* Keys are case sensitive. */
    expect_absent(info, "ZETA");

    /* Truncation: valuelen characters and a NUL, flag still true. */
    char v[16];
    memset(v, 'x', sizeof v);
    int flag = 0;
    OK(MPI_Info_get(info, "mid", 3, v, &flag));
    CHECK(flag == 1 && !strcmp(v, "thr") && v[4] == 'x', "truncated get: flag %d value '%s'",
          flag, v);
    OK(MPI_Info_get(info, "mid", 0, v, &flag));
    CHECK(flag == 1 && v[0] == '\0', "get with valuelen 0: flag %d value '%s'", flag, v);
    OK(MPI_Info_get(info, "mid", 5, v, &flag));
    CHECK(flag == 1 && !strcmp(v, "three"), "get with valuelen = length: '%s'", v);

    /* Delete: the others keep their order, nkeys drops. */
    OK(MPI_Info_delete(info, "alpha"));
    const char *after[] = {"zeta", "mid"};
    expect_keys(info, after, 2);
    expect_absent(info, "alpha");
    OK(MPI_Info_set(info, "alpha", "back"));
    const char *again[] = {"zeta", "mid", "alpha"};
    expect_keys(info, again, 3);

    /* Longest key (it fits MPI_MAX_INFO_KEY bytes with its NUL, the buffer
     * a C program gives MPI_Info_get_nthkey) and value. */
    char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL + 1];
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    key[MPI_MAX_INFO_KEY - 1] = '\0';
    memset(val, 'v', MPI_MAX_INFO_VAL);
    val[MPI_MAX_INFO_VAL] = '\0';
    OK(MPI_Info_set(info, key, val));
    expect_value(info, key, val);
    char nth[MPI_MAX_INFO_KEY];
    OK(MPI_Info_get_nthkey(info, 3, nth));
    CHECK(!strcmp(nth, key), "longest key read back wrong (%zu chars)", strlen(nth));

    /* Dup: same keys in the same order; then each changes alone. */
    MPI_Info copy;
    OK(MPI_Info_dup(info, &copy));
    CHECK(copy != info && copy != MPI_INFO_NULL, "dup gave %#x", (unsigned)copy);
    const char *four[] = {"zeta", "mid", "alpha", key};
    expect_keys(copy, four, 4);
    expect_value(copy, "mid", "three");
    OK(MPI_Info_set(copy, "mid", "changed in copy"));
    OK(MPI_Info_set(copy, "only-copy", "c"));
    OK(MPI_Info_delete(copy, "zeta"));
    expect_value(info, "mid", "three");
    expect_absent(info, "only-copy");
    expect_value(info, "zeta", "1");
    OK(MPI_Info_set(info, "only-orig", "o"));
    expect_absent(copy, "only-orig");
    const char *copy_keys[] = {"mid", "alpha", key, "only-copy"};
    expect_keys(copy, copy_keys, 4);

    /* A dup of an empty object is empty. */
    MPI_Info empty, empty2;
    OK(MPI_Info_create(&empty));
    OK(MPI_Info_dup(empty, &empty2));
    expect_keys(empty2, NULL, 0);

    /* Free: the handle becomes MPI_INFO_NULL, the old value is invalid,
     * the copy lives on. */
    MPI_Info old = info;
    OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "Info_free left %#x", (unsigned)info);
    int nk;
    EXPECT(MPI_Info_get_nkeys(old, &nk), MPI_ERR_INFO, "MPI_Info_get_nkeys");
    expect_value(copy, "alpha", "back");
    OK(MPI_Info_free(&copy));
    OK(MPI_Info_free(&empty));
    OK(MPI_Info_free(&empty2));
    CHECK(copy == MPI_INFO_NULL && empty == MPI_INFO_NULL && empty2 == MPI_INFO_NULL,
          "free did not null the handles");

    /* Many objects and many keys. */
    MPI_Info many[64];
    for (int i = 0; i < 64; i++) {
        OK(MPI_Info_create(&many[i]));
        for (int k = 0; k <= i; k++) {
            char kk[16], vv[16];
            snprintf(kk, sizeof kk, "k%d", k);
            snprintf(vv, sizeof vv, "%d", i * 1000 + k);
            OK(MPI_Info_set(many[i], kk, vv));
        }
    }
    for (int i = 0; i < 64; i++) {
        int n = -1;
        OK(MPI_Info_get_nkeys(many[i], &n));
        CHECK(n == i + 1, "object %d has %d keys", i, n);
        char kk[16], vv[16];
        snprintf(kk, sizeof kk, "k%d", i / 2);
        snprintf(vv, sizeof vv, "%d", i * 1000 + i / 2);
        expect_value(many[i], kk, vv);
        OK(MPI_Info_get_nthkey(many[i], i, kk));
        snprintf(vv, sizeof vv, "k%d", i);
        CHECK(!strcmp(kk, vv), "object %d: last key '%s'", i, kk);
        OK(MPI_Info_free(&many[i]));
    }
}

static void env(void)
{
    int n = -1;
    OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 4, "MPI_INFO_ENV has %d keys", n);
    char host[MPI_MAX_INFO_VAL + 1], wd[4096];
    CHECK(gethostname(host, sizeof host) == 0, "gethostname");
    expect_value(MPI_INFO_ENV, "host", host);
    CHECK(getcwd(wd, sizeof wd) != NULL, "getcwd");
    expect_value(MPI_INFO_ENV, "wdir", wd);
    char sz[16];
    snprintf(sz, sizeof sz, "%d", size);
    expect_value(MPI_INFO_ENV, "maxprocs", sz);
    expect_value(MPI_INFO_ENV, "thread_level", "MPI_THREAD_SINGLE");
    char cmd[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    OK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, cmd, &flag));
    CHECK(flag && strstr(cmd, "t_info") != NULL, "command '%s' (flag %d)", cmd, flag);
    /* every key listed is readable */
    for (int i = 0; i < n; i++) {
        char k[MPI_MAX_INFO_KEY + 1], v[MPI_MAX_INFO_VAL + 1];
        int len = -1;
        OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, k));
        OK(MPI_Info_get_valuelen(MPI_INFO_ENV, k, &len, &flag));
        CHECK(flag && len >= 0 && len <= MPI_MAX_INFO_VAL, "env key '%s': len %d", k, len);
        OK(MPI_Info_get(MPI_INFO_ENV, k, MPI_MAX_INFO_VAL, v, &flag));
        CHECK(flag && (int)strlen(v) == len, "env key '%s' value '%s'", k, v);
    }
    /* a dup is an ordinary object with the same keys */
    MPI_Info d;
    OK(MPI_Info_dup(MPI_INFO_ENV, &d));
    int nd = -1;
    OK(MPI_Info_get_nkeys(d, &nd));
    CHECK(nd == n, "dup of MPI_INFO_ENV has %d keys, want %d", nd, n);
    expect_value(d, "host", host);
    OK(MPI_Info_set(d, "host", "elsewhere"));
    expect_value(MPI_INFO_ENV, "host", host);
    OK(MPI_Info_free(&d));
    /* MPI_INFO_ENV cannot be freed; the handle is left alone */
    MPI_Info e = MPI_INFO_ENV;
    EXPECT(MPI_Info_free(&e), MPI_ERR_INFO, "MPI_Info_free");
    CHECK(e == MPI_INFO_ENV, "failed free changed the handle to %#x", (unsigned)e);
    expect_value(MPI_INFO_ENV, "host", host);
}

static void bad_input(void)
{
    const MPI_Info bogus = (MPI_Info)0x12345;
    const MPI_Info other_kind = (MPI_Info)MPI_COMM_WORLD; /* a valid handle of another kind */
    const MPI_Info unused = (MPI_Info)0xdc000fff;         /* info kind, index never handed out */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "k", "v"));
    char v[64], k[MPI_MAX_INFO_KEY + 1];
    int flag, n;
    char longkey[MPI_MAX_INFO_KEY + 2], longval[MPI_MAX_INFO_VAL + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    memset(longval, 'v', sizeof longval - 1);
    longval[sizeof longval - 1] = '\0';

    /* invalid info handles: MPI_ERR_INFO from every function */
    const MPI_Info bad[] = {MPI_INFO_NULL, bogus, other_kind, unused};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        MPI_Info b = bad[i], out;
        EXPECT(MPI_Info_dup(b, &out), MPI_ERR_INFO, "MPI_Info_dup");
        EXPECT(MPI_Info_free(&b), MPI_ERR_INFO, "MPI_Info_free");
        CHECK(b == bad[i], "failed free changed the handle");
        EXPECT(MPI_Info_set(b, "k", "v"), MPI_ERR_INFO, "MPI_Info_set");
        EXPECT(MPI_Info_get(b, "k", 10, v, &flag), MPI_ERR_INFO, "MPI_Info_get");
        EXPECT(MPI_Info_get_nkeys(b, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys");
        EXPECT(MPI_Info_get_nthkey(b, 0, k), MPI_ERR_INFO, "MPI_Info_get_nthkey");
        EXPECT(MPI_Info_get_valuelen(b, "k", &n, &flag), MPI_ERR_INFO,
               "MPI_Info_get_valuelen");
        EXPECT(MPI_Info_delete(b, "k"), MPI_ERR_INFO, "MPI_Info_delete");
    }

    /* NULL pointers: MPI_ERR_ARG */
    EXPECT(MPI_Info_create(NULL), MPI_ERR_ARG, "MPI_Info_create");
    EXPECT(MPI_Info_dup(info, NULL), MPI_ERR_ARG, "MPI_Info_dup");
    EXPECT(MPI_Info_free(NULL), MPI_ERR_ARG, "MPI_Info_free");
    EXPECT(MPI_Info_set(info, NULL, "v"), MPI_ERR_ARG, "MPI_Info_set");
    EXPECT(MPI_Info_set(info, "k", NULL), MPI_ERR_ARG, "MPI_Info_set");
    EXPECT(MPI_Info_get(info, NULL, 10, v, &flag), MPI_ERR_ARG, "MPI_Info_get");
    EXPECT(MPI_Info_get(info, "k", 10, NULL, &flag), MPI_ERR_ARG, "MPI_Info_get");
    EXPECT(MPI_Info_get(info, "k", 10, v, NULL), MPI_ERR_ARG, "MPI_Info_get");
    EXPECT(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG, "MPI_Info_get_nkeys");
    EXPECT(MPI_Info_get_nthkey(info, 0, NULL), MPI_ERR_ARG, "MPI_Info_get_nthkey");
    EXPECT(MPI_Info_get_valuelen(info, NULL, &n, &flag), MPI_ERR_ARG, "MPI_Info_get_valuelen");
    EXPECT(MPI_Info_get_valuelen(info, "k", NULL, &flag), MPI_ERR_ARG,
           "MPI_Info_get_valuelen");
    EXPECT(MPI_Info_get_valuelen(info, "k", &n, NULL), MPI_ERR_ARG, "MPI_Info_get_valuelen");
    EXPECT(MPI_Info_delete(info, NULL), MPI_ERR_ARG, "MPI_Info_delete");

    /* numbers out of range: MPI_ERR_ARG */
    EXPECT(MPI_Info_get(info, "k", -1, v, &flag), MPI_ERR_ARG, "MPI_Info_get");
    EXPECT(MPI_Info_get_nthkey(info, -1, k), MPI_ERR_ARG, "MPI_Info_get_nthkey");
    EXPECT(MPI_Info_get_nthkey(info, 1, k), MPI_ERR_ARG, "MPI_Info_get_nthkey");

    /* keys: empty or too long is MPI_ERR_INFO_KEY */
    EXPECT(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "MPI_Info_set");
    longkey[MPI_MAX_INFO_KEY] = '\0'; /* MPI_MAX_INFO_KEY characters: no room for the NUL */
    EXPECT(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY, "MPI_Info_set");
    longkey[MPI_MAX_INFO_KEY] = 'k';
    EXPECT(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY, "MPI_Info_set");
    EXPECT(MPI_Info_get(info, longkey, 10, v, &flag), MPI_ERR_INFO_KEY, "MPI_Info_get");
    EXPECT(MPI_Info_get_valuelen(info, longkey, &n, &flag), MPI_ERR_INFO_KEY,
           "MPI_Info_get_valuelen");
    EXPECT(MPI_Info_delete(info, longkey), MPI_ERR_INFO_KEY, "MPI_Info_delete");
    EXPECT(MPI_Info_delete(info, ""), MPI_ERR_INFO_KEY, "MPI_Info_delete");

    /* values: too long is MPI_ERR_INFO_VALUE */
    EXPECT(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE, "MPI_Info_set");

    /* delete of a key the object lacks: MPI_ERR_INFO_NOKEY */
    EXPECT(MPI_Info_delete(info, "absent"), MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
    OK(MPI_Info_delete(info, "k"));
    EXPECT(MPI_Info_delete(info, "k"), MPI_ERR_INFO_NOKEY, "MPI_Info_delete");

    /* nothing changed by the failed calls */
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "%d keys after the failed calls", n);
    OK(MPI_Info_free(&info));
}

/* Calls that take hints accept a real info object (ignoring hints they do
 * not use) and refuse an invalid one. */
static void hints(void)
{
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "no_locks", "false"));
    OK(MPI_Info_set(info, "accumulate_ordering", "none"));
    OK(MPI_Info_set(info, "vmpi_unknown_hint", "anything"));

    long *mem;
    OK(MPI_Alloc_mem(64 * sizeof(long), info, &mem));
    for (int i = 0; i < 64; i++)
        mem[i] = rank;
    MPI_Win win;
    OK(MPI_Win_create(mem, 64 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &win));
    long got = -1;
    int peer = (rank + 1) % size;
    OK(MPI_Win_fence(0, win));
    OK(MPI_Get(&got, 1, MPI_LONG, peer, 5, 1, MPI_LONG, win));
    OK(MPI_Win_fence(0, win));
    CHECK(got == peer, "Get through an info-created window: %ld, want %d", got, peer);
    OK(MPI_Win_free(&win));
    OK(MPI_Free_mem(mem));

    long *base;
    OK(MPI_Win_allocate(8 * sizeof(long), sizeof(long), info, MPI_COMM_WORLD, &base, &win));
    /* set_info takes the hints, get_info reports those in use: vmpi uses none */
    OK(MPI_Win_set_info(win, info));
    MPI_Info used = MPI_INFO_NULL;
    int nused = -1;
    OK(MPI_Win_get_info(win, &used));
    CHECK(used != MPI_INFO_NULL && used != info, "Win_get_info gave %#x", (unsigned)used);
    OK(MPI_Info_get_nkeys(used, &nused));
    CHECK(nused == 0, "Win_get_info reports %d hints in use", nused);
    OK(MPI_Info_free(&used));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    EXPECT(MPI_Win_set_info(win, (MPI_Info)0x12345), MPI_ERR_INFO, "MPI_Win_set_info");
    EXPECT(MPI_Win_get_info(win, NULL), MPI_ERR_ARG, "MPI_Win_get_info");
    OK(MPI_Win_free(&win));
    EXPECT(MPI_Win_get_info(win, &used), MPI_ERR_WIN, "MPI_Win_get_info");

    /* the same for communicators, and a dup that takes hints of its own */
    MPI_Comm dup;
    int cmp = -1;
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
    OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "Comm_dup_with_info: compare gave %d", cmp);
    OK(MPI_Allreduce(&rank, &cmp, 1, MPI_INT, MPI_SUM, dup));
    CHECK(cmp == size * (size - 1) / 2, "Allreduce on the dup gave %d", cmp);
    OK(MPI_Comm_set_info(dup, info));
    OK(MPI_Comm_get_info(dup, &used));
    OK(MPI_Info_get_nkeys(used, &nused));
    CHECK(nused == 0, "Comm_get_info reports %d hints in use", nused);
    OK(MPI_Info_free(&used));
    OK(MPI_Comm_free(&dup));
    EXPECT(MPI_Comm_set_info(MPI_COMM_WORLD, (MPI_Info)0x12345), MPI_ERR_INFO,
           "MPI_Comm_set_info");
    EXPECT(MPI_Comm_get_info(MPI_COMM_NULL, &used), MPI_ERR_COMM, "MPI_Comm_get_info");
    EXPECT(MPI_Comm_get_info(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Comm_get_info");
    EXPECT(MPI_Comm_dup_with_info(MPI_COMM_WORLD, (MPI_Info)0x12345, &dup), MPI_ERR_INFO,
           "MPI_Comm_dup_with_info");
    EXPECT(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, NULL), MPI_ERR_ARG,
           "MPI_Comm_dup_with_info");
    OK(MPI_Win_create_dynamic(info, MPI_COMM_WORLD, &win));
    OK(MPI_Win_free(&win));

    MPI_Comm shm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, info, &shm));
    CHECK(shm != MPI_COMM_NULL, "Comm_split_type gave MPI_COMM_NULL");
    OK(MPI_Win_allocate_shared(sizeof(long), sizeof(long), info, shm, &base, &win));
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_free(&shm));
    /* MPI_INFO_ENV is a valid info object too */
    OK(MPI_Alloc_mem(16, MPI_INFO_ENV, &mem));
    OK(MPI_Free_mem(mem));

    /* the hints object is untouched by the calls */
    int n = -1;
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "hints object has %d keys after use", n);

    /* invalid (and freed) info objects are refused */
    MPI_Info freed = info;
    OK(MPI_Info_free(&info));
    const MPI_Info bad[] = {(MPI_Info)0x12345, freed};
    for (int i = 0; i < 2; i++) {
        MPI_Info b = bad[i];
        mem = NULL;
        EXPECT(MPI_Alloc_mem(64, b, &mem), MPI_ERR_INFO, "MPI_Alloc_mem");
        CHECK(mem == NULL, "failed Alloc_mem set the pointer");
        EXPECT(MPI_Win_create(&got, sizeof got, 1, b, MPI_COMM_WORLD, &win), MPI_ERR_INFO,
               "MPI_Win_create");
        EXPECT(MPI_Win_allocate(8, 1, b, MPI_COMM_WORLD, &base, &win), MPI_ERR_INFO,
               "MPI_Win_allocate");
        EXPECT(MPI_Win_allocate_shared(8, 1, b, MPI_COMM_WORLD, &base, &win), MPI_ERR_INFO,
               "MPI_Win_allocate_shared");
        EXPECT(MPI_Win_create_dynamic(b, MPI_COMM_WORLD, &win), MPI_ERR_INFO,
               "MPI_Win_create_dynamic");
        EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, b, &shm),
               MPI_ERR_INFO, "MPI_Comm_split_type");
    }
    /* the job still works together after the refused collective calls */
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    semantics();
    env();
    bad_input();
    hints();
    MPI_Finalize();
    if (rank == 0)
        printf("t_info: ok (%d error checks, %d ranks)\n", nchecks, size);
    return 0;
}
