/* np: 2 4 */
/* vms: v2 */
/* Caching (MPI-3.1 6.7) on communicators, datatypes and windows: copy
 * callbacks at MPI_Comm_dup / MPI_Type_dup with their arguments (flag 0 and
 * 1, extra_state passed through, MPI_*_DUP_FN and the null ones), delete
 * callbacks at free, delete and replacement, keyvals freed while in use,
 * the MPI-1 names, failing callbacks, and the predefined attributes. The
 * duplicated communicators carry a broadcast so data crosses the ranks
 * (and VMs) on them. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_check.h"

/* What the callbacks saw. */
static struct {
    int copies, deletes;
    int obj, keyval;
    void *val, *extra;
} seen;
static int extra_a, extra_b;

static void reset(void)
{
    seen.copies = seen.deletes = 0;
    seen.obj = seen.keyval = 0;
    seen.val = seen.extra = NULL;
}

/* Copies with flag = 1 and value + 1, or flag = 0 when extra is &extra_b. */
static int copy_cb(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    seen.copies++;
    seen.obj = obj;
    seen.keyval = keyval;
    seen.extra = extra;
    seen.val = in;
    *flag = extra != &extra_b;
    *(void **)out = (char *)in + 1;
    return MPI_SUCCESS;
}

static int delete_cb(int obj, int keyval, void *val, void *extra)
{
    seen.deletes++;
    seen.obj = obj;
    seen.keyval = keyval;
    seen.val = val;
    seen.extra = extra;
    return MPI_SUCCESS;
}

