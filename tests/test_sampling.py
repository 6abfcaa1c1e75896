# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Sampling (--sample): shares against perf record/report on the same run and
against the workload's own CPU-time measurements; folded stacks; symbols in a
stripped library (OpenBLAS), C++ (demangled, .symtab / .gnu_debuglink /
build-id debug files), the kernel, libc's debug file and a perf map (JIT);
losses counted; bad input."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import BUILD, DECODER, ROOT, TMABPF, load_json, read_folded, run_tmabpf

HOTFUNCS = os.path.join(BUILD, "workloads", "hotfuncs")
CPPWORK = os.path.join(BUILD, "workloads", "cppwork")
JITMAP = os.path.join(BUILD, "workloads", "jitmap")
OPENBLAS_ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1", OPENBLAS_CORETYPE="Haswell")
DELAY_MS = 2500  # workloads wait this long so that both profilers are attached before the work starts


def perf_report(data, pid):
    """{(dso, symbol): samples} of process pid's leaf frames, from perf script (perf report's --pid
    misses threads whose clone perf -a saw late; perf script prints each sample's own pid)."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "pid,ip,sym,dso", "-G"],
                         capture_output=True, text=True, timeout=300).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+[0-9a-f]+\s+(.*) \((.*)\)$", line)
        if not m or int(m.group(1)) != pid:
            continue
        key = (os.path.basename(m.group(3)) if m.group(3).startswith("/") else m.group(3), m.group(2))
        rows[key] = rows.get(key, 0) + 1
    return rows


def sample_both(tmp, argv, hz, env=None, extra=(), perf_hz=None):
    """Run argv (which waits before working); sample it with tmabpf --sample=HZ -p PID and with
    perf record -e cpu-clock -F HZ (or PERF_HZ) at the same time; both stop when it exits.  perf samples
    every CPU (-a) like tmabpf does: a per-task perf event (-p) restarts its timer at each
    switch-in, which moves a few percent of samples in or out of the kernel's switch paths
    when the CPUs are contended."""
    data, out, folded = str(tmp / "perf.data"), str(tmp / "tm.json"), str(tmp / "tm.folded")
    perf = subprocess.Popen(["perf", "record", "-q", "-a", "-e", "cpu-clock", "-F", str(perf_hz or hz), "-g", "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wl = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    tm = run_tmabpf(["-p", str(wl.pid), f"--sample={hz}", "--quiet", "--json", out, "--folded", folded, *extra],
                    timeout=300)
    wl_out, wl_err = wl.communicate(timeout=300)
    perf.send_signal(signal.SIGINT)
    perf.wait(timeout=120)
    assert wl.returncode == 0, wl_err
    assert tm.returncode == 0, tm.stderr
    return {"wl": wl_out, "pid": wl.pid, "tm": load_json(out), "stderr": tm.stderr,
            "perf": perf_report(data, wl.pid), "folded": folded}


def agg(report, pid=None):
    """{(module, symbol): row} for the per-process rows (tid null)."""
    return {(r["module"], r["symbol"]): r for r in report["samples"]
            if r["tid"] is None and (pid is None or r["pid"] == pid)}


def shares_by_symbol(counts):
    total = sum(counts.values())
    out = {}
    for (_, sym), n in counts.items():
        out[sym] = out.get(sym, 0) + 100.0 * n / total
    return out


def user_shares(counts):
    """Shares among the samples taken in user mode (leaf not in the kernel).  Two samplers on
    the same CPUs at the same period are phase-locked: when one's timer fires just after the
    other's, its sample can land in the kernel's interrupt-exit path (irqentry_exit_to_user_mode)
    instead of the user function that was running, for up to a quarter of the samples, in either
    tool, depending on the relative phase.  Samples that hit user mode are unaffected."""
    return shares_by_symbol({k: n for k, n in counts.items() if not k[0].startswith("[kernel")})


# ---- shares: a workload with functions of known relative cost ----

@pytest.fixture(scope="module")
def spin_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("spin")
    r = sample_both(tmp, [HOTFUNCS, "--threads", "2", "--seconds", "8", "--delay-ms", str(DELAY_MS),
                          "--out", str(tmp / "truth.json"), "spin"], 999)
    r["truth"] = load_json(str(tmp / "truth.json"))
    return r


def test_shares_match_perf_record(spin_run):
    """Leaf shares within 2 percentage points of perf record -e cpu-clock -F 999 + perf report, same run
    (shares of user-mode samples: see user_shares)."""
    ours = user_shares({k: v["count"] for k, v in agg(spin_run["tm"]).items()})
    theirs = user_shares(spin_run["perf"])
    for fn in ("hf_leaf", "hf_b", "hf_c"):
        assert abs(ours[fn] - theirs[fn]) <= 2.0, (fn, ours[fn], theirs[fn])
    assert sum(ours[f] for f in ("hf_leaf", "hf_b", "hf_c")) > 90


def test_shares_match_ground_truth(spin_run):
    """Leaf shares within 2 points of each function's CLOCK_THREAD_CPUTIME_ID share (of user-mode
    samples: interrupts taken in a function count as its time in the ground truth)."""
    truth = spin_run["truth"]
    total = sum(t["cpu_ns"] for t in truth["threads"])
    ours = user_shares({k: v["count"] for k, v in agg(spin_run["tm"]).items()})
    for fn in ("hf_leaf", "hf_b", "hf_c"):
        true_pct = 100.0 * sum(t["functions"][fn] for t in truth["threads"]) / total
        assert abs(ours[fn] - true_pct) <= 2.0, (fn, ours[fn], true_pct)


def test_sample_counts_and_losses(spin_run):
    """As many samples as perf, as many as the threads' on-CPU time allows, none lost."""
    tm = spin_run["tm"]
    s = tm["sampling"]
    assert s["event"] == "cpu-clock" and s["hz"] == 999
    n_perf = sum(spin_run["perf"].values())
    assert abs(s["samples"] - n_perf) <= 0.1 * n_perf + 20, (s["samples"], n_perf)
    oncpu = sum(t["oncpu_ns"] for t in tm["threads"])
    assert s["samples_target"] >= 0.9 * oncpu / (1e9 / 999), (s["samples_target"], oncpu)
    assert s["samples"] == s["samples_target"]  # nothing dropped by full tables
    assert s["rows_full"] == 0 and s["stacks_full"] == 0 and s["no_stack_samples"] == 0
    assert s["samples_seen"] >= s["samples_target"]
    assert s["bpf_run_count"] == s["samples_seen"]


