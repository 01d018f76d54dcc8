/* Info objects and MPI_INFO_ENV.
 *
 * An object is a small array of (key, value) strings in insertion order;
 * lookups are linear, since hint sets hold a handful of keys. Objects made
 * by MPI_Info_create / MPI_Info_dup live in a handle table (indirect
 * handles of object type VMPI_OBJ_INFO); MPI_INFO_ENV is a builtin object
 * outside it, filled at MPI_Init and emptied at MPI_Finalize. */
#include "vmpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static struct vmpi_htab info_tab;
static struct vmpi_info info_env = {.handle = MPI_INFO_ENV};

struct vmpi_info *vmpi_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return &info_env;
    if (VMPI_HKIND(h) != VMPI_HK_INDIRECT || VMPI_HTYPE(h) != VMPI_OBJ_INFO ||
        VMPI_HINDEX(h) == 0)
        return NULL;
    return vmpi_htab_get(&info_tab, VMPI_HINDEX(h));
}

struct vmpi_info *vmpi_info_new(void)
{
    struct vmpi_info *i = calloc(1, sizeof *i);
    uint32_t idx;
    if (!i || vmpi_htab_add(&info_tab, i, &idx) != 0) {
        free(i);
        return NULL;
    }
    i->handle = VMPI_HMAKE(VMPI_HK_INDIRECT, VMPI_OBJ_INFO, idx);
    return i;
}

static void clear(struct vmpi_info *i)
{
    for (int k = 0; k < i->n; k++) {
        free(i->e[k].key);
        free(i->e[k].val);
    }
    free(i->e);
    i->e = NULL;
    i->n = i->cap = 0;
}

void vmpi_info_free(struct vmpi_info *i)
{
    if (!i || i == &info_env)
        return;
    vmpi_htab_del(&info_tab, VMPI_HINDEX(i->handle));
    clear(i);
    free(i);
}

static int find(const struct vmpi_info *i, const char *key)
{
    for (int k = 0; k < i->n; k++)
        if (!strcmp(i->e[k].key, key))
            return k;
    return -1;
}

int vmpi_info_set(struct vmpi_info *i, const char *key, const char *val)
{
    char *v = strdup(val);
    if (!v)
        return MPI_ERR_NO_MEM;
    int k = find(i, key);
    if (k >= 0) {
        free(i->e[k].val);
        i->e[k].val = v;
        return MPI_SUCCESS;
    }
    if (i->n == i->cap) {
        int cap = i->cap ? 2 * i->cap : 8;
        struct vmpi_info_entry *e = realloc(i->e, (size_t)cap * sizeof *e);
        if (!e) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        i->e = e;
        i->cap = cap;
    }
    char *kc = strdup(key);
    if (!kc) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    i->e[i->n++] = (struct vmpi_info_entry){kc, v};
    return MPI_SUCCESS;
}

struct vmpi_info *vmpi_info_dup(const struct vmpi_info *src)
{
    struct vmpi_info *i = vmpi_info_new();
    if (!i)
        return NULL;
    for (int k = 0; k < src->n; k++)
        if (vmpi_info_set(i, src->e[k].key, src->e[k].val) != MPI_SUCCESS) {
            vmpi_info_free(i);
            return NULL;
        }
    return i;
}

const char *vmpi_info_find(const struct vmpi_info *i, const char *key)
{
    int k = find(i, key);
    return k >= 0 ? i->e[k].val : NULL;
}

bool vmpi_info_delete(struct vmpi_info *i, const char *key)
{
    int k = find(i, key);
    if (k < 0)
        return false;
    free(i->e[k].key);
    free(i->e[k].val);
    memmove(&i->e[k], &i->e[k + 1], (size_t)(i->n - k - 1) * sizeof *i->e);
    i->n--;
    return true;
}

/* ---- MPI_INFO_ENV ------------------------------------------------------------ */

/* Sets key of MPI_INFO_ENV when val is known and fits. */
static void env_set(const char *key, const char *val)
{
    if (val && strlen(val) <= MPI_MAX_INFO_VAL &&
        vmpi_info_set(&info_env, key, val) != MPI_SUCCESS)
        vmpi_fatal("out of memory during MPI_Init");
}

/* The words of /proc/self/cmdline as an argv array in buf (NULL when it
 * cannot be read); *argc gets their count. */
static char **proc_cmdline(char *buf, size_t cap, char **words, int maxw, int *argc)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    int w = 0;
    for (size_t at = 0; at < n && w < maxw; at += strlen(buf + at) + 1)
        words[w++] = buf + at;
    *argc = w;
    return w ? words : NULL;
}

void vmpi_info_env_init(int argc, char **argv, int required)
{
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    char buf[MPI_MAX_INFO_VAL + 1], cmd[4096];
    char *words[256];
    if (!argv || argc < 1 || !argv[0])
        argv = proc_cmdline(cmd, sizeof cmd, words, 256, &argc);
    if (argv) {
        env_set("command", argv[0]);
        /* The arguments, space separated, as MPI_Comm_spawn's argv key. */
        size_t n = 0;
        bool fits = true;
        for (int k = 1; k < argc && argv[k] && fits; k++) {
            int w = snprintf(buf + n, sizeof buf - n, "%s%s", k > 1 ? " " : "", argv[k]);
            fits = w >= 0 && (size_t)w < sizeof buf - n;
            n += fits ? (size_t)w : 0;
        }
        if (argc > 1 && fits)
            env_set("argv", buf);
    }
    snprintf(buf, sizeof buf, "%d", vmpi_job.size);
    env_set("maxprocs", buf);
    if (!gethostname(buf, sizeof buf)) {
        buf[sizeof buf - 1] = '\0';
        env_set("host", buf);
    }
    struct utsname u;
    if (!uname(&u))
        env_set("arch", u.machine);
    char wd[4096];
    if (getcwd(wd, sizeof wd))
        env_set("wdir", wd);
    if (required >= MPI_THREAD_SINGLE && required <= MPI_THREAD_MULTIPLE)
        env_set("thread_level", levels[required]);
}

void vmpi_info_finalize(void)
{
    for (uint32_t k = 1; k < info_tab.used; k++) { /* index 0 is never used */
        struct vmpi_info *i = vmpi_htab_get(&info_tab, k);
        if (i) {
            clear(i);
            free(i);
        }
    }
    vmpi_htab_destroy(&info_tab);
    memset(&info_tab, 0, sizeof info_tab);
    clear(&info_env);
}
