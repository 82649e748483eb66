/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MPI_Allreduce for tests/integration/test_mpi.sh: sums, maxima and
 * minima of int64 vectors from 1 to 256 Ki elements (2 MiB), each element
 * a function of its rank and index, so that every rank can compute the
 * exact answer and check every element.  Rank 0 prints one line per
 * length, then "mpi_allreduce: OK"; any wrong element aborts.
 *
 * Usage: mpi_allreduce [ROUNDS]   (default 3 rounds per length)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_LEN = 1 << 18 };

static int64_t value(int rank, int i, int round)
{
	return (int64_t)(rank + 1) * 1000003 + (int64_t)i * 17 - (int64_t)round * 5;
}

int main(int argc, char **argv)
{
	int rank, nranks, rounds = argc > 1 ? atoi(argv[1]) : 3;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	int64_t *in = malloc(sizeof(int64_t) * MAX_LEN), *out = malloc(sizeof(int64_t) * MAX_LEN);

	if (!in || !out) {
		fprintf(stderr, "mpi_allreduce: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int len = 1; len <= MAX_LEN; len *= 8) {
		static const MPI_Op ops[] = { MPI_SUM, MPI_MAX, MPI_MIN };
		static const char *const names[] = { "sum", "max", "min" };

		for (int round = 0; round < rounds; round++)
			for (int o = 0; o < 3; o++) {
				for (int i = 0; i < len; i++)
					in[i] = value(rank, i, round);
				MPI_Allreduce(in, out, len, MPI_INT64_T, ops[o], MPI_COMM_WORLD);
				for (int i = 0; i < len; i++) {
					int64_t want = 0;

					/* value() grows with the rank: max is the last, min the first. */
					if (o == 0)
						for (int r = 0; r < nranks; r++)
							want += value(r, i, round);
					else
						want = value(o == 1 ? nranks - 1 : 0, i, round);
					if (out[i] != want) {
						fprintf(stderr,
							"mpi_allreduce: rank %d: %s of %d elements, round "
							"%d: element %d is %lld, expected %lld\n",
							rank, names[o], len, round, i, (long long)out[i],
							(long long)want);
						MPI_Abort(MPI_COMM_WORLD, 1);
					}
				}
			}
		if (rank == 0)
			printf("mpi_allreduce: %d ranks, %6d int64: sum, max, min checked (%d rounds)\n",
			       nranks, len, rounds);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_allreduce: OK\n");
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
