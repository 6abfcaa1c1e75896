// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#include <elfutils/libdwelf.h>
#include "sym/debugfile.h"
#include "sym/elf_read.h"
#include "sym/user_file.h"

#define BUILD_ID_MAX 64

const char *debugfile_dir(void)
{
	const char *d = getenv("TMABPF_DEBUG_DIR");

	return d && *d ? d : "/usr/lib/debug";
}

struct elf_ids {
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len;
	char link[256];		/* .gnu_debuglink name, "" if none */
	GElf_Word crc;
	uid_t owner;		/* the file's */
};

static int read_ids(const char *path, struct elf_ids *ids)
{
	const void *bid = NULL;
	const char *link;
	struct elf_read e;
	ssize_t n;
	int r;

	memset(ids, 0, sizeof(*ids));
	if ((r = elf_read_open(&e, path, NULL, 0)))
		return r;
	ids->owner = e.st.st_uid;
	if (!elf_read_ids_bounded(&e)) {	/* libdw would read a user's gigabyte note whole */
		elf_read_close(&e);
		return -EFBIG;
	}
	n = dwelf_elf_gnu_build_id(e.elf, &bid);
	if (n > 0 && n <= BUILD_ID_MAX) {
		memcpy(ids->build_id, bid, n);
		ids->build_id_len = n;
	}
	link = dwelf_elf_gnu_debuglink(e.elf, &ids->crc);
	/* a debug link names a file, never a path: "../../proc/kcore" would walk out of the debug
	 * directories (gdb and elfutils join it as it is; a root tmabpf must not) */
	if (link && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, ".."))
		snprintf(ids->link, sizeof(ids->link), "%s", link);
	r = elf_read_changed(&e) ? -EAGAIN : 0;
	elf_read_close(&e);
	if (r)
		memset(ids, 0, sizeof(*ids));
	return r;
}

static bool same_build_id(const char *path, const struct elf_ids *want)
{
	struct elf_ids got;

	return read_ids(path, &got) == 0 && got.build_id_len == want->build_id_len &&
	       !memcmp(got.build_id, want->build_id, want->build_id_len);
}

static bool crc_matches(int fd, GElf_Word want)
{
	unsigned char buf[1 << 16];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	return n == 0 && (GElf_Word)crc == want;
}

/* The candidate's fd when it is a regular file that the stripped file's owner could read too (theirs,
 * or readable by all: a user's library never gets root's 0600 file's names through a link it
 * plants), and it matches (build id when the stripped file has one, else .gnu_debuglink's CRC);
 * else -1, *too_big set when it was another user's file past DEBUGFILE_CRC_MAX to read for its CRC. */
static int candidate(const char *path, const struct elf_ids *ids, bool *too_big)
{
	bool by_crc = !ids->build_id_len;
	char self[64];
	struct stat st;
	int fd = user_file_open(path, 0, &st);

	if (fd < 0)
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (by_crc && (unsigned long long)st.st_size > DEBUGFILE_CRC_MAX && elf_read_others_file(&st)) {
		*too_big = true;
		close(fd);
		return -1;
	}
	if ((st.st_uid != ids->owner && !(st.st_mode & S_IROTH)) ||
	    !(by_crc ? crc_matches(fd, ids->crc) : same_build_id(self, ids))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int by_build_id(const struct elf_ids *ids, const char *root, char *out, size_t outlen)
{
	char hex[2 * BUILD_ID_MAX + 1];
	bool unused = false;
	int fd;

	if (ids->build_id_len < 2)
		return -ENOENT;
	for (size_t i = 0; i < ids->build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", ids->build_id[i]);
	for (int pass = 0; pass < 2; pass++) {
		const char *r = pass ? root : "";

		if (pass && !*root)
			break;
		snprintf(out, outlen, "%s%s/.build-id/%.2s/%s.debug", r, debugfile_dir(), hex, hex + 2);
		if ((fd = candidate(out, ids, &unused)) >= 0)
			return fd;
	}
	return -ENOENT;
}

static int by_debuglink(const struct elf_ids *ids, const char *target_path, const char *root, char *out,
			size_t outlen)
{
	const char *slash = strrchr(target_path, '/');
	int dirlen = slash ? (int)(slash - target_path) : 0, fd;
	bool big = false;	/* out names a candidate too big to read for its CRC */

	if (!ids->link[0] || !slash)
		return -ENOENT;
	for (int pass = 0; pass < 2; pass++) {
		const char *r = pass ? root : "";
		char cand[3][4096 + 512];

		if (pass && !*root)
			break;
		snprintf(cand[0], sizeof(cand[0]), "%s%.*s/%s", r, dirlen, target_path, ids->link);
		snprintf(cand[1], sizeof(cand[1]), "%s%.*s/.debug/%s", r, dirlen, target_path, ids->link);
		snprintf(cand[2], sizeof(cand[2]), "%s%s%.*s/%s", r, debugfile_dir(), dirlen, target_path, ids->link);
		for (int i = 0; i < 3; i++) {
			bool too_big = false;

			if ((fd = candidate(cand[i], ids, &too_big)) < 0) {
				if (too_big && !big)
					snprintf(out, outlen, "%s", cand[i]);
				big |= too_big;
				continue;
			}
			snprintf(out, outlen, "%s", cand[i]);
			return fd;
		}
	}
	return big ? -EFBIG : -ENOENT;
}

int debugfile_find(const char *open_path, const char *target_path, const char *root, char *out, size_t outlen)
{
	struct elf_ids ids;
	int r = read_ids(open_path, &ids);

	if (r)
		return r;
	if ((r = by_build_id(&ids, root ? root : "", out, outlen)) >= 0)
		return r;
	return by_debuglink(&ids, target_path, root ? root : "", out, outlen);
}

int debugfile_build_id(const char *path, char *hex, size_t hexlen)
{
	struct elf_ids ids;
	int r = read_ids(path, &ids);

	if (r)
		return r;
	if (!ids.build_id_len || hexlen < 2 * ids.build_id_len + 1)
		return -ENOENT;
	for (size_t i = 0; i < ids.build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", ids.build_id[i]);
	return 0;
}
