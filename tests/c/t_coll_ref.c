/* np: 5 1 2 3 4 8 */
/* env: VMPI_COLL_BARRIER=hier VMPI_COLL_BCAST=hier VMPI_COLL_REDUCE=hier VMPI_COLL_ALLREDUCE=hier VMPI_COLL_GATHER=hier VMPI_COLL_SCATTER=hier VMPI_COLL_ALLGATHER=hier VMPI_COLL_ALLTOALL=hier VMPI_COLL_REDUCE_SCATTER=hier VMPI_COLL_SCAN=hier */
/* env: VMPI_COLL_BARRIER=flat VMPI_COLL_BCAST=flat VMPI_COLL_REDUCE=flat VMPI_COLL_ALLREDUCE=flat VMPI_COLL_GATHER=flat VMPI_COLL_SCATTER=flat VMPI_COLL_ALLGATHER=flat VMPI_COLL_ALLTOALL=flat VMPI_COLL_REDUCE_SCATTER=flat VMPI_COLL_SCAN=flat */
/* vms: v2 v3 h2v2 */
/* Correctness matrix of the blocking collectives: each call checked against
 * a serial reference on seeded random data (coll_ref.h). Without options it
 * runs the trimmed set meant for ctest; tests/coll_matrix.sh runs the full
 * matrix (ranks x placements x paths x algorithms) with the same binary;
 * `t_coll_ref -h` lists the options. */
#include "coll_ref.h"

/* ---- data movement --------------------------------------------------------- */

static void t_barrier(struct cr_case *cs)
{
    /* Nobody leaves before the last rank (the root here) has entered: it
     * enters late and tells the others when; CLOCK_MONOTONIC is one clock
     * for all the ranks of one machine, VMs and emulated hosts included. */
    enum { TAG = 9200 };
    double t_in = 0;
    CR_CALL(cs, MPI_Barrier(cs->comm));
    if (cs->me == cs->root) {
        struct timespec d = {0, 5 * 1000 * 1000};
        nanosleep(&d, NULL);
        t_in = cr_now();
    }
    CR_CALL(cs, MPI_Barrier(cs->comm));
    double t_out = cr_now();
    if (cs->me == cs->root) {
        for (int r = 0; r < cs->p; r++)
            if (r != cs->root)
                CR_OK(MPI_Send(&t_in, 1, MPI_DOUBLE, r, TAG, cs->comm));
    } else {
        CR_OK(MPI_Recv(&t_in, 1, MPI_DOUBLE, cs->root, TAG, cs->comm, MPI_STATUS_IGNORE));
        if (t_out < t_in)
            cr_fail(cs, "left the barrier %.3f ms before rank %d (the last) entered it",
                    (t_in - t_out) * 1e3, cs->root);
    }
}

static void t_bcast(struct cr_case *cs)
{
    const struct cr_layout *L = cr_lay_of(cs, cs->bt, cs->me, 1);
    MPI_Aint cnt = (MPI_Aint)cs->n / L->k;
    struct cr_place pl = cr_pl(L, cnt, 0, cs->root);
    struct cr_stream s = cr_stream_gen(cs, cs->bt, -1, cs->root, 0, 0, cs->n);
    struct cr_buf b = cr_buf_make(&pl, 1);
    if (cs->me == cs->root)
        cr_buf_put(&b, &pl, &s);
    CR_CALL(cs, MPI_Bcast(b.p, (int)cnt, L->dt, cs->root, cs->comm));
    struct cr_expect e = cr_exp_make(&b);
    cr_exp_put(&e, &b, &pl, &s, 0);
    cr_check(cs, cs->me == cs->root ? "buffer (root)" : "buffer", &b, &e, &pl, 1, NULL);
    cr_exp_free(&e);
    cr_buf_free(&b);
    cr_stream_free(&s);
}

/* Expected: block r of placements pl holds the stream (owner(r), peer(r)). */
static void expect_blocks(const struct cr_case *cs, struct cr_expect *e, const struct cr_buf *b,
                          const struct cr_place *pl, int nb, int bt_owner_is_block, int fixed)
{
    for (int r = 0; r < nb; r++) {
        if (pl[r].count == 0)
            continue;
        size_t n = (size_t)(pl[r].count * pl[r].L->k);
        struct cr_stream s = bt_owner_is_block ? cr_stream_gen(cs, cs->bt, -1, r, fixed, 0, n)
                                               : cr_stream_gen(cs, cs->bt, -1, fixed, r, 0, n);
        cr_exp_put(e, b, &pl[r], &s, 0);
        cr_stream_free(&s);
    }
}

