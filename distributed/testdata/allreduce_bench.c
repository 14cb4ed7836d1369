/* MPI_Allreduce of float32 sums, timed as BenchmarkAllSum times AllSum:
   the same sizes, a send and a receive buffer, one warm-up call.
   Usage: allreduce_bench ITERS_1KIB ITERS_64MIB. Rank 0 prints a line per
   size in go test -bench's format. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void bench(size_t bytes, int iters, int rank) {
	size_t n = bytes / sizeof(float);
	float *x = malloc(bytes), *y = malloc(bytes);
	for (size_t i = 0; i < n; i++) x[i] = 1, y[i] = 0;
	MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	double t = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(x, y, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	t = MPI_Wtime() - t;
	if (rank == 0)
		printf("C_MPI_Allreduce/float32/%zuKiB\t%d\t%.0f ns/op\t%.2f MB/s\n", bytes >> 10, iters,
		       t / iters * 1e9, bytes * (double)iters / t / 1e6);
	free(x);
	free(y);
}

int main(int argc, char **argv) {
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	bench(1 << 10, argc > 1 ? atoi(argv[1]) : 10000, rank);
	bench(64 << 20, argc > 2 ? atoi(argv[2]) : 20, rank);
	MPI_Finalize();
	return 0;
}
