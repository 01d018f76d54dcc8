/* np: 1 2 */
/* vms: v2 */
/* The tool interface (MPI_T) before, during and after MPI: reference
 * counting, control variables (every knob the library reads, read with
 * its default, written before MPI_Init and then used by the library:
 * VMPI_SMP_EAGER_MAX and VMPI_IVSHMEM_EAGER_MAX lowered to 4096 make a
 * 6000-byte message a rendezvous, which the channel's counter shows;
 * refused once MPI is initialized), performance variable sessions and
 * handles (start, stop, read, write, reset, readreset, MPI_T_PVAR_ALL_HANDLES),
 * categories (a root "vmpi" whose subcategories hold every variable once),
 * bad input answered with the MPI_T_ERR_* classes, and a lock waiter's parks
 * (vmpi_lock_parks). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "t_mpit_util.h"

/* Knobs the library reads (a sample across layers) that must be cvars. */
static const char *const knobs[] = {
    "VMPI_CHANNELS", "VMPI_SMP_EAGER_MAX", "VMPI_IVSHMEM_EAGER_MAX", "VMPI_OFI_EAGER_MAX",
    "VMPI_UNEXPECTED_MAX", "VMPI_COLL_ALLREDUCE", "VMPI_RMA_LOCK", "VMPI_IVSHMEM_PATH",
    "VMPI_YIELD_POLLS", "VMPI_ASYNC", "FI_PROVIDER",
};

static unsigned long long cvar_num(const char *name)
{
    MPI_T_cvar_handle h;
    int count;
    unsigned long long v = ~0ull;
    OK(MPI_T_cvar_handle_alloc(t_cvar(name), NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    OK(MPI_T_cvar_read(h, &v));
    OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "freed handle not nulled");
    return v;
}

static int cvar_set(const char *name, unsigned long long v)
{
    MPI_T_cvar_handle h;
    int count;
    OK(MPI_T_cvar_handle_alloc(t_cvar(name), NULL, &h, &count));
    int rc = MPI_T_cvar_write(h, &v);
    OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

static void before_init(void)
{
    int provided, n;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "works before MPI_T_init");
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n >= (int)(sizeof knobs / sizeof *knobs), "only %d cvars", n);
    for (size_t k = 0; k < sizeof knobs / sizeof *knobs; k++) {
        int i = t_cvar(knobs[k]), len = 0, verb, bind, scope, dlen = 0;
        char name[128];
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_cvar_get_info(i, NULL, &len, NULL, NULL, NULL, NULL, &dlen, NULL, NULL));
        CHECK(len == (int)strlen(knobs[k]) + 1 && dlen > 10, "%s: lengths %d %d", knobs[k],
              len, dlen);
        char *desc = malloc((size_t)dlen);
        len = sizeof name;
        OK(MPI_T_cvar_get_info(i, name, &len, &verb, &dt, &en, desc, &dlen, &bind, &scope));
        CHECK(!strcmp(name, knobs[k]) && strlen(desc) + 1 == (size_t)dlen, "%s: info %s", knobs[k],
              name);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY &&
                  en == MPI_T_ENUM_NULL && (dt == MPI_CHAR || dt == MPI_UNSIGNED_LONG_LONG) &&
                  verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "%s: bind %d scope %d verbosity %d", knobs[k], bind, scope, verb);
        free(desc);
        /* Truncation: 4 bytes hold 3 characters and the terminator. */
        len = 4;
        OK(MPI_T_cvar_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        CHECK(len == 4 && strlen(name) == 3, "truncated name '%s' len %d", name, len);
    }
    /* Defaults (vmpirun passes none of these) and writes before MPI_Init. */
    CHECK(cvar_num("VMPI_SMP_EAGER_MAX") == 8192, "default %llu", cvar_num("VMPI_SMP_EAGER_MAX"));
    CHECK(cvar_num("VMPI_UNEXPECTED_MAX") == 64ull << 20, "unexpected max default");
    OK(cvar_set("VMPI_SMP_EAGER_MAX", 4096));
    OK(cvar_set("VMPI_IVSHMEM_EAGER_MAX", 4096));
    CHECK(cvar_num("VMPI_SMP_EAGER_MAX") == 4096, "written value not read back");
    CHECK(getenv("VMPI_SMP_EAGER_MAX") && !strcmp(getenv("VMPI_SMP_EAGER_MAX"), "4096"),
          "the environment does not hold the written value");
    CHECK(cvar_set("VMPI_SMP_CMA", 7) == MPI_T_ERR_INVALID, "out-of-range value accepted");
    CHECK(cvar_set("VMPI_IVSHMEM_LEASE_MS", 1) == MPI_T_ERR_INVALID, "below range accepted");
    /* A text variable. */
    MPI_T_cvar_handle h;
    int count;
    char txt[256];
    OK(MPI_T_cvar_handle_alloc(t_cvar("VMPI_COLL_BCAST"), NULL, &h, &count));
    CHECK(count == 256, "text cvar count %d", count);
    OK(MPI_T_cvar_write(h, "binomial"));
    OK(MPI_T_cvar_read(h, txt));
    CHECK(!strcmp(txt, "binomial"), "text cvar reads '%s'", txt);
    OK(MPI_T_cvar_handle_free(&h));
    /* Reference counting: a second init needs a second finalize. */
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    OK(MPI_T_finalize());
    OK(MPI_T_cvar_get_num(&n));
}

