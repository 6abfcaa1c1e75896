# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A profiled user's libraries, as that user can shape them against a root tmabpf: a .strtab that
claims gigabytes of a sparse hole (libelf read sections whole: 4.2 GB for a 4 GiB hole), and the
path of a mapped library swapped for a link to a root-only library or to a device (the symbolizer
opened the path, following links: the root-only file's names reached the report, /dev/ptmx was
opened).  Each attack runs as nobody against root tmabpf."""
import gzip
import os
import struct
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import TMABPF, load_json
from test_hostile import AS_NOBODY, NOBODY, SPINNER, nobody_dir  # noqa: F401 (a fixture)


def asm_library(d, name, spin):
    """A small shared library whose endless loop is the function spin, among 200 others; two
    libraries built with names of the same length have the same layout."""
    src, lib = os.path.join(d, name + ".s"), os.path.join(d, name)
    with open(src, "w") as f:
        f.write(f".text\n.globl {spin}\n.type {spin},@function\n{spin}:\n1: jmp 1b\n.size {spin},.-{spin}\n")
        for i in range(200):
            f.write(f".globl {spin}_{i:03d}\n.type {spin}_{i:03d},@function\n{spin}_{i:03d}:\nret\n"
                    f".size {spin}_{i:03d},1\n")
    subprocess.run(["gcc", "-shared", "-nostdlib", "-o", lib, src], check=True, capture_output=True)
    os.unlink(src)
    return lib


def section_headers(data):
    """(name, offset of its section header) of each section of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    names_off, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)
    out = []
    for i in range(shnum):
        h = shoff + i * shentsize
        name, = struct.unpack_from("<I", data, h)
        end = data.index(b"\0", names_off + name)
        out.append((data[names_off + name:end].decode(), h))
    return out


def start_spinner(lib):
    spin = subprocess.Popen(AS_NOBODY + [sys.executable, "-c", SPINNER, lib])
    deadline = time.time() + 10
    while True:
        with open(f"/proc/{spin.pid}/maps") as f:
            if lib in f.read():
                return spin
        assert time.time() < deadline and spin.poll() is None, "the spinner never mapped the library"
        time.sleep(0.02)


def run_measured(args):
    """tmabpf args: (returncode, stderr, seconds, peak RSS in KiB)."""
    t0 = time.monotonic()
    p = subprocess.Popen([TMABPF] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), p.stderr.read(), time.monotonic() - t0, ru.ru_maxrss


def sample_spinner(lib, out):
    """nobody's spinner in lib, sampled by root tmabpf for 1 s into out: run_measured's tuple."""
    spin = start_spinner(lib)
    try:
        return run_measured(["--quiet", "--sample=199", "-p", str(spin.pid), "-d", "1", "--json", out])
    finally:
        spin.kill()
        spin.wait()


HOLE = 4 << 30


def test_strtab_in_a_sparse_hole(nobody_dir):
    """The library's .strtab is made to claim 4 GiB of a sparse hole (no disk used).  Root tmabpf
    read it whole: 4.2 GB RSS and 38.8 s for --sample -p in the issue.  Now the symbol and string
    tables are read streamed (a window of names, holes skipped): peak RSS stays under 200 MiB, the run
    takes its normal time, and the function in .dynsym is still named."""
    lib = asm_library(nobody_dir, "libhole.so", "tmabpf_spin")
    with open(lib, "rb") as f:
        data = f.read()
    sec = dict(section_headers(data))
    assert ".strtab" in sec and ".dynsym" in sec, sec
    with open(lib, "r+b") as f:  # .strtab's sh_offset and sh_size: the hole after the file's end
        f.seek(sec[".strtab"] + 0x18)
        f.write(struct.pack("<QQ", len(data), HOLE))
        f.truncate(len(data) + HOLE)
    os.chown(lib, NOBODY, NOBODY)
    assert os.stat(lib).st_blocks * 512 < 1 << 20, "the hole is not sparse here"
    out = os.path.join(nobody_dir, "out.json")
    rc, err, secs, rss = sample_spinner(lib, out)
    print(f"--sample -p -d 1 on a library with a {HOLE >> 30} GiB .strtab hole: {secs:.1f} s, peak RSS {rss >> 10} MiB")
    assert rc == 0, err
    assert rss < 200 * 1024, f"peak RSS {rss >> 10} MiB: the hole was read into memory"
    assert secs < 10, f"the run took {secs:.1f} s"
    rows = [s for s in load_json(out)["samples"] if s["module"] == "libhole.so"]
    assert rows and all(s["symbol"] == "tmabpf_spin" for s in rows), rows[:3]


