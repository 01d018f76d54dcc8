/* Storage of the Fortran sentinels and the string helpers (fortran.h). */
#define _GNU_SOURCE /* strnlen */
#include "fortran.h"

#include <stdlib.h>
#include <string.h>

VF_EXPORT struct vf_priv1 mpipriv1_;
VF_EXPORT struct vf_priv2 mpipriv2_;
VF_EXPORT struct vf_privc mpiprivc_;
VF_EXPORT MPI_Fint mpifcmb5_;
VF_EXPORT MPI_Fint mpifcmb9_;

_Static_assert(sizeof(MPI_Status) == 5 * sizeof(MPI_Fint), "MPI_STATUS_SIZE is 5");

/* C's MPI_F_STATUS(ES)_IGNORE are the addresses a Fortran caller passes,
 * so MPI_Status_f2c in C code called from Fortran recognizes them too. */
__attribute__((constructor)) static void vf_init(void)
{
    MPI_F_STATUS_IGNORE = mpipriv1_.status_ignore;
    MPI_F_STATUSES_IGNORE = mpipriv2_.statuses_ignore;
}

char *vf_str_in(const char *s, size_t len, int lead)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    while (lead && len > 0 && *s == ' ')
        s++, len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* Room for the longest string C writes (MPI_MAX_LIBRARY_VERSION_STRING)
 * whatever the Fortran length, plus that length. */
char *vf_str_tmp(size_t len)
{
    return calloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 1, 1);
}

void vf_str_out(char *f, size_t len, char *tmp, int copy)
{
    if (copy) {
        size_t n = strnlen(tmp, len);
        memcpy(f, tmp, n);
        memset(f + n, ' ', len - n);
    }
    free(tmp);
}

void vf_logicals(MPI_Fint *a, MPI_Fint n)
{
    for (MPI_Fint i = 0; i < n; i++)
        a[i] = vf_logical(a[i]);
}

void vf_indices(int *idx, int n)
{
    for (int i = 0; i < n; i++)
        if (idx[i] != MPI_UNDEFINED)
            idx[i]++;
}

int vf_nomem(void)
{
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    return MPI_ERR_NO_MEM;
}