static void t_gather_any(struct cr_case *cs, int v)
{
    int p = cs->p, me = cs->me, root = cs->root, at_root = me == root;
    int inpl = cs->inplace && at_root;
    const struct cr_layout *Ls = cr_lay_of(cs, cs->bt, me, 0);
    const struct cr_layout *Lr = cr_lay_of(cs, cs->bt, me, 1);
    MPI_Aint *rc = cr_alloc((size_t)p * sizeof *rc);
    int *rci = cr_alloc((size_t)p * sizeof *rci), *displ = cr_alloc((size_t)p * sizeof *displ);
    struct cr_place *rpl = cr_alloc((size_t)p * sizeof *rpl);
    for (int r = 0; r < p; r++) {
        rc[r] = (MPI_Aint)(v ? cr_vn(cs, r, 0, cs->U) : cs->n) / Lr->k;
        rci[r] = (int)rc[r];
    }
    if (v)
        cr_blocks(cs, 0x6a, p, Lr, rc, displ, rpl);
    else
        for (int r = 0; r < p; r++)
            rpl[r] = cr_pl(Lr, rc[r], r * rc[r] * Lr->ext, r);
    size_t nme = v ? cr_vn(cs, me, 0, cs->U) : cs->n;
    MPI_Aint scnt = (MPI_Aint)nme / Ls->k;
    struct cr_place spl = cr_pl(Ls, scnt, 0, me);
    struct cr_stream s = cr_stream_gen(cs, cs->bt, -1, me, 0, 0, nme);
    struct cr_buf sb = cr_buf_make(&spl, 1);
    cr_buf_put(&sb, &spl, &s);
    unsigned char *snap = cr_buf_snap(&sb);
    int have_rb = at_root || !cs->nullarg;
    struct cr_buf rb = cr_buf_make(rpl, have_rb ? p : 0);
    if (inpl)
        cr_buf_put(&rb, &rpl[me], &s);
    const void *sp = inpl ? MPI_IN_PLACE : sb.p;
    int sn = inpl && cs->nullarg ? 0 : (int)scnt;
    MPI_Datatype st = inpl && cs->nullarg ? MPI_DATATYPE_NULL : Ls->dt;
    void *rp = have_rb ? rb.p : NULL;
    MPI_Datatype rt = have_rb ? Lr->dt : MPI_DATATYPE_NULL;
    if (v)
        CR_CALL(cs, MPI_Gatherv(sp, sn, st, rp, have_rb ? rci : NULL, have_rb ? displ : NULL, rt,
                                root, cs->comm));
    else
        CR_CALL(cs, MPI_Gather(sp, sn, st, rp, have_rb ? (int)rc[0] : 0, rt, root, cs->comm));
    cr_check_same(cs, "sendbuf", &sb, snap, &spl, 1);
    if (have_rb) {
        struct cr_expect e = cr_exp_make(&rb);
        if (at_root)
            expect_blocks(cs, &e, &rb, rpl, p, 1, 0);
        cr_check(cs, at_root ? "recvbuf (root)" : "recvbuf of a non-root rank (not significant)",
                 &rb, &e, rpl, p, NULL);
        cr_exp_free(&e);
    }
    cr_buf_free(&rb);
    cr_buf_free(&sb);
    free(snap);
    cr_stream_free(&s);
    free(rc);
    free(rci);
    free(displ);
    free(rpl);
}

static void t_gather(struct cr_case *cs) { t_gather_any(cs, 0); }
static void t_gatherv(struct cr_case *cs) { t_gather_any(cs, 1); }

