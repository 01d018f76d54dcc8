/* MPI_Comm_create_group (MPI-3.1 6.4.2): only the members of the group
 * take part, so the context id is agreed among them alone, by point-to-point
 * on the parent's collective context: a binomial reduction of the free-id
 * bitmaps to the group's first member and a binomial broadcast back. The
 * messages carry the user's tag above every collective tag (tag + 2^30),
 * so concurrent calls on the same parent with different tags stay apart. */
#include "comm.h"

#include <stdlib.h>

int vmpi_comm_ctx_pick(struct vmpi_comm *c, const uint32_t *mask, uint32_t seen,
                       uint32_t *ctx, uint32_t *inst, const char *fn)
{
    *inst = seen + 1;
    vmpi_comm_inst_saw(*inst);
    for (int w = 0; w < VMPI_CTX_WORDS; w++)
        if (mask[w]) {
            *ctx = 2u * (uint32_t)(w * 32 + __builtin_ctz(mask[w]));
            return MPI_SUCCESS;
        }
    return vmpi_err(c, MPI_ERR_OTHER,
                    "%s: no context id is free on all members (at most %d communicators may "
                    "exist at once); free some with MPI_Comm_free", fn,
                    (VMPI_CTX_WORDS - VMPI_CTX_NB_WORDS) * 32);
}

struct agree {
    uint32_t mask[VMPI_CTX_WORDS];
    uint32_t inst;
};

int vmpi_comm_create_group(struct vmpi_comm *c, struct vmpi_group *g, int tag,
                           struct vmpi_comm **out)
{
    const char *fn = "MPI_Comm_create_group";
    int n = g->size, me = g->rank, rc = MPI_SUCCESS;
    *out = NULL;
    if (me == MPI_UNDEFINED)
        return MPI_SUCCESS;
    int *prank = malloc(sizeof(int) * (size_t)n), *ident = malloc(sizeof(int) * (size_t)n);
    if (!prank || !ident) {
        free(prank);
        free(ident);
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0; i < n; i++)
        ident[i] = i;
    vmpi_group_translate(g->world, n, n, ident, c->group->world, c->size, prank);
    free(ident);
    struct agree mine, in;
    vmpi_comm_ctx_free(mine.mask);
    mine.inst = vmpi_comm_inst_seen();
    struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE);
    int t = (1 << 30) | tag;
    int low = 1;
    while (low < n)
        low <<= 1;
    for (int d = 1; d < n && rc == MPI_SUCCESS; d <<= 1) {
        if (me & d) {
            rc = vmpi_p2p_send(&mine, sizeof mine, bt, prank[me - d], t, c, 1);
            low = d;
            break;
        }
        if (me + d < n) {
            rc = vmpi_p2p_recv(&in, sizeof in, bt, prank[me + d], t, c, 1, MPI_STATUS_IGNORE);
            for (int w = 0; w < VMPI_CTX_WORDS; w++)
                mine.mask[w] &= in.mask[w];
            if (in.inst > mine.inst)
                mine.inst = in.inst;
        }
    }
    if (rc == MPI_SUCCESS && me)
        rc = vmpi_p2p_recv(&mine, sizeof mine, bt, prank[me - low], t, c, 1, MPI_STATUS_IGNORE);
    for (int d = low >> 1; d >= 1 && rc == MPI_SUCCESS; d >>= 1)
        if (me + d < n)
            rc = vmpi_p2p_send(&mine, sizeof mine, bt, prank[me + d], t, c, 1);
    free(prank);
    uint32_t ctx, inst;
    if (rc == MPI_SUCCESS)
        rc = vmpi_comm_ctx_pick(c, mine.mask, mine.inst, &ctx, &inst, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_group_retain(g);
    struct vmpi_comm *nc = vmpi_comm_new(g, ctx, inst, c->errh);
    if (!nc)
        return vmpi_err(c, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *out = nc;
    return MPI_SUCCESS;
}