def test_rows_per_thread_and_aggregate(spin_run):
    """Per-thread rows add up to the all-threads rows; every row has the report contract's keys."""
    tm, truth = spin_run["tm"], spin_run["truth"]
    tids = {t["tid"] for t in truth["threads"]}
    for r in tm["samples"]:
        for key in ("module", "symbol", "pid", "tid", "count", "counters", "tma"):
            assert key in r, key
        assert r["pid"] == spin_run["pid"]
    for (mod, sym), row in agg(tm).items():
        per_thread = [r for r in tm["samples"] if r["tid"] is not None and (r["module"], r["symbol"]) == (mod, sym)]
        assert sum(r["count"] for r in per_thread) == row["count"]
        assert sum(r["counters"]["task-clock"] for r in per_thread) == pytest.approx(row["counters"]["task-clock"],
                                                                                       abs=len(per_thread))
    leaf_tids = {r["tid"] for r in tm["samples"] if r["symbol"] == "hf_leaf" and r["tid"] is not None}
    assert leaf_tids == tids
    assert agg(tm)[("hotfuncs", "hf_leaf")]["comm"] in ("hotfuncs", "hf-0", "hf-1")


def test_counter_deltas_follow_samples(spin_run):
    """Each sample carries the counter delta since its CPU's previous accounting point: per
    function, task-clock sums are in proportion to sample counts (same functions, same
    threads), and never more than the threads' totals."""
    tm = spin_run["tm"]
    rows = agg(tm)
    total_tc = sum(r["counters"]["task-clock"] for r in rows.values())
    total_n = sum(r["count"] for r in rows.values())
    for fn in ("hf_leaf", "hf_b", "hf_c"):
        r = rows[("hotfuncs", fn)]
        assert abs(100.0 * r["counters"]["task-clock"] / total_tc - 100.0 * r["count"] / total_n) <= 3.0, fn
    threads_tc = sum(t["counters"]["task-clock"] for t in tm["threads"])
    assert 0.3 * threads_tc < total_tc <= threads_tc * 1.001 + 1e6