static void t_scatter_any(struct cr_case *cs, int v)
{
    int p = cs->p, me = cs->me, root = cs->root, at_root = me == root;
    int inpl = cs->inplace && at_root;
    const struct cr_layout *Ls = cr_lay_of(cs, cs->bt, me, 0);
    const struct cr_layout *Lr = cr_lay_of(cs, cs->bt, me, 1);
    MPI_Aint *sc = cr_alloc((size_t)p * sizeof *sc);
    int *sci = cr_alloc((size_t)p * sizeof *sci), *displ = cr_alloc((size_t)p * sizeof *displ);
    struct cr_place *spl = cr_alloc((size_t)p * sizeof *spl);
    for (int r = 0; r < p; r++) {
        sc[r] = (MPI_Aint)(v ? cr_vn(cs, root, r, cs->U) : cs->n) / Ls->k;
        sci[r] = (int)sc[r];
    }
    if (v)
        cr_blocks(cs, 0x5c, p, Ls, sc, displ, spl);
    else
        for (int r = 0; r < p; r++)
            spl[r] = cr_pl(Ls, sc[r], r * sc[r] * Ls->ext, r);
    int have_sb = at_root || !cs->nullarg;
    struct cr_buf sb = cr_buf_make(spl, have_sb ? p : 0);
    if (at_root)
        for (int r = 0; r < p; r++) {
            size_t n = (size_t)(sc[r] * Ls->k);
            struct cr_stream s = cr_stream_gen(cs, cs->bt, -1, root, r, 0, n);
            cr_buf_put(&sb, &spl[r], &s);
            cr_stream_free(&s);
        }
    unsigned char *snap = cr_buf_snap(&sb);
    size_t nme = v ? cr_vn(cs, root, me, cs->U) : cs->n;
    MPI_Aint rcnt = (MPI_Aint)nme / Lr->k;
    struct cr_place rpl = cr_pl(Lr, rcnt, 0, root);
    struct cr_buf rb = cr_buf_make(&rpl, inpl ? 0 : 1);
    void *rp = inpl ? MPI_IN_PLACE : rb.p;
    int rn = inpl && cs->nullarg ? 0 : (int)rcnt;
    MPI_Datatype rt = inpl && cs->nullarg ? MPI_DATATYPE_NULL : Lr->dt;
    void *sp = have_sb ? sb.p : NULL;
    MPI_Datatype st = have_sb ? Ls->dt : MPI_DATATYPE_NULL;
    if (v)
        CR_CALL(cs, MPI_Scatterv(sp, have_sb ? sci : NULL, have_sb ? displ : NULL, st, rp, rn, rt,
                                 root, cs->comm));
    else
        CR_CALL(cs, MPI_Scatter(sp, have_sb ? (int)sc[0] : 0, st, rp, rn, rt, root, cs->comm));
    if (have_sb)
        cr_check_same(cs, at_root ? "sendbuf (root)"
                                  : "sendbuf of a non-root rank (not significant)",
                      &sb, snap, spl, p);
    if (!inpl) {
        struct cr_expect e = cr_exp_make(&rb);
        struct cr_stream s = cr_stream_gen(cs, cs->bt, -1, root, me, 0, nme);
        cr_exp_put(&e, &rb, &rpl, &s, 0);
        cr_check(cs, "recvbuf", &rb, &e, &rpl, 1, NULL);
        cr_stream_free(&s);
        cr_exp_free(&e);
    }
    cr_buf_free(&rb);
    cr_buf_free(&sb);
    free(snap);
    free(sc);
    free(sci);
    free(displ);
    free(spl);
}

static void t_scatter(struct cr_case *cs) { t_scatter_any(cs, 0); }
static void t_scatterv(struct cr_case *cs) { t_scatter_any(cs, 1); }

static void t_allgather_any(struct cr_case *cs, int v)
{
    int p = cs->p, me = cs->me, inpl = cs->inplace;
    const struct cr_layout *Ls = cr_lay_of(cs, cs->bt, me, 0);
    const struct cr_layout *Lr = cr_lay_of(cs, cs->bt, me, 1);
    MPI_Aint *rc = cr_alloc((size_t)p * sizeof *rc);
    int *rci = cr_alloc((size_t)p * sizeof *rci), *displ = cr_alloc((size_t)p * sizeof *displ);
    struct cr_place *rpl = cr_alloc((size_t)p * sizeof *rpl);
    for (int r = 0; r < p; r++) {
        rc[r] = (MPI_Aint)(v ? cr_vn(cs, r, 0, cs->U) : cs->n) / Lr->k;
        rci[r] = (int)rc[r];
    }
    if (v)
        cr_blocks(cs, 0xa9, p, Lr, rc, displ, rpl);
    else
        for (int r = 0; r < p; r++)
            rpl[r] = cr_pl(Lr, rc[r], r * rc[r] * Lr->ext, r);
    size_t nme = v ? cr_vn(cs, me, 0, cs->U) : cs->n;
    MPI_Aint scnt = (MPI_Aint)nme / Ls->k;
    struct cr_place spl = cr_pl(Ls, scnt, 0, me);
    struct cr_stream s = cr_stream_gen(cs, cs->bt, -1, me, 0, 0, nme);
    struct cr_buf sb = cr_buf_make(&spl, inpl ? 0 : 1);
    if (!inpl)
        cr_buf_put(&sb, &spl, &s);
    unsigned char *snap = cr_buf_snap(&sb);
    struct cr_buf rb = cr_buf_make(rpl, p);
    if (inpl)
        cr_buf_put(&rb, &rpl[me], &s);
    const void *sp = inpl ? MPI_IN_PLACE : sb.p;
    int sn = inpl && cs->nullarg ? 0 : (int)scnt;
    MPI_Datatype st = inpl && cs->nullarg ? MPI_DATATYPE_NULL : Ls->dt;
    if (v)
        CR_CALL(cs, MPI_Allgatherv(sp, sn, st, rb.p, rci, displ, Lr->dt, cs->comm));
    else
        CR_CALL(cs, MPI_Allgather(sp, sn, st, rb.p, (int)rc[0], Lr->dt, cs->comm));
    if (!inpl)
        cr_check_same(cs, "sendbuf", &sb, snap, &spl, 1);
    struct cr_expect e = cr_exp_make(&rb);
    expect_blocks(cs, &e, &rb, rpl, p, 1, 0);
    cr_check(cs, "recvbuf", &rb, &e, rpl, p, NULL);
    cr_exp_free(&e);
    cr_buf_free(&rb);
    cr_buf_free(&sb);
    free(snap);
    cr_stream_free(&s);
    free(rc);
    free(rci);
    free(displ);
    free(rpl);
}

