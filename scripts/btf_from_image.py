#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Cut the kernel's BTF (.BTF section) out of an arm64 kernel Image.

  scripts/btf_from_image.py VMLINUZ OUT.btf

Debian's arm64 vmlinuz is an uncompressed Image (or a gzip of one): the BTF
blob sits in it as in memory.  It starts with struct btf_header (magic 0xeb9f,
version 1, hdr_len 24) and spans hdr_len + str_off + str_len bytes.  The first
header whose type and string sections follow each other inside the file is
the kernel's; bpftool then dumps it as C (make vmlinux ARCH=arm64).
"""
import gzip
import struct
import sys


def find_btf(img):
    pos = 0
    while True:
        pos = img.find(b"\x9f\xeb\x01\x00", pos)
        if pos < 0:
            return None
        hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", img, pos + 4)
        end = pos + hdr_len + str_off + str_len
        if hdr_len == 24 and type_off == 0 and str_off == type_len and type_len > 1 << 20 and end <= len(img) \
                and img[pos + hdr_len + str_off] == 0:
            return img[pos:end]
        pos += 4


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1], "rb") as f:
        img = f.read()
    if img[:2] == b"\x1f\x8b":
        img = gzip.decompress(img)
    btf = find_btf(img)
    if btf is None:
        print(f"btf_from_image: no BTF blob in {sys.argv[1]} (kernel built without CONFIG_DEBUG_INFO_BTF?)",
              file=sys.stderr)
        sys.exit(1)
    with open(sys.argv[2], "wb") as f:
        f.write(btf)


if __name__ == "__main__":
    main()
