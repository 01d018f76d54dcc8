/* Argument checks shared by the collective entry points (coll_args.h). */
#include <stdio.h>
#include <stdlib.h>

#include "coll_args.h"

/* A datatype argument; idx >= 0 names an element of a types array. */
int coll_type_arg(struct vmpi_comm *c, const char *fn, const char *name, int idx,
                  MPI_Datatype h, struct vmpi_dtype **dt)
{
    *dt = vmpi_dtype_get(h);
    if (!*dt) {
        if (idx >= 0)
            return vmpi_err(c, MPI_ERR_TYPE, "%s: %s[%d] is not a valid datatype (0x%x)", fn,
                            name, idx, (unsigned)h);
        return vmpi_err(c, MPI_ERR_TYPE, "%s: %s is not a valid datatype (0x%x)", fn, name,
                        (unsigned)h);
    }
    if (!vmpi_dtype_committed(*dt)) {
        if (idx >= 0)
            return vmpi_err(c, MPI_ERR_TYPE,
                            "%s: %s[%d] is not committed (call MPI_Type_commit)", fn, name, idx);
        return vmpi_err(c, MPI_ERR_TYPE, "%s: %s is not committed (call MPI_Type_commit)", fn,
                        name);
    }
    return MPI_SUCCESS;
}

/* A NULL buffer is an error only with a predefined datatype: with a derived
 * one it may be MPI_BOTTOM plus absolute displacements. */
int coll_null_buf(const void *buf, MPI_Datatype h)
{
    return buf == NULL && VMPI_HKIND(h) != VMPI_HK_INDIRECT;
}

/* (sendbuf, sendcount, sendtype) or the recv triple, on a rank where it is
 * significant; side is "send" or "recv". */
int coll_data_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                  int count, MPI_Datatype h, struct vmpi_dtype **dt)
{
    if (count < 0)
        return vmpi_err(c, MPI_ERR_COUNT, "%s: %scount = %d is negative", fn, side, count);
    char name[16];
    snprintf(name, sizeof name, "%stype", side);
    int rc = coll_type_arg(c, fn, name, -1, h, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count > 0 && coll_null_buf(buf, h))
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with %scount = %d", fn, side,
                        side, count);
    return MPI_SUCCESS;
}

int coll_alias_arg(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                   const void *recvbuf, int moves)
{
    /* both MPI_BOTTOM (absolute addresses in the types) is no aliasing */
    if (moves && sendbuf == recvbuf && sendbuf != NULL)
        return vmpi_err(c, MPI_ERR_BUFFER,
                        "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    return MPI_SUCCESS;
}

/* In allgather(v), sendbuf at this rank's own block of recvbuf (at bytes
 * in) is aliasing too: MPI_IN_PLACE says that. */
static int alias_own(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                     const void *recvbuf, MPI_Aint at, int moves)
{
    if (moves && recvbuf && at && sendbuf == (const char *)recvbuf + at)
        return vmpi_err(c, MPI_ERR_BUFFER,
                        "%s: sendbuf is this rank's block of recvbuf (use MPI_IN_PLACE)", fn);
    return coll_alias_arg(c, fn, sendbuf, recvbuf, moves);
}

int coll_not_in_place(struct vmpi_comm *c, const char *fn, const void *buf, const char *name,
                      const char *where)
{
    if (buf == MPI_IN_PLACE)
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %s is MPI_IN_PLACE%s", fn, name, where);
    return MPI_SUCCESS;
}

/* ---- the checks of whole collectives, shared by the blocking and the
 * non-blocking forms (api/coll.c, api/reduce.c, api/icoll*.c) ------------ */

/* counts and displs arrays of n entries (v forms), with one datatype;
 * *any: some count is positive. */
static int counts_arg(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                      const int *counts, const char *cname, const int *displs,
                      const char *dname, MPI_Datatype h, int n, struct vmpi_dtype **dt,
                      int *any)
{
    char name[16];
    snprintf(name, sizeof name, "%stype", side);
    int rc = coll_type_arg(c, fn, name, -1, h, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!counts)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, cname);
    if (!displs)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, dname);
    *any = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0)
            return vmpi_err(c, MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, cname, i,
                            counts[i]);
        if (counts[i] > 0)
            *any = 1;
    }
    if (*any && coll_null_buf(buf, h))
        return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with nonzero %s", fn, side,
                        cname);
    return MPI_SUCCESS;
}

int coll_gather_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     const int *recvcounts, const int *displs, bool vform, int root,
                     struct vmpi_dtype **sdt, struct vmpi_dtype **rdt)
{
    ROOT_ARG(root, c, fn);
    if (c->rank != root) {
        TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", " on a rank that is not the root"));
        return coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, sdt);
    }
    int any = recvcount > 0;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    if (vform)
        TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", displs, "displs",
                       recvtype, c->size, rdt, &any));
    else
        TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, rdt));
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, sdt));
    return coll_alias_arg(c, fn, sendbuf, recvbuf, sendcount > 0 && any);
}