static void t_allgather(struct cr_case *cs) { t_allgather_any(cs, 0); }
static void t_allgatherv(struct cr_case *cs) { t_allgather_any(cs, 1); }

/* Alltoall, alltoallv and alltoallw (w: a type family and layout per pair of
 * ranks, byte displacements). With MPI_IN_PLACE the exchange is symmetric:
 * the element counts (and, for w, the types) of i -> j and j -> i agree. */
static void t_alltoall_any(struct cr_case *cs, int form)
{
    enum { A, V, W };
    int p = cs->p, me = cs->me, inpl = cs->inplace;
    int *fam = cr_alloc(2 * (size_t)p * sizeof *fam); /* [0..p): to j, [p..2p): from j */
    const struct cr_layout **Ls = cr_alloc((size_t)p * sizeof *Ls);
    const struct cr_layout **Lr = cr_alloc((size_t)p * sizeof *Lr);
    MPI_Aint *sc = cr_alloc((size_t)p * sizeof *sc), *rc = cr_alloc((size_t)p * sizeof *rc);
    int *sci = cr_alloc((size_t)p * sizeof *sci), *rci = cr_alloc((size_t)p * sizeof *rci);
    int *sd = cr_alloc((size_t)p * sizeof *sd), *rd = cr_alloc((size_t)p * sizeof *rd);
    size_t *sn = cr_alloc((size_t)p * sizeof *sn), *rn = cr_alloc((size_t)p * sizeof *rn);
    MPI_Datatype *st = cr_alloc((size_t)p * sizeof *st), *rt = cr_alloc((size_t)p * sizeof *rt);
    struct cr_place *spl = cr_alloc((size_t)p * sizeof *spl);
    struct cr_place *rpl = cr_alloc((size_t)p * sizeof *rpl);
    int pool[4] = {cs->bt, BT_HET, G.bt_double, G.bt_shortint};
    for (int j = 0; j < p; j++) {
        /* message a -> b: its family and element count */
        int a[2] = {me, j}, b[2] = {j, me};
        for (int d = 0; d < 2; d++) {
            int x = a[d], y = b[d];
            if (inpl && x > y) {
                int t = x;
                x = y;
                y = t;
            }
            int f = cs->bt;
            if (form == W) {
                struct cr_rng r = {cr_hash(cs->seed, 0xfa, (uint64_t)x, (uint64_t)y)};
                f = pool[cr_below(&r, 4)];
            }
            int U = cr_unit_of(f, cs->mix, cs->mixed);
            size_t n = form == A ? cs->n : cr_vn(cs, x, y, U);
            fam[d * p + j] = f;
            (d ? rn : sn)[j] = n;
        }
        int key = form == W ? 1 + me * p + j : me;
        Lr[j] = cr_lay_of(cs, fam[p + j], key, 1);
        Ls[j] = inpl ? Lr[j] : cr_lay_of(cs, fam[j], key, 0);
        sc[j] = (MPI_Aint)sn[j] / Ls[j]->k;
        rc[j] = (MPI_Aint)rn[j] / Lr[j]->k;
        sci[j] = (int)sc[j];
        rci[j] = (int)rc[j];
        st[j] = Ls[j]->dt;
        rt[j] = Lr[j]->dt;
    }
    if (form == A) {
        for (int j = 0; j < p; j++) {
            spl[j] = cr_pl(Ls[0], sc[0], j * sc[0] * Ls[0]->ext, j);
            rpl[j] = cr_pl(Lr[0], rc[0], j * rc[0] * Lr[0]->ext, j);
        }
    } else if (form == V) {
        cr_blocks(cs, 0x51, p, Ls[0], sc, sd, spl);
        cr_blocks(cs, 0x52, p, Lr[0], rc, rd, rpl);
    } else {
        cr_wblocks(cs, 0x53, p, Ls, sc, sd, spl);
        cr_wblocks(cs, 0x54, p, Lr, rc, rd, rpl);
    }
    struct cr_buf sb = cr_buf_make(spl, inpl ? 0 : p), rb = cr_buf_make(rpl, p);
    for (int j = 0; j < p; j++) {
        struct cr_stream s = cr_stream_gen(cs, fam[j], -1, me, j, 0, sn[j]);
        if (inpl)
            cr_buf_put(&rb, &rpl[j], &s);
        else
            cr_buf_put(&sb, &spl[j], &s);
        cr_stream_free(&s);
    }
    unsigned char *snap = cr_buf_snap(&sb);
    int nul = inpl && cs->nullarg;
    const void *sp = inpl ? MPI_IN_PLACE : sb.p;
    if (form == A)
        CR_CALL(cs, MPI_Alltoall(sp, nul ? 0 : (int)sc[0], nul ? MPI_DATATYPE_NULL : st[0], rb.p,
                                 (int)rc[0], rt[0], cs->comm));
    else if (form == V)
        CR_CALL(cs, MPI_Alltoallv(sp, nul ? NULL : sci, nul ? NULL : sd,
                                  nul ? MPI_DATATYPE_NULL : st[0], rb.p, rci, rd, rt[0], cs->comm));
    else
        CR_CALL(cs, MPI_Alltoallw(sp, nul ? NULL : sci, nul ? NULL : sd, nul ? NULL : st, rb.p,
                                  rci, rd, rt, cs->comm));
    if (!inpl)
        cr_check_same(cs, "sendbuf", &sb, snap, spl, p);
    struct cr_expect e = cr_exp_make(&rb);
    for (int j = 0; j < p; j++) {
        struct cr_stream s = cr_stream_gen(cs, fam[p + j], -1, j, me, 0, rn[j]);
        cr_exp_put(&e, &rb, &rpl[j], &s, 0);
        cr_stream_free(&s);
    }
    cr_check(cs, "recvbuf", &rb, &e, rpl, p, NULL);
    cr_exp_free(&e);
    cr_buf_free(&sb);
    cr_buf_free(&rb);
    free(snap);
    free(fam);
    free(Ls);
    free(Lr);
    free(sc);
    free(rc);
    free(sci);
    free(rci);
    free(sd);
    free(rd);
    free(sn);
    free(rn);
    free(st);
    free(rt);
    free(spl);
    free(rpl);
}