static void bad_input(void)
{
    int n, i, count, provided;
    char name[64];
    int len = sizeof name;
    MPI_T_cvar_handle ch;
    MPI_T_pvar_session s, bogus_s = (MPI_T_pvar_session)&n;
    MPI_T_pvar_handle ph, level;
    OK(MPI_T_cvar_get_num(&n));
    CHECK(MPI_T_cvar_get_info(n, name, &len, 0, 0, 0, 0, 0, 0, 0) == MPI_T_ERR_INVALID_INDEX,
          "cvar index past the end");
    CHECK(MPI_T_cvar_get_info(-1, name, &len, 0, 0, 0, 0, 0, 0, 0) == MPI_T_ERR_INVALID_INDEX,
          "cvar index -1");
    CHECK(MPI_T_cvar_handle_alloc(n, NULL, &ch, &count) == MPI_T_ERR_INVALID_INDEX, "alloc");
    CHECK(MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &i) == MPI_T_ERR_INVALID_NAME, "cvar name");
    CHECK(MPI_T_cvar_get_num(NULL) == MPI_T_ERR_INVALID, "NULL num");
    OK(MPI_T_cvar_handle_alloc(0, NULL, &ch, &count));
    MPI_T_cvar_handle stale = ch;
    OK(MPI_T_cvar_handle_free(&ch));
    CHECK(MPI_T_cvar_read(stale, name) == MPI_T_ERR_INVALID_HANDLE, "stale cvar handle");
    CHECK(MPI_T_cvar_handle_free(&ch) == MPI_T_ERR_INVALID_HANDLE, "null cvar handle freed");
    CHECK(MPI_T_pvar_get_num(&n) == MPI_SUCCESS && n > 0, "no pvars");
    CHECK(MPI_T_pvar_get_info(n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) == MPI_T_ERR_INVALID_INDEX,
          "pvar index");
    CHECK(MPI_T_pvar_get_index("vmpi_smp_msgs_sent", MPI_T_PVAR_CLASS_LEVEL, &i) ==
              MPI_T_ERR_INVALID_NAME, "pvar found under the wrong class");
    CHECK(MPI_T_pvar_session_free(&bogus_s) == MPI_T_ERR_INVALID_SESSION, "bogus session");
    OK(MPI_T_pvar_session_create(&s));
    CHECK(MPI_T_pvar_handle_alloc(bogus_s, 0, NULL, &ph, &count) == MPI_T_ERR_INVALID_SESSION,
          "alloc in a bogus session");
    CHECK(MPI_T_pvar_handle_alloc(s, -1, NULL, &ph, &count) == MPI_T_ERR_INVALID_INDEX,
          "pvar alloc index");
    OK(MPI_T_pvar_handle_alloc(s, t_pvar("vmpi_unexpected_len", MPI_T_PVAR_CLASS_LEVEL), NULL,
                               &level, &count));
    CHECK(MPI_T_pvar_start(s, level) == MPI_T_ERR_PVAR_NO_STARTSTOP, "start a level");
    CHECK(MPI_T_pvar_stop(s, level) == MPI_T_ERR_PVAR_NO_STARTSTOP, "stop a level");
    unsigned long long v = 5;
    CHECK(MPI_T_pvar_write(s, level, &v) == MPI_T_ERR_PVAR_NO_WRITE, "write a level");
    CHECK(MPI_T_pvar_reset(s, level) == MPI_T_ERR_PVAR_NO_WRITE, "reset a level");
    CHECK(MPI_T_pvar_readreset(s, level, &v) == MPI_T_ERR_PVAR_NO_WRITE, "readreset a level");
    CHECK(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v) == MPI_T_ERR_INVALID_HANDLE,
          "read of all handles");
    CHECK(MPI_T_pvar_read(s, (MPI_T_pvar_handle)&v, &v) == MPI_T_ERR_INVALID_HANDLE,
          "read of a bogus handle");
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES)); /* skips the level */
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_handle_free(s, &level));
    CHECK(level == MPI_T_PVAR_HANDLE_NULL, "freed pvar handle not nulled");
    OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "freed session not nulled");
    CHECK(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, name, &len) == MPI_T_ERR_INVALID_HANDLE,
          "enum");
    CHECK(MPI_T_enum_get_item(MPI_T_ENUM_NULL, 0, &n, name, &len) == MPI_T_ERR_INVALID_HANDLE,
          "enum item");
    CHECK(MPI_T_category_get_info(-1, 0, 0, 0, 0, 0, 0, 0) == MPI_T_ERR_INVALID_INDEX, "cat");
    CHECK(MPI_T_category_get_index("vmpi.nothing", &i) == MPI_T_ERR_INVALID_NAME, "cat name");
    CHECK(MPI_T_category_get_cvars(0, -1, &i) == MPI_T_ERR_INVALID, "negative len");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, NULL) == MPI_T_ERR_INVALID, "NULL provided");
    (void)provided;
}

