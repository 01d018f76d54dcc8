/* MPI entry points for the array constructors (MPI-3.1 4.1.3
 * MPI_Type_create_subarray, 4.1.4 MPI_Type_create_darray) and for reading
 * back how a type was made (4.1.13 MPI_Type_get_envelope/_contents). */
#include "type_args.h"

#include <stdlib.h>

/* Checks one int array of n entries: present, each at least min. */
static int check_array(const int *v, int n, int min, const char *fn, const char *name)
{
    VMPI_CHECK(v, NULL, MPI_ERR_ARG, "%s: %s is NULL", fn, name);
    for (int i = 0; i < n; i++)
        VMPI_CHECK(v[i] >= min, NULL, MPI_ERR_ARG, "%s: %s[%d] = %d is below %d", fn, name, i,
                   v[i], min);
    return MPI_SUCCESS;
}

static int check_order(int order, const char *fn)
{
    VMPI_CHECK(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, NULL, MPI_ERR_ARG,
               "%s: order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", fn, order);
    return MPI_SUCCESS;
}

/* Hands out a type made by core, which recorded its envelope itself. */
static int made_array(int rc, const struct vmpi_dtype *dt, MPI_Datatype *newtype,
                      const char *fn)
{
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(NULL, rc, "%s: out of memory for the new datatype", fn);
    if (rc != MPI_SUCCESS)
        return vmpi_err(NULL, rc, "%s: the new datatype's extent or displacements overflow "
                        "MPI_Aint", fn);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[], const int array_of_starts[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    VMPI_ENTER(fn);
    VMPI_CHECK(ndims > 0, NULL, MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    TRY(check_array(array_of_sizes, ndims, 1, fn, "array_of_sizes"));
    TRY(check_array(array_of_subsizes, ndims, 0, fn, "array_of_subsizes"));
    TRY(check_array(array_of_starts, ndims, 0, fn, "array_of_starts"));
    for (int i = 0; i < ndims; i++)
        VMPI_CHECK(array_of_subsizes[i] <= array_of_sizes[i] - array_of_starts[i], NULL,
                   MPI_ERR_ARG, "%s: dimension %d: start %d + subsize %d exceed size %d", fn, i,
                   array_of_starts[i], array_of_subsizes[i], array_of_sizes[i]);
    TRY(check_order(order, fn));
    GET_TYPE(old, oldtype, NULL, fn, "oldtype");
    CHECK_PTR(newtype, "MPI_Type_create_subarray");
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                                 old, &dt);
    return made_array(rc, dt, newtype, fn);
}
VMPI_WEAK(Type_create_subarray);

/* The per-dimension rules of 4.1.4 for dimension i. */
static int darray_dim(const struct vmpi_darray *d, int i, const char *fn)
{
    int g = d->gsizes[i], p = d->psizes[i], dist = d->distribs[i], darg = d->dargs[i];
    VMPI_CHECK(dist == MPI_DISTRIBUTE_BLOCK || dist == MPI_DISTRIBUTE_CYCLIC ||
                   dist == MPI_DISTRIBUTE_NONE, NULL, MPI_ERR_ARG,
               "%s: array_of_distribs[%d] = %d is not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE",
               fn, i, dist);
    VMPI_CHECK(darg > 0 || darg == MPI_DISTRIBUTE_DFLT_DARG, NULL, MPI_ERR_ARG,
               "%s: array_of_dargs[%d] = %d is neither positive nor MPI_DISTRIBUTE_DFLT_DARG",
               fn, i, darg);
    VMPI_CHECK(dist != MPI_DISTRIBUTE_NONE || p == 1, NULL, MPI_ERR_ARG,
               "%s: dimension %d is MPI_DISTRIBUTE_NONE but array_of_psizes[%d] is %d, not 1",
               fn, i, i, p);
    VMPI_CHECK(dist != MPI_DISTRIBUTE_BLOCK || darg == MPI_DISTRIBUTE_DFLT_DARG ||
                   (long)darg * p >= g, NULL, MPI_ERR_ARG,
               "%s: dimension %d: %d blocks of %d cannot hold its %d elements (block "
               "distribution needs darg * psize >= gsize)", fn, i, p, darg, g);
    return MPI_SUCCESS;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray";
    VMPI_ENTER(fn);
    VMPI_CHECK(size > 0, NULL, MPI_ERR_ARG, "%s: size %d is not positive", fn, size);
    VMPI_CHECK(rank >= 0 && rank < size, NULL, MPI_ERR_ARG, "%s: rank %d is not in [0, %d)",
               fn, rank, size);
    VMPI_CHECK(ndims > 0, NULL, MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    TRY(check_array(array_of_gsizes, ndims, 1, fn, "array_of_gsizes"));
    TRY(check_array(array_of_psizes, ndims, 1, fn, "array_of_psizes"));
    VMPI_CHECK(array_of_distribs, NULL, MPI_ERR_ARG, "%s: array_of_distribs is NULL", fn);
    VMPI_CHECK(array_of_dargs, NULL, MPI_ERR_ARG, "%s: array_of_dargs is NULL", fn);
    struct vmpi_darray d = { size, rank, ndims, array_of_gsizes, array_of_distribs,
                             array_of_dargs, array_of_psizes, order };
    long procs = 1;
    for (int i = 0; i < ndims; i++) {
        TRY(darray_dim(&d, i, fn));
        if (procs <= size)
            procs *= array_of_psizes[i];
    }
    VMPI_CHECK(procs == size, NULL, MPI_ERR_ARG,
               "%s: the process grid (product of array_of_psizes) does not have size %d "
               "processes", fn, size);
    TRY(check_order(order, fn));
    GET_TYPE(old, oldtype, NULL, fn, "oldtype");
    CHECK_PTR(newtype, "MPI_Type_create_darray");
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_darray(&d, old, &dt);
    return made_array(rc, dt, newtype, fn);
}
VMPI_WEAK(Type_create_darray);

/* ---- envelopes -------------------------------------------------------------- */

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    static const char fn[] = "MPI_Type_get_envelope";
    VMPI_ENTER(fn);
    GET_TYPE(dt, datatype, NULL, fn, "datatype");
    CHECK_PTR(num_integers, "MPI_Type_get_envelope");
    CHECK_PTR(num_addresses, "MPI_Type_get_envelope");
    CHECK_PTR(num_datatypes, "MPI_Type_get_envelope");
    CHECK_PTR(combiner, "MPI_Type_get_envelope");
    const struct vmpi_dtype_env *e = dt->env;
    *num_integers = e ? e->ni : 0;
    *num_addresses = e ? e->na : 0;
    *num_datatypes = e ? e->nt : 0;
    *combiner = e ? e->combiner : MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_envelope);

/* Checks that the user's array for n values of a kind has room and exists. */
static int room(int max, int n, const void *arr, const char *fn, const char *kind)
{
    VMPI_CHECK(max >= n, NULL, MPI_ERR_ARG,
               "%s: max_%s %d is less than the %d the envelope holds", fn, kind, max, n);
    VMPI_CHECK(n == 0 || arr, NULL, MPI_ERR_ARG, "%s: array_of_%s is NULL", fn, kind);
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents";
    VMPI_ENTER(fn);
    GET_TYPE(dt, datatype, NULL, fn, "datatype");
    const struct vmpi_dtype_env *e = dt->env;
    VMPI_CHECK(e, NULL, MPI_ERR_TYPE,
               "%s: datatype %s is a named predefined type: it has no contents (its "
               "combiner is MPI_COMBINER_NAMED)", fn, dt->name);
    TRY(room(max_integers, e->ni, array_of_integers, fn, "integers"));
    TRY(room(max_addresses, e->na, array_of_addresses, fn, "addresses"));
    TRY(room(max_datatypes, e->nt, array_of_datatypes, fn, "datatypes"));
    /* Predefined inner types are returned as they are; a derived one as a
     * new handle (the caller frees it), as the user may have freed its own. */
    for (int i = 0; i < e->nt; i++) {
        struct vmpi_dtype *t = e->types[i], *c;
        if (t->builtin || t->f90) {
            array_of_datatypes[i] = t->handle;
            continue;
        }
        if (vmpi_dtype_clone(t, &c) != MPI_SUCCESS) {
            while (i-- > 0)
                if (!e->types[i]->builtin && !e->types[i]->f90)
                    vmpi_dtype_free(vmpi_dtype_get(array_of_datatypes[i]));
            return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for the inner datatypes",
                            fn);
        }
        array_of_datatypes[i] = c->handle;
    }
    for (int i = 0; i < e->ni; i++)
        array_of_integers[i] = e->ints[i];
    for (int i = 0; i < e->na; i++)
        array_of_addresses[i] = e->aints[i];
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_contents);
