/* Info objects (core/info.c, vmpi_info_): ordered sets of (key, value)
 * strings, the hints that MPI calls take, and MPI_INFO_ENV, the predefined
 * object describing how the program was started. The entry points and their
 * argument checks (key and value lengths, MPI_ERR_INFO_*) are api/info.c's;
 * the layers that take hints look objects up here. */
#ifndef VMPI_CORE_INFO_H
#define VMPI_CORE_INFO_H

#include <mpi.h>
#include <stdbool.h>

/* Entries in insertion order: the n-th key of MPI_Info_get_nthkey is
 * e[n].key; setting an existing key replaces its value in place. Keys are
 * at most MPI_MAX_INFO_KEY, values at most MPI_MAX_INFO_VAL characters
 * (the callers check). */
struct vmpi_info_entry {
    char *key, *val;
};
struct vmpi_info {
    int handle;
    int n, cap;
    struct vmpi_info_entry *e;
};

/* The object a handle names: an info object made by MPI_Info_create or
 * MPI_Info_dup and not freed, or MPI_INFO_ENV; NULL otherwise (also for
 * MPI_INFO_NULL). */
struct vmpi_info *vmpi_info_get(MPI_Info h);
/* A new empty object with a handle, or NULL when out of memory. */
struct vmpi_info *vmpi_info_new(void);
/* A new object with the entries of src, in its order; NULL when out of
 * memory. */
struct vmpi_info *vmpi_info_dup(const struct vmpi_info *src);
/* Drops the object and its handle; never MPI_INFO_ENV. */
void vmpi_info_free(struct vmpi_info *info);
/* Sets key to val (a new key goes last): MPI_SUCCESS, or MPI_ERR_NO_MEM
 * with the object unchanged. */
int vmpi_info_set(struct vmpi_info *info, const char *key, const char *val);
/* The value of key, or NULL when the object has no such key. */
const char *vmpi_info_find(const struct vmpi_info *info, const char *key);
/* Removes key; false when the object has no such key. */
bool vmpi_info_delete(struct vmpi_info *info, const char *key);

/* At MPI_Init: fills MPI_INFO_ENV with what this process knows of its
 * start (MPI-3.1 8.1.2): command and argv (from MPI_Init's arguments, else
 * /proc/self/cmdline), maxprocs (the world size), host, arch, wdir and
 * thread_level (the level asked for). A key whose value does not fit in
 * MPI_MAX_INFO_VAL, or is unknown (soft, file), is left out. */
void vmpi_info_env_init(int argc, char **argv, int required);
/* At MPI_Finalize: frees every info object still around, and empties
 * MPI_INFO_ENV. */
void vmpi_info_finalize(void);

#endif
