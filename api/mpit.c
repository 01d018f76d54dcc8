/* The tool information interface (MPI-3.1 14.3): initialization, enums,
 * control variables and categories. Performance variables: mpit_pvar.c.
 *
 * Control variables are the environment knobs of base/knob.c, all read at
 * MPI_Init or when the object they shape is made. Their scope is
 * MPI_T_SCOPE_READONLY because nothing changes them once MPI is
 * initialized; before MPI_Init a write sets the environment variable the
 * library will read (a vmpi extension of READONLY, docs/MPI_T.md), and
 * after it the write fails with MPI_T_ERR_CVAR_SET_NOT_NOW. */
#include "mpit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t vmpi_mpit_lock = PTHREAD_MUTEX_INITIALIZER;
int vmpi_mpit_refs;

/* Text control variables are MPI_CHAR arrays of this many bytes. */
#define CVAR_STR_MAX 256

struct MPIR_T_cvar_handle_s {
    int knob;
    struct MPIR_T_cvar_handle_s *next;
};
static struct MPIR_T_cvar_handle_s *cvar_handles;

void vmpi_mpit_str(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(s) + 1;
    if (!buf || *len <= 0) {
        *len = need;
        return;
    }
    int n = need < *len ? need : *len;
    memcpy(buf, s, (size_t)n - 1);
    buf[n - 1] = '\0';
    *len = n;
}

int PMPI_T_init_thread(int required, int *provided)
{
    MPIT_PTR(provided);
    pthread_mutex_lock(&vmpi_mpit_lock);
    vmpi_mpit_tables();
    vmpi_mpit_refs++;
    pthread_mutex_unlock(&vmpi_mpit_lock);
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_init_thread);

int PMPI_T_finalize(void)
{
    MPIT_ENTER();
    if (--vmpi_mpit_refs == 0) {
        vmpi_mpit_pvar_cleanup();
        while (cvar_handles) {
            struct MPIR_T_cvar_handle_s *h = cvar_handles;
            cvar_handles = h->next;
            free(h);
        }
    }
    return MPI_SUCCESS;
}
VMPI_WEAK(T_finalize);

/* vmpi defines no enumerations: every enum handle is invalid. */
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPIT_ENTER();
    (void)enumtype, (void)num, (void)name, (void)name_len;
    return MPI_T_ERR_INVALID_HANDLE;
}
VMPI_WEAK(T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    MPIT_ENTER();
    (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
    return MPI_T_ERR_INVALID_HANDLE;
}
VMPI_WEAK(T_enum_get_item);

/* ---- control variables ---------------------------------------------------- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    MPIT_ENTER();
    MPIT_PTR(num_cvar);
    *num_cvar = vmpi_nknobs;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_get_num);

static int cvar_verbosity(const struct vmpi_knob *k)
{
    if (!strcmp(k->category, "vmpi.launch"))
        return MPI_T_VERBOSITY_MPIDEV_BASIC;
    if (!strcmp(k->name, "VMPI_CHANNELS") || !strcmp(k->name, "FI_PROVIDER") ||
        !strcmp(k->name, "VMPI_VERBOSE"))
        return MPI_T_VERBOSITY_USER_BASIC;
    return MPI_T_VERBOSITY_TUNER_BASIC;
}

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *scope)
{
    MPIT_ENTER();
    if (cvar_index < 0 || cvar_index >= vmpi_nknobs)
        return MPI_T_ERR_INVALID_INDEX;
    const struct vmpi_knob *k = &vmpi_knobs[cvar_index];
    vmpi_mpit_str(k->name, name, name_len);
    vmpi_mpit_str(k->desc, desc, desc_len);
    if (verbosity)
        *verbosity = cvar_verbosity(k);
    if (datatype)
        *datatype = k->kind == VMPI_KNOB_STR ? MPI_CHAR : MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_ENTER();
    MPIT_PTR(name);
    MPIT_PTR(cvar_index);
    int i = vmpi_knob_index(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    MPIT_ENTER();
    (void)obj_handle; /* bound to no object */
    if (cvar_index < 0 || cvar_index >= vmpi_nknobs)
        return MPI_T_ERR_INVALID_INDEX;
    MPIT_PTR(handle);
    MPIT_PTR(count);
    struct MPIR_T_cvar_handle_s *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->knob = cvar_index;
    h->next = cvar_handles;
    cvar_handles = h;
    *handle = h;
    *count = vmpi_knobs[cvar_index].kind == VMPI_KNOB_STR ? CVAR_STR_MAX : 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_handle_alloc);

