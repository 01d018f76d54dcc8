/* MPI entry points for datatypes: constructors (MPI-1's removed forms
 * too), queries, names, addresses. Packing is in type_pack.c. Errors that
 * concern no communicator are reported with comm NULL. */
#include "attr.h"
#include "type_args.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int vmpi_api_bad_type(struct vmpi_comm *comm, const char *fn, const char *arg, MPI_Datatype h)
{
    if (h == MPI_DATATYPE_NULL)
        return vmpi_err(comm, MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL", fn, arg);
    return vmpi_err(comm, MPI_ERR_TYPE,
                    "%s: %s 0x%08x is not a valid datatype (never created, or freed)", fn, arg,
                    (unsigned)h);
}

int vmpi_api_type_made(int rc, struct vmpi_dtype *dt, const struct vmpi_dtype_args *a,
                       MPI_Datatype *newtype, const char *fn)
{
    if (rc == MPI_SUCCESS)
        rc = vmpi_dtype_record(dt, a);
    if (rc == MPI_ERR_NO_MEM)
        return vmpi_err(NULL, rc, "%s: out of memory for the new datatype", fn);
    if (rc != MPI_SUCCESS)
        return vmpi_err(NULL, rc, "%s: the new datatype's size or bounds overflow MPI_Aint", fn);
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* Checks count and the blocklength array shared by the irregular constructors. */
static int check_blocks(int count, const int bl[], const void *disp, const char *fn)
{
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    VMPI_CHECK(count == 0 || bl, NULL, MPI_ERR_ARG, "%s: array_of_blocklengths is NULL", fn);
    VMPI_CHECK(count == 0 || disp, NULL, MPI_ERR_ARG, "%s: array_of_displacements is NULL", fn);
    for (int i = 0; bl && i < count; i++)
        VMPI_CHECK(bl[i] >= 0, NULL, MPI_ERR_ARG,
                   "%s: array_of_blocklengths[%d] = %d is negative", fn, i, bl[i]);
    return MPI_SUCCESS;
}

/* ---- constructors -------------------------------------------------------- */

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_contiguous");
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "MPI_Type_contiguous: count %d is negative",
               count);
    GET_TYPE(old, oldtype, NULL, "MPI_Type_contiguous", "oldtype");
    CHECK_PTR(newtype, "MPI_Type_contiguous");
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_contiguous(count, old, &dt);
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_CONTIGUOUS, .nseg = 1,
                                 .seg = { { &count, 1 } }, .old = old, .nt = 1 };
    return vmpi_api_type_made(rc, dt, &a, newtype, "MPI_Type_contiguous");
}
VMPI_WEAK(Type_contiguous);

static int vector(int count, int blocklength, MPI_Aint stride, bool in_extents,
                  MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    int istride = (int)stride; /* MPI_Type_vector's, an int */
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    VMPI_CHECK(blocklength >= 0, NULL, MPI_ERR_ARG, "%s: blocklength %d is negative", fn,
               blocklength);
    GET_TYPE(old, oldtype, NULL, fn, "oldtype");
    VMPI_CHECK(newtype, NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    MPI_Aint bytes = stride;
    if (in_extents)
        VMPI_CHECK(!__builtin_mul_overflow(stride, vmpi_dtype_ext(old), &bytes), NULL,
                   MPI_ERR_ARG, "%s: stride %ld times the extent of oldtype overflows MPI_Aint",
                   fn, (long)stride);
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_hvector(count, blocklength, bytes, old, &dt);
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_HVECTOR, .nseg = 2,
                                 .seg = { { &count, 1 }, { &blocklength, 1 } },
                                 .aints = &stride, .na = 1, .old = old, .nt = 1 };
    if (in_extents) {
        a.combiner = MPI_COMBINER_VECTOR;
        a.seg[2].v = &istride;
        a.seg[2].n = 1;
        a.nseg = 3;
        a.na = 0;
    }
    return vmpi_api_type_made(rc, dt, &a, newtype, fn);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_vector");
    return vector(count, blocklength, stride, true, oldtype, newtype, "MPI_Type_vector");
}
VMPI_WEAK(Type_vector);

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_hvector");
    return vector(count, blocklength, stride, false, oldtype, newtype,
                  "MPI_Type_create_hvector");
}
VMPI_WEAK(Type_create_hvector);

