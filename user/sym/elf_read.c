// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* ELF files another user may change while they are read.  See elf_read.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "lib/warn.h"
#include "sym/elf_read.h"

int elf_read_open(struct elf_read *e, const char *path, char *err, size_t errlen)
{
	int ret;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err_set(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	e->fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (e->fd < 0) {
		ret = -errno;
		err_set(err, errlen, "open %s: %s%s", path, strerror(-ret),
			ret == -EACCES || ret == -EPERM ? " (run as root)" : " (check the library path)");
		return ret;
	}
	if (fstat(e->fd, &e->st)) {
		ret = -errno;
		err_set(err, errlen, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	if (!S_ISREG(e->st.st_mode)) {
		err_set(err, errlen, "%s: not a regular file", path);
		ret = -EINVAL;
		goto fail;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!e->elf) {
		err_set(err, errlen, "%s: elf_begin: %s", path, elf_errmsg(-1));
		ret = -EINVAL;
		goto fail;
	}
	if (elf_kind(e->elf) != ELF_K_ELF) {
		err_set(err, errlen, "%s: not an ELF file (a linker script or text file?)", path);
		ret = -ENOEXEC;
		goto fail;
	}
	return 0;
fail:
	elf_read_close(e);
	return ret;
}

bool elf_read_changed(const struct elf_read *e)
{
	struct stat now;

	if (fstat(e->fd, &now))
		return true;
	return now.st_size != e->st.st_size || now.st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != e->st.st_mtim.tv_nsec || now.st_ctim.tv_sec != e->st.st_ctim.tv_sec ||
	       now.st_ctim.tv_nsec != e->st.st_ctim.tv_nsec;
}

void elf_read_close(struct elf_read *e)
{
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	e->elf = NULL;
	e->fd = -1;
}
