# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Nothing lost, nothing silent, on system libraries (the real-stack tier does the same on torch,
MKL and llama.cpp): unprobeable entries skipped with one line, the --dry-run preview with costs,
zero-evidence lines, deferred attach, the hot-probe guard, and the CLI's traps."""
import json
import os
import re
import signal
import subprocess
import time

from conftest import GROUNDTRUTH, TMABPF, load_json, run_tmabpf
from wrapped_text import joined

PY = "/usr/bin/python3"
HOTFUNCS = os.path.join(os.path.dirname(GROUNDTRUTH), "hotfuncs")


def one_error(r, needle):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    return lines[0]


def test_entry_point_skipped_program_arguments_intact(tmp_path):
    """'PROG:*' matched _start.  The kernel enters _start with argc where a return address would be,
    so a return probe there overwrote argc with the trampoline's address: the program ran with
    its arguments ignored (hotfuncs ran 1 thread for 5 s instead of 2 for 0.3 s)."""
    out = str(tmp_path / "e.json")
    r = run_tmabpf(["--json", out, "--uprobe", f"{HOTFUNCS}:*", "--", HOTFUNCS, "--threads", "2",
                    "--seconds", "0.3", "spin"])
    assert r.returncode == 0, r.stderr
    prog = json.loads(r.stdout.splitlines()[0])  # then tmabpf's report, after the command's exit
    assert prog["seconds"] == 0.3 and len(prog["threads"]) == 2, prog
    assert re.search(r"uprobe: 1 of \d+ functions cannot be probed, skipped \(ELF entry point: 1\): _start",
                     r.stderr), r.stderr
    rep = load_json(out)
    assert [(b["symbol"], b["reason"]) for b in rep["uprobes"]["unprobeable"]] == \
        [("_start", "ELF entry point (never called)")]
    calls = {}
    for f in rep["functions"]:
        if f["tid"] is None:  # the process' row (threads summed)
            calls[f["symbol"]] = f["calls"]
    assert calls.get("main") == 1 and calls.get("hf_run") == 2 and "_start" not in calls, calls


def test_lock_prefixed_entry_skipped_not_fatal(tmp_path):
    """libc.so.6:* used to fail as a whole on pthread_spin_lock (lock prefix, error 524)."""
    out = str(tmp_path / "c.json")
    r = run_tmabpf(["--json", out, "--uprobe", "libc.so.6:pthread_spin*", "--", "true"])
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    bad = rep["uprobes"]["unprobeable"]
    assert [(b["symbol"], b["reason"]) for b in bad] == [("pthread_spin_lock", "lock prefix")]
    assert re.search(r"uprobe: 1 of 4 functions cannot be probed, skipped \(lock prefix first instruction: 1\): "
                     r"pthread_spin_lock", r.stderr), r.stderr
    assert "uprobe: 3 functions attached" in r.stderr
    # the same with -p on a running process that maps libc
    p = subprocess.Popen(["sleep", "5"])
    try:
        r = run_tmabpf(["--json", out, "-p", str(p.pid), "-d", "0.3", "--uprobe", "libc.so.6:*"])
    finally:
        p.kill()
        p.wait()
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    assert "pthread_spin_lock" in [b["symbol"] for b in rep["uprobes"]["unprobeable"]]
    assert rep["uprobes"]["functions"] > 1000


def test_dry_run_uprobe_preview():
    r = run_tmabpf(["--dry-run", "--uprobe", "libc.so.6:pthread_spin*", "--uprobe", f"{GROUNDTRUTH}:gt_spin"])
    assert r.returncode == 0, r.stderr
    out = joined(r.stdout)  # (its lines wrap to 80 columns)
    m = re.search(r"emulated entry ([\d.]+) us, single-stepped entry ([\d.]+) us", out)
    assert m and 0 < float(m.group(1)) < float(m.group(2)), out
    assert re.search(r"uprobe /\S+/libc\.so\.6: 4 functions match \(\d+ emulated, \d+ single-stepped, 1 unprobeable\)",
                     out), out
    assert re.search(r"\n  unprobeable +- +pthread_spin_lock \(lock prefix: skipped\)", out), out
    assert re.search(r"\n  emulated +[\d.]+ us +gt_spin \(push %rbp\)", out), out


