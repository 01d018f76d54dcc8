/* MPI_Info_*: info objects (MPI-3.1 9), argument checks, then core/info.c.
 *
 * Errors are raised on MPI_COMM_WORLD (an info object belongs to no
 * communicator, MPI-3.1 8.3). Classes: an invalid or null info handle is
 * MPI_ERR_INFO; a key that is empty or does not fit, with its NUL, in
 * MPI_MAX_INFO_KEY bytes (the buffer C programs give MPI_Info_get_nthkey,
 * as MPICH's do) is MPI_ERR_INFO_KEY; a value longer than MPI_MAX_INFO_VAL is
 * MPI_ERR_INFO_VALUE; deleting a key the object lacks is MPI_ERR_INFO_NOKEY;
 * a NULL pointer or an out-of-range number is MPI_ERR_ARG. MPI_INFO_ENV can
 * be read, duplicated and changed like any object, but not freed. */
#include "api.h"

#include <string.h>

static int bad_info(const char *fn, MPI_Info h)
{
    if (h == MPI_INFO_NULL)
        return vmpi_err(NULL, MPI_ERR_INFO, "%s: info is MPI_INFO_NULL", fn);
    return vmpi_err(NULL, MPI_ERR_INFO, "%s: info is not a valid info object (%#x)", fn,
                    (unsigned)h);
}

#define INFO_ARG(i, h, fn)                  \
    struct vmpi_info *i = vmpi_info_get(h); \
    do {                                    \
        if (VMPI_UNLIKELY(!i))              \
            return bad_info(fn, h);         \
    } while (0)

/* A key: not NULL (MPI_ERR_ARG), 1 to MPI_MAX_INFO_KEY - 1 characters
 * (MPI_ERR_INFO_KEY). */
#define KEY_ARG(key, fn)                                                                       \
    do {                                                                                       \
        PTR_ARG(key, NULL, fn, "key");                                                         \
        size_t klen_ = strnlen(key, MPI_MAX_INFO_KEY);                                        \
        VMPI_CHECK(klen_ > 0, NULL, MPI_ERR_INFO_KEY, "%s: key is the empty string", fn);      \
        VMPI_CHECK(klen_ < MPI_MAX_INFO_KEY, NULL, MPI_ERR_INFO_KEY,                           \
                   "%s: key \"%.32s...\" is longer than %d characters (MPI_MAX_INFO_KEY with " \
                   "its NUL)", fn, key, MPI_MAX_INFO_KEY - 1);                                 \
    } while (0)

int PMPI_Info_create(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create";
    VMPI_ENTER(fn);
    PTR_ARG(info, NULL, fn, "info");
    struct vmpi_info *i = vmpi_info_new();
    if (!i)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for an info object", fn);
    *info = i->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_create);

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char fn[] = "MPI_Info_dup";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    PTR_ARG(newinfo, NULL, fn, "newinfo");
    struct vmpi_info *n = vmpi_info_dup(i);
    if (!n)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for a copy of %d keys", fn,
                        i->n);
    *newinfo = n->handle;
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_dup);

int PMPI_Info_free(MPI_Info *info)
{
    static const char fn[] = "MPI_Info_free";
    VMPI_ENTER(fn);
    PTR_ARG(info, NULL, fn, "info");
    INFO_ARG(i, *info, fn);
    VMPI_CHECK(*info != MPI_INFO_ENV, NULL, MPI_ERR_INFO,
               "%s: info is MPI_INFO_ENV, a predefined object that cannot be freed", fn);
    vmpi_info_free(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_free);

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char fn[] = "MPI_Info_set";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    KEY_ARG(key, fn);
    PTR_ARG(value, NULL, fn, "value");
    VMPI_CHECK(strnlen(value, MPI_MAX_INFO_VAL + 1) <= MPI_MAX_INFO_VAL, NULL,
               MPI_ERR_INFO_VALUE,
               "%s: the value of key \"%s\" is longer than MPI_MAX_INFO_VAL (%d characters)",
               fn, key, MPI_MAX_INFO_VAL);
    if (vmpi_info_set(i, key, value) != MPI_SUCCESS)
        return vmpi_err(NULL, MPI_ERR_NO_MEM, "%s: out of memory for key \"%s\"", fn, key);
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_set);

/* value receives at most valuelen characters and a NUL (valuelen + 1
 * bytes); a longer value is truncated and flag is still true. */
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char fn[] = "MPI_Info_get";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    KEY_ARG(key, fn);
    VMPI_CHECK(valuelen >= 0, NULL, MPI_ERR_ARG, "%s: valuelen = %d is negative", fn,
               valuelen);
    PTR_ARG(value, NULL, fn, "value");
    PTR_ARG(flag, NULL, fn, "flag");
    const char *v = vmpi_info_find(i, key);
    *flag = v != NULL;
    if (v) {
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_get);

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char fn[] = "MPI_Info_get_nkeys";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    PTR_ARG(nkeys, NULL, fn, "nkeys");
    *nkeys = i->n;
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_get_nkeys);

/* Keys are numbered in the order they were first set; key receives at most
 * MPI_MAX_INFO_KEY bytes, its NUL included. */
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char fn[] = "MPI_Info_get_nthkey";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    VMPI_CHECK(n >= 0 && n < i->n, NULL, MPI_ERR_ARG,
               "%s: n = %d is not in [0, %d) (the object's number of keys)", fn, n, i->n);
    PTR_ARG(key, NULL, fn, "key");
    strcpy(key, i->e[n].key);
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_get_nthkey);

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char fn[] = "MPI_Info_get_valuelen";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    KEY_ARG(key, fn);
    PTR_ARG(valuelen, NULL, fn, "valuelen");
    PTR_ARG(flag, NULL, fn, "flag");
    const char *v = vmpi_info_find(i, key);
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_get_valuelen);

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char fn[] = "MPI_Info_delete";
    VMPI_ENTER(fn);
    INFO_ARG(i, info, fn);
    KEY_ARG(key, fn);
    VMPI_CHECK(vmpi_info_delete(i, key), NULL, MPI_ERR_INFO_NOKEY,
               "%s: info has no key \"%s\"", fn, key);
    return MPI_SUCCESS;
}
VMPI_WEAK(Info_delete);
