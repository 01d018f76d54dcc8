/* A schedule's allreduce whose merge is code (CALL steps, coll/sched.c):
 * for data no MPI_Op combines in one go, such as comm/idup.c's bitmaps of
 * free context ids (AND) with an instance number (MAX). Recursive
 * doubling as vmpi_coll_iallreduce, for a commutative merge only. */
#include "coll_impl.h"

void coll_sched_allreduce_call(struct coll_sched *s, void *buf, void *tmp, size_t n,
                               coll_sched_fn *merge, void *arg, int *tag)
{
    struct vmpi_comm *c = coll_sched_comm(s);
    struct vmpi_dtype *bt = coll_byte_type();
    int p = c->size, rank = c->rank, t0 = *tag;
    int pof2 = 1, steps = 0;
    while (pof2 * 2 <= p) {
        pof2 *= 2;
        steps++;
    }
    *tag = t0 + steps + 2;
    int rem = p - pof2, newrank = rank - rem;
    /* Fold: an even rank of the first 2 * rem gives its data to the odd one
     * above it and gets the result back at the end. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            coll_sched_send(s, buf, (MPI_Count)n, bt, rank + 1, t0);
            coll_sched_round(s);
            coll_sched_recv(s, buf, (MPI_Count)n, bt, rank + 1, t0 + steps + 1);
            coll_sched_round(s);
            return;
        }
        coll_sched_recv(s, tmp, (MPI_Count)n, bt, rank - 1, t0);
        coll_sched_round(s);
        coll_sched_call(s, merge, arg);
        newrank = rank / 2;
    }
    for (int mask = 1, step = 1; mask < pof2; mask <<= 1, step++) {
        int newdst = newrank ^ mask;
        int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
        coll_sched_send(s, buf, (MPI_Count)n, bt, dst, t0 + step);
        coll_sched_recv(s, tmp, (MPI_Count)n, bt, dst, t0 + step);
        coll_sched_round(s);
        coll_sched_call(s, merge, arg);
    }
    if (rank < 2 * rem)
        coll_sched_send(s, buf, (MPI_Count)n, bt, rank - 1, t0 + steps + 1);
    coll_sched_round(s);
}
