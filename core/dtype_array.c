/* Array datatypes (MPI-3.1 4.1.3 subarray, 4.1.4 darray), composed as the
 * standard defines them: one dimension at a time, fastest first (the last
 * for MPI_ORDER_C), each dimension the blocks of the previous type this
 * process holds, resized to [0, size of the dimension x previous extent).
 * So the result has lb 0 and extent prod(sizes) x extent(oldtype). The
 * steps are ordinary derived types with envelopes; the result keeps the
 * last one as its inner type. */
#include "dtype_impl.h"

#include <stdlib.h>

/* n blocks of cur, bl[i] copies at disp[i] bytes, resized to [0, ext). */
static int dim_type(int n, const int *bl, const MPI_Aint *disp, const struct vmpi_dtype *cur,
                    MPI_Aint ext, struct vmpi_dtype **out)
{
    struct vmpi_dtype_blocks d = { .count = n, .bl = bl, .adisp = disp, .old = cur };
    struct vmpi_dtype *h, *r;
    int rc = vmpi_dtype_indexed(&d, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_HINDEXED, .nseg = 2,
                                 .seg = { { &n, 1 }, { bl, n } }, .aints = disp, .na = n,
                                 .old = cur, .nt = 1 };
    if ((rc = vmpi_dtype_record(h, &a)) != MPI_SUCCESS)
        return rc;
    rc = vmpi_dtype_resized(h, 0, ext, &r);
    if (rc == MPI_SUCCESS) {
        MPI_Aint lbext[2] = { 0, ext };
        struct vmpi_dtype_args ra = { .combiner = MPI_COMBINER_RESIZED, .aints = lbext, .na = 2,
                                      .old = h, .nt = 1 };
        rc = vmpi_dtype_record(r, &ra);
    }
    vmpi_dtype_free(h); /* r's envelope holds it */
    if (rc == MPI_SUCCESS)
        *out = r;
    return rc;
}

/* Replaces *cur (a step of ours when own) by next. */
static void step(struct vmpi_dtype **cur, bool *own, struct vmpi_dtype *next)
{
    if (*own)
        vmpi_dtype_free(*cur);
    *cur = next;
    *own = true;
}

/* The result: a copy of the composed type cur with the envelope a. */
static int finish(struct vmpi_dtype *cur, bool own, struct vmpi_dtype_args *a,
                  struct vmpi_dtype **out)
{
    struct vmpi_dtype *dt;
    int rc = vmpi_dtype_dup(cur, &dt);
    if (rc == MPI_SUCCESS) {
        a->inner = cur;
        rc = vmpi_dtype_record(dt, a);
    }
    if (own)
        vmpi_dtype_free(cur);
    if (rc == MPI_SUCCESS)
        *out = dt;
    return rc;
}

int vmpi_dtype_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                        int order, const struct vmpi_dtype *old, struct vmpi_dtype **out)
{
    struct vmpi_dtype *cur = (struct vmpi_dtype *)old, *next;
    bool own = false;
    MPI_Aint ex = vmpi_dtype_ext(old);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < ndims && rc == MPI_SUCCESS; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Aint disp, next_ex;
        if (__builtin_mul_overflow((MPI_Aint)starts[i], ex, &disp) ||
            __builtin_mul_overflow((MPI_Aint)sizes[i], ex, &next_ex))
            rc = MPI_ERR_ARG;
        else if ((rc = dim_type(1, &subsizes[i], &disp, cur, next_ex, &next)) == MPI_SUCCESS)
            step(&cur, &own, next);
        ex = next_ex;
    }
    if (rc != MPI_SUCCESS) {
        if (own)
            vmpi_dtype_free(cur);
        return rc;
    }
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_SUBARRAY, .nseg = 5,
                                 .seg = { { &ndims, 1 }, { sizes, ndims }, { subsizes, ndims },
                                          { starts, ndims }, { &order, 1 } },
                                 .old = old, .nt = 1 };
    return finish(cur, own, &a, out);
}

/* The blocks this process holds in one dimension of gsize elements of
 * extent ex, dealt in blocks of darg to ps processes, it being the r-th:
 * blocks at r*darg, r*darg + ps*darg, ..., the last one cut at gsize. */
static int darray_dim(MPI_Aint gsize, MPI_Aint darg, MPI_Aint ps, MPI_Aint r,
                      const struct vmpi_dtype *cur, MPI_Aint ex, struct vmpi_dtype **out)
{
    MPI_Aint first = r * darg, stride = ps * darg, ext;
    int n = first < gsize ? (int)((gsize - first + stride - 1) / stride) : 0;
    if (__builtin_mul_overflow(gsize, ex, &ext))
        return MPI_ERR_ARG;
    int *bl = malloc((size_t)(n ? n : 1) * sizeof *bl);
    MPI_Aint *disp = malloc((size_t)(n ? n : 1) * sizeof *disp);
    int rc = bl && disp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        MPI_Aint s = first + k * stride;
        bl[k] = (int)(gsize - s < darg ? gsize - s : darg);
        if (__builtin_mul_overflow(s, ex, &disp[k]))
            rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS)
        rc = dim_type(n, bl, disp, cur, ext, out);
    free(bl);
    free(disp);
    return rc;
}

int vmpi_dtype_darray(const struct vmpi_darray *d, const struct vmpi_dtype *old,
                      struct vmpi_dtype **out)
{
    struct vmpi_dtype *cur = (struct vmpi_dtype *)old, *next;
    bool own = false;
    MPI_Aint ex = vmpi_dtype_ext(old);
    int rc = MPI_SUCCESS;
    /* The process grid is row-major whatever the array order. */
    int *coord = malloc((size_t)(d->ndims ? d->ndims : 1) * sizeof *coord);
    if (!coord)
        return MPI_ERR_NO_MEM;
    for (int i = 0, left = d->size, rank = d->rank; i < d->ndims; i++) {
        left /= d->psizes[i];
        coord[i] = rank / left;
        rank %= left;
    }
    for (int k = 0; k < d->ndims && rc == MPI_SUCCESS; k++) {
        int i = d->order == MPI_ORDER_C ? d->ndims - 1 - k : k;
        MPI_Aint gs = d->gsizes[i], ps = d->psizes[i], darg = d->dargs[i], r = coord[i];
        if (d->distribs[i] == MPI_DISTRIBUTE_NONE)
            darg = gs, ps = 1, r = 0;
        else if (darg == MPI_DISTRIBUTE_DFLT_DARG)
            darg = d->distribs[i] == MPI_DISTRIBUTE_BLOCK ? (gs + ps - 1) / ps : 1;
        if ((rc = darray_dim(gs, darg, ps, r, cur, ex, &next)) == MPI_SUCCESS) {
            step(&cur, &own, next);
            ex = vmpi_dtype_ext(cur);
        }
    }
    free(coord);
    if (rc != MPI_SUCCESS) {
        if (own)
            vmpi_dtype_free(cur);
        return rc;
    }
    int hdr[3] = { d->size, d->rank, d->ndims }, order = d->order;
    struct vmpi_dtype_args a = {
        .combiner = MPI_COMBINER_DARRAY, .nseg = 6,
        .seg = { { hdr, 3 }, { d->gsizes, d->ndims }, { d->distribs, d->ndims },
                 { d->dargs, d->ndims }, { d->psizes, d->ndims }, { &order, 1 } },
        .old = old, .nt = 1 };
    return finish(cur, own, &a, out);
}
