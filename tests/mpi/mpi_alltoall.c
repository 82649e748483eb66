/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * MPI_Alltoall for tests/integration/test_mpi.sh: every rank sends every
 * rank a block of 1 to 32 Ki uint32 words (128 KiB) whose words encode the
 * sender, the receiver, the index and the round, and checks every word of
 * every block it receives.  Rank 0 prints one line per block size, then
 * "mpi_alltoall: OK"; any wrong word aborts.
 *
 * Usage: mpi_alltoall [ROUNDS]   (default 3 rounds per block size)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_BLOCK = 1 << 15 };

static uint32_t word(int from, int to, int i, int round)
{
	return ((uint32_t)from << 28) ^ ((uint32_t)to << 24) ^ ((uint32_t)i * 2654435761u) ^
	       (uint32_t)round;
}

int main(int argc, char **argv)
{
	int rank, nranks, rounds = argc > 1 ? atoi(argv[1]) : 3;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	size_t total = (size_t)MAX_BLOCK * (size_t)nranks;
	uint32_t *sbuf = malloc(total * 4), *rbuf = malloc(total * 4);

	if (!sbuf || !rbuf) {
		fprintf(stderr, "mpi_alltoall: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int block = 1; block <= MAX_BLOCK; block *= 8) {
		for (int round = 0; round < rounds; round++) {
			for (int to = 0; to < nranks; to++)
				for (int i = 0; i < block; i++) {
					sbuf[(size_t)to * block + i] = word(rank, to, i, round);
					rbuf[(size_t)to * block + i] = 0;
				}
			MPI_Alltoall(sbuf, block, MPI_UINT32_T, rbuf, block, MPI_UINT32_T,
				     MPI_COMM_WORLD);
			for (int from = 0; from < nranks; from++)
				for (int i = 0; i < block; i++) {
					uint32_t got = rbuf[(size_t)from * block + i];

					if (got != word(from, rank, i, round)) {
						fprintf(stderr,
							"mpi_alltoall: rank %d: block of %d words, round "
							"%d: word %d from rank %d is 0x%08x, expected "
							"0x%08x\n",
							rank, block, round, i, from, got,
							word(from, rank, i, round));
						MPI_Abort(MPI_COMM_WORLD, 1);
					}
				}
		}
		if (rank == 0)
			printf("mpi_alltoall: %d ranks, blocks of %5d uint32: every word checked (%d rounds)\n",
			       nranks, block, rounds);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_alltoall: OK\n");
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
