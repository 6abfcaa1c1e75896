// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* libFuzzer target: /etc/ld.so.cache (glibc's "glibc-ld.so.cache1.1", after an old-format
 * table or not) and the lookup of a library name in it, exact then by versioned prefix.  The
 * input is NAME, a NUL, then the cache; it is read as ROOT/etc/ld.so.cache of a private root
 * holding one library, /l/libx.so.1 (an ELF header), so that entries can resolve. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sym/libresolve.h"

static char root[64], cache[96], lib[96];

static void cleanup(void)
{
	char d[96];

	unlink(cache);
	unlink(lib);
	snprintf(d, sizeof(d), "%s/etc", root);
	rmdir(d);
	snprintf(d, sizeof(d), "%s/l", root);
	rmdir(d);
	rmdir(root);
}

static void put(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

static void setup(void)
{
	unsigned char ehdr[EI_NIDENT + 8] = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT };
	char d[96];

	snprintf(root, sizeof(root), "%s/tmabpf-fuzz-ldcache-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	snprintf(d, sizeof(d), "%s/etc", root);
	snprintf(cache, sizeof(cache), "%s/ld.so.cache", d);
	if (mkdir(d, 0700))
		abort();
	snprintf(d, sizeof(d), "%s/l", root);
	snprintf(lib, sizeof(lib), "%s/libx.so.1", d);
	if (mkdir(d, 0700))
		abort();
	ehdr[EI_NIDENT + 2] = EM_X86_64;	/* e_machine, little-endian, after e_type */
	put(lib, ehdr, sizeof(ehdr));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size < 256 ? size : 256);
	char name[256] = "libx.so", out[LIBRESOLVE_PATH_MAX];

	if (!root[0])
		setup();
	if (nul) {
		memcpy(name, data, nul - data);
		name[nul - data] = 0;
		size -= nul + 1 - data;
		data = nul + 1;
	}
	put(cache, data, size);
	if (libresolve_ldcache_lookup(root, name, 0, 0, out, sizeof(out)) == 0 && out[0] != '/')
		abort();	/* only absolute paths are taken from the cache */
	libresolve_ldcache_lookup(root, name, ELFCLASS64, EM_X86_64, out, sizeof(out));
	libresolve_ldcache_lookup(root, name, ELFCLASS32, EM_386, out, sizeof(out));
	return 0;
}