def opened_ptmx(trace):
    """Lines of an strace -y log where the pseudo-terminal multiplexer was opened (O_PATH opens
    nothing: no device's open routine runs)."""
    with open(trace) as f:
        return [l for l in f if "openat(" in l and "O_PATH" not in l and ("ptmx" in l or "/dev/pts" in l)]


@pytest.mark.parametrize("target", ["root-only library", "/dev/ptmx"])
def test_mapped_library_swapped_for_a_link(nobody_dir, target):
    """nobody maps its library, deletes it and plants a link at its path: to a root-only (0600)
    library of the same layout, or to /dev/ptmx.  tmabpf opened the path: the root-only library's
    function name reached the report, folded stacks and pprof; /dev/ptmx was opened by root.  Now the
    mapped file is read through /proc/PID/map_files (the inode mapped) and nothing but a regular file
    is ever opened: the function is named from nobody's own library, and strace sees no device
    opened."""
    lib = asm_library(nobody_dir, "libswap.so", "tmabpf_spin")
    os.chown(lib, NOBODY, NOBODY)
    secret_dir = tempfile.mkdtemp(prefix="tmabpf-rootonly-")  # 0700 root
    try:
        secret = asm_library(secret_dir, "libsecret.so", "secret_spin")
        os.chmod(secret, 0o600)
        spin = start_spinner(lib)
        link_to = secret if target == "root-only library" else "/dev/ptmx"
        subprocess.run(AS_NOBODY + [sys.executable, "-c", "import os, sys; os.unlink(sys.argv[1]); "
                                    "os.symlink(sys.argv[2], sys.argv[1])", lib, link_to], check=True)
        outs = {k: os.path.join(nobody_dir, "out." + k) for k in ("json", "folded", "pprof")}
        trace = os.path.join(nobody_dir, "strace.log")
        try:
            r = subprocess.run(["strace", "-f", "-y", "-qq", "-e", "trace=openat", "-o", trace, TMABPF, "--quiet",
                                "--sample=199", "-p", str(spin.pid), "-d", "1", "--json", outs["json"],
                                "--folded", outs["folded"], "--pprof", outs["pprof"]],
                               capture_output=True, text=True, timeout=120)
        finally:
            spin.kill()
            spin.wait()
        assert r.returncode == 0, r.stderr[-2000:]
        texts = [open(outs["json"], "rb").read(), open(outs["folded"], "rb").read(),
                 gzip.open(outs["pprof"]).read()]
        assert not any(b"secret_spin" in t for t in texts), "a root-only library's name reached an output"
        assert not opened_ptmx(trace), opened_ptmx(trace)
        rows = [s for s in load_json(outs["json"])["samples"] if s["module"] == "libswap.so"]
        assert rows and all(s["symbol"] == "tmabpf_spin" for s in rows), rows[:3]
    finally:
        subprocess.run(["rm", "-rf", secret_dir])


