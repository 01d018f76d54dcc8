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

bool vmpi_comm_ctx_any(const uint32_t *mask)
{
    for (int w = 0; w < VMPI_CTX_WORDS; w++)
        if (mask[w])
            return true;
    return false;
}

struct agree {
    uint32_t mask[VMPI_CTX_WORDS];
    uint32_t inst;
    uint32_t lacked; /* some member's thread lacked the turn (vmpi_comm_ctx_offer) */
};

/* One round: the bitmaps AND-ed and the rest max-ed to member 0 by a
 * binomial tree, the result sent back down the same tree; prank maps group
 * ranks to c's ranks, t is the round's tag. */
static int agree_round(struct vmpi_comm *c, int n, int me, const int *prank, int t,
                       struct agree *mine)
{
    struct vmpi_dtype *bt = vmpi_dtype_get(MPI_BYTE);
    struct agree in;
    int rc = MPI_SUCCESS, low = 1;
    while (low < n)
        low <<= 1;
    for (int d = 1; d < n && rc == MPI_SUCCESS; d <<= 1) {
        if (me & d) {
            rc = vmpi_p2p_send(mine, sizeof *mine, bt, prank[me - d], t, c, 1);
            low = d;
            break;
        }
        if (me + d < n) {
            rc = vmpi_p2p_recv(&in, sizeof in, bt, prank[me + d], t, c, 1, MPI_STATUS_IGNORE);
            for (int w = 0; w < VMPI_CTX_WORDS; w++)
                mine->mask[w] &= in.mask[w];
            if (in.inst > mine->inst)
                mine->inst = in.inst;
            mine->lacked |= in.lacked;
        }
    }
    if (rc == MPI_SUCCESS && me)
        rc = vmpi_p2p_recv(mine, sizeof *mine, bt, prank[me - low], t, c, 1, MPI_STATUS_IGNORE);
    for (int d = low >> 1; d >= 1 && rc == MPI_SUCCESS; d >>= 1)
        if (me + d < n)
            rc = vmpi_p2p_send(mine, sizeof *mine, bt, prank[me + d], t, c, 1);
    return rc;
}

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
    /* The user's tag above every collective tag (tag + 2^30) keeps
     * concurrent calls on one parent apart; it also orders their turns. */
    struct vmpi_ctx_turn turn;
    vmpi_comm_ctx_turn_begin(&turn, (uint64_t)c->ctx << 32 | (uint32_t)tag);
    struct agree mine;
    mine.inst = vmpi_comm_inst_seen();
    bool alone = n == 1 && vmpi_comm_ctx_free_alone(mine.mask);
    while (!alone) {
        mine.lacked = vmpi_comm_ctx_offer(&turn, mine.mask);
        mine.inst = vmpi_comm_inst_seen();
        rc = agree_round(c, n, me, prank, (1 << 30) | tag, &mine);
        if (rc != MPI_SUCCESS || !mine.lacked || vmpi_comm_ctx_any(mine.mask))
            break;
        vmpi_comm_ctx_turn_pass(&turn);
    }
    vmpi_comm_ctx_turn_end(&turn);
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