static void t_alltoall(struct cr_case *cs) { t_alltoall_any(cs, 0); }
static void t_alltoallv(struct cr_case *cs) { t_alltoall_any(cs, 1); }
static void t_alltoallw(struct cr_case *cs) { t_alltoall_any(cs, 2); }

/* ---- reductions ------------------------------------------------------------- */

/* One reduction call on this rank, twice (the second must repeat the bits
 * of the first). in: where the input is (in the send buffer, or in recvbuf
 * with MPI_IN_PLACE); out: where the result is (if has_out), chk: the part
 * of it compared with the reference ref; undef: part of recvbuf left
 * undefined (if has_undef); rbuf_all: all of recvbuf. */
struct red {
    struct cr_place in, out, chk, rbuf_all, undef;
    int inpl, has_out, has_undef, recv_sig; /* recv_sig: recvbuf passed (else NULL) */
    struct cr_stream input, ref;
};

typedef int red_call(struct cr_case *cs, const void *sp, void *rp, const struct red *R);

static void run_red(struct cr_case *cs, struct red *R, red_call *call, int same_on_all)
{
    unsigned char *res[2] = {NULL, NULL};
    size_t nres = 0;
    if (!R->chk.L)
        R->chk = R->out;
    for (int rep = 0; rep < 2; rep++) {
        struct cr_buf sb = cr_buf_make(&R->in, R->inpl ? 0 : 1);
        struct cr_buf rb = cr_buf_make(&R->rbuf_all, 1);
        if (R->inpl)
            cr_buf_put(&rb, &R->in, &R->input);
        else
            cr_buf_put(&sb, &R->in, &R->input);
        unsigned char *snap = cr_buf_snap(&sb);
        int rc = call(cs, R->inpl ? MPI_IN_PLACE : sb.p, R->recv_sig ? rb.p : NULL, R);
        cr_rc(cs, cs->co->fn, (int)strlen(cs->co->fn), rc);
        if (!R->inpl)
            cr_check_same(cs, "sendbuf", &sb, snap, &R->in, 1);
        if (R->recv_sig) {
            struct cr_expect e = cr_exp_make(&rb);
            const struct cr_stream *fs[1] = {NULL};
            if (R->has_undef)
                cr_exp_put(&e, &rb, &R->undef, &R->input, 1);
            if (R->has_out) {
                cr_exp_put(&e, &rb, &R->chk, &R->ref, 2);
                fs[0] = &R->ref;
            }
            cr_check(cs, R->has_out ? "recvbuf" : "recvbuf (no result expected here)", &rb, &e,
                     &R->chk, 1, fs);
            cr_exp_free(&e);
        }
        if (R->has_out)
            res[rep] = cr_sig_pack(&rb, &R->out, 1, cr_slot(cs->bt), &nres);
        free(snap);
        cr_buf_free(&sb);
        cr_buf_free(&rb);
    }
    if (R->has_out) {
        cr_check_repeat(cs, res[0], res[1], nres, cs->bt);
        if (same_on_all)
            cr_check_same_on_all(cs, res[0], nres, cs->bt);
    }
    free(res[0]);
    free(res[1]);
    cr_stream_free(&R->input);
    cr_stream_free(&R->ref);
}