def test_debuglink_that_is_a_path_is_not_followed(nobody_dir):
    """A .gnu_debuglink is a file name; nobody's library carries '../DIR/libsecret.so' instead, the
    CRC of a world-readable root-owned debug file there (so the owner check alone would pass it).
    Joined onto the library's directory as gdb joins it, it walked out of the debug directories
    (../../proc/kcore: root would CRC all of it).  Now a link with a '/' is ignored: the function is
    named from the library's own .dynsym."""
    import zlib
    secret_dir = tempfile.mkdtemp(prefix="tmabpf-rootdebug-")
    try:
        os.chmod(secret_dir, 0o755)
        secret = asm_library(secret_dir, "libsecret.so", "secret_spin")
        os.chmod(secret, 0o644)
        with open(secret, "rb") as f:
            crc = zlib.crc32(f.read()) & 0xffffffff
        name = os.path.relpath(secret, nobody_dir).encode() + b"\0"
        name += b"\0" * (-len(name) % 4)
        blob = os.path.join(nobody_dir, "debuglink.bin")
        with open(blob, "wb") as f:
            f.write(name + struct.pack("<I", crc))
        lib = asm_library(nobody_dir, "libdbgpath.so", "tmabpf_spin")
        subprocess.run(["strip", "--strip-all", lib], check=True)
        subprocess.run(["objcopy", f"--add-section=.gnu_debuglink={blob}", lib], check=True)
        os.chown(lib, NOBODY, NOBODY)
        out = os.path.join(nobody_dir, "out.json")
        rc, err, _, _ = sample_spinner(lib, out)
        assert rc == 0, err
        rows = [s for s in load_json(out)["samples"] if s["module"] == "libdbgpath.so"]
        assert not any("secret" in s["symbol"] for s in rows), "a debug link with a path was followed"
        assert rows and all(s["symbol"] == "tmabpf_spin" for s in rows), rows[:3]
    finally:
        subprocess.run(["rm", "-rf", secret_dir])


def test_debuglink_to_a_root_only_file(nobody_dir):
    """nobody's stripped library names a debug file by .gnu_debuglink, and a link at that name next
    to the library points to a root-only (0600) file whose CRC it carries.  tmabpf read it and named
    nobody's code with the root-only file's symbols.  Now a debug file is taken only when the
    library's owner could read it: the function is named from the library's own .dynsym."""
    secret_dir = tempfile.mkdtemp(prefix="tmabpf-rootonly-")
    try:
        secret = asm_library(secret_dir, "libsecret.so", "secret_spin")  # a debug file: .symtab, same layout
        os.chmod(secret, 0o600)
        lib = asm_library(nobody_dir, "libdbg.so", "tmabpf_spin")
        subprocess.run(["strip", "--strip-all", lib], check=True)
        subprocess.run(["objcopy", f"--add-gnu-debuglink={secret}", lib], check=True)
        os.chown(lib, NOBODY, NOBODY)
        subprocess.run(AS_NOBODY + ["ln", "-s", secret, os.path.join(nobody_dir, "libsecret.so")], check=True)
        out = os.path.join(nobody_dir, "out.json")
        rc, err, _, _ = sample_spinner(lib, out)
        assert rc == 0, err
        rows = [s for s in load_json(out)["samples"] if s["module"] == "libdbg.so"]
        assert not any("secret" in s["symbol"] for s in rows), "a root-only debug file named the user's code"
        assert rows and all(s["symbol"] == "tmabpf_spin" for s in rows), rows[:3]
    finally:
        subprocess.run(["rm", "-rf", secret_dir])


NOTE_MAX = 16 << 20	# ELF_READ_SECTION_MAX: the most of one section handed to libelf
FILE_MEMORY_MAX = 256 << 20	# ELF_READ_MEMORY_MAX: the most one file's symbols may take
SLACK = 64 << 20	# the rest of tmabpf (~25 MiB here)


def sampled_past_the_limit(lib, what):
    """lib (nobody's now), whose symbols need more than the file's memory limit, sampled by root
    tmabpf: the run ends with its report, its samples there, one line naming the file, peak RSS
    under the limit + SLACK."""
    os.chown(lib, NOBODY, NOBODY)
    out = os.path.join(os.path.dirname(lib), "out.json")
    rc, err, secs, rss = sample_spinner(lib, out)
    print(f"--sample -p -d 1 on {what}: {secs:.1f} s, peak RSS {rss >> 10} MiB")
    assert rc == 0, err
    rep, name = load_json(out), os.path.basename(lib)
    said = [w for w in rep["warnings"] if w.startswith("symbols of") and name in w]
    assert len(said) == 1 and "memory limit" in said[0] and "not read" in said[0], rep["warnings"]
    assert rss < (FILE_MEMORY_MAX + SLACK) >> 10, f"peak RSS {rss >> 10} MiB: the file was read past its limit"
    assert [s for s in rep["samples"] if s["module"] == name], "the library's samples are not in the report"


