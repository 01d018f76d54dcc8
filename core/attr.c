/* Keyvals and attribute lists (core/attr.h has the scheme). Callbacks may
 * call MPI again (free the keyval, read other attributes), so a node is
 * unlinked only after its delete callback succeeded, and a keyval goes only
 * when its last reference does. */
#include "vmpi.h"

#include <stdlib.h>

#define KV_OBJ 9u /* MPICH's keyval object type */
#define KV_MAX (1u << 22)

static struct vmpi_keyval **kv_tab; /* by index; index 0 is never used */
static uint32_t kv_used = 1, kv_cap;

int vmpi_keyval_new(int kind, vmpi_attr_copy_fn *copy, vmpi_attr_delete_fn *del, void *extra)
{
    if (kv_used == KV_MAX)
        return 0;
    if (kv_used >= kv_cap) {
        uint32_t cap = kv_cap ? 2 * kv_cap : 64;
        struct vmpi_keyval **t = realloc(kv_tab, sizeof *t * cap);
        if (!t)
            return 0;
        kv_tab = t;
        kv_cap = cap;
    }
    struct vmpi_keyval *kv = malloc(sizeof *kv);
    if (!kv)
        return 0;
    uint32_t idx = kv_used++;
    *kv = (struct vmpi_keyval){
        .handle = (int)((uint32_t)VMPI_HK_INDIRECT << 30 | KV_OBJ << 26 |
                        (uint32_t)kind << 22 | idx),
        .kind = kind, .refs = 1, .copy = copy, .del = del, .extra = extra};
    kv_tab[idx] = kv;
    return kv->handle;
}

struct vmpi_keyval *vmpi_keyval_get(int handle)
{
    uint32_t h = (uint32_t)handle, idx = h & (KV_MAX - 1);
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != KV_OBJ || idx == 0 ||
        idx >= kv_used)
        return NULL;
    return kv_tab[idx];
}

static void kv_release(struct vmpi_keyval *kv)
{
    if (--kv->refs > 0)
        return;
    kv_tab[(uint32_t)kv->handle & (KV_MAX - 1)] = NULL;
    free(kv);
}

void vmpi_keyval_free(struct vmpi_keyval *kv)
{
    if (kv->freed)
        return;
    kv->freed = true;
    kv_release(kv);
}

bool vmpi_keyval_predefined(int handle)
{
    uint32_t h = (uint32_t)handle;
    return VMPI_HKIND(h) == VMPI_HK_BUILTIN && VMPI_HTYPE(h) == KV_OBJ;
}

/* ---- which list ---------------------------------------------------------- */

/* Datatypes and windows that have (or had) attributes. */
struct obj_attrs {
    struct obj_attrs *next;
    int kind, obj;
    struct vmpi_attr *attrs;
};
static struct obj_attrs *side;

struct vmpi_attr **vmpi_attr_list(int kind, int obj, bool make)
{
    if (kind == VMPI_ATTR_COMM) {
        struct vmpi_comm *c = vmpi_comm_lookup(obj);
        return c ? &c->attrs : NULL;
    }
    for (struct obj_attrs *o = side; o; o = o->next)
        if (o->obj == obj && o->kind == kind)
            return &o->attrs;
    if (!make)
        return NULL;
    struct obj_attrs *o = malloc(sizeof *o);
    if (!o)
        return NULL;
    *o = (struct obj_attrs){side, kind, obj, NULL};
    side = o;
    return &o->attrs;
}

/* ---- one list -------------------------------------------------------------- */

static struct vmpi_attr **find(struct vmpi_attr **list, const struct vmpi_keyval *kv)
{
    for (; *list; list = &(*list)->next)
        if ((*list)->kv == kv)
            return list;
    return NULL;
}

static int call_delete(const struct vmpi_attr *a, int obj)
{
    struct vmpi_keyval *kv = a->kv;
    return kv->del ? kv->del(obj, kv->handle, a->val, kv->extra) : MPI_SUCCESS;
}

/* Unlinks *at (whose callback has run) and drops its keyval reference. */
static void unlink_node(struct vmpi_attr **at)
{
    struct vmpi_attr *a = *at;
    *at = a->next;
    kv_release(a->kv);
    free(a);
}

