/* Performance variables of the tool interface (MPI-3.1 14.3.7): sessions
 * and handles over the counters of core/mpit.c.
 *
 * A counter handle starts stopped and counts only while started: start
 * takes the counter's value as its base, stop adds what came since to the
 * handle's sum, a read gives the sum plus, while started, what came since
 * the base. Reset and write set the sum and restart the base, so handles
 * never disturb each other or the library's counters. Levels and
 * watermarks are continuous and read-only: a read gives the value now. */
#include "mpit.h"

#include <stdlib.h>
#include <string.h>

struct MPIR_T_pvar_handle_s {
    const struct vmpi_pvar *v;
    bool started;
    uint64_t base, sum;
    struct MPIR_T_pvar_handle_s *next;
};

struct MPIR_T_pvar_session_s {
    struct MPIR_T_pvar_handle_s *handles;
    struct MPIR_T_pvar_session_s *next;
};

static struct MPIR_T_pvar_handle_s all_handles;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES = &all_handles;

static struct MPIR_T_pvar_session_s *sessions;

int PMPI_T_pvar_get_num(int *num_pvar)
{
    MPIT_ENTER();
    MPIT_PTR(num_pvar);
    *num_pvar = vmpi_npvars;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                         char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                         int *atomic)
{
    MPIT_ENTER();
    if (pvar_index < 0 || pvar_index >= vmpi_npvars)
        return MPI_T_ERR_INVALID_INDEX;
    const struct vmpi_pvar *v = &vmpi_pvars[pvar_index];
    vmpi_mpit_str(v->name, name, name_len);
    vmpi_mpit_str(v->desc, desc, desc_len);
    int *out[] = {verbosity, var_class, bind, readonly, continuous, atomic};
    int val[] = {v->verbosity, v->var_class, MPI_T_BIND_NO_OBJECT, v->readonly, v->continuous,
                 0};
    for (size_t i = 0; i < sizeof out / sizeof *out; i++)
        if (out[i])
            *out[i] = val[i];
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_ENTER();
    MPIT_PTR(name);
    MPIT_PTR(pvar_index);
    for (int i = 0; i < vmpi_npvars; i++)
        if (vmpi_pvars[i].var_class == var_class && !strcmp(vmpi_pvars[i].name, name)) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
VMPI_WEAK(T_pvar_get_index);

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPIT_ENTER();
    MPIT_PTR(session);
    struct MPIR_T_pvar_session_s *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    s->next = sessions;
    sessions = s;
    *session = s;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_session_create);

MPIT_LINK_FN(session_in, struct MPIR_T_pvar_session_s)
MPIT_LINK_FN(handle_in, struct MPIR_T_pvar_handle_s)

static struct MPIR_T_pvar_session_s **session_link(MPI_T_pvar_session s)
{
    return session_in(&sessions, s);
}