def test_sections_that_add_up_past_the_memory_limit(nobody_dir):
    """nobody's library carries 40 note sections of 16 MiB each (each within the bound on one
    section, in a sparse tail: no disk used) and no build id, so that every note is read looking
    for one.  libelf keeps each section read until the file is closed: root tmabpf held all 640 MiB
    (peak RSS 659 MiB here).  Now the notes are charged to the file's memory limit (256 MiB) before
    any is read: the file is not read (33 MiB peak), one line names it, the run ends with its
    report."""
    lib = asm_library(nobody_dir, "libnotes.so", "tmabpf_spin")
    subprocess.run(["objcopy", "--remove-section=.note.gnu.build-id", lib], check=True)
    blob = os.path.join(nobody_dir, "note.bin")
    with open(blob, "wb") as f:
        f.write(b"\0" * 16)
    n = 40
    subprocess.run(["objcopy"] + [f"--add-section=.note.tmabpf{i:02d}={blob}" for i in range(n)] + [lib], check=True)
    with open(lib, "rb") as f:
        data = f.read()
    notes = [h for name, h in section_headers(data) if name.startswith(".note.tmabpf")]
    assert len(notes) == n, section_headers(data)
    with open(lib, "r+b") as f:  # each note: SHT_NOTE, 16 MiB of the sparse tail
        for i, h in enumerate(notes):
            f.seek(h + 4)
            f.write(struct.pack("<I", 7))
            f.seek(h + 0x18)
            f.write(struct.pack("<QQ", len(data) + i * NOTE_MAX, NOTE_MAX))
        f.truncate(len(data) + n * NOTE_MAX)
    assert n * NOTE_MAX > FILE_MEMORY_MAX and os.stat(lib).st_blocks * 512 < 1 << 20
    sampled_past_the_limit(lib, f"a library with {n} notes of 16 MiB")


def test_symbols_naming_one_long_string(nobody_dir):
    """nobody's library has a .symtab of 600 functions that all name one 1 MiB string of its 1 MiB
    .strtab (legal: a table may share names).  Each symbol kept its own copy: 600 MiB for a 1 MiB
    file (634 MiB peak RSS here).  Now each symbol's name and entries are charged to the file's
    memory limit before they are kept: past 256 MiB the file is given up (275 MiB peak), said in one
    line, the report written."""
    lib = asm_library(nobody_dir, "libnames.so", "tmabpf_spin")
    with open(lib, "rb") as f:
        data = f.read()
    heads = section_headers(data)
    sec = dict(heads)
    text = [i for i, (name, _) in enumerate(heads) if name == ".text"][0]
    text_addr, = struct.unpack_from("<Q", data, sec[".text"] + 0x10)
    strtab = b"\0" + b"A" * (1 << 20) + b"\0"
    n = 600
    symtab = b"\0" * 24 + b"".join(struct.pack("<IBBHQQ", 1, 0x12, 0, text, text_addr + i, 1) for i in range(n))
    with open(lib, "r+b") as f:  # .strtab and .symtab: the new tables at the file's end
        f.seek(sec[".strtab"] + 0x18)
        f.write(struct.pack("<QQ", len(data), len(strtab)))
        f.seek(sec[".symtab"] + 0x18)
        f.write(struct.pack("<QQ", len(data) + len(strtab), len(symtab)))
        f.seek(len(data))
        f.write(strtab + symtab)
    sampled_past_the_limit(lib, f"{n} symbols naming one 1 MiB string")
