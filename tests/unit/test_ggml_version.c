// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit tests for ggml_version.c: the string a ggml_version() body returns, decoded from its code, and
 * read from a library built here whose ggml_version has aliases at its address. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "sym/ggml_version.h"

/* ggml_version's primary name in the symbol table is another (a_version: shorter), the name an alias */
static void aliased_library(void)
{
	char dir[] = "/tmp/tmabpf-ggmlver-XXXXXX", src[64], lib[64], cmd[256], ver[32], why[400] = "";
	FILE *f;
	int r;

	if (!mkdtemp(dir)) {
		check(0, "aliases: mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(src, sizeof(src), "%s/gv.c", dir);
	snprintf(lib, sizeof(lib), "%s/libgv.so", dir);
	f = fopen(src, "w");
	if (f) {
		fputs("const char *ggml_version(void) { return \"0.25.1\"; }\n"
		      "const char *a_version(void) __attribute__((alias(\"ggml_version\")));\n"
		      "const char *zz_version(void) __attribute__((alias(\"ggml_version\")));\n", f);
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "cc -O1 -shared -fPIC -o '%s' '%s' >/dev/null 2>&1", lib, src);
	if (!f || system(cmd)) {
		skip("aliases", "no C compiler (cc) to build a test library");
	} else {
		r = ggml_version_read(lib, ver, sizeof(ver), why, sizeof(why));
		check(!r && !strcmp(ver, "0.25.1"), "ggml_version under an alias of another primary name is read (%d %s)",
		      r, r ? why : ver);
	}
	unlink(src);
	unlink(lib);
	rmdir(dir);
}

int main(void)
{
	/* node-llama-cpp 3.22.1's libggml-base.so (objdump): 1da20: endbr64; lea 0x89735(%rip),%rax  # a7160; ret */
	static const unsigned char x86[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d, 0x05, 0x35, 0x97, 0x08, 0x00, 0xc3 };
	/* without endbr64, a negative displacement */
	static const unsigned char x86_back[] = { 0x48, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff, 0xc3 };
	/* mov $0x0,%eax; ret: no string */
	static const unsigned char x86_other[] = { 0xb8, 0x00, 0x00, 0x00, 0x00, 0xc3, 0x90, 0x90 };
	/* arm64 at 0: bti c; adrp x0, 0x33000; add x0, x0, #0x160; ret (as clang --target=aarch64-linux-gnu
	 * -march=armv8.5-a assembles it) */
	static const unsigned char a64[] = { 0x5f, 0x24, 0x03, 0xd5, 0x80, 0x01, 0x00, 0xf0,
					     0x00, 0x80, 0x05, 0x91, 0xc0, 0x03, 0x5f, 0xd6 };
	/* adrp x1 (another register): refused */
	static const unsigned char a64_x1[] = { 0x81, 0x00, 0x00, 0x90, 0x20, 0x80, 0x05, 0x91, 0xc0, 0x03, 0x5f, 0xd6 };
	/* adrp x0, -1 page; add x0, x0, #0x10; ret at 0x5000: 0x4010 (a negative page count, shifted unsigned) */
	static const unsigned char a64_back[] = { 0xe0, 0xff, 0xff, 0xf0, 0x00, 0x40, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6 };
	uint64_t at = 0;
	int r;

	r = ggml_version_decode(EM_X86_64, 0x1da20, x86, sizeof(x86), &at);
	check(!r && at == 0xa7160,
	      "x86-64: endbr64; lea rax, [rip+d]; ret -> the string's address (0x%llx, want 0xa7160)", (unsigned long long)at);
	r = ggml_version_decode(EM_X86_64, 0x1000, x86_back, sizeof(x86_back), &at);
	check(!r && at == 0x1000 + 7 - 16,
	      "x86-64: a negative displacement (0x%llx)", (unsigned long long)at);
	check(ggml_version_decode(EM_X86_64, 0x1000, x86_other, sizeof(x86_other), &at) == -ENOEXEC,
	      "x86-64: code that returns no constant's address is refused");
	check(ggml_version_decode(EM_X86_64, 0x1000, x86, 6, &at) == -ENOEXEC, "x86-64: too short a body is refused");
	r = ggml_version_decode(EM_AARCH64, 0, a64, sizeof(a64), &at);
	check(!r && at == 0x33160,
	      "arm64: bti c; adrp x0; add x0, x0, #lo12; ret -> the page + the offset (0x%llx, want 0x33160)",
	      (unsigned long long)at);
	r = ggml_version_decode(EM_AARCH64, 0x5000, a64_back, sizeof(a64_back), &at);
	check(!r && at == 0x4010, "arm64: adrp to the page before (0x%llx, want 0x4010)", (unsigned long long)at);
	check(ggml_version_decode(EM_AARCH64, 0, a64_x1, sizeof(a64_x1), &at) == -ENOEXEC,
	      "arm64: another register than x0 is refused");
	check(ggml_version_decode(EM_RISCV, 0x1000, x86, sizeof(x86), &at) == -ENOEXEC, "another machine is refused");
	aliased_library();
	return check_exit();
}