def test_folded_totals_and_chains(spin_run):
    """--folded: totals equal the sample count; root first (thread name), callers before callees."""
    lines = read_folded(spin_run["folded"])
    total = sum(c for _, c in lines)
    assert total == spin_run["tm"]["sampling"]["samples"]
    assert {frames[0] for frames, _ in lines} >= {"hf-0", "hf-1"}

    def weight(chain, leaf):
        return sum(c for frames, c in lines if frames[-1] == leaf and ";".join(chain) in ";".join(frames))

    rows = agg(spin_run["tm"])
    for chain in (["worker_main", "hf_run", "hf_outer", "hf_middle", "hf_leaf"],
                  ["worker_main", "hf_run", "hf_outer", "hf_b"],
                  ["worker_main", "hf_run", "hf_c"]):
        leaf = chain[-1]
        assert weight(chain, leaf) >= 0.95 * rows[("hotfuncs", leaf)]["count"], chain


def test_text_report_table(tmp_path):
    """The final text report has the sampled-functions table with counts and shares."""
    r = run_tmabpf(["--sample=199", "--", HOTFUNCS, "--seconds", "1.5", "spin"])
    assert r.returncode == 0, r.stderr
    assert "sample: cpu-clock at 199 Hz" in r.stderr
    m = re.search(r"^sampled functions \(cpu-clock at 199 Hz per CPU: (\d+) samples", r.stdout, re.M)
    assert m and int(m.group(1)) > 50, r.stdout
    table = r.stdout[m.end():]
    assert re.search(r"^\s*\d+ hf_leaf\s+hotfuncs\s+\d+\s+[\d.]+\s+[\d.]+", table, re.M), table


# ---- symbols ----

def test_kernel_symbols(tmp_path):
    """A workload in read(/dev/zero): kernel leaves named from /proc/kallsyms, as perf names them.
    perf samples at another rate: at the same rate the two timers are phase-locked, and one tool's
    samples can land where the other's interrupt handler re-enables interrupts
    (_raw_spin_unlock_irqrestore became tmabpf's top leaf in one CI run, perf's was read_zero)."""
    r = sample_both(tmp_path, [HOTFUNCS, "--seconds", "3", "--delay-ms", str(DELAY_MS), "sys"], 499,
                    perf_hz=397)
    ours = {k: v["count"] for k, v in agg(r["tm"]).items() if k[0] == "[kernel.kallsyms]"}
    theirs = {k: v for k, v in r["perf"].items() if k[0] == "[kernel.kallsyms]"}
    assert ours and theirs
    top_ours, top_theirs = max(ours, key=ours.get), max(theirs, key=theirs.get)
    assert top_ours == top_theirs, (top_ours, top_theirs)
    # kernel frames come after the user frames, marked _[k]
    lines = read_folded(r["folded"])
    kernel_lines = [f for f, _ in lines if f[-1] == top_ours[1] + "_[k]"]
    assert kernel_lines
    for frames in kernel_lines:
        first_k = next(i for i, f in enumerate(frames) if f.endswith("_[k]"))
        assert all(f.endswith("_[k]") for f in frames[first_k:])
        # user part: ... hf_run [hf_sys] read; libc has no frame pointers, so read's caller's
        # frame (hf_sys) is skipped by the frame-pointer walk, as perf's is
        assert "hf_run" in frames[:first_k] and frames[first_k - 1] in ("read", "__libc_read", "__GI___libc_read")


