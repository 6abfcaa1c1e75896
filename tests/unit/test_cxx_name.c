// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for cxx_name.c: long C++ names shortened in the middle, the distinguishing tail kept. */
#include <string.h>
#include "check.h"
#include "lib/cxx_name.h"
#include "lib/text_fit.h"

#define E CXX_ELLIPSIS

static void expect(const char *name, int width, const char *want)
{
	char out[512];
	int cols = cxx_name_shorten(name, width, out, sizeof(out));

	check(!strcmp(out, want) && cols <= width && cols == text_columns(out), "%d cols: '%s' -> '%s' (want '%s')",
	      width, name, out, want);
}

int main(void)
{
	static const char gemm[] = "void (anonymous namespace)::tinyBLAS_Q0_AVX<block_q8_0, block_q8_0, float>::"
				   "gemm<2, 3>(long, long, long, long)";
	static const char linear[] = "at::_ops::linear::call(at::Tensor const&, at::Tensor const&, "
				     "c10::optional<at::Tensor> const&)";

	expect("sgemm_kernel_HASWELL", 24, "sgemm_kernel_HASWELL");
	expect(gemm, 200, gemm);
	expect(gemm, 90, "(anonymous namespace)::tinyBLAS_Q0_AVX<block_q8_0, block_q8_0, float>::gemm<2, 3>(" E ")");
	expect(gemm, 60, "(anonymous namespace)::tinyBLAS_Q0_AVX<" E ">::gemm<2, 3>(" E ")");
	expect(gemm, 40, E "::tinyBLAS_Q0_AVX<" E ">::gemm<" E ">(" E ")");
	expect(gemm, 24, E "::gemm<" E ">(" E ")");
	expect(gemm, 10, E "emm<" E ">(" E ")");
	/* overloads of at::_ops::linear::call stay apart by scope; the parameters go first */
	expect(linear, 28, "at::_ops::linear::call(" E ")");
	expect(linear, 20, E "::linear::call(" E ")");
	expect("void ns::f<int>(int) const", 16, E "::f<" E ">(" E ") const");
	expect("operator new(unsigned long)", 20, "operator new(" E ")");
	expect("f [clone .constprop.0]", 22, "f [clone .constprop.0]");
	expect("libtorch_cpu.so.1.13.0+0x4cdc342", 24, E "cpu.so.1.13.0+0x4cdc342");
	return check_exit();
}
