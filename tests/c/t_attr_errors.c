/* np: 2 */
/* Bad input to the caching calls, with MPI_ERRORS_RETURN: each returns the
 * right class and a message naming the function; nothing changes. */
#include <mpi.h>
#include <stdio.h>

#include "t_check.h"

#define EXPECT(call, cls, fname) t_expect_err((call), (cls), (fname), #call)

static int count_deletes;
static int del(MPI_Comm c, int k, void *v, void *e)
{
    (void)c, (void)k, (void)v, (void)e;
    count_deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int kc, kt, kw, flag, bogus = 0x12345, buf[2];
    void *v;
    MPI_Win win;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &kc, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kt, NULL));
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kw, NULL));

    /* NULL pointers */
    EXPECT(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, NULL, NULL), MPI_ERR_ARG,
           "MPI_Comm_create_keyval");
    EXPECT(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG, "MPI_Comm_free_keyval");
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, kc, NULL, &flag), MPI_ERR_ARG, "MPI_Comm_get_attr");
    EXPECT(MPI_Type_get_attr(MPI_INT, kt, &v, NULL), MPI_ERR_ARG, "MPI_Type_get_attr");
    EXPECT(MPI_Attr_get(MPI_COMM_WORLD, kc, &v, NULL), MPI_ERR_ARG, "MPI_Attr_get");

    /* invalid keyvals */
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, bogus, NULL), MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag), MPI_ERR_KEYVAL,
           "MPI_Comm_get_attr");
    EXPECT(MPI_Attr_delete(MPI_COMM_WORLD, bogus), MPI_ERR_KEYVAL, "MPI_Attr_delete");
    int k2;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &k2, NULL));
    int dead = k2;
    OK(MPI_Comm_free_keyval(&k2)); /* unused: gone at once */
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, dead, &v, &flag), MPI_ERR_KEYVAL,
           "MPI_Comm_get_attr");
    EXPECT(MPI_Comm_free_keyval(&dead), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");

    /* a keyval of another kind */
    EXPECT(MPI_Win_set_attr(win, kc, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr");
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, kw, NULL), MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    EXPECT(MPI_Type_get_attr(MPI_INT, kc, &v, &flag), MPI_ERR_KEYVAL, "MPI_Type_get_attr");
    EXPECT(MPI_Win_get_attr(win, kt, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr");
    EXPECT(MPI_Type_free_keyval(&kc), MPI_ERR_KEYVAL, "MPI_Type_free_keyval");
    EXPECT(MPI_Win_get_attr(win, MPI_TAG_UB, &v, &flag), MPI_ERR_KEYVAL, "MPI_Win_get_attr");
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WIN_BASE, &v, &flag), MPI_ERR_KEYVAL,
           "MPI_Comm_get_attr");

    /* predefined keys cannot be set, deleted or freed */
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL,
           "MPI_Comm_set_attr");
    EXPECT(MPI_Attr_put(MPI_COMM_WORLD, MPI_HOST, NULL), MPI_ERR_KEYVAL, "MPI_Attr_put");
    EXPECT(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_APPNUM), MPI_ERR_KEYVAL,
           "MPI_Comm_delete_attr");
    EXPECT(MPI_Win_set_attr(win, MPI_WIN_SIZE, NULL), MPI_ERR_KEYVAL, "MPI_Win_set_attr");
    EXPECT(MPI_Win_delete_attr(win, MPI_WIN_BASE), MPI_ERR_KEYVAL, "MPI_Win_delete_attr");
    int tagub = MPI_TAG_UB;
    EXPECT(MPI_Keyval_free(&tagub), MPI_ERR_KEYVAL, "MPI_Keyval_free");
    int *ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767, "MPI_TAG_UB changed");

    /* invalid objects */
    EXPECT(MPI_Comm_set_attr(MPI_COMM_NULL, kc, NULL), MPI_ERR_COMM, "MPI_Comm_set_attr");
    EXPECT(MPI_Attr_get(MPI_COMM_NULL, kc, &v, &flag), MPI_ERR_COMM, "MPI_Attr_get");
    EXPECT(MPI_Type_set_attr(MPI_DATATYPE_NULL, kt, NULL), MPI_ERR_TYPE, "MPI_Type_set_attr");
    EXPECT(MPI_Win_set_attr(MPI_WIN_NULL, kw, NULL), MPI_ERR_WIN, "MPI_Win_set_attr");
    EXPECT(MPI_Win_delete_attr(MPI_WIN_NULL, kw), MPI_ERR_WIN, "MPI_Win_delete_attr");

    /* nothing was set: deleting an absent attribute is no error, no callback */
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kc));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, kc, &v, &flag));
    CHECK(!flag && count_deletes == 0, "flag %d, %d deletes", flag, count_deletes);

    OK(MPI_Comm_free_keyval(&kc));
    OK(MPI_Type_free_keyval(&kt));
    OK(MPI_Win_free_keyval(&kw));
    OK(MPI_Win_free(&win));
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("t_attr_errors: OK\n");
    return 0;
}
