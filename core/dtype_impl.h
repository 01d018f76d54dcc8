/* Datatype internals shared by core/dtype.c, core/op.c and api/type.c.
 *
 * A datatype is kept flattened: the list of contiguous runs that make up ONE
 * element, in type-map order. Adjacent runs of the same basic element size
 * are merged, and equally spaced runs of one length are stored once with a
 * repeat count, so a vector of a million blocks is one entry. Packing walks
 * the list and copies each run with one memcpy; count > 1 repeats the walk
 * every extent bytes. */
#ifndef VMPI_CORE_DTYPE_IMPL_H
#define VMPI_CORE_DTYPE_IMPL_H

#include "vmpi.h"

/* rep runs of len bytes, the first at off, the next ones stride bytes apart. */
struct vmpi_dblk {
    MPI_Aint off;    /* from the element's address; may be negative */
    MPI_Aint len;    /* bytes, > 0, a multiple of esize */
    MPI_Aint rep;    /* >= 1 */
    MPI_Aint stride; /* meaningful when rep > 1; may be negative or 0 */
    MPI_Aint pos;    /* where the first run starts in the element's packed form */
    MPI_Aint esize;  /* size of the basic elements it holds (MPI_Get_elements) */
};

struct vmpi_dtype {
    MPI_Datatype handle;
    int refcount;        /* the handle's reference plus one per holder; unused by builtins */
    bool builtin;
    bool committed;
    bool contig;         /* one run at true_lb, len == size == extent */
    bool has_lb, has_ub; /* bounds fixed by MPI_LB/MPI_UB markers or by resized */
    /* The one predefined type all data is made of (selects the reduction
     * kernel): 0 if there is no data at all, MPI_DATATYPE_NULL if mixed. */
    MPI_Datatype basic;
    MPI_Count size;      /* data bytes per element */
    MPI_Count nelem;     /* basic elements per element */
    MPI_Aint lb, ub;
    MPI_Aint true_lb, true_ub;
    MPI_Aint align;      /* largest alignment among the basic types (struct padding) */
    size_t nblk;
    struct vmpi_dblk *blk;
    struct vmpi_dtype_env *env; /* how it was made; NULL for named types */
    bool f90;            /* from MPI_Type_create_f90_*: predefined, never freed */
    char name[MPI_MAX_OBJECT_NAME];
};

/* What MPI_Type_get_envelope/_contents report: the constructor's arguments,
 * in the standard's order, kept in one allocation and shared by the clones
 * MPI_Type_get_contents hands out. It holds a reference on each inner type
 * (the user may free them) and, for subarray and darray, on the type they
 * were composed of (inner), which the external32 walk follows. */
struct vmpi_dtype_env {
    int refs;
    int combiner;
    int ni, na, nt;
    int *ints;
    MPI_Aint *aints;
    struct vmpi_dtype **types;
    struct vmpi_dtype *inner;
};
/* An envelope with room for ni ints, na addresses and nt types (to fill
 * in), or NULL when out of memory. */
struct vmpi_dtype_env *vmpi_dtype_env_new(int combiner, int ni, int na, int nt);
/* Gives dt the envelope (consumes e) and references its types and inner. */
void vmpi_dtype_env_attach(struct vmpi_dtype *dt, struct vmpi_dtype_env *e);
void vmpi_dtype_env_release(struct vmpi_dtype_env *e);
/* The arguments a constructor records: the ints as segments in the
 * standard's order (counts, arrays, ...), the addresses, and the types as
 * handles (types) or as one type (old, when types is NULL). */
struct vmpi_dtype_args {
    int combiner;
    int nseg;
    struct { const int *v; int n; } seg[6];
    const MPI_Aint *aints;
    int na;
    const MPI_Datatype *types;
    const struct vmpi_dtype *old;
    int nt;
    struct vmpi_dtype *inner; /* see vmpi_dtype_env */
};
/* Records how dt was made: MPI_SUCCESS, or MPI_ERR_NO_MEM with dt freed. */
int vmpi_dtype_record(struct vmpi_dtype *dt, const struct vmpi_dtype_args *a);
/* The type MPI_Type_create_f90_* returns for (combiner, p, r), laid out as
 * the named type base: made at the first call, the same one afterwards. */
int vmpi_dtype_f90(int combiner, int p, int r, MPI_Datatype base, struct vmpi_dtype **out);
void vmpi_dtype_f90_finalize(void);
/* A new handle for a type equal to dt (same type map, envelope and commit
 * state): what MPI_Type_get_contents returns for a derived inner type. */
int vmpi_dtype_clone(const struct vmpi_dtype *dt, struct vmpi_dtype **out);

/* IEEE binary128, gfortran's REAL(16), and its complex. */
__extension__ typedef __float128 vmpi_real16;
__extension__ typedef _Complex float __attribute__((mode(TC))) vmpi_complex32;