def test_zero_evidence_lines(tmp_path):
    out = str(tmp_path / "z.json")
    r = run_tmabpf(["--json", out, "--uprobe", "libopenblas.so.0:sgemm_",
                    "--uprobe", f"{GROUNDTRUTH}:gt_spin", "--uprobe", f"{GROUNDTRUTH}:gt_sleep",
                    "--", GROUNDTRUTH, "--out", str(tmp_path / "gt.json"), "spin:20"])
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    assert [os.path.basename(m) for m in rep["uprobes"]["never_mapped"]] == ["libopenblasp-r0.3.21.so"] or \
        len(rep["uprobes"]["never_mapped"]) == 1
    assert len([l for l in r.stderr.splitlines() if "was never mapped by the target" in l]) == 1, r.stderr
    assert rep["uprobes"]["never_called"] == ["gt_sleep"]
    assert re.search(r"uprobe: 1 of 2 probed functions in groundtruth was never called: gt_sleep", r.stderr), r.stderr


def test_deferred_library_never_mapped(tmp_path):
    out = str(tmp_path / "d.json")
    r = run_tmabpf(["--json", out, "--uprobe", "libnothing-such.so:f*", "--", "true"])
    assert r.returncode == 0, r.stderr
    assert "'libnothing-such.so:f*' attaches when the target maps a file of that name" in r.stderr
    assert "'libnothing-such.so:f*' never attached" in r.stderr
    assert load_json(out)["uprobes"]["deferred"] == [{"lib": "libnothing-such.so", "glob": "f*", "attached": False}]


