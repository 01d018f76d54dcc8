/* vmpi-mpit-info: what `vmpi info` shows of the library, through the MPI
 * tool interface alone (no MPI_Init, so no job is started): the library's
 * version string, the compiler and flags the build used, then one line per
 * control and performance variable, tab-separated:
 *
 *   library  <MPI_Get_library_version>
 *   build    <compiler>  <flags>
 *   cvar     <name> <category> <num|text> <set|unset> <value> <description>
 *   pvar     <name> <category> <class> <description>
 *
 * python/vmpi/info.py formats them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, int rc)
{
    fprintf(stderr, "vmpi-mpit-info: %s failed (%d)\n", what, rc);
    exit(1);
}

#define T(call)                     \
    do {                            \
        int rc_ = (call);           \
        if (rc_ != MPI_SUCCESS)     \
            die(#call, rc_);        \
    } while (0)

/* Category of each variable: cat[i] for cvar i (cvars) or pvar i. */
static void categories(char (*cvar_cat)[64], int ncvar, char (*pvar_cat)[64], int npvar)
{
    int ncat;
    T(MPI_T_category_get_num(&ncat));
    int *idx = malloc(sizeof(int) * (size_t)(ncvar + npvar + 1));
    if (!idx)
        die("malloc", 0);
    for (int c = 0; c < ncat; c++) {
        char name[64];
        int len = sizeof name, nc, np;
        T(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, NULL));
        T(MPI_T_category_get_cvars(c, nc, idx));
        for (int k = 0; k < nc; k++)
            if (idx[k] >= 0 && idx[k] < ncvar)
                snprintf(cvar_cat[idx[k]], 64, "%s", name);
        T(MPI_T_category_get_pvars(c, np, idx));
        for (int k = 0; k < np; k++)
            if (idx[k] >= 0 && idx[k] < npvar)
                snprintf(pvar_cat[idx[k]], 64, "%s", name);
    }
    free(idx);
}

static void cvar_line(int i, const char *cat)
{
    char name[128], desc[512], text[1024];
    int len = sizeof name, dlen = sizeof desc, count;
    MPI_Datatype dt;
    MPI_T_cvar_handle h;
    T(MPI_T_cvar_get_info(i, name, &len, NULL, &dt, NULL, desc, &dlen, NULL, NULL));
    T(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    const char *set = getenv(name) ? "set" : "unset";
    if (dt == MPI_CHAR && count <= (int)sizeof text) {
        T(MPI_T_cvar_read(h, text));
        printf("cvar\t%s\t%s\ttext\t%s\t%s\t%s\n", name, cat, set, text, desc);
    } else {
        unsigned long long v = 0;
        int rc = MPI_T_cvar_read(h, &v);
        if (rc == MPI_SUCCESS)
            printf("cvar\t%s\t%s\tnum\t%s\t%llu\t%s\n", name, cat, set, v, desc);
        else /* the environment holds a value the library would refuse */
            printf("cvar\t%s\t%s\tnum\t%s\tinvalid: %s\t%s\n", name, cat, set, getenv(name),
                   desc);
    }
    T(MPI_T_cvar_handle_free(&h));
}

static const char *class_name(int c)
{
    switch (c) {
    case MPI_T_PVAR_CLASS_COUNTER: return "counter";
    case MPI_T_PVAR_CLASS_LEVEL: return "level";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "highwatermark";
    case MPI_T_PVAR_CLASS_LOWWATERMARK: return "lowwatermark";
    case MPI_T_PVAR_CLASS_STATE: return "state";
    case MPI_T_PVAR_CLASS_SIZE: return "size";
    case MPI_T_PVAR_CLASS_PERCENTAGE: return "percentage";
    case MPI_T_PVAR_CLASS_AGGREGATE: return "aggregate";
    case MPI_T_PVAR_CLASS_TIMER: return "timer";
    default: return "generic";
    }
}

int main(void)
{
    int provided, ncvar, npvar, len;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    T(MPI_Get_library_version(version, &len));
    printf("library\t%s\n", version);
    printf("build\t%s\t%s\n", VMPI_INFO_CC, VMPI_INFO_CFLAGS);
    T(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T(MPI_T_cvar_get_num(&ncvar));
    T(MPI_T_pvar_get_num(&npvar));
    char (*cvar_cat)[64] = calloc((size_t)ncvar + 1, 64), (*pvar_cat)[64] = calloc((size_t)npvar + 1, 64);
    if (!cvar_cat || !pvar_cat)
        die("calloc", 0);
    categories(cvar_cat, ncvar, pvar_cat, npvar);
    for (int i = 0; i < ncvar; i++)
        cvar_line(i, cvar_cat[i]);
    for (int i = 0; i < npvar; i++) {
        char name[128], desc[512];
        int nlen = sizeof name, dlen = sizeof desc, cls;
        T(MPI_T_pvar_get_info(i, name, &nlen, NULL, &cls, NULL, NULL, desc, &dlen, NULL, NULL,
                              NULL, NULL));
        printf("pvar\t%s\t%s\t%s\t%s\n", name, pvar_cat[i], class_name(cls), desc);
    }
    free(cvar_cat);
    free(pvar_cat);
    T(MPI_T_finalize());
    return 0;
}
