/* Caching (MPI-3.1 6.7): keyvals and attributes on communicators,
 * datatypes and windows, the MPI-1 names, the predefined communicator
 * attributes, and MPIR_Dup_fn (MPI_*_DUP_FN). The lists are core/attr.c's.
 *
 * Every function of the three kinds shares one body here, given the kind;
 * errors go to the communicator's or window's handler (datatypes: to
 * MPI_COMM_WORLD's). MPI_TAG_UB is VMPI_TAG_UB: 2^30 - 1. */
#include "api.h"
#include "../pmi/pmi.h"
#include "attr.h"
#include "../rma/rma.h"

static const char *const kind_name[] = {
    [VMPI_ATTR_COMM] = "communicator", [VMPI_ATTR_TYPE] = "datatype", [VMPI_ATTR_WIN] = "window"};

int MPIR_Dup_fn(MPI_Comm comm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- arguments ------------------------------------------------------------- */

/* The object of `kind` named obj, and the communicator its errors go to
 * (*ec; NULL for datatypes). */
static int obj_arg(const char *fn, int kind, int obj, struct vmpi_comm **ec)
{
    *ec = NULL;
    if (kind == VMPI_ATTR_COMM) {
        *ec = vmpi_comm_lookup(obj);
        VMPI_CHECK(*ec, NULL, MPI_ERR_COMM, "%s: comm is not a valid communicator (0x%x)", fn,
                   (unsigned)obj);
    } else if (kind == VMPI_ATTR_WIN) {
        struct vmpi_win *w = vmpi_win_get(obj);
        VMPI_CHECK(w, NULL, MPI_ERR_WIN, "%s: win is not a valid window (0x%x)", fn,
                   (unsigned)obj);
        *ec = w->comm;
    } else {
        VMPI_CHECK(vmpi_dtype_get(obj), NULL, MPI_ERR_TYPE,
                   "%s: datatype is not a valid datatype (0x%x)", fn, (unsigned)obj);
    }
    return MPI_SUCCESS;
}

/* A user keyval of `kind`; `predef_ok` lets predefined ones through (to
 * the caller) with *kv NULL. */
static int keyval_arg(const char *fn, int kind, int keyval, struct vmpi_comm *ec,
                      bool predef_ok, struct vmpi_keyval **kv)
{
    *kv = NULL;
    if (vmpi_keyval_predefined(keyval)) {
        VMPI_CHECK(predef_ok, ec, MPI_ERR_KEYVAL,
                   "%s: keyval 0x%x is predefined: it cannot be set, deleted or freed", fn,
                   (unsigned)keyval);
        return MPI_SUCCESS;
    }
    *kv = vmpi_keyval_get(keyval);
    VMPI_CHECK(*kv, ec, MPI_ERR_KEYVAL, "%s: keyval 0x%x is not a valid keyval%s", fn,
               (unsigned)keyval, keyval == MPI_KEYVAL_INVALID ? " (MPI_KEYVAL_INVALID)" : "");
    VMPI_CHECK((*kv)->kind == kind, ec, MPI_ERR_KEYVAL, "%s: keyval 0x%x is a %s keyval, not a %s one",
               fn, (unsigned)keyval, kind_name[(*kv)->kind], kind_name[kind]);
    return MPI_SUCCESS;
}

/* A callback's error: its own code passes through; a bare class gets a
 * message naming the call. */
static int callback_err(struct vmpi_comm *ec, const char *fn, const char *which, int rc)
{
    if (rc > 0 && rc <= MPI_T_ERR_INVALID)
        return vmpi_err(ec, rc, "%s: an attribute %s callback returned error class %d", fn,
                        which, rc);
    return vmpi_err_handle(ec, rc);
}

/* ---- the shared bodies ---------------------------------------------------------- */

static int create_keyval(const char *fn, int kind, vmpi_attr_copy_fn *copy,
                         vmpi_attr_delete_fn *del, int *keyval, void *extra)
{
    VMPI_CHECK(keyval, NULL, MPI_ERR_ARG, "%s: keyval is NULL", fn);
    int h = vmpi_keyval_new(kind, copy, del, extra);
    VMPI_CHECK(h, NULL, MPI_ERR_NO_MEM, "%s: out of memory or keyvals", fn);
    *keyval = h;
    return MPI_SUCCESS;
}

static int free_keyval(const char *fn, int kind, int *keyval)
{
    VMPI_CHECK(keyval, NULL, MPI_ERR_ARG, "%s: keyval is NULL", fn);
    struct vmpi_keyval *kv;
    int rc = keyval_arg(fn, kind, *keyval, NULL, false, &kv);
    if (rc != MPI_SUCCESS)
        return rc;
    vmpi_keyval_free(kv);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* MPI_*_set_attr (set) and MPI_*_delete_attr: a delete callback that fails
 * leaves the old value in place. Deleting an absent attribute does nothing. */
static int change_attr(const char *fn, int kind, int obj, int keyval, bool set, void *val)
{
    struct vmpi_comm *ec;
    struct vmpi_keyval *kv;
    int rc = obj_arg(fn, kind, obj, &ec);
    if (rc == MPI_SUCCESS)
        rc = keyval_arg(fn, kind, keyval, ec, false, &kv);
    if (rc != MPI_SUCCESS)
        return rc;
    struct vmpi_attr **list = vmpi_attr_list(kind, obj, set);
    VMPI_CHECK(list || !set, ec, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    rc = set ? vmpi_attr_set(list, obj, kv, val)
             : list ? vmpi_attr_delete(list, obj, kv) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? rc : callback_err(ec, fn, "delete", rc);
}

/* Predefined communicator attributes (the same on every communicator): a
 * pointer to a process-lifetime int. */
static int attr_tag_ub = VMPI_TAG_UB;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE;
static int attr_wtime_global = 0;
static int attr_universe;
static int attr_appnum;
static int attr_absent; /* the address of an attribute with no value */

static int *predefined_comm_attr(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: return &attr_tag_ub;
    case MPI_HOST: return &attr_host;
    case MPI_IO: return &attr_io;
    case MPI_WTIME_IS_GLOBAL: return &attr_wtime_global;
    case MPI_UNIVERSE_SIZE:
        attr_universe = vmpi_pmi_universe_size();
        return attr_universe > 0 ? &attr_universe : &attr_absent;
    case MPI_LASTUSEDCODE: return &vmpi_err_lastused;
    case MPI_APPNUM: attr_appnum = vmpi_pmi_appnum(); return &attr_appnum;
    default: return NULL;
    }
}

int vmpi_api_attr_get(const char *fn, int kind, int obj, int keyval, void *attribute_val,
                      int *flag)
{
    struct vmpi_comm *ec;
    struct vmpi_keyval *kv;
    int rc = obj_arg(fn, kind, obj, &ec);
    if (rc != MPI_SUCCESS)
        return rc;
    VMPI_CHECK(attribute_val, ec, MPI_ERR_ARG, "%s: attribute_val is NULL", fn);
    VMPI_CHECK(flag, ec, MPI_ERR_ARG, "%s: flag is NULL", fn);
    rc = keyval_arg(fn, kind, keyval, ec, true, &kv);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!kv) {
        int *v = kind == VMPI_ATTR_COMM ? predefined_comm_attr(keyval) : NULL;
        VMPI_CHECK(v, ec, MPI_ERR_KEYVAL, "%s: keyval 0x%x is not a predefined %s attribute",
                   fn, (unsigned)keyval, kind_name[kind]);
        *flag = v != &attr_absent;
        if (*flag)
            *(int **)attribute_val = v;
        return MPI_SUCCESS;
    }
    struct vmpi_attr **list = vmpi_attr_list(kind, obj, false);
    void *v = NULL;
    *flag = list && vmpi_attr_get(*list, kv, &v);
    if (*flag)
        *(void **)attribute_val = v;
    return MPI_SUCCESS;
}

int vmpi_api_free_attrs(const char *fn, int kind, int obj)
{
    struct vmpi_attr **list = vmpi_attr_list(kind, obj, false);
    if (!list)
        return MPI_SUCCESS;
    int rc = vmpi_attr_clear(list, obj);
    if (rc != MPI_SUCCESS) {
        struct vmpi_comm *ec;
        obj_arg(fn, kind, obj, &ec);
        return callback_err(ec, fn, "delete", rc);
    }
    if (kind != VMPI_ATTR_COMM)
        vmpi_attr_forget(kind, obj);
    return MPI_SUCCESS;
}

int vmpi_api_type_dup_attrs(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct vmpi_attr **from = vmpi_attr_list(VMPI_ATTR_TYPE, oldtype, false);
    if (!from || !*from)
        return MPI_SUCCESS;
    struct vmpi_attr **to = vmpi_attr_list(VMPI_ATTR_TYPE, *newtype, true);
    int rc = to ? vmpi_attr_copy(*from, oldtype, to, *newtype) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        return rc;
    PMPI_Type_free(newtype);
    return callback_err(NULL, "MPI_Type_dup", "copy", rc);
}

/* MPI_Comm_dup and MPI_Comm_dup_with_info (api/comm.c) copy through here. */
int vmpi_api_comm_dup_attrs(struct vmpi_comm *c, struct vmpi_comm *n, const char *fn)
{
    int rc = vmpi_attr_copy(c->attrs, c->handle, &n->attrs, n->handle);
    if (rc == MPI_SUCCESS)
        return rc;
    vmpi_comm_free(n);
    return callback_err(c, fn, "copy", rc);
}

/* ---- the entry points of each kind ------------------------------------------------ */

/* MPI_<K>_create_keyval, _free_keyval, _set_attr and _delete_attr of one
 * kind; MPI_<K>_get_attr is below for communicators and datatypes and
 * api/win.c's for windows (which answers the predefined keys first). */
#define KEYVAL_CALLS(K, KIND, Obj)                                                          \
    int PMPI_##K##_create_keyval(MPI_##K##_copy_attr_function *copy_fn,                     \
                                 MPI_##K##_delete_attr_function *delete_fn, int *keyval,    \
                                 void *extra_state)                                         \
    {                                                                                       \
        VMPI_ENTER("MPI_" #K "_create_keyval");                                             \
        return create_keyval("MPI_" #K "_create_keyval", KIND, copy_fn, delete_fn, keyval,  \
                             extra_state);                                                  \
    }                                                                                       \
    VMPI_WEAK(K##_create_keyval);                                                           \
    int PMPI_##K##_free_keyval(int *keyval)                                                 \
    {                                                                                       \
        VMPI_ENTER("MPI_" #K "_free_keyval");                                               \
        return free_keyval("MPI_" #K "_free_keyval", KIND, keyval);                         \
    }                                                                                       \
    VMPI_WEAK(K##_free_keyval);                                                             \
    int PMPI_##K##_set_attr(Obj obj, int keyval, void *attribute_val)                       \
    {                                                                                       \
        VMPI_ENTER("MPI_" #K "_set_attr");                                                  \
        return change_attr("MPI_" #K "_set_attr", KIND, obj, keyval, true, attribute_val);  \
    }                                                                                       \
    VMPI_WEAK(K##_set_attr);                                                                \
    int PMPI_##K##_delete_attr(Obj obj, int keyval)                                         \
    {                                                                                       \
        VMPI_ENTER("MPI_" #K "_delete_attr");                                               \
        return change_attr("MPI_" #K "_delete_attr", KIND, obj, keyval, false, NULL);       \
    }                                                                                       \
    VMPI_WEAK(K##_delete_attr)

KEYVAL_CALLS(Comm, VMPI_ATTR_COMM, MPI_Comm);
KEYVAL_CALLS(Type, VMPI_ATTR_TYPE, MPI_Datatype);
KEYVAL_CALLS(Win, VMPI_ATTR_WIN, MPI_Win);

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    VMPI_ENTER("MPI_Comm_get_attr");
    return vmpi_api_attr_get("MPI_Comm_get_attr", VMPI_ATTR_COMM, comm, comm_keyval,
                             attribute_val, flag);
}
VMPI_WEAK(Comm_get_attr);

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    VMPI_ENTER("MPI_Type_get_attr");
    return vmpi_api_attr_get("MPI_Type_get_attr", VMPI_ATTR_TYPE, datatype, type_keyval,
                             attribute_val, flag);
}
VMPI_WEAK(Type_get_attr);

/* ---- the MPI-1 names: communicator keyvals ---------------------------------------- */

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    VMPI_ENTER("MPI_Keyval_create");
    return create_keyval("MPI_Keyval_create", VMPI_ATTR_COMM, copy_fn, delete_fn, keyval,
                         extra_state);
}
VMPI_WEAK(Keyval_create);

int PMPI_Keyval_free(int *keyval)
{
    VMPI_ENTER("MPI_Keyval_free");
    return free_keyval("MPI_Keyval_free", VMPI_ATTR_COMM, keyval);
}
VMPI_WEAK(Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    VMPI_ENTER("MPI_Attr_put");
    return change_attr("MPI_Attr_put", VMPI_ATTR_COMM, comm, keyval, true, attribute_val);
}
VMPI_WEAK(Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    VMPI_ENTER("MPI_Attr_get");
    return vmpi_api_attr_get("MPI_Attr_get", VMPI_ATTR_COMM, comm, keyval, attribute_val, flag);
}
VMPI_WEAK(Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    VMPI_ENTER("MPI_Attr_delete");
    return change_attr("MPI_Attr_delete", VMPI_ATTR_COMM, comm, keyval, false, NULL);
}
VMPI_WEAK(Attr_delete);
