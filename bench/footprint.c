/* Memory per rank after a job has used every pair: MPI_Init, then
 * MPI_Alltoall of 8 B, 4 KiB and 64 KiB per peer (three times each) and
 * point-to-point exchanges of 8 B to 256 KiB with every other rank, and a
 * lap of every ring in 4 KiB messages, then,
 * with the benchmark's own buffers freed, each rank's proportional set
 * size (/proc/self/smaps_rollup) of shared memory (Pss_Shmem: the VM's
 * segments and the host region, each page divided among the processes that
 * map it, so the sum over ranks is what the job holds; the files are
 * sparse, only pages in use count) and of private memory (Pss_Anon). Rank 0
 * prints
 *   ranks vms shared_KiB_per_rank private_KiB_per_rank */
#include "bench_mpi.h"

/* Pss_Shmem and Pss_Anon of this process, KiB. */
static void pss_kib(long out[2])
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    out[0] = out[1] = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Pss_Shmem: %ld", &out[0]) != 1)
            sscanf(line, "Pss_Anon: %ld", &out[1]);
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    bench_mpi_version(argc, argv);
    if (argc > 1) {
        int help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
        fprintf(help ? stdout : stderr,
                "usage: footprint (no options; under vmpirun)\n"
                "prints ranks, VMs, and the job's shared and private memory per rank in KiB\n"
                "after all-to-all and pairwise exchanges of 8 B to 256 KiB\n");
        return help ? 0 : 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int sizes[] = {8, 4096, 65536};
    size_t bytes = size < 4 ? 262144 : (size_t)size * 65536;
    char *s = malloc(bytes), *r = malloc(bytes);
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(s, rank, bytes);
    for (int k = 0; k < 3; k++)
        for (int it = 0; it < 3; it++)
            MPI_Alltoall(s, sizes[k], MPI_BYTE, r, sizes[k], MPI_BYTE, MPI_COMM_WORLD);
    /* Collectives may not use the pairs (node collectives have slots of
     * their own): every pair once more by point to point. */
    for (int n = 8; n <= 262144; n *= 8)
        for (int d = 1; d < size; d++)
            MPI_Sendrecv(s, n, MPI_BYTE, (rank + d) % size, d, r, n, MPI_BYTE,
                         (rank + size - d) % size, d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* 40 eager messages of 4 KiB a pair: more than a lap of the largest
     * ring, so every page of every ring has been written. */
    for (int d = 1; d < size; d++)
        for (int m = 0; m < 40; m++)
            MPI_Sendrecv(s, 4096, MPI_BYTE, (rank + d) % size, m, r, 4096, MPI_BYTE,
                         (rank + size - d) % size, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* VMs are told apart by processor name (the emulated VMs' hostnames). */
    char name[MPI_MAX_PROCESSOR_NAME] = "", *names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    int len, vms = 0;
    if (!names)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Get_processor_name(name, &len);
    MPI_Allgather(name, sizeof name, MPI_CHAR, names, sizeof name, MPI_CHAR, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(names + (size_t)i * sizeof name, names + (size_t)j * sizeof name);
        vms += !seen;
    }
    free(s);
    free(r);
    long mine[2], sum[2];
    pss_kib(mine);
    MPI_Reduce(mine, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("# ranks vms shared_KiB_per_rank private_KiB_per_rank\n%d %d %ld %ld\n", size, vms,
               sum[0] / size, sum[1] / size);
    free(names);
    MPI_Finalize();
    return 0;
}