MPIT_LINK_FN(list_link, struct MPIR_T_cvar_handle_s)

static struct MPIR_T_cvar_handle_s **cvar_link(MPI_T_cvar_handle h)
{
    return list_link(&cvar_handles, h);
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_ENTER();
    MPIT_PTR(handle);
    struct MPIR_T_cvar_handle_s **pp = cvar_link(*handle);
    if (!pp)
        return MPI_T_ERR_INVALID_HANDLE;
    *pp = (*handle)->next;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPIT_ENTER();
    if (!cvar_link(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    MPIT_PTR(buf);
    const struct vmpi_knob *k = &vmpi_knobs[handle->knob];
    if (k->kind == VMPI_KNOB_STR) {
        const char *s = getenv(k->name);
        int len = CVAR_STR_MAX;
        vmpi_mpit_str(s ? s : "", buf, &len);
        return MPI_SUCCESS;
    }
    uint64_t v;
    bool known;
    if (!vmpi_knob_peek(handle->knob, &v, &known))
        return MPI_T_ERR_INVALID; /* the environment holds no valid value */
    unsigned long long out = v;
    memcpy(buf, &out, sizeof out);
    return MPI_SUCCESS;
}
VMPI_WEAK(T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPIT_ENTER();
    if (!cvar_link(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    MPIT_PTR(buf);
    if (vmpi_g.state != 0)
        return MPI_T_ERR_CVAR_SET_NOT_NOW; /* read at MPI_Init; fixed since */
    char text[CVAR_STR_MAX];
    if (vmpi_knobs[handle->knob].kind == VMPI_KNOB_STR) {
        if (strnlen(buf, sizeof text) == sizeof text)
            return MPI_T_ERR_INVALID;
        memcpy(text, buf, strlen(buf) + 1);
    } else {
        unsigned long long v;
        memcpy(&v, buf, sizeof v);
        snprintf(text, sizeof text, "%llu", v);
    }
    return vmpi_knob_set(handle->knob, text) ? MPI_SUCCESS : MPI_T_ERR_INVALID;
}
VMPI_WEAK(T_cvar_write);

/* ---- categories ------------------------------------------------------------- */

int PMPI_T_category_get_num(int *num_cat)
{
    MPIT_ENTER();
    MPIT_PTR(num_cat);
    *num_cat = vmpi_ntcats;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                             int *desc_len, int *num_cvars, int *num_pvars, int *num_categories)
{
    MPIT_ENTER();
    if (cat_index < 0 || cat_index >= vmpi_ntcats)
        return MPI_T_ERR_INVALID_INDEX;
    const struct vmpi_tcat *c = &vmpi_tcats[cat_index];
    vmpi_mpit_str(c->name, name, name_len);
    vmpi_mpit_str(c->desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = c->ncvars;
    if (num_pvars)
        *num_pvars = c->npvars;
    if (num_categories)
        *num_categories = c->nsubs;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_category_get_info);

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPIT_ENTER();
    MPIT_PTR(name);
    MPIT_PTR(cat_index);
    for (int i = 0; i < vmpi_ntcats; i++)
        if (!strcmp(vmpi_tcats[i].name, name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
VMPI_WEAK(T_category_get_index);

enum cat_member { CAT_CVARS, CAT_PVARS, CAT_SUBS };

/* The first len indices of a category's members of one kind. */
static int cat_list(int cat_index, int len, int indices[], enum cat_member member)
{
    if (cat_index < 0 || cat_index >= vmpi_ntcats)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    const struct vmpi_tcat *c = &vmpi_tcats[cat_index];
    const int *from = member == CAT_CVARS ? c->cvars : member == CAT_PVARS ? c->pvars : c->subs;
    int n = member == CAT_CVARS ? c->ncvars : member == CAT_PVARS ? c->npvars : c->nsubs;
    for (int i = 0; i < len && i < n; i++)
        indices[i] = from[i];
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    MPIT_ENTER();
    return cat_list(cat_index, len, indices, CAT_CVARS);
}
VMPI_WEAK(T_category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    MPIT_ENTER();
    return cat_list(cat_index, len, indices, CAT_PVARS);
}
VMPI_WEAK(T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    MPIT_ENTER();
    return cat_list(cat_index, len, indices, CAT_SUBS);
}
VMPI_WEAK(T_category_get_categories);

/* The categories are fixed when the first MPI_T_init_thread builds them. */
int PMPI_T_category_changed(int *update_number)
{
    MPIT_ENTER();
    MPIT_PTR(update_number);
    *update_number = 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_category_changed);