/* A new node at *at (a list head or a node's next). */
static int link_node(struct vmpi_attr **at, struct vmpi_keyval *kv, void *val)
{
    struct vmpi_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    *a = (struct vmpi_attr){*at, kv, val};
    *at = a;
    kv->refs++;
    return MPI_SUCCESS;
}

int vmpi_attr_set(struct vmpi_attr **list, int obj, struct vmpi_keyval *kv, void *val)
{
    struct vmpi_attr **at = find(list, kv);
    if (!at)
        return link_node(list, kv, val);
    int rc = call_delete(*at, obj);
    if (rc != MPI_SUCCESS)
        return rc;
    at = find(list, kv); /* the callback may have changed the list */
    if (!at)
        return link_node(list, kv, val);
    (*at)->val = val;
    return MPI_SUCCESS;
}

bool vmpi_attr_get(struct vmpi_attr *list, const struct vmpi_keyval *kv, void **val)
{
    for (; list; list = list->next)
        if (list->kv == kv) {
            *val = list->val;
            return true;
        }
    return false;
}

int vmpi_attr_delete(struct vmpi_attr **list, int obj, struct vmpi_keyval *kv)
{
    struct vmpi_attr **at = find(list, kv);
    if (!at)
        return MPI_SUCCESS;
    int rc = call_delete(*at, obj);
    if (rc == MPI_SUCCESS && (at = find(list, kv)))
        unlink_node(at);
    return rc;
}

int vmpi_attr_clear(struct vmpi_attr **list, int obj)
{
    while (*list) {
        struct vmpi_attr *a = *list;
        int rc = call_delete(a, obj);
        if (rc != MPI_SUCCESS)
            return rc;
        struct vmpi_attr **at = find(list, a->kv);
        if (at)
            unlink_node(at);
    }
    return MPI_SUCCESS;
}

int vmpi_attr_copy(struct vmpi_attr *from, int oldobj, struct vmpi_attr **to, int newobj)
{
    struct vmpi_attr **tail = to;
    for (struct vmpi_attr *a = from; a; a = a->next) {
        struct vmpi_keyval *kv = a->kv;
        if (!kv->copy)
            continue;
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy(oldobj, kv->handle, kv->extra, a->val, &out, &flag);
        if (rc == MPI_SUCCESS && flag && (rc = link_node(tail, kv, out)) == MPI_SUCCESS)
            tail = &(*tail)->next;
        if (rc != MPI_SUCCESS) {
            vmpi_attr_clear(to, newobj);
            vmpi_attr_drop(to);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

void vmpi_attr_drop(struct vmpi_attr **list)
{
    while (*list)
        unlink_node(list);
}

void vmpi_attr_forget(int kind, int obj)
{
    for (struct obj_attrs **o = &side; *o; o = &(*o)->next)
        if ((*o)->obj == obj && (*o)->kind == kind) {
            struct obj_attrs *dead = *o;
            *o = dead->next;
            vmpi_attr_drop(&dead->attrs);
            free(dead);
            return;
        }
}

void vmpi_attr_finalize_comms(void)
{
    /* Errors of delete callbacks at MPI_Finalize have no caller to go to. */
    struct vmpi_attr **self = vmpi_attr_list(VMPI_ATTR_COMM, MPI_COMM_SELF, false);
    if (self && vmpi_attr_clear(self, MPI_COMM_SELF) != MPI_SUCCESS)
        vmpi_attr_drop(self);
    struct vmpi_attr **world = vmpi_attr_list(VMPI_ATTR_COMM, MPI_COMM_WORLD, false);
    if (world && vmpi_attr_clear(world, MPI_COMM_WORLD) != MPI_SUCCESS)
        vmpi_attr_drop(world);
}

void vmpi_attr_finalize(void)
{
    while (side) {
        struct obj_attrs *o = side;
        side = o->next;
        vmpi_attr_drop(&o->attrs);
        free(o);
    }
    for (uint32_t i = 1; i < kv_used; i++)
        free(kv_tab[i]);
    free(kv_tab);
    kv_tab = NULL;
    kv_used = 1;
    kv_cap = 0;
}
