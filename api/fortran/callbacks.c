/* Bindings whose callbacks or attribute values have Fortran conventions
 * (written by hand; tools/gen_fortran.py lists them in HAND).
 *
 * A Fortran copy/delete function takes every argument by reference, the
 * attribute value as INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for the MPI-1
 * MPI_Keyval_create) and returns its error in a last argument. The C
 * library calls C functions, so each Fortran keyval is created with the
 * trampolines below, whose extra_state is a vf_keyval holding the Fortran
 * functions and the caller's extra_state. Those records live as long as
 * the library: a keyval's attributes may outlive MPI_*_free_keyval. */
#include "fortran.h"

#include <stdlib.h>

/* mpi.h spells the C callbacks as macros; here the names are Fortran's. */
#undef MPI_NULL_COPY_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_DUP_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_COMM_DUP_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_NULL_DELETE_FN
#undef MPI_WIN_DUP_FN
#undef MPI_CONVERSION_FN_NULL

typedef void vf_copy_fn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *,
                        MPI_Fint *);
typedef void vf_delete_fn(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);
typedef void vf_copy1_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                         MPI_Fint *);
typedef void vf_delete1_fn(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

struct vf_keyval {
    struct vf_keyval *next; /* all records, reachable until exit */
    int mpi1;               /* MPI_Keyval_create: INTEGER values and state */
    void (*copy)(void);
    void (*del)(void);
    MPI_Aint extra;
};
static struct vf_keyval *vf_keyvals;

static struct vf_keyval *vf_keyval_new(void (*copy)(void), void (*del)(void), MPI_Aint extra,
                                       int mpi1)
{
    struct vf_keyval *k = malloc(sizeof *k);
    if (!k)
        return NULL;
    *k = (struct vf_keyval){vf_keyvals, mpi1, copy, del, extra};
    vf_keyvals = k;
    return k;
}

/* One trampoline for the three object kinds: their handles are all ints. */
static int vf_copy(int obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct vf_keyval *k = extra;
    MPI_Fint fobj = obj, fkey = keyval, fflag = 0, ierr = MPI_SUCCESS;
    MPI_Aint vin = (MPI_Aint)in, vout = 0;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, i = (MPI_Fint)vin, o = 0;
        ((vf_copy1_fn *)k->copy)(&fobj, &fkey, &e, &i, &o, &fflag, &ierr);
        vout = o;
    } else {
        MPI_Aint e = k->extra;
        ((vf_copy_fn *)k->copy)(&fobj, &fkey, &e, &vin, &vout, &fflag, &ierr);
    }
    *(void **)out = (void *)vout;
    *flag = fflag != 0;
    return ierr;
}

static int vf_delete(int obj, int keyval, void *val, void *extra)
{
    struct vf_keyval *k = extra;
    MPI_Fint fobj = obj, fkey = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(MPI_Aint)val;
        ((vf_delete1_fn *)k->del)(&fobj, &fkey, &v, &e, &ierr);
    } else {
        MPI_Aint e = k->extra, v = (MPI_Aint)val;
        ((vf_delete_fn *)k->del)(&fobj, &fkey, &v, &e, &ierr);
    }
    return ierr;
}

/* The create_keyval bindings of comm, type and win differ only in the C
 * function they call and its callback types. */
