/* MPI_Comm_spawn and MPI_Comm_spawn_multiple: their argument lists are
 * arrays of blank-padded CHARACTER elements (a blank one ends each list;
 * spawn_multiple's is ARGV(COUNT, *), one row per command), which C wants
 * as NULL-terminated arrays of strings. */
#include "fortran.h"

#include <stdbool.h>
#include <stdlib.h>

static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ')
            return false;
    return true;
}

/* The list whose k-th element is at a + k * stride (elements of len
 * characters), up to its blank element; NULL when out of memory. */
static char **vf_argv(const char *a, size_t stride, size_t len)
{
    size_t n = 0;
    while (!blank(a + n * stride, len))
        n++;
    char **v = calloc(n + 1, sizeof *v);
    for (size_t k = 0; v && k < n; k++)
        if (!(v[k] = vf_str_in(a + k * stride, len, 0)))
            n = k, v = NULL;
    return v;
}

static void vf_argv_free(char **v)
{
    for (size_t k = 0; v && v[k]; k++)
        free(v[k]);
    free(v);
}

static int *vf_errcodes(MPI_Fint *e)
{
    return e == mpipriv2_.errcodes_ignore ? MPI_ERRCODES_IGNORE : e;
}

VF_EXPORT void pmpi_comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info,
                                MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm,
                                MPI_Fint *errcodes, MPI_Fint *ierror, size_t command_len,
                                size_t argv_len);
void pmpi_comm_spawn_(char *command, char *argv, MPI_Fint *maxprocs, MPI_Fint *info,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *errcodes,
                      MPI_Fint *ierror, size_t command_len, size_t argv_len)
{
    bool none = argv == &mpiprivc_.argv_null;
    char *cmd = vf_str_in(command, command_len, 0);
    char **v = none ? NULL : vf_argv(argv, argv_len, argv_len);
    if (!cmd || (!none && !v)) {
        *ierror = vf_nomem();
    } else {
        *ierror = MPI_Comm_spawn(cmd, v, *maxprocs, *info, *root, *comm, intercomm,
                                 vf_errcodes(errcodes));
    }
    free(cmd);
    vf_argv_free(v);
}
VF_NAMES(comm_spawn, COMM_SPAWN)

VF_EXPORT void pmpi_comm_spawn_multiple_(MPI_Fint *count, char *commands, char *argv,
                                         MPI_Fint *maxprocs, MPI_Fint *infos, MPI_Fint *root,
                                         MPI_Fint *comm, MPI_Fint *intercomm,
                                         MPI_Fint *errcodes, MPI_Fint *ierror,
                                         size_t commands_len, size_t argv_len);
void pmpi_comm_spawn_multiple_(MPI_Fint *count, char *commands, char *argv, MPI_Fint *maxprocs,
                               MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm,
                               MPI_Fint *intercomm, MPI_Fint *errcodes, MPI_Fint *ierror,
                               size_t commands_len, size_t argv_len)
{
    size_t n = *count > 0 ? (size_t)*count : 0;
    bool none = argv == &mpiprivc_.argvs_null;
    char **cmds = calloc(n + 1, sizeof *cmds), ***argvs = none ? NULL : calloc(n + 1, sizeof *argvs);
    bool ok = cmds && (none || argvs);
    for (size_t i = 0; ok && i < n; i++) {
        ok = (cmds[i] = vf_str_in(commands + i * commands_len, commands_len, 0)) != NULL;
        if (ok && !none)
            ok = (argvs[i] = vf_argv(argv + i * argv_len, n * argv_len, argv_len)) != NULL;
    }
    if (!ok)
        *ierror = vf_nomem();
    else
        *ierror = MPI_Comm_spawn_multiple(*count, cmds, argvs, maxprocs, infos, *root, *comm,
                                          intercomm, vf_errcodes(errcodes));
    for (size_t i = 0; i < n; i++) {
        free(cmds ? cmds[i] : NULL);
        vf_argv_free(argvs ? argvs[i] : NULL);
    }
    free(cmds);
    free(argvs);
}
VF_NAMES(comm_spawn_multiple, COMM_SPAWN_MULTIPLE)
