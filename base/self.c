/* This process's kernel and namespaces, as the channels, locality and
 * MPI-IO tell apart processes that share a machine or a VM. */
#include "base.h"

#include <stdio.h>
#include <sys/stat.h>

uint64_t vmpi_self_boot(void)
{
    static uint64_t id; /* read once: the same for the process's life */
    if (id)
        return id;
    char boot[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot, sizeof boot, f))
            boot[0] = '\0';
        fclose(f);
    }
    size_t n = 0;
    while (boot[n] && boot[n] != '\n')
        n++;
    id = vmpi_fnv(VMPI_FNV_BASIS, boot, n);
    return id;
}

uint64_t vmpi_self_ns(const char *ns)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/ns/%s", ns);
    return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}
