/* np: 1 2 4 */
/* Communicator basics: size/rank, predefined names and attributes, dup and
 * compare, Comm_group, names, error handlers, free. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#include "t_check.h"

static int err_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void check_attr(MPI_Comm comm, int key, int want, const char *name)
{
    int *val = NULL, flag = 0;
    OK(MPI_Comm_get_attr(comm, key, &val, &flag));
    CHECK(flag == 1 && val != NULL, "%s: flag %d", name, flag);
    if (want != -12345)
        CHECK(*val == want, "%s = %d, want %d", name, *val, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int r, s;
    OK(MPI_Comm_rank(MPI_COMM_SELF, &r));
    OK(MPI_Comm_size(MPI_COMM_SELF, &s));
    CHECK(r == 0 && s == 1, "self rank %d size %d", r, s);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name '%s' len %d", name, len);
    OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF") && len == 13, "self name '%s'", name);

    /* attributes */
    int *tag_ub, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "tag_ub %d", *tag_ub);
    check_attr(MPI_COMM_WORLD, MPI_TAG_UB, (1 << 30) - 1, "MPI_TAG_UB");
    check_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, 0, "MPI_WTIME_IS_GLOBAL");
    {
        /* vmpirun says no universe size unless -usize gives one: then the
         * attribute is absent, as under MPICH. */
        int *usize = NULL;
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
        CHECK(!flag, "MPI_UNIVERSE_SIZE = %d without -usize", usize ? *usize : -1);
    }
    check_attr(MPI_COMM_WORLD, MPI_APPNUM, 0, "MPI_APPNUM");
    check_attr(MPI_COMM_WORLD, MPI_HOST, MPI_PROC_NULL, "MPI_HOST");
    check_attr(MPI_COMM_WORLD, MPI_IO, MPI_ANY_SOURCE, "MPI_IO");
    check_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, -12345, "MPI_LASTUSEDCODE");
    {
        int *last = NULL;
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        CHECK(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < MPI_ERR_LASTCODE %d",
              *last, MPI_ERR_LASTCODE);
    }
    /* a user tag at the bound works */
    {
        int v = rank, got = -1;
        OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, *tag_ub, &got, 1, MPI_INT, 0, *tag_ub,
                        MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK(got == rank, "self sendrecv at tag_ub got %d", got);
    }

    /* error handlers */
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default errhandler 0x%x", (unsigned)eh);
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler not nulled");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler now 0x%x", (unsigned)eh);

    /* bad arguments, reported through ERRORS_RETURN */
    int rc, x;
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, 0x12345, &tag_ub, &flag);
    CHECK(err_class(rc) == MPI_ERR_KEYVAL, "bad keyval gave class %d", err_class(rc));
    rc = MPI_Comm_size(MPI_COMM_NULL, &x);
    CHECK(err_class(rc) == MPI_ERR_COMM, "size of COMM_NULL gave %d", err_class(rc));
    rc = MPI_Comm_rank(0x44000005, &x);
    CHECK(err_class(rc) == MPI_ERR_COMM, "rank of junk handle gave %d", err_class(rc));
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "NULL size gave %d", err_class(rc));
    MPI_Comm w = MPI_COMM_WORLD;
    rc = MPI_Comm_free(&w);
    CHECK(err_class(rc) == MPI_ERR_COMM && w == MPI_COMM_WORLD, "freeing world gave %d",
          err_class(rc));
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)0x54000077);
    CHECK(err_class(rc) == MPI_ERR_ARG, "bad errhandler gave %d", err_class(rc));
    eh = MPI_ERRHANDLER_NULL;
    rc = MPI_Errhandler_free(&eh);
    CHECK(err_class(rc) == MPI_ERR_ARG, "freeing ERRHANDLER_NULL gave %d", err_class(rc));
    rc = MPI_Comm_set_name(MPI_COMM_WORLD, NULL);
    CHECK(err_class(rc) == MPI_ERR_ARG, "NULL name gave %d", err_class(rc));
    {
        char msg[MPI_MAX_ERROR_STRING];
        int ml;
        rc = MPI_Comm_dup(MPI_COMM_NULL, &w);
        OK(MPI_Error_string(rc, msg, &ml));
        CHECK(strstr(msg, "MPI_Comm_dup") != NULL, "message '%s' does not name the call", msg);
    }

    /* dup and compare */
    MPI_Comm dup, dup2;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_WORLD && dup != MPI_COMM_NULL, "dup handle 0x%x", (unsigned)dup);
    OK(MPI_Comm_rank(dup, &r));
    OK(MPI_Comm_size(dup, &s));
    CHECK(r == rank && s == size, "dup rank %d size %d", r, s);
    OK(MPI_Comm_get_errhandler(dup, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit the errhandler (0x%x)", (unsigned)eh);
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == 0 && name[0] == '\0', "dup name '%s'", name);
    int res;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "world vs world %d", res);
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "world vs dup %d", res);
    OK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT, "dup vs dup %d", res);
    OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "world vs self %d", res);
    OK(MPI_Comm_dup(dup, &dup2));
    OK(MPI_Comm_compare(dup2, dup, &res));
    CHECK(res == MPI_CONGRUENT, "dup2 vs dup %d", res);
    OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag == 0, "test_inter %d", flag);

    /* names are per communicator */
    OK(MPI_Comm_set_name(dup, "my dup"));
    OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(!strcmp(name, "my dup") && len == 6, "dup name '%s'", name);
    OK(MPI_Comm_get_name(dup2, name, &len));
    CHECK(len == 0, "dup2 name '%s'", name);
    {
        char longname[300];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        OK(MPI_Comm_set_name(dup2, longname));
        OK(MPI_Comm_get_name(dup2, name, &len));
        CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name len %d",
              len);
    }

    /* traffic on a dup does not match the parent's */
    if (size > 1) {
        int peer = rank ^ 1;
        if (peer < size) {
            int a = 100 + rank, b = 200 + rank, ra = -1, rb = -1;
            MPI_Request q[2];
            /* receive on world first, but the dup message is sent first */
            OK(MPI_Irecv(&ra, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &q[0]));
            OK(MPI_Irecv(&rb, 1, MPI_INT, peer, 7, dup, &q[1]));
            OK(MPI_Send(&b, 1, MPI_INT, peer, 7, dup));
            OK(MPI_Send(&a, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
            MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc -Wstringop-overflow */
            OK(MPI_Waitall(2, q, st));
            CHECK(ra == 100 + peer && rb == 200 + peer, "world got %d, dup got %d", ra, rb);
        }
    }

    /* Comm_group */
    MPI_Group gw, gd, gs;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    OK(MPI_Comm_group(dup, &gd));
    OK(MPI_Comm_group(MPI_COMM_SELF, &gs));
    OK(MPI_Group_compare(gw, gd, &res));
    CHECK(res == MPI_IDENT, "group of world vs dup %d", res);
    OK(MPI_Group_size(gw, &s));
    OK(MPI_Group_rank(gw, &r));
    CHECK(s == size && r == rank, "world group size %d rank %d", s, r);
    OK(MPI_Group_size(gs, &s));
    OK(MPI_Group_rank(gs, &r));
    CHECK(s == 1 && r == 0, "self group size %d rank %d", s, r);
    int zero = 0, t;
    OK(MPI_Group_translate_ranks(gs, 1, &zero, gw, &t));
    CHECK(t == rank, "self rank 0 is world rank %d", t);

    /* the group stays valid after its communicator is freed */
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "free did not null the handle");
    OK(MPI_Group_size(gd, &s));
    CHECK(s == size, "group of freed comm has size %d", s);
    OK(MPI_Group_free(&gd));
    CHECK(gd == MPI_GROUP_NULL, "group free did not null");
    OK(MPI_Group_free(&gw));
    OK(MPI_Group_free(&gs));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &gw)); /* world's group survived the free above */
    OK(MPI_Group_size(gw, &s));
    CHECK(s == size, "world group size %d after free", s);
    OK(MPI_Group_free(&gw));
    OK(MPI_Comm_free(&dup2));

    /* context ids are recycled: more dup/free cycles than there are ids
     * (on MPI_COMM_SELF, which needs no messages; a few on world too) */
    for (int i = 0; i < 5000; i++) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_SELF, &c));
        OK(MPI_Comm_free(&c));
    }
    for (int i = 0; i < 50; i++) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        OK(MPI_Comm_free(&c));
    }
    /* and many can live at once */
    MPI_Comm many[100];
    for (int i = 0; i < 100; i++)
        OK(MPI_Comm_dup(i ? many[i - 1] : MPI_COMM_WORLD, &many[i]));
    int sum = 0, one = 1;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, many[99]));
    CHECK(sum == size, "allreduce on the 100th dup gave %d", sum);
    for (int i = 99; i >= 0; i--)
        OK(MPI_Comm_free(&many[i]));

    MPI_Finalize();
    if (rank == 0)
        printf("t_comm_basic: ok (np %d)\n", size);
    return 0;
}
