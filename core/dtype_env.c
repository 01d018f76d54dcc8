/* How derived datatypes were made (MPI-3.1 4.1.13): every constructor
 * records its combiner and arguments in an envelope, which
 * MPI_Type_get_envelope/_contents read back and the external32 walk
 * (dtype_ext32.c) follows; and the Fortran 90 parameterized types
 * (MPI_Type_create_f90_*), made once per (p, r) and never freed. */
#include "dtype_impl.h"

#include <stdlib.h>
#include <string.h>

struct vmpi_dtype_env *vmpi_dtype_env_new(int combiner, int ni, int na, int nt)
{
    /* One block: the header, then the addresses, types and ints (in
     * decreasing alignment). */
    size_t size = sizeof(struct vmpi_dtype_env) + (size_t)na * sizeof(MPI_Aint) +
                  (size_t)nt * sizeof(struct vmpi_dtype *) + (size_t)ni * sizeof(int);
    struct vmpi_dtype_env *e = malloc(size);
    if (!e)
        return NULL;
    *e = (struct vmpi_dtype_env){ .refs = 1, .combiner = combiner, .ni = ni, .na = na, .nt = nt };
    e->aints = (MPI_Aint *)(e + 1);
    e->types = (struct vmpi_dtype **)(e->aints + na);
    e->ints = (int *)(e->types + nt);
    return e;
}

void vmpi_dtype_env_attach(struct vmpi_dtype *dt, struct vmpi_dtype_env *e)
{
    for (int i = 0; i < e->nt; i++)
        vmpi_dtype_ref(e->types[i]);
    if (e->inner)
        vmpi_dtype_ref(e->inner);
    dt->env = e;
}

void vmpi_dtype_env_release(struct vmpi_dtype_env *e)
{
    if (!e || --e->refs > 0)
        return;
    for (int i = 0; i < e->nt; i++)
        vmpi_dtype_unref(e->types[i]);
    if (e->inner)
        vmpi_dtype_unref(e->inner);
    free(e);
}

int vmpi_dtype_record(struct vmpi_dtype *dt, const struct vmpi_dtype_args *a)
{
    int ni = 0;
    for (int s = 0; s < a->nseg; s++)
        ni += a->seg[s].n;
    struct vmpi_dtype_env *e = vmpi_dtype_env_new(a->combiner, ni, a->na, a->nt);
    if (!e) {
        vmpi_dtype_free(dt);
        return MPI_ERR_NO_MEM;
    }
    for (int s = 0, at = 0; s < a->nseg; at += a->seg[s].n, s++)
        if (a->seg[s].n)
            memcpy(e->ints + at, a->seg[s].v, (size_t)a->seg[s].n * sizeof(int));
    if (a->na)
        memcpy(e->aints, a->aints, (size_t)a->na * sizeof(MPI_Aint));
    for (int i = 0; i < a->nt; i++)
        e->types[i] = a->types ? vmpi_dtype_get(a->types[i]) : (struct vmpi_dtype *)a->old;
    e->inner = a->inner;
    vmpi_dtype_env_attach(dt, e);
    return MPI_SUCCESS;
}

int vmpi_dtype_clone(const struct vmpi_dtype *dt, struct vmpi_dtype **out)
{
    int rc = vmpi_dtype_dup(dt, out);
    if (rc == MPI_SUCCESS && dt->env) {
        (*out)->env = dt->env;
        dt->env->refs++;
    }
    return rc;
}

/* ---- Fortran 90 parameterized types ----------------------------------------
 * MPI-3.1 17.1.9: the same (combiner, p, r) gives the same handle, so each
 * is made once; they are predefined types, alive until MPI_Finalize. */

static struct vmpi_dtype **f90;
static size_t nf90, capf90;

int vmpi_dtype_f90(int combiner, int p, int r, MPI_Datatype base, struct vmpi_dtype **out)
{
    for (size_t i = 0; i < nf90; i++) {
        const struct vmpi_dtype_env *e = f90[i]->env;
        if (e->combiner == combiner && e->ints[0] == p && (e->ni == 1 || e->ints[1] == r)) {
            *out = f90[i];
            return MPI_SUCCESS;
        }
    }
    if (nf90 == capf90) {
        size_t cap = capf90 ? 2 * capf90 : 8;
        struct vmpi_dtype **n = realloc(f90, cap * sizeof *n);
        if (!n)
            return MPI_ERR_NO_MEM;
        f90 = n;
        capf90 = cap;
    }
    struct vmpi_dtype *dt;
    int rc = vmpi_dtype_dup(vmpi_dtype_get(base), &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    int pr[2] = { p, r };
    struct vmpi_dtype_args a = { .combiner = combiner, .nseg = 1,
                                 .seg = { { pr, combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2 } } };
    rc = vmpi_dtype_record(dt, &a);
    if (rc != MPI_SUCCESS)
        return rc;
    dt->f90 = dt->committed = true;
    f90[nf90++] = dt;
    *out = dt;
    return MPI_SUCCESS;
}

void vmpi_dtype_f90_finalize(void)
{
    free(f90); /* the types themselves go with the other derived types */
    f90 = NULL;
    nf90 = capf90 = 0;
}