static const struct cr_layout *red_layout(const struct cr_case *cs)
{
    G.ufn_lay = cr_lay_of(cs, cs->bt, 0, 0);
    return G.ufn_lay;
}

static int call_reduce(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Reduce(sp, rp, (int)R->in.count, R->in.L->dt, cs->op, cs->root, cs->comm);
}

static void t_reduce(struct cr_case *cs)
{
    const struct cr_layout *L = red_layout(cs);
    int at_root = cs->me == cs->root;
    struct red R;
    memset(&R, 0, sizeof R);
    R.in = R.out = R.rbuf_all = cr_pl(L, (MPI_Aint)cs->n / L->k, 0, -1);
    R.inpl = cs->inplace && at_root;
    R.has_out = at_root;
    R.recv_sig = at_root || !cs->nullarg;
    R.input = cr_stream_gen(cs, cs->bt, cs->opi, cs->me, 0, 0, cs->n);
    if (at_root)
        R.ref = cr_ref_reduce(cs, 0, cs->p, 0, 0, cs->n);
    run_red(cs, &R, call_reduce, 0);
}

static int call_allreduce(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Allreduce(sp, rp, (int)R->in.count, R->in.L->dt, cs->op, cs->comm);
}

static void t_allreduce(struct cr_case *cs)
{
    const struct cr_layout *L = red_layout(cs);
    struct red R;
    memset(&R, 0, sizeof R);
    MPI_Aint cnt = (MPI_Aint)cs->n / L->k;
    R.in = R.out = R.rbuf_all = cr_pl(L, cnt, 0, -1);
    R.inpl = cs->inplace;
    R.has_out = R.recv_sig = 1;
    R.input = cr_stream_gen(cs, cs->bt, cs->opi, cs->me, 0, 0, cs->n);
    /* Every rank checks its share of the elements against the reference
     * (the reference costs p times the data), and that all ranks hold the
     * same bits: together that checks all elements everywhere. */
    MPI_Aint lo = cnt * cs->me / cs->p, hi = cnt * (cs->me + 1) / cs->p;
    R.chk = cr_pl(L, hi - lo, lo * L->ext, -1);
    R.chk.first = (size_t)(lo * L->k);
    R.has_undef = 1;
    R.undef = R.out;
    R.ref = cr_ref_reduce(cs, 0, cs->p, 0, R.chk.first, (size_t)((hi - lo) * L->k));
    run_red(cs, &R, call_allreduce, 1);
}

static int call_scan(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Scan(sp, rp, (int)R->in.count, R->in.L->dt, cs->op, cs->comm);
}

static int call_exscan(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Exscan(sp, rp, (int)R->in.count, R->in.L->dt, cs->op, cs->comm);
}