/* Every variable is in exactly one category; the root holds the rest. */
static void categories(void)
{
    int ncat, ncv, npv, root, seen_c[128] = {0}, seen_p[128] = {0};
    OK(MPI_T_category_get_num(&ncat));
    OK(MPI_T_cvar_get_num(&ncv));
    OK(MPI_T_pvar_get_num(&npv));
    CHECK(ncv <= 128 && npv <= 128, "too many variables for the test");
    OK(MPI_T_category_get_index("vmpi", &root));
    int nsub, idx[64];
    OK(MPI_T_category_get_info(root, NULL, NULL, NULL, NULL, NULL, NULL, &nsub));
    CHECK(nsub == ncat - 1 && nsub <= 64, "root has %d of %d categories", nsub, ncat);
    OK(MPI_T_category_get_categories(root, 64, idx));
    const char *want[] = {"vmpi.core", "vmpi.smp", "vmpi.ivshmem", "vmpi.ofi", "vmpi.coll",
                          "vmpi.launch"};
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
        int c;
        OK(MPI_T_category_get_index(want[w], &c));
        int found = 0;
        for (int k = 0; k < nsub; k++)
            found |= idx[k] == c;
        CHECK(found, "%s is not under vmpi", want[w]);
    }
    for (int c = 0; c < ncat; c++) {
        int nc, np, list[128];
        char name[64], desc[256];
        int len = sizeof name, dlen = sizeof desc;
        OK(MPI_T_category_get_info(c, name, &len, desc, &dlen, &nc, &np, NULL));
        CHECK(dlen > 1, "category %s has no description", name);
        OK(MPI_T_category_get_cvars(c, 128, list));
        for (int k = 0; k < nc; k++)
            seen_c[list[k]]++;
        OK(MPI_T_category_get_pvars(c, 128, list));
        for (int k = 0; k < np; k++)
            seen_p[list[k]]++;
    }
    for (int k = 0; k < ncv; k++)
        CHECK(seen_c[k] == 1, "cvar %d is in %d categories", k, seen_c[k]);
    for (int k = 0; k < npv; k++)
        CHECK(seen_p[k] == 1, "pvar %d is in %d categories", k, seen_p[k]);
    int stamp;
    OK(MPI_T_category_changed(&stamp));
}

