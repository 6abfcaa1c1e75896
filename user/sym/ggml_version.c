// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The ggml version of a file, from its ggml_version()'s code (ggml_version.h). */
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/ggml_version.h"
#include "sym/user_file.h"

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ggml_version_decode(uint16_t e_machine, uint64_t vaddr, const unsigned char *code, size_t len,
			uint64_t *str_vaddr)
{
	size_t at = 0;

	if (e_machine == EM_X86_64) {
		static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

		if (len >= 4 && !memcmp(code, endbr64, 4))
			at = 4;
		/* lea rax, [rip + disp32]; ret */
		if (len < at + 8 || code[at] != 0x48 || code[at + 1] != 0x8d || code[at + 2] != 0x05 || code[at + 7] != 0xc3)
			return -ENOEXEC;
		*str_vaddr = vaddr + at + 7 + (uint64_t)(int64_t)(int32_t)le32(code + at + 3);
		return 0;
	}
	if (e_machine == EM_AARCH64) {
		uint32_t adrp, add;
		uint64_t page;	/* in 4 KiB pages, two's complement: the shift of a negative signed one is UB */

		if (len >= 4 && (le32(code) == 0xd503245f || le32(code) == 0xd503233f))	/* bti c, paciasp */
			at = 4;
		if (len < at + 12)
			return -ENOEXEC;
		adrp = le32(code + at);
		add = le32(code + at + 4);
		/* adrp x0, imm; add x0, x0, #imm12 (no shift); ret */
		if ((adrp & 0x9f00001f) != 0x90000000 || (add & 0xffc003ff) != 0x91000000 ||
		    le32(code + at + 8) != 0xd65f03c0)
			return -ENOEXEC;
		page = (uint64_t)(((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3));
		if (page & (1 << 20))
			page -= 1 << 21;	/* wraps: a negative page count */
		*str_vaddr = ((vaddr + at) & ~0xfffULL) + (page << 12) + ((add >> 10) & 0xfff);
		return 0;
	}
	return -ENOEXEC;
}

/* The version from path's own ggml_version(): 0, -ENOENT when it has none, else -errno with why. */
static int read_own(const char *path, char *ver, size_t verlen, char *why, size_t whylen)
{
	unsigned char code[16];
	struct elfsyms es;
	const struct elfsym *sym = NULL, **m = NULL;
	uint64_t str, off;
	int nm;
	char err[256];
	ssize_t n;
	int fd, r;

	if ((r = elfsyms_load(path, &es, err, sizeof(err)))) {
		err_set(why, whylen, "%s", err);
		return r;
	}
	/* the name or one of its aliases at the same address (the primary name may be another) */
	nm = elfsyms_match_all(&es, "ggml_version", &m);
	for (int i = 0; !sym && i < nm; i++)
		if (!(m[i]->flags & ELFSYMS_F_NO_OFFSET))
			sym = m[i];
	r = -ENOENT;
	if (!sym)
		goto out;
	fd = user_file_open(path, 0, NULL);
	if (fd < 0) {
		r = fd;
		err_set(why, whylen, "%s: %s", path, strerror(-r));
		goto out;
	}
	memset(code, 0, sizeof(code));
	n = pread(fd, code, sizeof(code), (off_t)sym->offset);
	r = -ENOEXEC;
	if (n <= 0 || ggml_version_decode(es.e_machine, sym->addr, code, (size_t)n, &str) ||
	    elfsyms_vaddr_to_offset(&es, str, &off)) {
		err_set(why, whylen, "%s: ggml_version() is not a return of a string constant", path);
	} else if ((n = pread(fd, ver, verlen - 1, (off_t)off)) <= 0 || !memchr(ver, 0, (size_t)n) || !ver[0]) {
		err_set(why, whylen, "%s: ggml_version()'s string cannot be read", path);
	} else {
		for (r = 0; ver[r] && r < n; r++)
			if (!strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-_~", ver[r]))
				break;
		if (ver[r]) {
			err_set(why, whylen, "%s: ggml_version()'s string is not a version", path);
			r = -ENOEXEC;
		} else {
			r = 0;
		}
	}
	close(fd);
out:
	free(m);
	elfsyms_free(&es);
	return r;
}

int ggml_version_read(const char *path, char *ver, size_t verlen, char *why, size_t whylen)
{
	char real[PATH_MAX], base[PATH_MAX + 32];
	int r;

	if (verlen < 2)
		return -EINVAL;
	r = read_own(path, ver, verlen, why, whylen);
	if (r != -ENOENT)
		return r;
	/* a CPU backend: its libggml-base.so is beside it (path may be /proc/self/fd/N: its target) */
	if (!realpath(path, real)) {
		err_set(why, whylen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	snprintf(base, sizeof(base), "%s/libggml-base.so", dirname(real));
	r = read_own(base, ver, verlen, why, whylen);
	if (r == -ENOENT)
		err_set(why, whylen, "no ggml_version() in it nor in %s", base);
	return r;
}