static void session_destroy(struct MPIR_T_pvar_session_s *s)
{
    while (s->handles) {
        struct MPIR_T_pvar_handle_s *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPIT_ENTER();
    MPIT_PTR(session);
    struct MPIR_T_pvar_session_s **pp = session_link(*session);
    if (!pp)
        return MPI_T_ERR_INVALID_SESSION;
    *pp = (*session)->next;
    session_destroy(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_session_free);

void vmpi_mpit_pvar_cleanup(void)
{
    while (sessions) {
        struct MPIR_T_pvar_session_s *s = sessions;
        sessions = s->next;
        session_destroy(s);
    }
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    MPIT_ENTER();
    (void)obj_handle; /* bound to no object */
    if (!session_link(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= vmpi_npvars)
        return MPI_T_ERR_INVALID_INDEX;
    MPIT_PTR(handle);
    MPIT_PTR(count);
    struct MPIR_T_pvar_handle_s *h = calloc(1, sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->v = &vmpi_pvars[pvar_index];
    h->started = h->v->continuous;
    h->next = session->handles;
    session->handles = h;
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_handle_alloc);

/* The link to handle h in live session s, or NULL. */
static struct MPIR_T_pvar_handle_s **handle_link(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    return handle_in(&s->handles, h);
}

/* Checks session and handle (one handle, not MPI_T_PVAR_ALL_HANDLES). */
#define PVAR_ARGS(s, h)                                     \
    do {                                                    \
        if (!session_link(s))                               \
            return MPI_T_ERR_INVALID_SESSION;               \
        if ((h) == MPI_T_PVAR_ALL_HANDLES || !handle_link(s, h)) \
            return MPI_T_ERR_INVALID_HANDLE;                \
    } while (0)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPIT_ENTER();
    MPIT_PTR(handle);
    PVAR_ARGS(session, *handle);
    struct MPIR_T_pvar_handle_s **pp = handle_link(session, *handle);
    *pp = (*handle)->next;
    free(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_handle_free);

/* The library's counter now; whole even if another thread is adding. */
static uint64_t now(const struct MPIR_T_pvar_handle_s *h)
{
    if (h->v->read)
        return h->v->read();
    return __atomic_load_n(h->v->src, __ATOMIC_RELAXED);
}

static uint64_t value(const struct MPIR_T_pvar_handle_s *h)
{
    if (h->v->continuous)
        return now(h);
    return h->sum + (h->started ? now(h) - h->base : 0);
}

static void set_sum(struct MPIR_T_pvar_handle_s *h, uint64_t sum)
{
    h->sum = sum;
    h->base = now(h);
}

static void start(struct MPIR_T_pvar_handle_s *h)
{
    if (!h->started)
        h->base = now(h);
    h->started = true;
}

static void stop(struct MPIR_T_pvar_handle_s *h)
{
    h->sum = value(h);
    h->started = false;
}

/* Applies op to handle, or with MPI_T_PVAR_ALL_HANDLES to every handle of
 * the session that allows it (skip: the handles op does not apply to). */
static int each(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                void (*op)(struct MPIR_T_pvar_handle_s *), bool readonly_ok, int refusal)
{
    if (!session_link(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct MPIR_T_pvar_handle_s *h = session->handles; h; h = h->next)
            if (readonly_ok ? !h->v->continuous : !h->v->readonly)
                op(h);
        return MPI_SUCCESS;
    }
    if (!handle_link(session, handle))
        return MPI_T_ERR_INVALID_HANDLE;
    if (readonly_ok ? handle->v->continuous : handle->v->readonly)
        return refusal;
    op(handle);
    return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER();
    return each(session, handle, start, true, MPI_T_ERR_PVAR_NO_STARTSTOP);
}
VMPI_WEAK(T_pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER();
    return each(session, handle, stop, true, MPI_T_ERR_PVAR_NO_STARTSTOP);
}
VMPI_WEAK(T_pvar_stop);

static void reset(struct MPIR_T_pvar_handle_s *h) { set_sum(h, 0); }

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    MPIT_ENTER();
    return each(session, handle, reset, false, MPI_T_ERR_PVAR_NO_WRITE);
}
VMPI_WEAK(T_pvar_reset);

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    MPIT_ENTER();
    PVAR_ARGS(session, handle);
    MPIT_PTR(buf);
    unsigned long long v = value(handle);
    memcpy(buf, &v, sizeof v);
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_read);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    MPIT_ENTER();
    PVAR_ARGS(session, handle);
    MPIT_PTR(buf);
    if (handle->v->readonly)
        return MPI_T_ERR_PVAR_NO_WRITE;
    unsigned long long v;
    memcpy(&v, buf, sizeof v);
    set_sum(handle, v);
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_write);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    MPIT_ENTER();
    PVAR_ARGS(session, handle);
    MPIT_PTR(buf);
    if (handle->v->readonly)
        return MPI_T_ERR_PVAR_NO_WRITE;
    unsigned long long v = value(handle);
    memcpy(buf, &v, sizeof v);
    reset(handle);
    return MPI_SUCCESS;
}
VMPI_WEAK(T_pvar_readreset);