static void t_scan_any(struct cr_case *cs, int ex)
{
    const struct cr_layout *L = red_layout(cs);
    struct red R;
    memset(&R, 0, sizeof R);
    R.in = R.out = R.rbuf_all = cr_pl(L, (MPI_Aint)cs->n / L->k, 0, -1);
    R.inpl = cs->inplace;
    R.recv_sig = 1;
    R.input = cr_stream_gen(cs, cs->bt, cs->opi, cs->me, 0, 0, cs->n);
    int hi = ex ? cs->me : cs->me + 1;
    if (hi > 0) {
        R.has_out = 1;
        R.ref = cr_ref_reduce(cs, 0, hi, 0, 0, cs->n);
    } else { /* exscan on rank 0: recvbuf undefined (MPI-3.1 5.11.2) */
        R.has_undef = 1;
        R.undef = R.out;
    }
    run_red(cs, &R, ex ? call_exscan : call_scan, 0);
}

static void t_scan(struct cr_case *cs) { t_scan_any(cs, 0); }
static void t_exscan(struct cr_case *cs) { t_scan_any(cs, 1); }

static int call_rsb(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Reduce_scatter_block(sp, rp, (int)R->out.count, R->in.L->dt, cs->op, cs->comm);
}

static int *rs_counts;

static int call_rs(struct cr_case *cs, const void *sp, void *rp, const struct red *R)
{
    return MPI_Reduce_scatter(sp, rp, rs_counts, R->in.L->dt, cs->op, cs->comm);
}

/* Reduce_scatter(_block): the input is the whole vector, block r of the
 * reduction goes to rank r; with MPI_IN_PLACE the input is in recvbuf and
 * what follows this rank's result there is undefined. */
static void t_redscat_any(struct cr_case *cs, int v)
{
    const struct cr_layout *L = red_layout(cs);
    int p = cs->p, me = cs->me;
    size_t *bn = cr_alloc((size_t)p * sizeof *bn), tot = 0, off = 0;
    rs_counts = cr_alloc((size_t)p * sizeof *rs_counts);
    for (int r = 0; r < p; r++) {
        bn[r] = v ? cr_vn(cs, r, 0, cs->U) : cs->n;
        rs_counts[r] = (int)(bn[r] / (size_t)L->k);
        if (r < me)
            off += bn[r];
        tot += bn[r];
    }
    struct red R;
    memset(&R, 0, sizeof R);
    R.in = cr_pl(L, (MPI_Aint)tot / L->k, 0, -1);
    R.out = cr_pl(L, (MPI_Aint)bn[me] / L->k, 0, -1);
    R.out.first = off; /* element numbers of the whole vector in messages */
    R.inpl = cs->inplace;
    R.rbuf_all = R.inpl ? R.in : R.out;
    R.has_out = R.recv_sig = 1;
    if (R.inpl && tot > bn[me]) {
        R.has_undef = 1;
        R.undef = cr_pl(L, (MPI_Aint)(tot - bn[me]) / L->k, R.out.count * L->ext, -1);
        R.undef.first = bn[me];
    }
    R.input = cr_stream_gen(cs, cs->bt, cs->opi, me, 0, 0, tot);
    R.ref = cr_ref_reduce(cs, 0, p, 0, off, bn[me]);
    run_red(cs, &R, v ? call_rs : call_rsb, 0);
    free(rs_counts);
    free(bn);
}

static void t_reduce_scatter_block(struct cr_case *cs) { t_redscat_any(cs, 0); }
static void t_reduce_scatter(struct cr_case *cs) { t_redscat_any(cs, 1); }

/* Reduce_local: inoutbuf = inbuf op inoutbuf, on one rank. A user op is
 * created and freed for the call; MPI_Op_commutative must know which ops
 * commute. */