def test_deferred_attach_on_dlopen(tmp_path):
    """A bare name that is not in ld.so.cache: attaches when the process dlopens it by path."""
    lib = tmp_path / "libtmabpfdefer.so"
    src = tmp_path / "d.c"
    src.write_text("int tmabpf_deferred_fn(int x) { return x + 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(lib), str(src)], check=True)
    code = ("import ctypes, time\n"
            "time.sleep(0.3)\n"
            f"l = ctypes.CDLL('{lib}')\n"
            "time.sleep(0.5)\n"
            "for i in range(100): l.tmabpf_deferred_fn(i)\n")
    out = str(tmp_path / "d.json")
    r = run_tmabpf(["--json", out, "--uprobe", "libtmabpfdefer.so:tmabpf_deferred_*", "--", PY, "-c", code])
    assert r.returncode == 0, r.stderr
    assert re.search(r"uprobe: pid \d+ mapped \S+libtmabpfdefer\.so: 1 functions of "
                     r"'libtmabpfdefer\.so:tmabpf_deferred_\*' attached [\d.]+ ms after it mapped it \(calls before "
                     r"are not counted\)", r.stderr), r.stderr
    rows = [f for f in load_json(out)["functions"] if f["tid"] is None]
    assert [(f["symbol"], f["calls"]) for f in rows] == [("tmabpf_deferred_fn", 100)]


DLOPEN_MAIN = r"""#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
	void *h = dlopen("libtmabpfahead.so", RTLD_NOW);
	int (*f)(int) = h ? (int (*)(int))dlsym(h, "tmabpf_ahead_fn") : 0;
	int s = 0;

	if (!f) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 100; i++)
		s += f(i);
	return s == 5050 ? 0 : 2;
}
"""


def test_bare_name_probed_before_dlopen(tmp_path):
    """A bare name nothing maps yet, in a directory the target loads libraries from (LD_LIBRARY_PATH, or
    its executable's RUNPATH): probed in that file before the start, so the 100 calls of a program that
    dlopens it at once and exits (about 1 ms) are all counted, as -- CMD and under -- sh -c (the maps
    polling saw none: the file was never mapped when it looked)."""
    libdir, bindir = tmp_path / "lib", tmp_path / "bin"
    libdir.mkdir()
    bindir.mkdir()
    (tmp_path / "a.c").write_text("int tmabpf_ahead_fn(int x) { return x + 1; }\n")
    (tmp_path / "m.c").write_text(DLOPEN_MAIN)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(libdir / "libtmabpfahead.so"), str(tmp_path / "a.c")],
                   check=True)
    plain, rpath = str(bindir / "plain"), str(bindir / "rpath")
    subprocess.run(["gcc", "-o", plain, str(tmp_path / "m.c"), "-ldl"], check=True)
    subprocess.run(["gcc", "-o", rpath, str(tmp_path / "m.c"), "-ldl", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN/../lib"], check=True)
    cases = [("LD_LIBRARY_PATH", [plain], {"LD_LIBRARY_PATH": str(libdir)}),
             ("LD_LIBRARY_PATH, sh -c", ["sh", "-c", plain + "; true"], {"LD_LIBRARY_PATH": str(libdir)}),
             ("RUNPATH", [rpath], {})]
    for what, cmd, env in cases:
        out = str(tmp_path / "a.json")
        r = run_tmabpf(["--json", out, "--uprobe", "libtmabpfahead.so:tmabpf_ahead_*", "--"] + cmd,
                       env=dict(os.environ, **env))
        assert r.returncode == 0, (what, r.stderr)
        assert re.search(r"'libtmabpfahead\.so:tmabpf_ahead_\*' probed in \S+/lib/libtmabpfahead\.so before any "
                         r"process maps it", r.stderr), (what, r.stderr)
        rows = [f for f in load_json(out)["functions"] if f["tid"] is None]
        assert [(f["symbol"], f["calls"]) for f in rows] == [("tmabpf_ahead_fn", 100)], (what, rows, r.stderr)
        assert load_json(out)["uprobes"]["deferred"] == [{"lib": "libtmabpfahead.so", "glob": "tmabpf_ahead_*",
                                                           "attached": True}]
    # -p: the directory from the running process' /proc/PID/environ (LD_LIBRARY_PATH)
    code = ("import ctypes, sys, time\nsys.stdin.readline()\n"
            "f = ctypes.CDLL('libtmabpfahead.so').tmabpf_ahead_fn\nfor i in range(100): f(i)\n")
    p = subprocess.Popen([PY, "-c", code], stdin=subprocess.PIPE, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=str(libdir)))
    try:
        out = str(tmp_path / "p.json")
        tm = subprocess.Popen([TMABPF, "--json", out, "-p", str(p.pid), "--uprobe",
                               "libtmabpfahead.so:tmabpf_ahead_*"], stderr=subprocess.PIPE, text=True)
        line = tm.stderr.readline()
        while line and "functions attached" not in line:
            line = tm.stderr.readline()
        p.stdin.write("go\n")
        p.stdin.flush()
        assert p.wait(timeout=30) == 0
        tm.send_signal(signal.SIGINT)
        assert tm.wait(timeout=30) == 0
    finally:
        p.kill()
        p.wait()
    rows = [f for f in load_json(out)["functions"] if f["tid"] is None]
    assert [(f["symbol"], f["calls"]) for f in rows] == [("tmabpf_ahead_fn", 100)], rows


LATE_MAIN = r"""#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	/* argv[1]: a library of the same directory mapped first ("" for none); argv[2]: the probed one */
	void *a = argv[1][0] ? dlopen(argv[1], RTLD_NOW) : (void *)1, *h = dlopen(argv[2], RTLD_NOW);
	int (*f)(int) = a && h ? (int (*)(int))dlsym(h, "tmabpf_late_fn") : 0;
	int s = 0;

	if (!f) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	for (int i = 0; i < 100; i++)	/* microseconds after the mapping: before any attach */
		s += f(i);
	sleep(1);
	for (int i = 0; i < 100; i++)
		s += f(i);
	return s == 2 * 5050 ? 0 : 2;
}
"""


def test_mapped_before_attach_is_said(tmp_path):
    """A bare name nothing maps at the start, in a directory the target never named: probed when the
    target maps a file from that directory ('ahead': another library first) or the file itself
    ('direct'), milliseconds later.  The process called it 100 times at once, before the attach: it is
    named, with how long before, on stderr and in the JSON, and the 100 calls made after are counted."""
    libdir = tmp_path / "late"
    libdir.mkdir()
    (tmp_path / "l.c").write_text("int tmabpf_late_fn(int x) { return x + 1; }\n")
    (tmp_path / "a.c").write_text("int tmabpf_anchor_fn(int x) { return x; }\n")
    (tmp_path / "m.c").write_text(LATE_MAIN)
    for name, src in (("libtmabpflate.so", "l.c"), ("libtmabpfanchor.so", "a.c")):
        subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-o", str(libdir / name), str(tmp_path / src)], check=True)
    prog = str(tmp_path / "latemain")
    subprocess.run(["gcc", "-o", prog, str(tmp_path / "m.c"), "-ldl"], check=True)
    late_lib = str(libdir / "libtmabpflate.so")
    for what, first in (("ahead", str(libdir / "libtmabpfanchor.so")), ("direct", "")):
        out = str(tmp_path / f"{what}.json")
        r = run_tmabpf(["--json", out, "--uprobe", "libtmabpflate.so:tmabpf_late_*", "--", prog, first, late_lib])
        assert r.returncode == 0, (what, r.stderr)
        rep = load_json(out)
        pid = rep["processes"][0]["pid"] if rep.get("processes") else None
        late = rep["uprobes"]["mapped_before_attach"]
        assert len(late) == 1 and late[0]["module"] == late_lib and late[0]["ms"] > 0, (what, late, r.stderr)
        assert pid is None or late[0]["pid"] == pid, (what, late, pid)
        said = (rf"pid {late[0]['pid']} mapped {re.escape(late_lib)} [\d.]+ ms before its probes were attached: its "
                r"calls in between are not counted" if what == "ahead" else
                rf"pid {late[0]['pid']} mapped {re.escape(late_lib)}: 1 functions of '\S+' attached [\d.]+ ms after "
                r"it mapped it \(calls before are not counted\)")
        assert re.search(said, joined(r.stderr)), (what, r.stderr)
        calls = [f["calls"] for f in rep["functions"] if f["tid"] is None and f["symbol"] == "tmabpf_late_fn"]
        assert calls and 100 <= calls[0] <= 200, (what, calls, r.stderr)


def test_hot_probe_guard(tmp_path):
    code = "import os, time\nt = time.time()\nwhile time.time() - t < 2.5: os.getpid()\n"
    out = str(tmp_path / "g.json")
    r = run_tmabpf(["--json", out, "--uprobe", "libc.so.6:getpid", "--", PY, "-c", code])
    assert r.returncode == 0, r.stderr
    warned = [l for l in r.stderr.splitlines() if "of the target's CPU time" in l]
    assert len(warned) == 1, r.stderr
    assert re.match(r"tmabpf: uprobe: getpid: \d+ calls/s x [\d.]+ us per probed call \(\S+ entry\) = \d+ % of the "
                    r"target's CPU time: .* --max-rate \d+ ", warned[0]), warned[0]


def test_sample_rate_as_separate_word():
    one_error(run_tmabpf(["--sample", "99"]), "write the value as --sample=99")
    one_error(run_tmabpf(["--tma", "2", "-d", "1"]), "write the value as --tma=2")


def test_did_you_mean():
    line = one_error(run_tmabpf(["-e", "page-fault", "-d", "1"]), "unknown event 'page-fault'")
    assert "did you mean 'page-faults'?" in line
    line = one_error(run_tmabpf(["-a", "-d", "1", "--uprobe", "libopenbla.so:sgemm_"]), "libopenbla.so not found")
    assert "did you mean libopenblas.so" in line


def test_duration_then_waits_for_command():
    t0 = time.time()
    r = run_tmabpf(["-d", "0.3", "--", "sleep", "1.2"])
    assert r.returncode == 0 and time.time() - t0 >= 1.2
    assert re.search(r"profiling stopped \(duration\); waiting for the command \(pid \d+\) to exit: Ctrl-C stops it",
                     r.stderr), r.stderr


def test_ifuncs_said_in_a_few_lines():
    """'libc.so.6:mem*' matches GNU IFUNCs (7 in bookworm's libc: memcpy, memset...): a uprobe on one fires in its
    resolver, not in the implementation.  Two are said with their implementations' names, the rest in
    one line with their count (each was a line: 'libc.so.6:*' printed 47)."""
    libc = next(p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6")
                if os.path.exists(p))
    syms = subprocess.run(["readelf", "-W", "--dyn-syms", libc], capture_output=True, text=True, check=True).stdout
    addrs = set()
    for l in syms.splitlines():
        f = l.split()
        if len(f) >= 8 and f[3] == "IFUNC" and f[6] != "UND" and f[7].split("@")[0].startswith("mem"):
            addrs.add(f[1])
    assert len(addrs) > 3, syms[:2000]
    r = run_tmabpf(["--dry-run", "--uprobe", f"{libc}:mem*"])
    assert r.returncode == 0, r.stderr
    each = [l for l in r.stderr.splitlines() if "is a GNU IFUNC" in l]
    assert len(each) == 2 and all("probe the implementation instead" in l or "probe an implementation instead" in l for l in each), r.stderr
    rest = [l for l in r.stderr.splitlines() if "more of the functions matched in libc.so.6 are GNU IFUNCs" in l]
    assert len(rest) == 1, r.stderr
    assert re.search(r"uprobe: (\d+) more", rest[0]).group(1) == str(len(addrs) - 2), (rest[0], sorted(addrs))