/* The irregular constructors share the argument checks of old/newtype. */
static int indexed(struct vmpi_dtype_blocks *d, struct vmpi_dtype_args *a,
                   MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fn)
{
    GET_TYPE(old, oldtype, NULL, fn, "oldtype");
    VMPI_CHECK(newtype, NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    d->old = old;
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_indexed(d, &dt);
    a->seg[0].v = &d->count;
    a->seg[0].n = 1;
    a->old = old;
    a->nt = 1;
    return vmpi_api_type_made(rc, dt, a, newtype, fn);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_indexed");
    int rc = check_blocks(count, array_of_blocklengths, array_of_displacements,
                          "MPI_Type_indexed");
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_dtype_blocks d = { .count = count, .bl = array_of_blocklengths,
                                   .idisp = array_of_displacements };
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_INDEXED, .nseg = 3,
                                 .seg = { [1] = { array_of_blocklengths, count },
                                          [2] = { array_of_displacements, count } } };
    return indexed(&d, &a, oldtype, newtype, "MPI_Type_indexed");
}
VMPI_WEAK(Type_indexed);

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_indexed_block");
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT,
               "MPI_Type_create_indexed_block: count %d is negative", count);
    VMPI_CHECK(blocklength >= 0, NULL, MPI_ERR_ARG,
               "MPI_Type_create_indexed_block: blocklength %d is negative", blocklength);
    VMPI_CHECK(count == 0 || array_of_displacements, NULL, MPI_ERR_ARG,
               "MPI_Type_create_indexed_block: array_of_displacements is NULL");
    struct vmpi_dtype_blocks d = { .count = count, .bl_all = blocklength,
                                   .idisp = array_of_displacements };
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_INDEXED_BLOCK, .nseg = 3,
                                 .seg = { [1] = { &blocklength, 1 },
                                          [2] = { array_of_displacements, count } } };
    return indexed(&d, &a, oldtype, newtype, "MPI_Type_create_indexed_block");
}
VMPI_WEAK(Type_create_indexed_block);

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_hindexed_block";
    VMPI_ENTER(fn);
    VMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    VMPI_CHECK(blocklength >= 0, NULL, MPI_ERR_ARG, "%s: blocklength %d is negative", fn,
               blocklength);
    VMPI_CHECK(count == 0 || array_of_displacements, NULL, MPI_ERR_ARG,
               "%s: array_of_displacements is NULL", fn);
    struct vmpi_dtype_blocks d = { .count = count, .bl_all = blocklength,
                                   .adisp = array_of_displacements };
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_HINDEXED_BLOCK, .nseg = 2,
                                 .seg = { [1] = { &blocklength, 1 } },
                                 .aints = array_of_displacements, .na = count };
    return indexed(&d, &a, oldtype, newtype, fn);
}
VMPI_WEAK(Type_create_hindexed_block);

/* MPI_Type_create_hindexed, and MPI-1's MPI_Type_hindexed. */
static int hindexed(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                    MPI_Datatype *newtype, const char *fn)
{
    int rc = check_blocks(count, array_of_blocklengths, array_of_displacements, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_dtype_blocks d = { .count = count, .bl = array_of_blocklengths,
                                   .adisp = array_of_displacements };
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_HINDEXED, .nseg = 2,
                                 .seg = { [1] = { array_of_blocklengths, count } },
                                 .aints = array_of_displacements, .na = count };
    return indexed(&d, &a, oldtype, newtype, fn);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_hindexed");
    return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
                    "MPI_Type_create_hindexed");
}
VMPI_WEAK(Type_create_hindexed);