static void t_reduce_local(struct cr_case *cs)
{
    const struct cr_layout *L = red_layout(cs);
    MPI_Aint cnt = (MPI_Aint)cs->n / L->k;
    struct cr_place pl = cr_pl(L, cnt, 0, -1);
    struct cr_stream in = cr_stream_gen(cs, cs->bt, cs->opi, cs->me, 1, 0, cs->n);
    struct cr_stream io = cr_stream_gen(cs, cs->bt, cs->opi, cs->me, 2, 0, cs->n);
    struct cr_stream ref = cr_stream_new(cs->bt, cs->n);
    cr_fold(cs->opi, &ref, in.d, 0);
    cr_fold(cs->opi, &ref, io.d, 1);
    MPI_Op op = cs->op;
    if (cs->opi >= O_UCOMM)
        CR_CALL(cs, MPI_Op_create(cs->opi == O_UCOMM ? cr_ucomm_fn : cr_unonc_fn,
                                  cs->opi == O_UCOMM, &op));
    int commute = -1;
    CR_CALL(cs, MPI_Op_commutative(op, &commute));
    if (commute != (cs->opi != O_UNONC))
        cr_fail(cs, "MPI_Op_commutative says %d", commute);
    unsigned char *res[2] = {NULL, NULL};
    size_t nres = 0;
    for (int rep = 0; rep < 2; rep++) {
        struct cr_buf ib = cr_buf_make(&pl, 1), ob = cr_buf_make(&pl, 1);
        cr_buf_put(&ib, &pl, &in);
        cr_buf_put(&ob, &pl, &io);
        unsigned char *snap = cr_buf_snap(&ib);
        CR_CALL(cs, MPI_Reduce_local(ib.p, ob.p, (int)cnt, L->dt, op));
        cr_check_same(cs, "inbuf", &ib, snap, &pl, 1);
        struct cr_expect e = cr_exp_make(&ob);
        cr_exp_put(&e, &ob, &pl, &ref, 2);
        const struct cr_stream *fs[1] = {&ref};
        cr_check(cs, "inoutbuf", &ob, &e, &pl, 1, fs);
        res[rep] = cr_sig_pack(&ob, &pl, 1, cr_slot(cs->bt), &nres);
        cr_exp_free(&e);
        free(snap);
        cr_buf_free(&ib);
        cr_buf_free(&ob);
    }
    cr_check_repeat(cs, res[0], res[1], nres, cs->bt);
    if (cs->opi >= O_UCOMM) {
        CR_CALL(cs, MPI_Op_free(&op));
        if (op != MPI_OP_NULL)
            cr_fail(cs, "MPI_Op_free did not set the handle to MPI_OP_NULL");
    }
    free(res[0]);
    free(res[1]);
    cr_stream_free(&in);
    cr_stream_free(&io);
    cr_stream_free(&ref);
}

static const struct coll_test tests[] = {
    {"barrier", "MPI_Barrier", F_ROOT | F_NOCOUNT, t_barrier},
    {"bcast", "MPI_Bcast", F_ROOT, t_bcast},
    {"reduce", "MPI_Reduce", F_ROOT | F_INPLACE | F_RED | F_NULLARG, t_reduce},
    {"allreduce", "MPI_Allreduce", F_INPLACE | F_RED, t_allreduce},
    {"gather", "MPI_Gather", F_ROOT | F_INPLACE | F_BLOCKS | F_NULLARG, t_gather},
    {"gatherv", "MPI_Gatherv", F_ROOT | F_INPLACE | F_BLOCKS | F_V | F_NULLARG, t_gatherv},
    {"scatter", "MPI_Scatter", F_ROOT | F_INPLACE | F_BLOCKS | F_NULLARG, t_scatter},
    {"scatterv", "MPI_Scatterv", F_ROOT | F_INPLACE | F_BLOCKS | F_V | F_NULLARG, t_scatterv},
    {"allgather", "MPI_Allgather", F_INPLACE | F_BLOCKS | F_NULLARG, t_allgather},
    {"allgatherv", "MPI_Allgatherv", F_INPLACE | F_BLOCKS | F_V | F_NULLARG, t_allgatherv},
    {"alltoall", "MPI_Alltoall", F_INPLACE | F_BLOCKS | F_NULLARG, t_alltoall},
    {"alltoallv", "MPI_Alltoallv", F_INPLACE | F_BLOCKS | F_V | F_NULLARG, t_alltoallv},
    {"alltoallw", "MPI_Alltoallw", F_INPLACE | F_BLOCKS | F_V | F_NULLARG, t_alltoallw},
    {"reduce_scatter_block", "MPI_Reduce_scatter_block", F_INPLACE | F_RED | F_BLOCKS,
     t_reduce_scatter_block},
    {"reduce_scatter", "MPI_Reduce_scatter", F_INPLACE | F_RED | F_BLOCKS | F_V,
     t_reduce_scatter},
    {"scan", "MPI_Scan", F_INPLACE | F_RED, t_scan},
    {"exscan", "MPI_Exscan", F_INPLACE | F_RED, t_exscan},
    {"reduce_local", "MPI_Reduce_local", F_RED | F_LOCAL, t_reduce_local},
};

int main(int argc, char **argv)
{
    return cr_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
