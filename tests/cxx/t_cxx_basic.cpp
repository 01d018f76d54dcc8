// np: 2
// A C++ program built with mpicxx: mpi.h compiles as C++ (extern "C"),
// C++ containers pass their data, and MPI_CXX_BOOL moves a bool.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

static void check(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "check failed: %s\n", what.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<double> v(16, rank + 1.0), sum(16);
    MPI_Allreduce(v.data(), sum.data(), (int)v.size(), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check(sum[15] == size * (size + 1) / 2.0, "MPI_Allreduce of a std::vector");
    bool flag = rank == 0;
    MPI_Bcast(&flag, 1, MPI_CXX_BOOL, 0, MPI_COMM_WORLD);
    check(flag, "MPI_Bcast of a bool");
    std::vector<int> ranks(size);
    MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> want(size);
    std::iota(want.begin(), want.end(), 0);
    check(ranks == want, "MPI_Allgather of ranks");
    MPI_Finalize();
    if (rank == 0)
        std::printf("No Errors\n");
    return 0;
}