/* The value/index pairs of MINLOC/MAXLOC (MPI_FLOAT_INT ... MPI_2INT), laid
 * out as the C compiler lays out the user's struct. */
struct vmpi_minloc_fi { float v; int i; };
struct vmpi_minloc_di { double v; int i; };
struct vmpi_minloc_li { long v; int i; };
struct vmpi_minloc_si { short v; int i; };
struct vmpi_minloc_2i { int v; int i; };
struct vmpi_minloc_ldi { long double v; int i; };
/* The Fortran pairs: index of the value's type. */
struct vmpi_minloc_2r { float v; float i; };
struct vmpi_minloc_2d { double v; double i; };

/* vmpi_dtype_get with the predefined basic types (builtin kind, indexed by
 * the handle's low byte) inline, for the point-to-point fast path. */
extern struct vmpi_dtype *vmpi_dtype_basic[256];
static inline struct vmpi_dtype *vmpi_dtype_lookup(MPI_Datatype h)
{
    if (VMPI_LIKELY(VMPI_HKIND(h) == VMPI_HK_BUILTIN)) {
        struct vmpi_dtype *dt = vmpi_dtype_basic[(uint32_t)h & 0xffu];
        if (VMPI_LIKELY(dt != NULL && dt->handle == h))
            return dt;
    }
    return vmpi_dtype_get(h);
}

static inline MPI_Aint vmpi_dtype_ext(const struct vmpi_dtype *dt)
{
    return dt->ub - dt->lb;
}

/* Address base + off without C pointer arithmetic: base may be MPI_BOTTOM
 * (NULL) with absolute displacements, and offsets may be negative. */
static inline char *vmpi_dtype_addr(const void *base, MPI_Aint off)
{
    return (char *)((uintptr_t)base + (uintptr_t)off);
}

/* A request (or anything else) that keeps using a datatype after the user
 * may have called MPI_Type_free holds a reference. Builtins ignore both. */
void vmpi_dtype_ref(struct vmpi_dtype *dt);
void vmpi_dtype_unref(struct vmpi_dtype *dt);
/* MPI_Type_free: the handle becomes invalid at once; the memory goes with
 * the last reference. Not for builtins. */
void vmpi_dtype_free(struct vmpi_dtype *dt);

/* Constructors. Each returns MPI_SUCCESS and a new uncommitted type with a
 * handle and one reference, or MPI_ERR_NO_MEM, or MPI_ERR_ARG when a size,
 * bound or displacement overflows MPI_Aint. Arguments are already checked. */
int vmpi_dtype_contiguous(MPI_Count count, const struct vmpi_dtype *old,
                          struct vmpi_dtype **out);
/* count blocks of blocklen old elements, block i at i * stride bytes. */
int vmpi_dtype_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride,
                       const struct vmpi_dtype *old, struct vmpi_dtype **out);

/* The irregular constructors (indexed, indexed_block, hindexed, struct):
 * block i is bl[i] (or bl_all when bl is NULL) elements of types[i] (or of
 * old when types is NULL) at adisp[i] bytes, or at idisp[i] extents of old
 * when adisp is NULL. With types (MPI_Type_create_struct) the extent is
 * padded to the largest alignment, as C pads a struct. */
struct vmpi_dtype_blocks {
    int count;
    const int *bl;
    int bl_all;
    const MPI_Aint *adisp;
    const int *idisp;
    const MPI_Datatype *types; /* valid handles */
    const struct vmpi_dtype *old;
};
int vmpi_dtype_indexed(const struct vmpi_dtype_blocks *d, struct vmpi_dtype **out);
int vmpi_dtype_resized(const struct vmpi_dtype *old, MPI_Aint lb, MPI_Aint extent,
                       struct vmpi_dtype **out);
/* Same type map and committed state; the name is not copied. */
int vmpi_dtype_dup(const struct vmpi_dtype *old, struct vmpi_dtype **out);

/* MPI_Type_create_subarray and _darray (dtype_array.c), arguments checked,
 * with their envelopes recorded. */
int vmpi_dtype_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                        int order, const struct vmpi_dtype *old, struct vmpi_dtype **out);
struct vmpi_darray {
    int size, rank, ndims;
    const int *gsizes, *distribs, *dargs, *psizes;
    int order;
};
int vmpi_dtype_darray(const struct vmpi_darray *d, const struct vmpi_dtype *old,
                      struct vmpi_dtype **out);

/* external32 (MPI-3.1 13.5.2, dtype_ext32.c): the bytes one element takes,
 * or -1 if the size overflows; pack and unpack of whole buffers. */
MPI_Aint vmpi_dtype_ext32_size(const struct vmpi_dtype *dt);
void vmpi_dtype_ext32_pack(void *out, const void *buf, MPI_Count count,
                           const struct vmpi_dtype *dt);
void vmpi_dtype_ext32_unpack(void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                             const void *in);

#endif
