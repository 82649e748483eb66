/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Point-to-point ping-pong for tests/integration/test_mpi.sh: ranks pair up
 * (0-1, 2-3, ...), and each pair bounces messages of 1 B to 1 MiB (UCX's
 * eager and rendezvous protocols: SENDs, and RDMA READs or WRITEs of the
 * registered buffer) ITERS times.  Every message carries a pattern of its
 * size, iteration and sender, checked on arrival, and its status must name
 * the sender, the tag and the size.  Rank 0 prints one line per size with
 * the median round trip, then "mpi_pingpong: OK"; any wrong byte aborts.
 *
 * Usage: mpi_pingpong [ITERS]   (default 20; an even number of ranks)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SIZE = 1 << 20, TAG = 7 };

static void die(int rank, const char *what)
{
	fprintf(stderr, "mpi_pingpong: rank %d: %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint8_t pattern(size_t i, int size, int iter, int from)
{
	return (uint8_t)(i * 31 + (size_t)size * 7 + (size_t)iter * 13 + (size_t)from * 101);
}

static void fill(uint8_t *b, int size, int iter, int from)
{
	for (int i = 0; i < size; i++)
		b[i] = pattern((size_t)i, size, iter, from);
}

static void check(int rank, const uint8_t *b, int size, int iter, int from, const MPI_Status *st)
{
	int count;
	char msg[160];

	MPI_Get_count(st, MPI_BYTE, &count);
	if (st->MPI_SOURCE != from || st->MPI_TAG != TAG || count != size) {
		snprintf(msg, sizeof(msg), "size %d iteration %d: status source %d tag %d count %d",
			 size, iter, st->MPI_SOURCE, st->MPI_TAG, count);
		die(rank, msg);
	}
	for (int i = 0; i < size; i++)
		if (b[i] != pattern((size_t)i, size, iter, from)) {
			snprintf(msg, sizeof(msg),
				 "size %d iteration %d from %d: byte %d is 0x%02x, expected 0x%02x",
				 size, iter, from, i, b[i], pattern((size_t)i, size, iter, from));
			die(rank, msg);
		}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = argc > 1 ? atoi(argv[1]) : 20;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks % 2 || iters < 1)
		die(rank, "needs an even number of ranks and ITERS >= 1");

	int peer = rank ^ 1, pinger = !(rank & 1);
	uint8_t *sbuf = malloc(MAX_SIZE), *rbuf = malloc(MAX_SIZE);
	double *rtt = malloc(sizeof(double) * (size_t)iters);

	if (!sbuf || !rbuf || !rtt)
		die(rank, "out of memory");
	for (int size = 1; size <= MAX_SIZE; size *= 4) {
		MPI_Status st;

		for (int it = 0; it < iters; it++) {
			double t0 = MPI_Wtime();

			memset(rbuf, 0, (size_t)size);
			fill(sbuf, size, it, rank);
			if (pinger) {
				MPI_Send(sbuf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
				MPI_Recv(rbuf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &st);
			} else {
				MPI_Recv(rbuf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &st);
				MPI_Send(sbuf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
			}
			check(rank, rbuf, size, it, peer, &st);
			rtt[it] = MPI_Wtime() - t0;
		}
		qsort(rtt, (size_t)iters, sizeof(double), cmp_double);
		if (rank == 0)
			printf("mpi_pingpong: %d ranks, %7d bytes: %d round trips a pair checked, "
			       "median %.1f us\n",
			       nranks, size, iters, rtt[iters / 2] * 1e6);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_pingpong: OK\n");
	free(sbuf);
	free(rbuf);
	free(rtt);
	MPI_Finalize();
	return 0;
}
