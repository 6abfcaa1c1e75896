#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""An initramfs (cpio newc, gzip) for the emulated-PMU guest.

  tests/pmu/initramfs.py OUT --root DIR [--root DIR...] [--lib-dir DIR...] FILE...

A FILE is GUEST_PATH=HOST_PATH (a file, copied with its mode), GUEST_PATH=@TARGET
(a symlink) or GUEST_PATH/ (a directory).  Every ELF file's interpreter and
DT_NEEDED libraries are found, recursively, under the --root trees (Debian
arm64 packages unpacked by fetch_arm64.py) or in a --lib-dir, and put in
/lib/aarch64-linux-gnu (the interpreter at its own path).
"""
import argparse
import gzip
import os
import stat
import struct
import sys

LIB_DIRS = ("lib/aarch64-linux-gnu", "usr/lib/aarch64-linux-gnu", "lib", "usr/lib")


def elf_deps(data):
    """(interpreter or None, [DT_NEEDED names]) of a 64-bit little-endian ELF image."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None, []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    interp, dyn, loads = None, None, []
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 3:
            interp = data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode()
        elif p_type == 2:
            dyn = (p_offset, p_filesz)
        elif p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
    if not dyn:
        return interp, []

    def off_of(vaddr):
        for va, off, sz in loads:
            if va <= vaddr < va + sz:
                return off + vaddr - va
        raise ValueError("address outside the loaded segments")

    needed, strtab = [], None
    for i in range(dyn[1] // 16):
        tag, val = struct.unpack_from("<qQ", data, dyn[0] + i * 16)
        if tag == 0:
            break
        if tag == 1:
            needed.append(val)
        elif tag == 5:
            strtab = off_of(val)
    names = []
    for n in needed:
        end = data.index(b"\0", strtab + n)
        names.append(data[strtab + n:end].decode())
    return interp, names


def resolve_in_root(root, rel):
    """Follow symlinks of root/rel inside root (absolute targets are root-relative)."""
    path = rel.strip("/")
    for _ in range(40):
        full = os.path.join(root, path)
        if not os.path.islink(full):
            return full if os.path.isfile(full) else None
        t = os.readlink(full)
        path = t.strip("/") if t.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(path), t))
    return None


class Cpio:
    def __init__(self):
        self.entries = {}	# guest path -> (mode, data)

    def dir(self, path):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            self.entries.setdefault("/".join(parts[:i]), (stat.S_IFDIR | 0o755, b""))

    def add(self, path, mode, data):
        path = path.strip("/")
        if os.path.dirname(path):
            self.dir(os.path.dirname(path))
        self.entries[path] = (mode, data)

    def write(self, out):
        buf = bytearray()

        def rec(name, mode, data, ino):
            nb = name.encode() + b"\0"
            hdr = "070701" + "".join(f"{v:08x}" for v in (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nb), 0))
            buf.extend(hdr.encode() + nb)
            buf.extend(b"\0" * (-len(buf) % 4))
            buf.extend(data)
            buf.extend(b"\0" * (-len(buf) % 4))

        for ino, (name, (mode, data)) in enumerate(sorted(self.entries.items()), 1):
            rec(name, mode, data, ino)
        rec("TRAILER!!!", 0, b"", 0)
        with gzip.open(out, "wb", compresslevel=1) as f:
            f.write(bytes(buf))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--root", action="append", default=[])
    ap.add_argument("--lib-dir", action="append", default=[])
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    cpio = Cpio()
    elves = []
    for spec in a.files:
        if spec.endswith("/"):
            cpio.dir(spec)
            continue
        guest, _, host = spec.partition("=")
        if host.startswith("@"):
            cpio.add(guest, stat.S_IFLNK | 0o777, host[1:].encode())
            continue
        with open(host, "rb") as f:
            data = f.read()
        cpio.add(guest, stat.S_IFREG | (os.stat(host).st_mode & 0o777), data)
        elves.append(data)

    def find_lib(name):
        for d in a.lib_dir:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return os.path.realpath(p)
        for root in a.root:
            for d in LIB_DIRS:
                p = resolve_in_root(root, os.path.join(d, name))
                if p:
                    return p
        return None

    done, missing = set(), []
    while elves:
        interp, needed = elf_deps(elves.pop())
        for name, guest in ([(os.path.basename(interp), interp)] if interp else []) + \
                [(n, "lib/aarch64-linux-gnu/" + n) for n in needed]:
            if guest in done:
                continue
            done.add(guest)
            p = find_lib(name)
            if not p:
                missing.append(name)
                continue
            with open(p, "rb") as f:
                data = f.read()
            cpio.add(guest, stat.S_IFREG | 0o755, data)
            elves.append(data)
    if missing:
        print(f"initramfs: libraries not found: {', '.join(sorted(set(missing)))}", file=sys.stderr)
        sys.exit(1)
    cpio.write(a.out)


if __name__ == "__main__":
    main()