int coll_scatter_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                      const int *sendcounts, const int *displs, bool vform,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root,
                      struct vmpi_dtype **sdt, struct vmpi_dtype **rdt)
{
    ROOT_ARG(root, c, fn);
    if (c->rank != root) {
        TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", " on a rank that is not the root"));
        return coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, rdt);
    }
    int any = sendcount > 0;
    TRY(coll_not_in_place(c, fn, sendbuf, "sendbuf", ""));
    if (vform)
        TRY(counts_arg(c, fn, "send", sendbuf, sendcounts, "sendcounts", displs, "displs",
                       sendtype, c->size, sdt, &any));
    else
        TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, sdt));
    if (recvbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, rdt));
    return coll_alias_arg(c, fn, sendbuf, recvbuf, any && recvcount > 0);
}

int coll_allgatherv_args(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                         int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                         struct vmpi_dtype **sdt, struct vmpi_dtype **rdt)
{
    int any;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", displs, "displs", recvtype,
                   c->size, rdt, &any));
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, sdt));
    return alias_own(c, fn, sendbuf, recvbuf, (MPI_Aint)displs[c->rank] * vmpi_dtype_extent(*rdt),
                     sendcount > 0 && any);
}

int coll_blocks_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, int sendcount,
                     MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     bool gather, struct vmpi_dtype **sdt, struct vmpi_dtype **rdt)
{
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(coll_data_arg(c, fn, "recv", recvbuf, recvcount, recvtype, rdt));
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    TRY(coll_data_arg(c, fn, "send", sendbuf, sendcount, sendtype, sdt));
    MPI_Aint own = gather ? (MPI_Aint)c->rank * recvcount * vmpi_dtype_extent(*rdt) : 0;
    return alias_own(c, fn, sendbuf, recvbuf, own, sendcount > 0 && recvcount > 0);
}

