/* MPI_Win_*: windows and their synchronization (rma/). */
#include "api.h"
#include "../rma/rma.h"
#include "attr.h"

#include <string.h>

#define WIN_ARG(w, h, fn)                                                                 \
    struct vmpi_win *w = vmpi_win_get(h);                                                 \
    VMPI_CHECK(w, NULL, MPI_ERR_WIN, "%s: win is not a valid window (0x%x)", fn, (unsigned)(h))

static int make(const char *fn, void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                MPI_Comm comm, int flavor, void *baseptr, MPI_Win *win)
{
    VMPI_ENTER(fn);
    COMM_ARG(c, comm, fn);
    VMPI_CHECK_INTRA(c, fn);
    PTR_ARG(win, c, fn, "win");
    VMPI_CHECK_INFO(info, c, fn); /* no hint is used (no_locks, accumulate_ordering, ...) */
    VMPI_CHECK(size >= 0, c, MPI_ERR_SIZE, "%s: size %ld is negative", fn, (long)size);
    VMPI_CHECK(disp_unit > 0, c, MPI_ERR_DISP, "%s: disp_unit %d is not positive", fn,
               disp_unit);
    if (flavor == MPI_WIN_FLAVOR_CREATE)
        VMPI_CHECK(base || !size, c, MPI_ERR_BASE, "%s: base is NULL but size is %ld", fn,
                   (long)size);
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED)
        PTR_ARG(baseptr, c, fn, "baseptr");
    struct vmpi_win *w;
    int rc = vmpi_win_create(base, size, disp_unit, c, flavor, baseptr, &w);
    if (rc == MPI_SUCCESS)
        *win = w->handle;
    return rc;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return make("MPI_Win_create", base, size, disp_unit, info, comm, MPI_WIN_FLAVOR_CREATE,
                NULL, win);
}
VMPI_WEAK(Win_create);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                      void *baseptr, MPI_Win *win)
{
    return make("MPI_Win_allocate", NULL, size, disp_unit, info, comm,
                MPI_WIN_FLAVOR_ALLOCATE, baseptr, win);
}
VMPI_WEAK(Win_allocate);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return make("MPI_Win_allocate_shared", NULL, size, disp_unit, info, comm,
                MPI_WIN_FLAVOR_SHARED, baseptr, win);
}
VMPI_WEAK(Win_allocate_shared);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return make("MPI_Win_create_dynamic", NULL, 0, 1, info, comm, MPI_WIN_FLAVOR_DYNAMIC,
                NULL, win);
}
VMPI_WEAK(Win_create_dynamic);

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    static const char fn[] = "MPI_Win_shared_query";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    VMPI_CHECK(w->flavor == MPI_WIN_FLAVOR_SHARED, w->comm, MPI_ERR_RMA_FLAVOR,
               "%s: the window was not made by MPI_Win_allocate_shared", fn);
    VMPI_CHECK(rank == MPI_PROC_NULL || (rank >= 0 && rank < w->size), w->comm, MPI_ERR_RANK,
               "%s: rank %d is not in the window's group of %d", fn, rank, w->size);
    PTR_ARG(size, w->comm, fn, "size");
    PTR_ARG(disp_unit, w->comm, fn, "disp_unit");
    PTR_ARG(baseptr, w->comm, fn, "baseptr");
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        while (rank < w->size - 1 && w->t[rank].size == 0)
            rank++;
    }
    const struct win_target *t = &w->t[rank];
    *size = (MPI_Aint)t->size;
    *disp_unit = t->disp_unit;
    void *b = t->size ? t->base : NULL; /* as MPICH: no segment, no address */
    memcpy(baseptr, &b, sizeof b);
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_shared_query);

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    VMPI_CHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w->comm, MPI_ERR_RMA_FLAVOR,
               "%s: the window was not made by MPI_Win_create_dynamic", fn);
    VMPI_CHECK(size >= 0, w->comm, MPI_ERR_SIZE, "%s: size %ld is negative", fn, (long)size);
    VMPI_CHECK(base || !size, w->comm, MPI_ERR_BASE, "%s: base is NULL", fn);
    return vmpi_win_attach(w, base, size);
}
VMPI_WEAK(Win_attach);

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    VMPI_CHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w->comm, MPI_ERR_RMA_FLAVOR,
               "%s: the window was not made by MPI_Win_create_dynamic", fn);
    return vmpi_win_detach(w, base);
}
VMPI_WEAK(Win_detach);

int PMPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    VMPI_ENTER(fn);
    VMPI_CHECK(win, NULL, MPI_ERR_ARG, "%s: win is NULL", fn);
    WIN_ARG(w, *win, fn);
    VMPI_CHECK(!w->nlocks && !w->lock_all && !w->started && !w->posted, w->comm,
               MPI_ERR_RMA_SYNC, "%s: an epoch of this process on the window is still open", fn);
    int rc = vmpi_api_free_attrs(fn, VMPI_ATTR_WIN, *win);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = vmpi_win_free(w);
    *win = MPI_WIN_NULL;
    return rc;
}
VMPI_WEAK(Win_free);

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(attribute_val, w->comm, fn, "attribute_val");
    PTR_ARG(flag, w->comm, fn, "flag");
    /* MPI_WIN_BASE gives the base itself, the others a pointer to the value. */
    void *v;
    switch (keyval) {
    case MPI_WIN_BASE: v = w->base; break;
    case MPI_WIN_SIZE: w->attr_size = (MPI_Aint)w->my_size; v = &w->attr_size; break;
    case MPI_WIN_DISP_UNIT: v = &w->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: v = &w->flavor; break;
    case MPI_WIN_MODEL: v = &w->attr_model; break;
    default: /* the user's (api/attr.c) */
        return vmpi_api_attr_get(fn, VMPI_ATTR_WIN, win, keyval, attribute_val, flag);
    }
    memcpy(attribute_val, &v, sizeof v);
    *flag = 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_get_attr);

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char fn[] = "MPI_Win_get_group";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(group, w->comm, fn, "group");
    vmpi_group_retain(w->group);
    *group = w->group->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_get_group);