#define VF_CREATE_KEYVAL(lo, UP, Cname, Obj)                                                 \
    VF_EXPORT void pmpi_##lo##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,     \
                                MPI_Aint *extra, MPI_Fint *ierror);                           \
    void pmpi_##lo##_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval, MPI_Aint *extra, \
                      MPI_Fint *ierror)                                                       \
    {                                                                                         \
        struct vf_keyval *k = vf_keyval_new(copy, del, *extra, 0);                            \
        *ierror = k ? Cname((MPI_##Obj##_copy_attr_function *)vf_copy,                        \
                            (MPI_##Obj##_delete_attr_function *)vf_delete, keyval, k)        \
                    : vf_nomem();                                                             \
    }                                                                                         \
    VF_NAMES(lo, UP)

VF_CREATE_KEYVAL(comm_create_keyval, COMM_CREATE_KEYVAL, MPI_Comm_create_keyval, Comm)
VF_CREATE_KEYVAL(type_create_keyval, TYPE_CREATE_KEYVAL, MPI_Type_create_keyval, Type)
VF_CREATE_KEYVAL(win_create_keyval, WIN_CREATE_KEYVAL, MPI_Win_create_keyval, Win)

VF_EXPORT void pmpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                                   MPI_Fint *extra, MPI_Fint *ierror);
void pmpi_keyval_create_(void (*copy)(void), void (*del)(void), MPI_Fint *keyval,
                         MPI_Fint *extra, MPI_Fint *ierror)
{
    struct vf_keyval *k = vf_keyval_new(copy, del, *extra, 1);
    *ierror = k ? MPI_Keyval_create((MPI_Copy_function *)vf_copy, (MPI_Delete_function *)vf_delete,
                                    keyval, k)
                : vf_nomem();
}
VF_NAMES(keyval_create, KEYVAL_CREATE)

/* Predefined attributes: Fortran's keys are C's + 1 (as in MPICH) and
 * Fortran gets the value itself where C gets a pointer to it. */
static int vf_predef(int fkey, int *ckey, int *is_aint)
{
    static const int ints[] = {MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
                               MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM,
                               MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR, MPI_WIN_MODEL};
    *is_aint = 0;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (fkey == ints[i] + 1) {
            *ckey = ints[i];
            return 1;
        }
    *is_aint = 1;
    if (fkey == MPI_WIN_SIZE + 1) {
        *ckey = MPI_WIN_SIZE;
        return 1;
    }
    if (fkey == MPI_WIN_BASE + 1) { /* C's value is the base address itself */
        *ckey = MPI_WIN_BASE;
        return 0;
    }
    *ckey = fkey;
    return 0;
}

typedef int vf_get_attr_fn(int obj, int key, void *val, int *flag);

static int vf_get_attr(vf_get_attr_fn *get, int obj, int fkey, MPI_Aint *val, MPI_Fint *flag)
{
    int ckey, is_aint, c_flag = 0;
    void *v = NULL;
    int deref = vf_predef(fkey, &ckey, &is_aint);
    int rc = get(obj, ckey, &v, &c_flag);
    *flag = vf_logical(c_flag);
    if (rc == MPI_SUCCESS && c_flag)
        *val = !deref ? (MPI_Aint)v : is_aint ? *(MPI_Aint *)v : *(int *)v;
    return rc;
}

#define VF_GET_ATTR(lo, UP, Cname, Obj)                                                      \
    VF_EXPORT void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, MPI_Aint *val, MPI_Fint *flag, \
                                MPI_Fint *ierror);                                            \
    void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, MPI_Aint *val, MPI_Fint *flag,           \
                      MPI_Fint *ierror)                                                       \
    {                                                                                         \
        *ierror = vf_get_attr((vf_get_attr_fn *)Cname, *obj, *key, val, flag);                \
    }                                                                                         \
    VF_NAMES(lo, UP)

VF_GET_ATTR(comm_get_attr, COMM_GET_ATTR, MPI_Comm_get_attr, Comm)
VF_GET_ATTR(type_get_attr, TYPE_GET_ATTR, MPI_Type_get_attr, Type)
VF_GET_ATTR(win_get_attr, WIN_GET_ATTR, MPI_Win_get_attr, Win)

/* MPI-1's attribute calls: the value is a default INTEGER. */
VF_EXPORT void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *val, MPI_Fint *flag,
                              MPI_Fint *ierror);
void pmpi_attr_get_(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *val, MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Aint v = 0;
    *ierror = vf_get_attr((vf_get_attr_fn *)MPI_Attr_get, *comm, *key, &v, flag);
    if (*ierror == MPI_SUCCESS && *flag)
        *val = (MPI_Fint)v;
}
VF_NAMES(attr_get, ATTR_GET)

VF_EXPORT void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *val, MPI_Fint *ierror);
void pmpi_attr_put_(MPI_Fint *comm, MPI_Fint *key, MPI_Fint *val, MPI_Fint *ierror)
{
    *ierror = MPI_Attr_put(*comm, *key, (void *)(MPI_Aint)*val);
}
VF_NAMES(attr_put, ATTR_PUT)

