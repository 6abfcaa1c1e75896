/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ggml's tensor types and their storage (the elements per block and the
 * bytes per block, ggml_blck_size and ggml_type_size) in the one ggml version
 * whose structs --roofline has verified, for bpf/roof_ggml.bpf.h (a node's
 * bytes) and user space (the type's name, the version check).
 *
 * Verified against ggml 0.25.1 (commit 0ad4a86), the llama.cpp that
 * node-llama-cpp 3.22.1 ships (scripts/install-realstacks.sh): the table is
 * that library's own ggml_blck_size, ggml_type_size and ggml_type_name for
 * every type below GGML_TYPE_COUNT, and the offsets of bpf/roof_ggml.bpf.h
 * are offsetof() compiled against the ggml.h and ggml-cpu-impl.h of the same
 * release (node-llama-cpp's llama/gitRelease.bundle, which carries no debug
 * information to read them from instead).  Another version is refused.
 */
#ifndef TMABPF_BPF_ROOF_GGML_TYPES_H
#define TMABPF_BPF_ROOF_GGML_TYPES_H

#define ROOF_GGML_VERIFIED "0.25.1"	/* ggml_version() of the verified library */

/* X(id, name, elements per block, bytes per block); removed and deprecated ids have none */
#define ROOF_GGML_TYPE_LIST(X)                                                                                      \
	X(0, f32, 1, 4) X(1, f16, 1, 2) X(2, q4_0, 32, 18) X(3, q4_1, 32, 20) X(6, q5_0, 32, 22)                     \
	X(7, q5_1, 32, 24) X(8, q8_0, 32, 34) X(9, q8_1, 32, 36) X(10, q2_K, 256, 84) X(11, q3_K, 256, 110)          \
	X(12, q4_K, 256, 144) X(13, q5_K, 256, 176) X(14, q6_K, 256, 210) X(15, q8_K, 256, 292)                      \
	X(16, iq2_xxs, 256, 66) X(17, iq2_xs, 256, 74) X(18, iq3_xxs, 256, 98) X(19, iq1_s, 256, 50)                \
	X(20, iq4_nl, 32, 18) X(21, iq3_s, 256, 110) X(22, iq2_s, 256, 82) X(23, iq4_xs, 256, 136) X(24, i8, 1, 1)  \
	X(25, i16, 1, 2) X(26, i32, 1, 4) X(27, i64, 1, 8) X(28, f64, 1, 8) X(29, iq1_m, 256, 56) X(30, bf16, 1, 2) \
	X(34, tq1_0, 256, 54) X(35, tq2_0, 256, 66) X(39, mxfp4, 32, 17) X(40, nvfp4, 64, 36) X(41, q1_0, 128, 18)  \
	X(42, q2_0, 64, 18)

#define ROOF_GGML_NTYPES 43	/* GGML_TYPE_COUNT */

#endif