static int fail_copy(MPI_Comm c, int k, void *e, void *in, void *out, int *flag)
{
    (void)c, (void)k, (void)e, (void)in, (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}

static int fail_delete_on;
static int fail_delete(MPI_Comm c, int k, void *v, void *e)
{
    (void)c, (void)k, (void)v, (void)e;
    return fail_delete_on ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* A broadcast on c from its rank 0, checked. */
static void use(MPI_Comm c, int salt)
{
    int r, v;
    MPI_Comm_rank(c, &r);
    v = r == 0 ? 1000 + salt : -1;
    OK(MPI_Bcast(&v, 1, MPI_INT, 0, c));
    CHECK(v == 1000 + salt, "bcast on the dup gave %d", v);
}

static void comm_attrs(void)
{
    MPI_Comm base, dup;
    int k1, k2, k3, k4, flag;
    void *v;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    OK(MPI_Comm_create_keyval(copy_cb, delete_cb, &k1, &extra_a)); /* copied (flag 1) */
    OK(MPI_Comm_create_keyval(copy_cb, delete_cb, &k2, &extra_b)); /* copy says flag 0 */
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k4, NULL));
    CHECK(k1 != k2 && k1 != MPI_KEYVAL_INVALID, "keyvals %#x %#x", k1, k2);

    static char a[8], b[8], c3[8], d[8];
    OK(MPI_Comm_set_attr(base, k1, a));
    OK(MPI_Comm_set_attr(base, k2, b));
    OK(MPI_Comm_set_attr(base, k3, c3));
    OK(MPI_Comm_set_attr(base, k4, d));
    OK(MPI_Comm_get_attr(base, k2, &v, &flag));
    CHECK(flag && v == b, "get k2: flag %d", flag);

    reset();
    OK(MPI_Comm_dup(base, &dup));
    CHECK(seen.copies == 2, "%d copy callbacks at dup, want 2 (k1, k2)", seen.copies);
    use(dup, 1);
    OK(MPI_Comm_get_attr(dup, k1, &v, &flag));
    CHECK(flag && v == a + 1, "k1 on the dup: flag %d, value %p want %p", flag, v, (void *)(a + 1));
    OK(MPI_Comm_get_attr(dup, k2, &v, &flag));
    CHECK(!flag, "k2 was copied although its callback set flag 0");
    OK(MPI_Comm_get_attr(dup, k3, &v, &flag));
    CHECK(!flag, "k3 (MPI_COMM_NULL_COPY_FN) was copied");
    OK(MPI_Comm_get_attr(dup, k4, &v, &flag));
    CHECK(flag && v == d, "k4 (MPI_COMM_DUP_FN): flag %d", flag);
    /* The base keeps its own. */
    OK(MPI_Comm_get_attr(base, k1, &v, &flag));
    CHECK(flag && v == a, "k1 on the base changed");

    /* A copy callback's arguments: the old communicator, the keyval, extra. */
    MPI_Comm dup2;
    reset();
    OK(MPI_Comm_delete_attr(base, k2));
    CHECK(seen.deletes == 1 && seen.obj == base && seen.keyval == k2 && seen.val == b &&
              seen.extra == &extra_b,
          "delete_attr callback: %d calls, obj %#x keyval %#x", seen.deletes, seen.obj,
          seen.keyval);
    reset();
    OK(MPI_Comm_dup_with_info(base, MPI_INFO_NULL, &dup2));
    CHECK(seen.copies == 1 && seen.obj == base && seen.keyval == k1 && seen.val == a &&
              seen.extra == &extra_a,
          "copy callback: %d calls, obj %#x keyval %#x", seen.copies, seen.obj, seen.keyval);
    use(dup2, 2);

    /* Replacement deletes the old value first. */
    reset();
    OK(MPI_Comm_set_attr(dup2, k1, b));
    CHECK(seen.deletes == 1 && seen.val == a + 1 && seen.obj == dup2,
          "replacement: %d deletes, value %p", seen.deletes, seen.val);
    OK(MPI_Comm_get_attr(dup2, k1, &v, &flag));
    CHECK(flag && v == b, "replaced value");

    /* Free: the delete callback sees the communicator and the value. The
     * keyval was freed first: it lives while attributes use it. */
    OK(MPI_Comm_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
    reset();
    MPI_Comm dup2h = dup2;
    OK(MPI_Comm_free(&dup2));
    CHECK(seen.deletes == 1 && seen.obj == dup2h && seen.val == b,
          "free: %d deletes, obj %#x", seen.deletes, seen.obj);
    reset();
    OK(MPI_Comm_free(&dup));
    CHECK(seen.deletes == 1 && seen.val == a + 1, "free dup: %d deletes", seen.deletes);
    reset();
    OK(MPI_Comm_free(&base));
    CHECK(seen.deletes == 1 && seen.val == a, "free base: %d deletes", seen.deletes);
    OK(MPI_Comm_free_keyval(&k2));
    OK(MPI_Comm_free_keyval(&k3));
    OK(MPI_Comm_free_keyval(&k4));
}

/* A failing copy callback fails the dup; a failing delete callback fails
 * delete_attr, replacement and MPI_Comm_free, and the attribute stays. */
static void failing_callbacks(void)
{
    MPI_Comm base, dup = MPI_COMM_NULL;
    int k, flag, rc;
    void *v;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
    OK(MPI_Keyval_create(fail_copy, fail_delete, &k, NULL));
    fail_delete_on = 1;
    OK(MPI_Attr_put(base, k, (void *)(intptr_t)7));
    rc = MPI_Comm_dup(base, &dup);
    t_expect_err(rc, MPI_ERR_OTHER, "MPI_Comm_dup", "failing copy callback");
    CHECK(dup == MPI_COMM_NULL, "dup handed out a communicator after a failed copy");
    rc = MPI_Attr_put(base, k, (void *)(intptr_t)8);
    t_expect_err(rc, MPI_ERR_OTHER, "MPI_Attr_put", "failing delete at replacement");
    rc = MPI_Attr_delete(base, k);
    t_expect_err(rc, MPI_ERR_OTHER, "MPI_Attr_delete", "failing delete callback");
    OK(MPI_Attr_get(base, k, &v, &flag));
    CHECK(flag && v == (void *)(intptr_t)7, "attribute gone after a failed delete");
    MPI_Comm keep = base;
    rc = MPI_Comm_free(&base);
    t_expect_err(rc, MPI_ERR_OTHER, "MPI_Comm_free", "failing delete at free");
    CHECK(base == keep, "MPI_Comm_free reset the handle although it failed");
    use(base, 3);
    fail_delete_on = 0;
    OK(MPI_Keyval_free(&k));
    OK(MPI_Comm_free(&base));
}

static void type_attrs(void)
{
    MPI_Datatype t, d;
    int k, flag;
    void *v;
    static char a[4];
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    OK(MPI_Type_create_keyval(copy_cb, delete_cb, &k, &extra_a));
    OK(MPI_Type_set_attr(t, k, a));
    reset();
    OK(MPI_Type_dup(t, &d));
    CHECK(seen.copies == 1 && seen.obj == t && seen.keyval == k && seen.extra == &extra_a,
          "type copy callback: %d calls", seen.copies);
    OK(MPI_Type_get_attr(d, k, &v, &flag));
    CHECK(flag && v == a + 1, "type attr on the dup");
    reset();
    MPI_Datatype dh = d;
    OK(MPI_Type_free(&d));
    CHECK(seen.deletes == 1 && seen.obj == dh && seen.val == a + 1, "type free: %d deletes",
          seen.deletes);
    OK(MPI_Type_delete_attr(t, k));
    OK(MPI_Type_get_attr(t, k, &v, &flag));
    CHECK(!flag, "type attr still there after delete");
    /* Predefined datatypes take attributes too. */
    OK(MPI_Type_set_attr(MPI_INT, k, a));
    OK(MPI_Type_get_attr(MPI_INT, k, &v, &flag));
    CHECK(flag && v == a, "attr on MPI_INT");
    reset();
    OK(MPI_Type_delete_attr(MPI_INT, k));
    CHECK(seen.deletes == 1 && seen.obj == MPI_INT, "delete on MPI_INT");
    OK(MPI_Type_free_keyval(&k));
    OK(MPI_Type_free(&t));
}

static void win_attrs(void)
{
    MPI_Win w;
    int k, flag, buf[4];
    void *v;
    static char a[4];
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, delete_cb, &k, &extra_b));
    OK(MPI_Win_set_attr(w, k, a));
    OK(MPI_Win_get_attr(w, k, &v, &flag));
    CHECK(flag && v == a, "win attr");
    OK(MPI_Win_get_attr(w, MPI_WIN_BASE, &v, &flag));
    CHECK(flag && v == buf, "MPI_WIN_BASE still answered");
    OK(MPI_Win_free_keyval(&k));
    reset();
    MPI_Win wh = w;
    OK(MPI_Win_free(&w));
    CHECK(seen.deletes == 1 && seen.obj == wh && seen.val == a && seen.extra == &extra_b,
          "win free: %d deletes", seen.deletes);
}

static void predefined(void)
{
    int *v, flag, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB");
    OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && *v == MPI_ANY_SOURCE, "MPI_IO %d", *v);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || *v >= size, "MPI_UNIVERSE_SIZE %d", *v); /* absent unless -usize */
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag && *v == 0, "MPI_APPNUM");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    comm_attrs();
    failing_callbacks();
    type_attrs();
    win_attrs();
    predefined();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("t_attr: OK\n");
    return 0;
}
