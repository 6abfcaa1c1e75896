// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ompbarrier: an OpenMP program on Intel's OpenMP runtime ABI (libiomp5: Debian's LLVM libomp,
 * which carries ITT), with a known barrier count, for --itt (tests/test_itt.py).
 *
 *   ompbarrier N T [WORK]   T threads, each doing a little work (WORK x its number + 1 steps,
 *                           default 20000) then an explicit "#pragma omp barrier", N times: N
 *                           barrier waits per thread ("sync:OMP Barrier" spans)
 *
 * Built with gcc -fopenmp and linked with -liomp5, not libgomp (its GOMP_* entry points).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, t = argc > 2 ? atoi(argv[2]) : 2, work = argc > 3 ? atoi(argv[3]) : 20000;
	double sum = 0;

	if (argc < 3 || n < 0 || t < 1 || work < 0) {
		fprintf(stderr, "usage: ompbarrier N THREADS [WORK]\n");
		return 2;
	}
#pragma omp parallel num_threads(t) reduction(+ : sum)
	{
		for (int i = 0; i < n; i++) {
			for (int k = 0; k < work * (omp_get_thread_num() + 1); k++)
				sum += k * 0.5;
#pragma omp barrier
		}
	}
	printf("%d barriers x %d threads (%g)\n", n, t, sum);
	return 0;
}
