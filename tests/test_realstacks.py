# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Real inference stacks, installed by scripts/install-realstacks.sh (Debian's python3-torch, MKL
from non-free through a private apt list, node-llama-cpp from npm) and profiled as a user would:
call counts against the workloads' own structure (or the library's own log), symbol fidelity of
--sample over repeated runs, the zero-evidence and unprobeable-function lines, deferred attach,
JIT rows with and without a perf map.  A stack that cannot be installed skips, naming why."""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BUILD, ROOT, TMABPF, load_json, run_tmabpf
from percall_windows import assert_windows_tile

INSTALL = os.path.join(ROOT, "scripts", "install-realstacks.sh")
CACHE = os.environ.get("TMABPF_REALSTACKS_CACHE", "/var/cache/tmabpf-realstacks")
PY = "/usr/bin/python3"		# Debian's python3-torch is for the system interpreter
TINYGPT = os.path.join(ROOT, "tests", "workloads", "tinygpt.py")
MKLGEMM = os.path.join(BUILD, "workloads", "mklgemm")
GGUF = os.path.join(ROOT, "tests", "workloads", "gguf_random.py")
LLAMA = os.path.join(ROOT, "tests", "workloads", "llama_decode.mjs")
LLAMA_BINS = os.path.join(CACHE, "npm", "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64")
FIDELITY_RUNS = 5


@pytest.fixture(scope="module")
def stacks():
    """{stack: None when installed, else the reason it is not}; the install's time is written to
    build/realstacks-install.txt (cold the first time on a machine, warm after)."""
    t0 = time.time()
    r = subprocess.run([INSTALL], capture_output=True, text=True, timeout=900)
    took = time.time() - t0
    state = {}
    for line in r.stdout.splitlines():
        m = re.match(r"realstacks: (\w+) (ok|installed|unavailable)(?:: (.*))?", line)
        if m:
            state[m.group(1)] = None if m.group(2) != "unavailable" else m.group(3)
    with open(os.path.join(BUILD, "realstacks-install.txt"), "a") as f:
        f.write("%s install %.1f s: %s\n" % (time.strftime("%F %T"), took, r.stdout.strip().replace("\n", "; ")))
    return state


def need(stacks, name):
    why = stacks.get(name, "install-realstacks.sh said nothing about it")
    if why:
        pytest.skip(f"{name}: {why}")


def profile(args, cmd, tmp_path, name="r.json", env=None, timeout=300):
    out = str(tmp_path / name)
    r = run_tmabpf(["--batch", "--json", out] + args + ["--"] + cmd, timeout=timeout,
                   env=dict(os.environ, **(env or {})))
    assert r.returncode == 0, r.stderr
    return load_json(out), r


def calls(report, symbol_part):
    """Process-wide calls of the functions whose symbol contains symbol_part."""
    return sum(f["calls"] for f in report["functions"] if f["tid"] is None and symbol_part in f["symbol"])


def sample_shares(report):
    """(share of samples attributed to code: a function or an offset in its file; share with a
    function name) over the per-process rows."""
    rows = [r for r in report["samples"] if r["tid"] is None]
    total = sum(r["count"] for r in rows)
    lost = sum(r["count"] for r in rows if r["module"] == "[unknown]")
    named = sum(r["count"] for r in rows if "+0x" not in r["symbol"] and not r["symbol"].startswith("["))
    return total, (total - lost) / total, named / total


def check_fidelity(runs, what):
    """Every run: >= 98 % of samples in a known mapping, and the warning line says how many have no
    function name (and why) exactly when that is above 1 %."""
    lines = []
    for report, stderr in runs:
        total, mapped, named = sample_shares(report)
        s = report["sampling"]
        lines.append("%d samples, %.1f %% mapped, %.1f %% named, unmapped %d, no symbol %d" %
                     (total, 100 * mapped, 100 * named, s["unmapped_leaf_samples"], s["no_symbol_leaf_samples"]))
        assert total > 50, f"{what}: too few samples ({total})"
        assert mapped >= 0.98, f"{what}: samples in no mapping: " + " | ".join(lines)
        warned = [l for l in stderr.splitlines() if "have no function name" in l]
        assert bool(warned) == (s["unknown_leaf_samples"] * 100 > s["samples"]), (warned, s)
        if warned:
            assert re.search(r"\d+ of \d+ samples \([\d.]+ %\) have no function name: ", warned[0])
    print(f"\n{what} fidelity over {len(runs)} runs: " + " | ".join(lines))


# ---- PyTorch (Debian python3-torch: OpenBLAS and oneDNN underneath) ----------------------------

def test_torch_exact_counts(stacks, tmp_path):
    need(stacks, "torch")
    L, G = 2, 5
    report, r = profile(["--uprobe", "libtorch_cpu.so:at::_ops::linear::call",
                         "--uprobe", "libtorch_cpu.so:at::_ops::addmm::call",
                         "--uprobe", "libdnnl.so.2:dnnl_primitive_execute"],
                        [PY, TINYGPT, "--layers", str(L), "--gen", str(G)], tmp_path,
                        env={"DNNL_VERBOSE": "1", "ONEDNN_VERBOSE": "1"})
    assert calls(report, "at::_ops::linear::call") == (G + 1) * (4 * L + 1)
    assert calls(report, "at::_ops::addmm::call") == (G + 1) * 4 * L
    # oneDNN's own log of the same run: one "exec" line per executed primitive (the convolution
    # and the reorders around it), (G+1)*L convolutions
    execs = [l for l in r.stdout.splitlines() if re.match(r"(onednn|dnnl)_verbose,exec,", l)]
    convs = [l for l in execs if ",convolution," in l]
    assert len(convs) == (G + 1) * L
    assert calls(report, "dnnl_primitive_execute") == len(execs)
    assert report["uprobes"]["never_called"] == [] and report["uprobes"]["never_mapped"] == []


TORCH_LOOP = ("import torch\ntorch.set_num_threads(1)\nx, w = torch.randn(8, 64), torch.randn(64, 64)\n"
              "print('ready', flush=True)\nwith torch.no_grad():\n    while True:\n        "
              "torch.nn.functional.linear(x, w)\n")


def test_torch_nested_counts_agree_mid_run(stacks, tmp_path):
    """-p on a running PyTorch loop with probes on linear, mm (libtorch_cpu) and OpenBLAS' sgemm_:
    one window for every probe, so each linear's one mm and one sgemm_ agree exactly in every run
    (before: 3787 linear against 4149 mm and sgemm_, links attached and detached 10-40 ms apart)."""
    need(stacks, "torch")
    p = subprocess.Popen([PY, "-c", TORCH_LOOP], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().startswith("ready")
        for run in range(10):
            out = str(tmp_path / "r.json")
            r = run_tmabpf(["--batch", "--quiet", "--json", out, "-p", str(p.pid), "-d", "0.5",
                            "--uprobe", "libtorch_cpu.so:at::_ops::linear::call",
                            "--uprobe", "libtorch_cpu.so:at::_ops::mm::call", "--uprobe", "libblas.so.3:sgemm_"])
            assert r.returncode == 0, r.stderr
            report = load_json(out)
            n = [calls(report, s) for s in ("at::_ops::linear::call", "at::_ops::mm::call", "sgemm_")]
            assert n[0] > 0 and n[0] == n[1] == n[2], (run, n)
    finally:
        p.kill()
        p.wait()


def test_torch_sample_fidelity(stacks, tmp_path):
    need(stacks, "torch")
    runs = []
    for i in range(FIDELITY_RUNS):
        report, r = profile(["--sample=499"], [PY, TINYGPT, "--layers", "4", "--gen", "30", "--dim", "256",
                                               "--loops", "3"], tmp_path, name=f"s{i}.json")
        runs.append((report, r.stderr))
    check_fidelity(runs, "torch")


def _onednn_conv_loop(seconds):
    return [PY, "-c", "import time, torch\n"
            "torch.manual_seed(0)\n"
            "m = torch.nn.Conv2d(32, 32, 3, padding=1).eval()\n"
            "x = torch.randn(4, 32, 56, 56)\n"
            "t = time.time()\n"
            "with torch.no_grad():\n"
            f"    while time.time() - t < {seconds}:\n"
            "        m(x)\n"]


def test_onednn_jit_rows(stacks, tmp_path):
    """oneDNN's JIT kernels: without a perf map, one [jit] row per mapping and a hint naming
    DNNL_JIT_PROFILE=2; with it, named rows from perf-PID.map."""
    need(stacks, "torch")
    plain, r = profile(["--sample=499"], _onednn_conv_loop(2), tmp_path, name="plain.json",
                       env={"DNNL_JIT_PROFILE": "0", "ONEDNN_JIT_PROFILE": "0"})
    jit = [x for x in plain["samples"] if x["tid"] is None and x["module"].startswith("[jit")]
    if not jit:
        pytest.skip("torch ran no oneDNN JIT code for Conv2d here (no sample in anonymous executable memory)")
    assert len(jit) == len({x["module"] for x in jit}), "one row per mapping"
    assert all(re.match(r"\[jit\] 0x[0-9a-f]+-0x[0-9a-f]+ r[w-]x \d+ [KM]B$", x["module"]) for x in jit), jit
    assert sum(x["count"] for x in plain["samples"] if x["tid"] is None and x["symbol"].startswith("[anon]")) == 0
    if plain["sampling"]["unknown_leaf_samples"] * 100 > plain["sampling"]["samples"]:
        assert "DNNL_JIT_PROFILE=2" in r.stderr
    named, _ = profile(["--sample=499"], _onednn_conv_loop(2), tmp_path, name="named.json",
                       env={"DNNL_JIT_PROFILE": "2", "ONEDNN_JIT_PROFILE": "2"})
    rows = [x for x in named["samples"] if x["tid"] is None and x["module"].startswith("perf-")]
    assert rows and sum(x["count"] for x in rows) > 10, "oneDNN's perf map names its JIT kernels"
    assert any("jit" in x["symbol"] or "brgemm" in x["symbol"] or "conv" in x["symbol"] for x in rows), rows[:5]


# ---- Intel MKL 2020 (libmkl-rt, Debian non-free) -----------------------------------------------

@pytest.fixture(scope="module")
def intel_cpu_lib(tmp_path_factory):
    """A tiny library defining mkl_serv_intel_cpu_true() = 1: with LD_PRELOAD, MKL 2020 takes its
    Intel code paths (libmkl_avx512.so on an AVX-512 host) whatever the CPU's vendor."""
    d = tmp_path_factory.mktemp("intelcpu")
    src, lib = d / "intelcpu.c", d / "libintelcpu.so"
    src.write_text("int mkl_serv_intel_cpu_true(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return str(lib)


def mkl_libs(env=None, calls=50):
    """The MKL libraries a run of mklgemm maps (read from its maps while it runs)."""
    p = subprocess.Popen([MKLGEMM, str(calls * 100)], env=dict(os.environ, **(env or {})),
                         stderr=subprocess.DEVNULL)
    seen = set()
    try:
        for _ in range(40):
            time.sleep(0.05)
            with open(f"/proc/{p.pid}/maps") as f:
                seen |= set(re.findall(r"(libmkl_\w+\.so)", f.read()))
            if any("libmkl_avx" in s or "libmkl_def" in s or "libmkl_mc" in s for s in seen):
                break
    finally:
        p.kill()
        p.wait()
    return seen


def test_mkl_exact_counts(stacks, tmp_path):
    need(stacks, "mkl")
    n = 40
    report, _ = profile(["--uprobe", "libmkl_rt.so:cblas_sgemm"], [MKLGEMM, str(n)], tmp_path,
                        env={"MKL_NUM_THREADS": "1"})
    rows = [f for f in report["functions"] if f["tid"] is None]
    assert [(f["symbol"], f["calls"]) for f in rows] == [("cblas_sgemm", n)]


def test_mkl_zero_evidence(stacks, tmp_path):
    """The design card's command on a CPU where MKL does not load libmkl_avx512.so: one line says
    the library was never mapped, what was mapped instead and what to type."""
    need(stacks, "mkl")
    if "libmkl_avx512.so" in mkl_libs():
        pytest.skip("this CPU takes MKL's AVX-512 path: libmkl_avx512.so is mapped")
    report, r = profile(["--uprobe", "libmkl_avx512.so:sgemm*"], [MKLGEMM, "20"], tmp_path)
    assert report["uprobes"]["never_mapped"] == ["/usr/lib/x86_64-linux-gnu/libmkl_avx512.so"]
    line = [l for l in r.stderr.splitlines() if "libmkl_avx512.so was never mapped" in l]
    assert len(line) == 1, r.stderr
    dispatch = sorted(l for l in mkl_libs() if re.match(r"libmkl_(def|mc3?|avx2?)\.so$", l))
    assert dispatch and dispatch[0] in line[0] and f"try --uprobe '{dispatch[0]}:" in line[0], (dispatch, line)


MKL_DISPATCH = r"libmkl_(?:def|mc3?|avx2?|avx512(?:_mic)?)\.so"


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return set(re.search(r"^flags\s*:(.*)$", f.read(), re.M).group(1).split())


@pytest.mark.parametrize("path", ["native", "avx2"])
def test_mkl_evidence_names_dispatch_library(stacks, tmp_path, intel_cpu_lib, path):
    """The zero-evidence line names the CPU-dispatch library the kernels ran in, read from the kernel's
    mapping records: for a target that lives ~70 ms and one that lives seconds, as -- CMD and under
    -- sh -c 'CMD' (a child the maps polling never read: 5 of 5 wrapped runs said 'no file of a
    similar name').  The truth is the same run's LD_DEBUG=files.  avx2: MKL's Intel AVX2 path on any
    vendor (mkl_serv_intel_cpu_true preloaded, MKL_ENABLE_INSTRUCTIONS=AVX2); native: this CPU's."""
    need(stacks, "mkl")
    env = {"LD_DEBUG": "files", "MKL_NUM_THREADS": "1"}
    if path == "avx2":
        if "avx2" not in cpu_flags():
            pytest.skip("no AVX2 on this CPU: MKL cannot take its AVX2 path")
        env.update({"LD_PRELOAD": intel_cpu_lib, "MKL_ENABLE_INSTRUCTIONS": "AVX2"})
    probed = "libmkl_def.so" if "libmkl_avx512.so" in mkl_libs(env) else "libmkl_avx512.so"
    short, long_ = [MKLGEMM, "1", "2", "256", "256"], [MKLGEMM, "150"]
    runs = [("short", short)] * 5 + [("long", long_)]
    runs += [(w + " sh -c", ["sh", "-c", " ".join(cmd) + "; true"]) for w, cmd in runs]
    wrong = []
    for i, (what, cmd) in enumerate(runs):
        report, r = profile(["--uprobe", f"{probed}:sgemm*"], cmd, tmp_path, name=f"e{i}.json", env=env)
        ran = set(re.findall(r"file=\S*/(" + MKL_DISPATCH + r")\b", r.stderr))
        assert len(ran) == 1 and probed not in ran, (what, ran)
        line = [l for l in r.stderr.splitlines() if f"{probed} was never mapped" in l]
        assert len(line) == 1 and report["uprobes"]["never_mapped"], (what, r.stderr[-3000:])
        m = re.search(r"(" + MKL_DISPATCH + r") is its CPU-dispatch sibling: try --uprobe '\1:\*sgemm\*'|"
                      r"try --uprobe '(" + MKL_DISPATCH + r"):sgemm\*'", line[0])
        named = m and (m.group(1) or m.group(2))
        if named not in ran:
            wrong.append((what, sorted(ran), line[0]))
    assert not wrong, wrong


def test_mkl_avx512_rows(stacks, tmp_path, intel_cpu_lib):
    """Where MKL takes its AVX-512 path: per-function rows, sgemm_t_n23_b0 once per sgemm and thread."""
    need(stacks, "mkl")
    env = {"LD_PRELOAD": intel_cpu_lib, "MKL_NUM_THREADS": "1"}
    if "libmkl_avx512.so" not in mkl_libs(env):
        pytest.skip("MKL does not load libmkl_avx512.so here even as an Intel CPU (no AVX-512?)")
    n = 30
    report, r = profile(["--uprobe", "libmkl_avx512.so:sgemm*", "--uprobe", "libmkl_rt.so:cblas_sgemm"],
                        [MKLGEMM, str(n)], tmp_path, env=env)
    got = {f["symbol"]: f["calls"] for f in report["functions"] if f["tid"] is None}
    assert got.get("cblas_sgemm") == n
    assert got.get("sgemm_t_n23_b0") == n, got
    assert report["uprobes"]["never_mapped"] == []


def test_mkl_sample_fidelity(stacks, tmp_path):
    need(stacks, "mkl")
    runs = []
    for i in range(FIDELITY_RUNS):
        report, r = profile(["--sample=999"], [MKLGEMM, "600"], tmp_path, name=f"m{i}.json")
        runs.append((report, r.stderr))
    check_fidelity(runs, "mkl")


# ---- llama.cpp through node-llama-cpp (npm) ----------------------------------------------------

@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf") / "random-q8_0.gguf"
    subprocess.run([PY, GGUF, str(path)], check=True)
    return str(path)


def llama_cmd(gguf, n):
    return ["node", LLAMA, os.path.join(CACHE, "npm"), gguf, str(n)]


def loaded_cpu_backend(gguf):
    """The libggml-cpu-*.so that llama.cpp keeps on this CPU, and its process, stopped (SIGSTOP)
    there: read from its maps once the model is mapped, when the variant chosen is the only one.
    ggml's loader maps every variant in turn to score it: a fresh-clone run once read
    libggml-cpu-sse42.so, mid scoring, on an AVX-512 host.  Stopped, because the decode that
    follows is over in 0.2 s."""
    model = os.path.realpath(gguf)
    p = subprocess.Popen(llama_cmd(gguf, 4000), stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            time.sleep(0.05)
            with open(f"/proc/{p.pid}/maps") as f:
                maps = f.read()
            found = set(re.findall(r"(\S+/libggml-cpu-[\w-]+\.so)", maps))
            if model in maps and len(found) == 1:
                os.kill(p.pid, signal.SIGSTOP)
                return found.pop(), p
    except Exception:
        p.kill()
        p.wait()
        raise
    p.kill()
    p.wait()
    return None, None


def cpu_backend_or_skip(gguf):
    """The CPU backend's path (loaded_cpu_backend, its process ended), or skip."""
    backend, proc = loaded_cpu_backend(gguf)
    if proc:
        proc.kill()
        proc.wait()
    if not backend:
        pytest.skip("node-llama-cpp loaded no libggml-cpu-*.so backend")
    return backend


def test_llama_decode_exact(stacks, tmp_path, gguf):
    need(stacks, "llama")
    n = 64
    lib = os.path.join(LLAMA_BINS, "libllama.v0.5.0.so")
    if not os.path.exists(lib):
        lib = next((os.path.join(LLAMA_BINS, f) for f in os.listdir(LLAMA_BINS) if f.startswith("libllama.")), lib)
    report, r = profile(["--uprobe", f"{lib}:llama_decode"], llama_cmd(gguf, n), tmp_path)
    assert calls(report, "llama_decode") == n, r.stderr


def test_llama_deferred_bare_name(stacks, tmp_path, gguf):
    """Bare names nothing maps yet (llama.cpp's CPU backend, which ggml dlopens, and libllama): probed in
    those files as soon as a target maps a file from their directory (node-llama-cpp's addon), before
    any process maps them: the decoding process misses no call, against bpftrace attached to the
    backend's path before the start.  node-llama-cpp first tests its binaries in a child that maps the
    addon and calls ggml_cpu_init 15-30 ms later: counted when the attach is quicker (printed), never
    more than bpftrace's, and a process whose calls were missed is named in mapped_before_attach."""
    need(stacks, "llama")
    backend = cpu_backend_or_skip(gguf)
    n = 64
    name = os.path.basename(backend)
    # per (process, parent): other processes on the host may run llama.cpp meanwhile
    bt = subprocess.Popen(["bpftrace", "-e", f'uprobe:"{backend}":ggml_cpu_init '
                           "{ @init[pid, curtask->real_parent->tgid] = count(); }\n"
                           f'uprobe:"{backend}":ggml_graph_compute '
                           "{ @graph[pid, curtask->real_parent->tgid] = count(); }"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = ""
    while "Attaching" not in line:  # skip warnings (e.g. RLIMIT_MEMLOCK in containers)
        line = bt.stdout.readline()
        assert line, "bpftrace exited before attaching"
    try:
        report, r = profile(["--uprobe", f"{name}:ggml_cpu_init", "--uprobe", f"{name}:ggml_graph_compute",
                             "--uprobe", "libllama.v0.5.0.so:llama_decode"], llama_cmd(gguf, n), tmp_path)
    finally:
        bt.send_signal(signal.SIGINT)
        try:
            out = bt.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            bt.kill()
            out = bt.communicate()[0]
    assert "found in its directory (a process that maps it from now on is counted from its first call)" in r.stderr, \
        r.stderr
    assert calls(report, "llama_decode") == n
    assert all(d["attached"] for d in report["uprobes"]["deferred"]), report["uprobes"]["deferred"]
    bt_maps = {m: {(int(p), int(par)): int(c) for p, par, c in re.findall(r"@" + m + r"\[(\d+), (\d+)\]: (\d+)", out)}
               for m in ("init", "graph")}
    parent = {p: par for m in bt_maps.values() for p, par in m}
    ours = {}
    for f in report["functions"]:
        if f["tid"] is None and f["symbol"] in ("ggml_cpu_init", "ggml_graph_compute"):
            ours.setdefault("init" if f["symbol"] == "ggml_cpu_init" else "graph", {})[f["pid"]] = f["calls"]
    top = max(ours["graph"], key=ours["graph"].get)  # the process that decodes
    family, grew = {top}, True
    while grew:
        kids = {c for c, par in parent.items() if par in family} - family
        family |= kids
        grew = bool(kids)
    late = {x["pid"] for x in report["uprobes"]["mapped_before_attach"] if x["module"] == os.path.realpath(backend)}
    for m in ("init", "graph"):
        theirs = {pid: c for (pid, _), c in bt_maps[m].items() if pid in family}
        assert ours[m].get(top) == theirs[top], (m, ours, theirs, r.stderr)
        assert all(ours[m].get(pid, 0) <= c for pid, c in theirs.items()), (m, ours, theirs)
        # a process that called before the attach mapped the backend before it: said
        assert all(pid in late for pid, c in theirs.items() if ours[m].get(pid, 0) < c), (m, ours, theirs, late)
        print(f"\n{m}: tmabpf {ours[m]}, bpftrace {theirs} (decoding process {top})")
    assert ours["graph"][top] >= n


def test_llama_unprobeable_skipped(stacks, tmp_path, gguf):
    """EVEX-entry tinyBLAS kernels of an AVX-512 CPU backend: skipped with one line and listed in
    JSON, the rest attached, the same with -p and -- CMD."""
    need(stacks, "llama")
    backend, proc = loaded_cpu_backend(gguf)
    if not backend:
        pytest.skip("node-llama-cpp loaded no libggml-cpu-*.so backend")
    try:
        r_p = run_tmabpf(["--batch", "-d", "0.5", "-p", str(proc.pid), "--json",
                          str(tmp_path / "p.json"), "--uprobe", f"{backend}:*tinyBLAS*"])
    finally:
        proc.kill()
        proc.wait()
    assert r_p.returncode == 0, r_p.stderr
    cmd, r_c = profile(["--uprobe", f"{backend}:*tinyBLAS*"], llama_cmd(gguf, 8), tmp_path, name="c.json")
    bypid = load_json(str(tmp_path / "p.json"))
    for rep, r in ((bypid, r_p), (cmd, r_c)):
        bad = rep["uprobes"]["unprobeable"]
        assert rep["uprobes"]["functions"] > len(bad)
        assert re.search(r"uprobe: %d functions attached" % (rep["uprobes"]["functions"] - len(bad)), r.stderr)
        if bad:
            assert re.search(r"uprobe: %d of %d functions cannot be probed, skipped \(" %
                             (len(bad), rep["uprobes"]["functions"]), r.stderr)
    evex = [b for b in bypid["uprobes"]["unprobeable"] if b["reason"].startswith("EVEX")]
    if not evex:
        pytest.skip(f"{os.path.basename(backend)} has no EVEX-encoded tinyBLAS entry (not an AVX-512 backend)")
    assert bypid["uprobes"]["unprobeable"] == cmd["uprobes"]["unprobeable"]


def test_llama_hot_probe_guard(stacks, tmp_path, gguf):
    """A probe on ggml's inner dot product (tens of thousands of calls a second) costs more than
    5 % of the target's CPU: one warning names the function, its rate and --max-rate."""
    need(stacks, "llama")
    backend = cpu_backend_or_skip(gguf)
    report, r = profile(["--uprobe", f"{backend}:ggml_vec_dot_q8_0_q8_0"], llama_cmd(gguf, 400), tmp_path)
    rate = calls(report, "ggml_vec_dot_q8_0_q8_0") / (report["duration_ns"] / 1e9)
    warned = [l for l in r.stderr.splitlines() if "of the target's CPU time" in l]
    if rate < 2000:
        pytest.skip(f"ggml_vec_dot_q8_0_q8_0 ran only {rate:.0f} calls/s here")
    assert len(warned) == 1 and "ggml_vec_dot_q8_0_q8_0" in warned[0] and "--max-rate" in warned[0], r.stderr


def test_llama_per_call_tokens(stacks, tmp_path, gguf):
    """--per-call on llama_decode: one iteration per llama_decode call (the one-token prompt's
    evaluation is the first), walls within the run, and every window of the whole process (11 or so
    node threads, ggml's 2) tiles into compute + spin + blocked + runqueue (+ absent) = wall x
    threads within 1 %."""
    need(stacks, "llama")
    n = 24
    lib = os.path.join(LLAMA_BINS, "libllama.v0.5.0.so")
    if not os.path.exists(lib):
        lib = next((os.path.join(LLAMA_BINS, f) for f in os.listdir(LLAMA_BINS) if f.startswith("libllama.")), lib)
    report, r = profile(["--sample=499", "--per-call", f"{lib}:llama_decode"], llama_cmd(gguf, n) + ["2"], tmp_path)
    its = report["iterations"]
    assert len(its) == n and report["per_call"]["iterations"] == n, r.stderr
    assert sum(it["wall_ns"] for it in its) <= report["duration_ns"]
    assert all(it["threads"] > 2 for it in its)
    assert_windows_tile(its)