/* MPI_Type_create_struct, and MPI-1's MPI_Type_struct. */
static int struct_type(int count, const int array_of_blocklengths[],
                       const MPI_Aint array_of_displacements[],
                       const MPI_Datatype array_of_types[], MPI_Datatype *newtype,
                       const char *fn)
{
    int rc = check_blocks(count, array_of_blocklengths, array_of_displacements, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(count == 0 || array_of_types, NULL, MPI_ERR_ARG, "%s: array_of_types is NULL",
               fn);
    for (int i = 0; i < count; i++) {
        if (VMPI_UNLIKELY(!vmpi_dtype_get(array_of_types[i]))) {
            char arg[40];
            snprintf(arg, sizeof arg, "array_of_types[%d]", i);
            return vmpi_api_bad_type(NULL, fn, arg, array_of_types[i]);
        }
    }
    VMPI_CHECK(newtype, NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    struct vmpi_dtype_blocks d = { .count = count, .bl = array_of_blocklengths,
                                   .adisp = array_of_displacements, .types = array_of_types };
    struct vmpi_dtype *dt = NULL;
    rc = vmpi_dtype_indexed(&d, &dt);
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_STRUCT, .nseg = 2,
                                 .seg = { { &count, 1 }, { array_of_blocklengths, count } },
                                 .aints = array_of_displacements, .na = count,
                                 .types = array_of_types, .nt = count };
    return vmpi_api_type_made(rc, dt, &a, newtype, fn);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_struct");
    return struct_type(count, array_of_blocklengths, array_of_displacements, array_of_types,
                       newtype, "MPI_Type_create_struct");
}
VMPI_WEAK(Type_create_struct);

/* ---- MPI-1's forms, removed in MPI-3.0 but exported by MPICH and used by
 * old programs: the same types, with the same combiners as from C. */

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_hvector");
    return vector(count, blocklength, stride, false, oldtype, newtype, "MPI_Type_hvector");
}
VMPI_WEAK(Type_hvector);

int PMPI_Type_hindexed(int count, int array_of_blocklengths[],
                       MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_hindexed");
    return hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype,
                    "MPI_Type_hindexed");
}
VMPI_WEAK(Type_hindexed);

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_struct");
    return struct_type(count, array_of_blocklengths, array_of_displacements, array_of_types,
                       newtype, "MPI_Type_struct");
}
VMPI_WEAK(Type_struct);

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_create_resized");
    GET_TYPE(old, oldtype, NULL, "MPI_Type_create_resized", "oldtype");
    CHECK_PTR(newtype, "MPI_Type_create_resized");
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_resized(old, lb, extent, &dt);
    MPI_Aint lbext[2] = { lb, extent };
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_RESIZED, .aints = lbext, .na = 2,
                                 .old = old, .nt = 1 };
    return vmpi_api_type_made(rc, dt, &a, newtype, "MPI_Type_create_resized");
}
VMPI_WEAK(Type_create_resized);

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    VMPI_ENTER("MPI_Type_dup");
    GET_TYPE(old, oldtype, NULL, "MPI_Type_dup", "oldtype");
    CHECK_PTR(newtype, "MPI_Type_dup");
    struct vmpi_dtype *dt = NULL;
    int rc = vmpi_dtype_dup(old, &dt);
    struct vmpi_dtype_args a = { .combiner = MPI_COMBINER_DUP, .old = old, .nt = 1 };
    rc = vmpi_api_type_made(rc, dt, &a, newtype, "MPI_Type_dup");
    return rc == MPI_SUCCESS ? vmpi_api_type_dup_attrs(oldtype, newtype) : rc;
}
VMPI_WEAK(Type_dup);

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    VMPI_ENTER("MPI_Type_commit");
    CHECK_PTR(datatype, "MPI_Type_commit");
    GET_TYPE(dt, *datatype, NULL, "MPI_Type_commit", "datatype");
    dt->committed = true;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_commit);

