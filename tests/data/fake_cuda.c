// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* A fake CUDA driver library (libcuda.so.1's entry points, no GPU): the
 * --per-call tests build it and count its calls per token. */
static volatile unsigned long long calls;

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		   unsigned shmem, void *stream, void **params, void **extra)
{
	calls++;
	return 0;
}

int cuStreamSynchronize(void *stream)
{
	calls++;
	return 0;
}

int cuCtxSynchronize(void)
{
	calls++;
	return 0;
}

int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, unsigned long bytes)
{
	calls++;
	return 0;
}

int cuMemcpyDtoH_v2(void *dst, unsigned long long src, unsigned long bytes)
{
	calls++;
	return 0;
}