int coll_alltoallv_args(struct vmpi_comm *c, const char *fn, const void *sendbuf,
                        const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                        void *recvbuf, const int *recvcounts, const int *rdispls,
                        MPI_Datatype recvtype, struct vmpi_dtype **sdt, struct vmpi_dtype **rdt)
{
    int rany, sany;
    TRY(coll_not_in_place(c, fn, recvbuf, "recvbuf", ""));
    TRY(counts_arg(c, fn, "recv", recvbuf, recvcounts, "recvcounts", rdispls, "rdispls",
                   recvtype, c->size, rdt, &rany));
    if (sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    TRY(counts_arg(c, fn, "send", sendbuf, sendcounts, "sendcounts", sdispls, "sdispls",
                   sendtype, c->size, sdt, &sany));
    return coll_alias_arg(c, fn, sendbuf, recvbuf, sany && rany);
}

/* One side of an alltoallw: every array present, counts >= 0, the type of
 * each nonzero block valid and committed, into dts (a zero block's type is
 * not used and may be anything). */
static int w_side(struct vmpi_comm *c, const char *fn, const char *side, const void *buf,
                  const int *counts, const int *displs, const MPI_Datatype *types,
                  struct vmpi_dtype **dts, int *any)
{
    char cname[16], dname[16], tname[16];
    snprintf(cname, sizeof cname, "%scounts", side);
    snprintf(dname, sizeof dname, "%sdispls", side[0] == 's' ? "s" : "r");
    snprintf(tname, sizeof tname, "%stypes", side);
    if (!counts)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, cname);
    if (!displs)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, dname);
    if (!types)
        return vmpi_err(c, MPI_ERR_ARG, "%s: %s is NULL", fn, tname);
    *any = 0;
    for (int i = 0; i < c->size; i++) {
        if (counts[i] < 0)
            return vmpi_err(c, MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, cname, i,
                            counts[i]);
        if (counts[i] == 0) {
            dts[i] = NULL;
            continue;
        }
        *any = 1;
        int rc = coll_type_arg(c, fn, tname, i, types[i], &dts[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        /* MPI_BOTTOM plus a byte displacement is an address */
        if (coll_null_buf(buf, types[i]) && displs[i] == 0)
            return vmpi_err(c, MPI_ERR_BUFFER, "%s: %sbuf is NULL with %s[%d] = %d", fn, side,
                            cname, i, counts[i]);
    }
    return MPI_SUCCESS;
}

struct vmpi_dtype **coll_alltoallw_args(struct vmpi_comm *c, const char *fn,
                                        const void *sendbuf, const int *sendcounts,
                                        const int *sdispls, const MPI_Datatype *sendtypes,
                                        void *recvbuf, const int *recvcounts,
                                        const int *rdispls, const MPI_Datatype *recvtypes,
                                        int *rc)
{
    if ((*rc = coll_not_in_place(c, fn, recvbuf, "recvbuf", "")) != MPI_SUCCESS)
        return NULL;
    struct vmpi_dtype **dts = malloc(sizeof *dts * 2 * (size_t)c->size);
    if (!dts) {
        *rc = vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory for the datatype lists", fn);
        return NULL;
    }
    int rany, sany;
    *rc = w_side(c, fn, "recv", recvbuf, recvcounts, rdispls, recvtypes, dts + c->size, &rany);
    if (*rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE) {
        *rc = w_side(c, fn, "send", sendbuf, sendcounts, sdispls, sendtypes, dts, &sany);
        if (*rc == MPI_SUCCESS)
            *rc = coll_alias_arg(c, fn, sendbuf, recvbuf, sany && rany);
    }
    if (*rc == MPI_SUCCESS)
        return dts;
    free(dts);
    return NULL;
}

int coll_allreduce_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                        int count, MPI_Datatype datatype, MPI_Op op, struct vmpi_dtype **dt)
{
    COUNT_ARG(count, c, fn);
    TRY(coll_type_arg(c, fn, "datatype", -1, datatype, dt));
    TRY(op_arg(c, op, *dt, datatype, fn));
    VMPI_CHECK(recvbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    BUF_ARG(recvbuf, count, datatype, c, fn, "recvbuf");
    if (sendbuf != MPI_IN_PLACE)
        BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
    VMPI_CHECK(count == 0 || sendbuf != recvbuf, c, MPI_ERR_BUFFER,
               "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    return MPI_SUCCESS;
}

int coll_reduce_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                     int count, MPI_Datatype datatype, MPI_Op op, int root,
                     struct vmpi_dtype **dt)
{
    COUNT_ARG(count, c, fn);
    TRY(coll_type_arg(c, fn, "datatype", -1, datatype, dt));
    ROOT_ARG(root, c, fn);
    TRY(op_arg(c, op, *dt, datatype, fn));
    if (c->rank != root) {
        VMPI_CHECK(sendbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER,
                   "%s: sendbuf is MPI_IN_PLACE on a rank that is not the root", fn);
        BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
        return MPI_SUCCESS;
    }
    BUF_ARG(recvbuf, count, datatype, c, fn, "recvbuf");
    VMPI_CHECK(recvbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    if (sendbuf != MPI_IN_PLACE)
        BUF_ARG(sendbuf, count, datatype, c, fn, "sendbuf");
    /* one datatype for both: equal pointers (MPI_BOTTOM too) are one buffer */
    VMPI_CHECK(count == 0 || sendbuf != recvbuf, c, MPI_ERR_BUFFER,
               "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    return MPI_SUCCESS;
}

/* BUF_ARG for an MPI_Count n. */
#define BUFN_ARG(buf, n, h, c, fn, name)                                               \
    VMPI_CHECK(!((n) > 0 && (buf) == NULL && VMPI_HKIND(h) != VMPI_HK_INDIRECT), c,     \
               MPI_ERR_BUFFER, "%s: %s is NULL with %lld elements to hold", fn, name,   \
               (long long)(n))

/* The buffer checks of reduce_scatter(_block): total elements of input in
 * sendbuf (or in recvbuf with MPI_IN_PLACE), mine elements of result. */
static int redscat_bufs(struct vmpi_comm *c, const void *sendbuf, void *recvbuf,
                        MPI_Count total, MPI_Count mine, MPI_Datatype h, const char *fn)
{
    VMPI_CHECK(recvbuf != MPI_IN_PLACE, c, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    if (sendbuf == MPI_IN_PLACE) {
        BUFN_ARG(recvbuf, total, h, c, fn, "recvbuf (MPI_IN_PLACE: the input)");
        return MPI_SUCCESS;
    }
    BUFN_ARG(sendbuf, total, h, c, fn, "sendbuf");
    BUFN_ARG(recvbuf, mine, h, c, fn, "recvbuf");
    VMPI_CHECK(total == 0 || sendbuf != recvbuf, c, MPI_ERR_BUFFER,
               "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    return MPI_SUCCESS;
}

int coll_redscat_args(struct vmpi_comm *c, const char *fn, const void *sendbuf, void *recvbuf,
                      const int *recvcounts, int recvcount, bool vform, MPI_Datatype datatype,
                      MPI_Op op, struct vmpi_dtype **dt)
{
    MPI_Count total = 0, mine = recvcount;
    if (vform) {
        VMPI_CHECK(recvcounts != NULL, c, MPI_ERR_ARG, "%s: recvcounts is NULL", fn);
        for (int i = 0; i < c->size; i++) {
            VMPI_CHECK(recvcounts[i] >= 0, c, MPI_ERR_COUNT,
                       "%s: recvcounts[%d] = %d is negative", fn, i, recvcounts[i]);
            total += recvcounts[i];
        }
        mine = recvcounts[c->rank];
    } else {
        COUNT_ARG(recvcount, c, fn);
        total = (MPI_Count)recvcount * c->size;
    }
    TRY(coll_type_arg(c, fn, "datatype", -1, datatype, dt));
    TRY(op_arg(c, op, *dt, datatype, fn));
    return redscat_bufs(c, sendbuf, recvbuf, total, mine, datatype, fn);
}