/* The predefined copy and delete functions, callable from Fortran. */
#define VF_COPY_FN(lo, UP, Val, dup)                                                         \
    VF_EXPORT void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, Val *extra, Val *in, Val *out, \
                                MPI_Fint *flag, MPI_Fint *ierror);                            \
    void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, Val *extra, Val *in, Val *out,           \
                      MPI_Fint *flag, MPI_Fint *ierror)                                       \
    {                                                                                         \
        (void)obj, (void)key, (void)extra;                                                    \
        if (dup)                                                                              \
            *out = *in;                                                                       \
        *flag = dup;                                                                          \
        *ierror = MPI_SUCCESS;                                                                \
    }                                                                                         \
    VF_NAMES(lo, UP)

#define VF_DELETE_FN(lo, UP, Val)                                                            \
    VF_EXPORT void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, Val *val, Val *extra,          \
                                MPI_Fint *ierror);                                            \
    void pmpi_##lo##_(MPI_Fint *obj, MPI_Fint *key, Val *val, Val *extra, MPI_Fint *ierror)  \
    {                                                                                         \
        (void)obj, (void)key, (void)val, (void)extra;                                         \
        *ierror = MPI_SUCCESS;                                                                \
    }                                                                                         \
    VF_NAMES(lo, UP)

VF_COPY_FN(null_copy_fn, NULL_COPY_FN, MPI_Fint, 0)
VF_COPY_FN(dup_fn, DUP_FN, MPI_Fint, 1)
VF_DELETE_FN(null_delete_fn, NULL_DELETE_FN, MPI_Fint)
VF_COPY_FN(comm_null_copy_fn, COMM_NULL_COPY_FN, MPI_Aint, 0)
VF_COPY_FN(comm_dup_fn, COMM_DUP_FN, MPI_Aint, 1)
VF_DELETE_FN(comm_null_delete_fn, COMM_NULL_DELETE_FN, MPI_Aint)
VF_COPY_FN(type_null_copy_fn, TYPE_NULL_COPY_FN, MPI_Aint, 0)
VF_COPY_FN(type_dup_fn, TYPE_DUP_FN, MPI_Aint, 1)
VF_DELETE_FN(type_null_delete_fn, TYPE_NULL_DELETE_FN, MPI_Aint)
VF_COPY_FN(win_null_copy_fn, WIN_NULL_COPY_FN, MPI_Aint, 0)
VF_COPY_FN(win_dup_fn, WIN_DUP_FN, MPI_Aint, 1)
VF_DELETE_FN(win_null_delete_fn, WIN_NULL_DELETE_FN, MPI_Aint)

/* Generalized requests: the Fortran functions get the caller's extra_state
 * variable itself by reference, as in MPICH (a free function that changes
 * it changes the caller's), and return their error in a last argument. */
typedef void vf_query_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void vf_free_fn(MPI_Aint *, MPI_Fint *);
typedef void vf_cancel_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
struct vf_greq {
    vf_query_fn *query;
    vf_free_fn *free_fn;
    vf_cancel_fn *cancel;
    MPI_Aint *extra;
};

static int vf_greq_query(void *extra, MPI_Status *status)
{
    struct vf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)status, &ierr);
    return ierr;
}

static int vf_greq_free(void *extra)
{
    struct vf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free_fn(g->extra, &ierr);
    free(g);
    return ierr;
}

static int vf_greq_cancel(void *extra, int complete)
{
    struct vf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = vf_logical(complete);
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

VF_EXPORT void pmpi_grequest_start_(vf_query_fn *query, vf_free_fn *free_fn, vf_cancel_fn *cancel,
                                    MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror);
void pmpi_grequest_start_(vf_query_fn *query, vf_free_fn *free_fn, vf_cancel_fn *cancel,
                          MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    struct vf_greq *g = malloc(sizeof *g);
    if (!g) {
        *ierror = vf_nomem();
        return;
    }
    *g = (struct vf_greq){query, free_fn, cancel, extra};
    *ierror = MPI_Grequest_start(vf_greq_query, vf_greq_free, vf_greq_cancel, g, request);
    if (*ierror != MPI_SUCCESS)
        free(g);
}
VF_NAMES(grequest_start, GREQUEST_START)

/* User data representations: the Fortran functions take every argument
 * by reference (extra_state, an INTEGER(KIND=MPI_ADDRESS_KIND), a copy
 * the binding keeps) and return their error in a last argument. Passing
 * MPI_CONVERSION_FN_NULL (the procedure below) means no conversion, as
 * C's MPI_CONVERSION_FN_NULL (NULL). The records live as long as the registrations: the process. */
typedef void vf_conv_fn(void *, MPI_Fint *, MPI_Fint *, void *, MPI_Offset *, MPI_Aint *,
                        MPI_Fint *);
typedef void vf_extent_fn(MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *);
struct vf_datarep {
    vf_conv_fn *read, *write;
    vf_extent_fn *extent;
    MPI_Aint extra;
};

VF_EXPORT void pmpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count,
                                        void *filebuf, MPI_Offset *position, MPI_Aint *extra,
                                        MPI_Fint *ierror);
void pmpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count,
                              void *filebuf, MPI_Offset *position, MPI_Aint *extra,
                              MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierror = MPI_SUCCESS;
}
VF_NAMES(conversion_fn_null, CONVERSION_FN_NULL)

static int vf_convert(vf_conv_fn *fn, void *userbuf, MPI_Datatype datatype, int count,
                      void *filebuf, MPI_Offset position, struct vf_datarep *d)
{
    MPI_Fint type = MPI_Type_c2f(datatype), n = count, ierr = MPI_SUCCESS;
    fn(userbuf, &type, &n, filebuf, &position, &d->extra, &ierr);
    return ierr;
}

static int vf_datarep_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                           MPI_Offset position, void *extra)
{
    struct vf_datarep *d = extra;
    return vf_convert(d->read, userbuf, datatype, count, filebuf, position, d);
}

static int vf_datarep_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                            MPI_Offset position, void *extra)
{
    struct vf_datarep *d = extra;
    return vf_convert(d->write, userbuf, datatype, count, filebuf, position, d);
}

static int vf_datarep_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra)
{
    struct vf_datarep *d = extra;
    MPI_Fint type = MPI_Type_c2f(datatype), ierr = MPI_SUCCESS;
    d->extent(&type, extent, &d->extra, &ierr);
    return ierr;
}

VF_EXPORT void pmpi_register_datarep_(const char *datarep, vf_conv_fn *read, vf_conv_fn *write,
                                      vf_extent_fn *extent, MPI_Aint *extra, MPI_Fint *ierror,
                                      size_t datarep_len);
void pmpi_register_datarep_(const char *datarep, vf_conv_fn *read, vf_conv_fn *write,
                            vf_extent_fn *extent, MPI_Aint *extra, MPI_Fint *ierror,
                            size_t datarep_len)
{
    char *name = vf_str_in(datarep, datarep_len, 0);
    struct vf_datarep *d = malloc(sizeof *d);
    if (!name || !d) {
        free(name);
        free(d);
        *ierror = vf_nomem();
        return;
    }
    vf_conv_fn *none = pmpi_conversion_fn_null_;
    *d = (struct vf_datarep){read, write, extent, *extra};
    *ierror = MPI_Register_datarep(name, read == none ? NULL : vf_datarep_read,
                                   write == none ? NULL : vf_datarep_write,
                                   extent ? vf_datarep_extent : NULL, d);
    if (*ierror != MPI_SUCCESS)
        free(d);
    free(name);
}
VF_NAMES(register_datarep, REGISTER_DATAREP)

/* Fortran cannot use the detached buffer's address: it is dropped, as in
 * MPICH; the size is returned. */
VF_EXPORT void pmpi_buffer_detach_(void *buffer, MPI_Fint *size, MPI_Fint *ierror);
void pmpi_buffer_detach_(void *buffer, MPI_Fint *size, MPI_Fint *ierror)
{
    void *addr;
    (void)buffer;
    *ierror = MPI_Buffer_detach(&addr, size);
}
VF_NAMES(buffer_detach, BUFFER_DETACH)

/* MPI_F_SYNC_REG only has to be an external call the compiler cannot see
 * through (MPI-3.1 17.1.17). */
VF_EXPORT void pmpi_f_sync_reg_(void *buf);
void pmpi_f_sync_reg_(void *buf)
{
    (void)buf;
}
VF_NAMES(f_sync_reg, F_SYNC_REG)