/* Window hints (no_locks, accumulate_ordering, ...): vmpi uses none, which
 * MPI-3.1 11.2.7 allows, so a hint is checked and dropped, and
 * MPI_Win_get_info reports the hints in use: none, as a new empty object. */
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    VMPI_CHECK_INFO(info, w->comm, fn);
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Win_get_info";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(info_used, w->comm, fn, "info_used");
    struct vmpi_info *i = vmpi_info_new();
    VMPI_CHECK(i, w->comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *info_used = i->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_get_info);

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char fn[] = "MPI_Win_set_name";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(win_name, w->comm, fn, "win_name");
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(w->name, win_name, n);
    w->name[n] = '\0';
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char fn[] = "MPI_Win_get_name";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(win_name, w->comm, fn, "win_name");
    PTR_ARG(resultlen, w->comm, fn, "resultlen");
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_get_name);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Win_set_errhandler";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    VMPI_CHECK(vmpi_errh_valid(errhandler, VMPI_ERRH_WIN), w->comm, MPI_ERR_ARG,
               "%s: errhandler (0x%x) is neither predefined nor a window error handler", fn,
               (unsigned)errhandler);
    /* Errors of window calls are raised on the window's own communicator. */
    vmpi_errh_set(w->comm, errhandler);
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Win_get_errhandler";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(errhandler, w->comm, fn, "errhandler");
    vmpi_errh_retain(w->comm->errh); /* a new reference, as MPI_Comm_get_errhandler's */
    *errhandler = w->comm->errh;
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_get_errhandler);

/* ---- synchronization ------------------------------------------------------------------ */

#define GROUP_ARG(g, h, w, fn)                                                            \
    struct vmpi_group *g = vmpi_group_get(h);                                             \
    VMPI_CHECK(g, w->comm, MPI_ERR_GROUP, "%s: group is not a valid group (0x%x)", fn,    \
               (unsigned)(h))

int PMPI_Win_fence(int assert_, MPI_Win win)
{
    static const char fn[] = "MPI_Win_fence";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_fence(fn, w, assert_);
}
VMPI_WEAK(Win_fence);

int PMPI_Win_post(MPI_Group group, int assert_, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    GROUP_ARG(g, group, w, fn);
    return vmpi_rma_post(fn, w, g, assert_);
}
VMPI_WEAK(Win_post);

int PMPI_Win_start(MPI_Group group, int assert_, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    GROUP_ARG(g, group, w, fn);
    return vmpi_rma_start(fn, w, g, assert_);
}
VMPI_WEAK(Win_start);

int PMPI_Win_complete(MPI_Win win)
{
    static const char fn[] = "MPI_Win_complete";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_complete(fn, w);
}
VMPI_WEAK(Win_complete);

int PMPI_Win_wait(MPI_Win win)
{
    static const char fn[] = "MPI_Win_wait";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_wait(fn, w, NULL);
}
VMPI_WEAK(Win_wait);

int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char fn[] = "MPI_Win_test";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    PTR_ARG(flag, w->comm, fn, "flag");
    return vmpi_rma_wait(fn, w, flag);
}
VMPI_WEAK(Win_test);

#define TARGET_ARG(w, rank, fn)                                                           \
    VMPI_CHECK(rank == MPI_PROC_NULL || (rank >= 0 && rank < w->size), w->comm,           \
               MPI_ERR_RANK, "%s: rank %d is not in the window's group of %d", fn, rank,  \
               w->size)

int PMPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    TARGET_ARG(w, rank, fn);
    return vmpi_rma_lock(fn, w, lock_type, rank, assert_);
}
VMPI_WEAK(Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    TARGET_ARG(w, rank, fn);
    return vmpi_rma_unlock(fn, w, rank);
}
VMPI_WEAK(Win_unlock);

int PMPI_Win_lock_all(int assert_, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_lock_all(fn, w, assert_);
}
VMPI_WEAK(Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock_all";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_unlock_all(fn, w);
}
VMPI_WEAK(Win_unlock_all);

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    TARGET_ARG(w, rank, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return vmpi_rma_flush(fn, w, rank, false);
}
VMPI_WEAK(Win_flush);

int PMPI_Win_flush_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_all";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_flush(fn, w, -1, false);
}
VMPI_WEAK(Win_flush_all);

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    TARGET_ARG(w, rank, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    return vmpi_rma_flush(fn, w, rank, true);
}
VMPI_WEAK(Win_flush_local);

int PMPI_Win_flush_local_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local_all";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    return vmpi_rma_flush(fn, w, -1, true);
}
VMPI_WEAK(Win_flush_local_all);

int PMPI_Win_sync(MPI_Win win)
{
    static const char fn[] = "MPI_Win_sync";
    VMPI_ENTER(fn);
    WIN_ARG(w, win, fn);
    /* Unified model: one full fence orders this process's loads and
     * stores of window memory against other ranks'. */
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}
VMPI_WEAK(Win_sync);
