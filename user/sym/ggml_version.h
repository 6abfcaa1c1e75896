/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ggml_version: the version of the ggml library that an ELF file is or links
 * (a llama.cpp CPU backend, libggml-cpu-*.so, links libggml-base.so), read
 * from the code of its ggml_version() function, never run: that function
 * returns a string constant, "lea rax, [rip + d]; ret" on x86-64 (after an
 * endbr64) and "adrp x0, P; add x0, x0, L; ret" on arm64 (after a bti c or
 * paciasp), and the string is read where the instruction points.
 */
#ifndef TMABPF_GGML_VERSION_H
#define TMABPF_GGML_VERSION_H
#include <stddef.h>
#include <stdint.h>

/* The address a ggml_version() body (code: its first len bytes) returns, for ELF machine e_machine:
 * 0, or -ENOEXEC when the code is not a return of a constant's address.  vaddr: the function's. */
int ggml_version_decode(uint16_t e_machine, uint64_t vaddr, const unsigned char *code, size_t len,
			uint64_t *str_vaddr);
/* The version string of the ggml in the file at path: its own ggml_version(), else the one of
 * libggml-base.so in the same directory.  0, or -errno with one line in why. */
int ggml_version_read(const char *path, char *ver, size_t verlen, char *why, size_t whylen);

#endif