/* The written eager limits took effect: 6000 bytes go by rendezvous. */
static void written_knob_used(int rank)
{
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle smp = t_counter(s, "smp", "rndv_sent"),
                      iv = t_counter(s, "ivshmem", "rndv_sent"),
                      msgs = t_counter(s, "smp", "msgs_sent");
    char buf[6000] = {0};
    if (rank == 0)
        OK(MPI_Send(buf, sizeof buf, MPI_CHAR, 1, 0, MPI_COMM_WORLD));
    else if (rank == 1)
        OK(MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (rank == 0)
        CHECK(t_read(s, smp) + t_read(s, iv) == 1, "6000 bytes went eagerly (rndv %llu + %llu)",
              t_read(s, smp), t_read(s, iv));
    /* write, reset, readreset, stop on one counter */
    unsigned long long v = 40;
    OK(MPI_T_pvar_write(s, msgs, &v));
    CHECK(t_read(s, msgs) == 40, "written counter reads %llu", t_read(s, msgs));
    OK(MPI_T_pvar_readreset(s, msgs, &v));
    CHECK(v == 40 && t_read(s, msgs) == 0, "readreset gave %llu then %llu", v, t_read(s, msgs));
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_session_free(&s));
}

/* Rank 1 waits 50 ms for rank 0's exclusive lock of a window in shared
 * memory: its waiter parks (vmpi_lock_parks). */
static void lock_parks(int rank)
{
    MPI_Win win;
    int *base;
    OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_handle_alloc(s, t_pvar("vmpi_lock_parks", MPI_T_PVAR_CLASS_COUNTER), NULL, &h,
                               &count));
    OK(MPI_T_pvar_start(s, h));
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        double t = MPI_Wtime();
        while (MPI_Wtime() - t < 0.05)
            ;
        OK(MPI_Win_unlock(0, win));
    } else if (rank == 1) {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Win_unlock(0, win));
        CHECK(t_read(s, h) > 0, "waited 50 ms for a lock and never parked");
    }
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    before_init();
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(cvar_set("VMPI_SMP_EAGER_MAX", 8192) == MPI_T_ERR_CVAR_SET_NOT_NOW,
          "written after MPI_Init");
    CHECK(cvar_num("VMPI_SMP_EAGER_MAX") == 4096, "value after MPI_Init");
    bad_input();
    categories();
    if (size > 1) {
        written_knob_used(rank);
        lock_parks(rank);
    }
    OK(MPI_T_finalize());
    int n;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "works after the last finalize");
    OK(MPI_Finalize());
    /* MPI_T outlives MPI. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle h = t_counter(s, "smp", "msgs_sent");
    CHECK(t_read(s, h) == 0, "nothing was sent since start");
    OK(MPI_T_pvar_session_free(&s));
    OK(MPI_T_finalize());
    if (rank == 0)
        printf("No Errors\n");
    return 0;
}