@pytest.mark.skipif(not os.path.exists(DECODER), reason="decoder not built")
def test_stripped_openblas_dynsym(tmp_path):
    """OpenBLAS has no .symtab: its functions are named from .dynsym, as perf names them."""
    r = sample_both(tmp_path, ["sh", "-c", f"sleep {DELAY_MS / 1000}; exec {DECODER} --layers 8 --gen 128"], 499,
                    env=OPENBLAS_ENV)
    rows = agg(r["tm"])
    blas = {k: v["count"] for k, v in rows.items() if k[0].startswith("libopenblas")}
    assert blas, rows.keys()
    lib = next(iter(blas))[0]
    mapped = subprocess.run(["sh", "-c", f"OPENBLAS_NUM_THREADS=1 ldd {DECODER}"], capture_output=True,
                            text=True).stdout
    libpath = os.path.realpath(re.search(r"libopenblas\S*\s+=>\s+(\S+)", mapped).group(1))
    sections = subprocess.run(["readelf", "-SW", libpath], capture_output=True, text=True).stdout
    assert ".dynsym" in sections and ".symtab" not in sections, "OpenBLAS is not stripped here"
    assert os.path.basename(libpath) == lib
    named = {k: n for k, n in blas.items() if "+0x" not in k[1]}
    theirs = {k: n for k, n in r["perf"].items() if k[0] == lib and k[1] != "[unknown]"}
    assert max(named, key=named.get)[1] == max(theirs, key=theirs.get)[1]
    total = sum(r["perf"].values())
    for (_, sym), n in theirs.items():
        if n >= 0.05 * total:
            assert (lib, sym) in named, sym
    # unnamed addresses are kept as module+0xOFF, never dropped
    assert sum(blas.values()) + sum(v["count"] for k, v in rows.items() if not k[0].startswith("libopenblas")) \
        == r["tm"]["sampling"]["samples"]
    assert all(re.fullmatch(re.escape(lib) + r"\+0x[0-9a-f]+", k[1]) for k in blas if k not in named)