int PMPI_Type_free(MPI_Datatype *datatype)
{
    VMPI_ENTER("MPI_Type_free");
    CHECK_PTR(datatype, "MPI_Type_free");
    GET_TYPE(dt, *datatype, NULL, "MPI_Type_free", "datatype");
    VMPI_CHECK(!dt->builtin && !dt->f90, NULL, MPI_ERR_TYPE,
               "MPI_Type_free: datatype %s is predefined and cannot be freed",
               dt->f90 ? "from MPI_Type_create_f90_*" : dt->name);
    int rc = vmpi_api_free_attrs("MPI_Type_free", VMPI_ATTR_TYPE, *datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_dtype_free(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_free);

/* ---- queries ------------------------------------------------------------- */

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    VMPI_ENTER("MPI_Type_size");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_size", "datatype");
    CHECK_PTR(size, "MPI_Type_size");
    *size = dt->size > INT_MAX ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_size);

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    VMPI_ENTER("MPI_Type_size_x");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_size_x", "datatype");
    CHECK_PTR(size, "MPI_Type_size_x");
    *size = dt->size;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_size_x);

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    VMPI_ENTER("MPI_Type_get_extent");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_get_extent", "datatype");
    CHECK_PTR(lb, "MPI_Type_get_extent");
    CHECK_PTR(extent, "MPI_Type_get_extent");
    *lb = dt->lb;
    *extent = vmpi_dtype_ext(dt);
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    VMPI_ENTER("MPI_Type_get_extent_x");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_get_extent_x", "datatype");
    CHECK_PTR(lb, "MPI_Type_get_extent_x");
    CHECK_PTR(extent, "MPI_Type_get_extent_x");
    *lb = dt->lb;
    *extent = vmpi_dtype_ext(dt);
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_extent_x);

/* MPI-1's bound queries (removed in MPI-3.0, exported by MPICH). */
static int bound(MPI_Datatype datatype, MPI_Aint *out, int which, const char *fn)
{
    GET_TYPE(dt, datatype, NULL, fn, "datatype");
    VMPI_CHECK(out, NULL, MPI_ERR_ARG, "%s: the result pointer is NULL", fn);
    *out = which < 0 ? dt->lb : which > 0 ? dt->ub : vmpi_dtype_ext(dt);
    return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    VMPI_ENTER("MPI_Type_extent");
    return bound(datatype, extent, 0, "MPI_Type_extent");
}
VMPI_WEAK(Type_extent);

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    VMPI_ENTER("MPI_Type_lb");
    return bound(datatype, displacement, -1, "MPI_Type_lb");
}
VMPI_WEAK(Type_lb);

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    VMPI_ENTER("MPI_Type_ub");
    return bound(datatype, displacement, 1, "MPI_Type_ub");
}
VMPI_WEAK(Type_ub);

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    VMPI_ENTER("MPI_Type_get_true_extent");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_get_true_extent", "datatype");
    CHECK_PTR(true_lb, "MPI_Type_get_true_extent");
    CHECK_PTR(true_extent, "MPI_Type_get_true_extent");
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    VMPI_ENTER("MPI_Type_get_true_extent_x");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_get_true_extent_x", "datatype");
    CHECK_PTR(true_lb, "MPI_Type_get_true_extent_x");
    CHECK_PTR(true_extent, "MPI_Type_get_true_extent_x");
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_true_extent_x);

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    VMPI_ENTER("MPI_Type_get_name");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_get_name", "datatype");
    CHECK_PTR(type_name, "MPI_Type_get_name");
    CHECK_PTR(resultlen, "MPI_Type_get_name");
    size_t n = strlen(dt->name);
    memcpy(type_name, dt->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_get_name);

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    VMPI_ENTER("MPI_Type_set_name");
    GET_TYPE(dt, datatype, NULL, "MPI_Type_set_name", "datatype");
    CHECK_PTR(type_name, "MPI_Type_set_name");
    /* Longer names are truncated to MPI_MAX_OBJECT_NAME - 1 characters. */
    snprintf(dt->name, sizeof dt->name, "%s", type_name);
    return MPI_SUCCESS;
}
VMPI_WEAK(Type_set_name);

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    VMPI_ENTER("MPI_Get_address");
    CHECK_PTR(address, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
VMPI_WEAK(Get_address);

int PMPI_Address(void *location, MPI_Aint *address)
{
    VMPI_ENTER("MPI_Address");
    CHECK_PTR(address, "MPI_Address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
VMPI_WEAK(Address);

/* Address arithmetic (MPI-3.1 4.1.5): addresses from MPI_Get_address are
 * plain virtual addresses here, so adding a displacement and taking a
 * difference are the machine's. Unsigned arithmetic: it wraps instead of
 * overflowing, as address arithmetic does. */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    VMPI_ENTER("MPI_Aint_add");
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
VMPI_WEAK(Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    VMPI_ENTER("MPI_Aint_diff");
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
VMPI_WEAK(Aint_diff);