def perf_stacks(data, pid):
    """{stack (root first, function names): samples} of process pid, from perf script's call chains;
    what perf cannot name is its "[unknown]"."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "pid,ip,sym"], capture_output=True, text=True,
                         timeout=300).stdout
    stacks, cur = {}, None
    for line in out.splitlines() + [""]:
        if not line.strip():
            if cur is not None and cur[0]:
                key = tuple(reversed(cur[1]))
                stacks[key] = stacks.get(key, 0) + 1
            cur = None
        elif cur is None:
            cur = (line.split()[0] == str(pid), [])
        else:
            parts = line.split(None, 1)
            cur[1].append(parts[1].strip() if len(parts) > 1 else "[unknown]")
    return stacks


def boxes(stacks):
    """{function: the flame graph's boxes of it (distinct root-first paths to it)}."""
    out = {}
    for st in stacks:
        for i, f in enumerate(st):
            out.setdefault(f, set()).add(st[:i])
    return out


@pytest.mark.skipif(not os.path.exists(DECODER), reason="decoder not built")
def test_openblas_flame_graph_boxes_like_perf(tmp_path):
    """A frame-pointer walk through OpenBLAS (no frame pointers) reads data as return addresses: each
    was its own frame, "[unknown]+0xbd2faba0bcd8cc9f", and code of the stripped library without a
    symbol was one frame per address ("libopenblas...so+0x15bf620"), so its functions split into
    towers.  Now a walk ends at its first return address outside executable memory, and what cannot
    be named is one [unknown] frame: every function has no more boxes in --folded than in perf's
    flame graph of the same run (perf record -g + perf script), none is an address; the pprof profile
    of the run (read by pprof-format, or go tool pprof) has the period type and period, and the
    decoder as its first mapping (pprof's main binary)."""
    prof = str(tmp_path / "tm.pb.gz")
    r = sample_both(tmp_path, ["sh", "-c", f"sleep {DELAY_MS / 1000}; exec {DECODER} --layers 8 --gen 128"], 499,
                    env=OPENBLAS_ENV, extra=("--pprof", prof))
    ours = {}
    for st, n in read_folded(r["folded"]):
        key = tuple(re.sub(r"_\[[kj]\]$", "", f) for f in st[1:])  # perf's names: no comm, no _[k]
        ours[key] = ours.get(key, 0) + n
    theirs = perf_stacks(str(tmp_path / "perf.data"), r["pid"])
    addresses = sorted({f for st in ours for f in st if re.search(r"\+0x[0-9a-f]+$", f)})
    assert not addresses, f"frames named by their address: {addresses[:5]}"
    leaf, total = {}, sum(theirs.values())
    for st, n in theirs.items():
        leaf[st[-1]] = leaf.get(st[-1], 0) + n
    ob, tb = boxes(ours), boxes(theirs)
    hot = [f for f, n in leaf.items() if n >= 0.02 * total and f != "[unknown]"]
    print("boxes, ours / perf's:", {f: (len(ob.get(f, ())), len(tb[f])) for f in hot})
    assert hot
    for f in hot:  # (perf and tmabpf sample independently: a rare path may be in one run only)
        assert len(ob.get(f, ())) <= len(tb[f]) + 1, (f, sorted(ob.get(f, ())), sorted(tb[f]))
    assert len(ob.get("[unknown]", ())) <= len(tb.get("[unknown]", ())) + 1
    # the profile
    got = subprocess.run([os.path.join(ROOT, "scripts", "install-realstacks.sh"), "pprof"], capture_output=True,
                         text=True, timeout=600)
    m = re.search(r"realstacks: pprof (ok|installed|unavailable)(?:: (.*))?", got.stdout)
    if m and m.group(1) != "unavailable":
        cache = os.environ.get("TMABPF_REALSTACKS_CACHE", "/var/cache/tmabpf-realstacks")
        read = subprocess.run(["node", os.path.join(ROOT, "tests", "pprof_format_read.mjs"),
                               os.path.join(cache, "npm-pprof", "node_modules"), prof],
                              capture_output=True, text=True, timeout=120)
        assert read.returncode == 0, read.stderr
        p = json.loads(read.stdout)
        assert p["period_type"] == "cpu/nanoseconds" and p["period"] == 1000000000 // 499, p
        assert p["mappings"][0]["file"] == os.path.realpath(DECODER), p["mappings"][:3]
    elif shutil.which("go"):
        env = dict(os.environ, HOME=str(tmp_path), GOCACHE=str(tmp_path / "gocache"), GOFLAGS="")
        raw = subprocess.run(["go", "tool", "pprof", "-raw", prof], capture_output=True, text=True, timeout=120,
                             env=env).stdout
        assert "PeriodType: cpu nanoseconds" in raw and f"Period: {1000000000 // 499}" in raw, raw[:500]
    else:
        pytest.skip("no pprof reader: pprof-format (npm) unavailable and no go tool pprof")


CPP_FUNCS = ("tmabpf_demo::Matrix<float>::multiply_trace(tmabpf_demo::Matrix<float> const&) const",
             "tmabpf_demo::Tokenizer::score(std::vector<int, std::allocator<int> > const&, int)")


def test_cpp_demangled_like_perf(tmp_path):
    r = sample_both(tmp_path, [CPPWORK, "--seconds", "3", "--delay-ms", str(DELAY_MS)], 499)
    ours = {k[1] for k, v in agg(r["tm"]).items() if k[0] == "cppwork" and v["count"] >= 20}
    theirs = {k[1] for k, n in r["perf"].items() if k[0] == "cppwork" and n >= 20}
    assert set(CPP_FUNCS) <= ours, ours
    assert set(CPP_FUNCS) <= theirs, theirs


def stripped_copy(tmp_path, how):
    """cppwork without its symbols, whose debug file is found by .gnu_debuglink or by build-id."""
    d = tmp_path / how
    d.mkdir()
    exe, dbg = d / "cppwork", d / "cppwork.debug"
    subprocess.run(["objcopy", "--only-keep-debug", CPPWORK, str(dbg)], check=True)
    subprocess.run(["objcopy", "--strip-all", CPPWORK, str(exe)], check=True)
    env = dict(os.environ)
    if how == "debuglink":
        subprocess.run(["objcopy", f"--add-gnu-debuglink={dbg}", str(exe)], check=True, cwd=d)
    else:
        note = subprocess.run(["readelf", "-n", str(exe)], capture_output=True, text=True).stdout
        bid = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
        root = d / "debugroot"
        (root / ".build-id" / bid[:2]).mkdir(parents=True)
        shutil.move(str(dbg), str(root / ".build-id" / bid[:2] / (bid[2:] + ".debug")))
        env["TMABPF_DEBUG_DIR"] = str(root)
    sections = subprocess.run(["readelf", "-SW", str(exe)], capture_output=True, text=True).stdout
    assert ".symtab" not in sections
    assert "multiply_trace" not in subprocess.run(["nm", "-D", "-C", str(exe)], capture_output=True,
                                                  text=True).stdout
    return str(exe), env


@pytest.mark.parametrize("how", ["debuglink", "build-id"])
def test_cpp_from_separate_debug_file(tmp_path, how):
    """A stripped C++ program is named from its debug file, found by .gnu_debuglink or build-id."""
    exe, env = stripped_copy(tmp_path, how)
    out = str(tmp_path / "tm.json")
    r = subprocess.run([TMABPF, "--sample=499", "--quiet", "--json", out, "--", exe, "--seconds", "2"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    ours = {k[1] for k, v in agg(load_json(out)).items() if k[0] == "cppwork" and v["count"] >= 10}
    assert set(CPP_FUNCS) <= ours, ours


def libc_debug_file():
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(libc):
        return None
    note = subprocess.run(["readelf", "-n", libc], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", note)
    path = m and f"/usr/lib/debug/.build-id/{m.group(1)[:2]}/{m.group(1)[2:]}.debug"
    return path if path and os.path.exists(path) else None


@pytest.mark.skipif(not libc_debug_file(), reason="libc6-dbg not installed (make deps installs it)")
def test_libc_local_symbol_from_build_id_debug_file(tmp_path):
    """memset's implementation is a local symbol of libc: only libc6-dbg's build-id file names it."""
    r = sample_both(tmp_path, [HOTFUNCS, "--seconds", "3", "--delay-ms", str(DELAY_MS), "memset"], 499)
    ours = {k: v["count"] for k, v in agg(r["tm"]).items() if k[0] == "libc.so.6"}
    top = max(ours, key=ours.get)
    assert top[1].startswith("__memset_"), ours
    theirs = {k: n for k, n in r["perf"].items() if k[0] == "libc.so.6"}
    assert max(theirs, key=theirs.get)[1] == top[1]


def test_perf_map_jit_symbols(tmp_path):
    """Code in an anonymous executable mapping is named from /tmp/perf-PID.map."""
    r = sample_both(tmp_path, [JITMAP, "--seconds", "3", "--delay-ms", str(DELAY_MS)], 499)
    try:
        pid = r["pid"]
        rows = agg(r["tm"])
        n = r["tm"]["sampling"]["samples"]
        jit = rows.get((f"perf-{pid}.map", "jit_spin_loop"))
        assert jit and jit["count"] >= 0.8 * n, (n, rows.keys())
        assert not any(k[1] == "jit_never_called" for k in rows)
        theirs = max(r["perf"], key=r["perf"].get)
        assert theirs[1] == "jit_spin_loop", r["perf"]
        # the JIT code keeps a frame pointer: its caller shows (but not at its first and last
        # two instructions, where %rbp is still or again the caller's)
        chains = [(f, c) for f, c in read_folded(r["folded"]) if f[-1] == "jit_spin_loop_[j]"]
        assert sum(c for f, c in chains if f[-2] == "jit_caller") >= 0.98 * jit["count"], chains
    finally:
        if os.path.exists(f"/tmp/perf-{r['pid']}.map"):
            os.unlink(f"/tmp/perf-{r['pid']}.map")


def test_exited_process_still_named(tmp_path):
    """A child that exits long before the run ends keeps its names (maps snapshotted at its first sample)."""
    out, truth = str(tmp_path / "tm.json"), str(tmp_path / "truth.json")
    r = run_tmabpf(["--sample=199", "--quiet", "--json", out, "--", "sh", "-c",
                    f"{HOTFUNCS} --seconds 1 --out {truth} spin; sleep 1.5"])
    assert r.returncode == 0, r.stderr
    pid = load_json(truth)["pid"]
    rows = agg(load_json(out), pid)
    assert rows.get(("hotfuncs", "hf_leaf"), {}).get("count", 0) > 20, rows.keys()
    assert not any("+0x" in sym for (mod, sym) in rows if mod == "hotfuncs")


def test_full_tables_are_counted(tmp_path):
    """With tiny tables, lost samples and stacks are counted and reported, never silent."""
    out = str(tmp_path / "tm.json")
    wl = subprocess.Popen([HOTFUNCS, "--threads", "2", "--seconds", "3", "sys"], stdout=subprocess.DEVNULL)
    r = run_tmabpf(["-a", "-d", "2", "--sample=499", "--max-sample-stacks", "16", "--quiet", "--json", out])
    wl.wait(timeout=60)
    assert r.returncode == 0, r.stderr
    tm = load_json(out)
    s = tm["sampling"]
    assert s["rows_full"] > 0 and s["rows"] <= 16
    assert s["samples"] + s["rows_full"] == s["samples_target"]
    assert any("sample table is full" in w and "--max-sample-stacks" in w for w in tm["warnings"])
    if s["stacks_full"]:
        assert any("stack store is full" in w for w in tm["warnings"])


# ---- bad input ----

@pytest.mark.parametrize("args,needle", [
    (["--sample=abc"], "bad --sample rate"),
    (["--sample=0"], "bad --sample rate"),
    (["--sample="], "bad --sample rate"),
    (["--sample=1.5"], "bad --sample rate"),
    (["--sample=-5"], "bad --sample rate"),
    (["--sample=1000000"], "bad --sample rate"),
    (["--folded", "/tmp/x.folded"], "--folded FILE needs --sample"),
    (["--sample", "--max-sample-stacks", "0"], "bad --max-sample-stacks"),
])
def test_bad_sample_options(args, needle):
    r = run_tmabpf(args + ["-d", "1"])
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_rate_above_kernel_limit():
    """A rate the kernel refuses (above kernel.perf_event_max_sample_rate) is one line and exit 2.
    The limit is lowered for a moment when it is at --sample's own maximum (other tools' rates
    stay far below it)."""
    path = "/proc/sys/kernel/perf_event_max_sample_rate"
    with open(path) as f:
        old = int(f.read())
    limit = min(old, 90000)
    try:
        if limit != old:
            with open(path, "w") as f:
                f.write(str(limit))
        r = run_tmabpf([f"--sample={limit + 1}", "-d", "1"])
    finally:
        if limit != old:
            with open(path, "w") as f:
                f.write(str(old))
    assert r.returncode == 2, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "perf_event_max_sample_rate" in lines[0], r.stderr


def test_short_lived_processes_named(tmp_path):
    """30 processes that each spin 15 ms and exit, under sh -c: their stacks are named from the kernel's
    mapping records, kept after they exit (the maps read when their stacks were named, up to 50 ms
    after, were gone: 65 of 480 samples, 13.5 %, stayed '[unknown]+0xADDR' at gt_spin's address)."""
    gt = os.path.join(BUILD, "workloads", "groundtruth")
    out = str(tmp_path / "s.json")
    r = run_tmabpf(["--quiet", "--sample=999", "--json", out, "--", "sh", "-c",
                    f"for i in $(seq 30); do {gt} --out /dev/null spin:15; done"])
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    s = rep["sampling"]
    spin = [x for x in rep["samples"] if x["tid"] is None and x["symbol"] == "gt_spin"]
    assert len({x["pid"] for x in spin}) >= 25, [x["pid"] for x in spin]
    assert s["unmapped_leaf_samples"] * 100 <= s["samples"], (s, r.stderr)
    assert sum(x["count"] for x in spin) >= 0.6 * s["samples"], s


PLT_SEC_WORK = r"""
#include <ctype.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
	volatile long s = 0;
	struct timespec t0, t;
	usleep(%d * 1000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (long i = 0; i < 1000000; i++)
			s += toupper((int)(i & 127));	/* -O0, -fno-builtin: libc toupper through its stub */
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 3);
	return 0;
}
"""


def test_plt_sec_stub_named_like_perf(tmp_path):
    """An IBT binary (-fcf-protection=full -z ibtplt) calls libc through its .plt.sec stubs: a
    sample in a stub is 'name@plt' in tmabpf as in perf on the same run, with a like share."""
    src, exe = tmp_path / "pltsec.c", tmp_path / "pltsec"
    src.write_text(PLT_SEC_WORK % DELAY_MS)
    subprocess.run(["gcc", "-O0", "-fno-builtin", "-fcf-protection=full", "-Wl,-z,ibtplt", "-o", str(exe),
                    str(src)], check=True, timeout=120)
    sections = subprocess.run(["readelf", "-SW", str(exe)], capture_output=True, text=True, check=True).stdout
    assert ".plt.sec" in sections, "the linker made no .plt.sec"
    r = sample_both(tmp_path, [str(exe)], 499)
    stub = "toupper@plt"
    theirs = user_shares({k: n for k, n in r["perf"].items() if k[0] == "pltsec"})
    ours = user_shares({k: v["count"] for k, v in agg(r["tm"]).items() if k[0] == "pltsec"})
    # ~600 samples of the binary per tool: a share's standard deviation is ~2 points in each
    assert theirs.get(stub, 0) > 10, theirs
    assert abs(ours.get(stub, 0) - theirs[stub]) < 10, (ours, theirs)
