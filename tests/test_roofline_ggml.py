# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--roofline on ggml's matrix multiply (llama.cpp's CPU backend through node-llama-cpp, installed
by scripts/install-realstacks.sh): per token, the weight bytes tmabpf reads from the tensor structs
equal the model's matrix bytes per ggml type, as the GGUF file itself lays them out; a ggml whose
version is not the verified one is refused in one line and the rest runs.  Without llama.cpp:
tests/workloads/ggmlnodes.c, ggml 0.25.1's ABI with its own count of the work and bad calls."""
import json
import os
import re
import shutil
import struct
import subprocess
from collections import Counter

import pytest

from conftest import BUILD, load_json, run_tmabpf
from test_realstacks import (GGUF, LLAMA_BINS, PY, calls, cpu_backend_or_skip, llama_cmd, need, profile,
                             stacks)  # noqa: F401  (stacks: the fixture)

# every weight type the writer has: llama.cpp repacks q4_0 and q4_K on AVX2 (the repack entry),
# the others go through ggml_compute_forward_mul_mat
TYPES = "q8_0,q4_0,f16,bf16,f32,q4_K,q5_K,q6_K"
# ggml_type ids, named as ggml_type_name names them
TYPE_NAMES = {0: "f32", 1: "f16", 2: "q4_0", 8: "q8_0", 12: "q4_K", 13: "q5_K", 14: "q6_K", 30: "bf16"}


def gguf_tensors(path):
    """{name: (dims, ggml type id, bytes)} of a GGUF v3 file, each tensor's bytes the distance from
    its data offset to the next one's (the last one's to the end of the file)."""
    with open(path, "rb") as f:
        buf = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, buf, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("Q")
        pos += n
        return buf[pos - n:pos].decode()

    scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(scalar[t])

    assert buf[:4] == b"GGUF"
    pos = 4
    version, ntensors, nkv = take("I"), take("Q"), take("Q")
    assert version == 3
    meta = {}
    for _ in range(nkv):
        key = string()
        meta[key] = value(take("I"))
    infos = []
    for _ in range(ntensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, dims, take("I"), take("Q")))
    align = meta.get("general.alignment", 32)
    data = pos + (-pos) % align
    ends = sorted(o for *_, o in infos)[1:] + [len(buf) - data]
    end_of = dict(zip(sorted(o for *_, o in infos), ends))
    return {name: (dims, typ, end_of[off] - off) for name, dims, typ, off in infos}


def test_ggml_weight_bytes_per_token_by_type(stacks, tmp_path):
    """Per token (--per-call on llama_decode), the weight bytes tmabpf reports per ggml type equal the bytes of the model's
    matrices of that type in the GGUF file (every 2-D tensor but token_embd.weight, which is read by
    row, one row a token, not multiplied), exactly; the FLOPs are 2 K M per matrix and token, and
    each node counts once although both threads of the threadpool enter it."""
    need(stacks, "llama")
    gguf = str(tmp_path / "mixed.gguf")
    subprocess.run([PY, GGUF, gguf, "--embd", "256", "--ff", "512", "--types", TYPES], check=True)
    backend = cpu_backend_or_skip(gguf)
    tensors = gguf_tensors(gguf)
    want_bytes, want_flops, matrices = Counter(), 0, 0
    for name, (dims, typ, nbytes) in tensors.items():
        if len(dims) == 2 and name != "token_embd.weight":
            want_bytes[TYPE_NAMES[typ]] += nbytes
            want_flops += 2 * dims[0] * dims[1]
            matrices += 1
    assert set(want_bytes) == set(TYPES.split(","))
    n = 6
    lib = os.path.join(LLAMA_BINS, "libllama.v0.5.0.so")
    report, r = profile(["--roofline", "--uprobe", f"{backend}:ggml_graph_compute", "--per-call", f"{lib}:llama_decode"],
                        llama_cmd(gguf, n) + ["2"], tmp_path)
    assert calls(report, "llama_decode") == n, r.stderr
    rl = report["roofline"]
    # tmabpf's own per-token figures (the run's sums over its n llama_decode iterations)
    assert rl["per_token"]["tokens"] == n
    assert rl["per_token"]["weight_bytes_by_type"] == {t: float(b) for t, b in want_bytes.items()}, r.stderr
    assert rl["per_token"]["weight_bytes"] == float(sum(want_bytes.values()))
    rows = [s for s in rl["shapes"] if s["function"].startswith("ggml")]
    got = Counter()
    for s in rows:
        got[s["dtype"]] += s["weight_bytes"]
    print(f"\nper token: {dict((t, b // n) for t, b in got.items())}; the file's: {dict(want_bytes)}")
    assert {t: b for t, b in got.items()} == {t: n * b for t, b in want_bytes.items()}, r.stderr
    assert sum(s["flops"] for s in rows) == n * want_flops
    assert sum(s["calls"] for s in rows) == n * matrices
    assert rl["unreadable_calls"] == 0
    assert {s["function"] for s in rows} == {"ggml_compute_forward_mul_mat", "ggml repack forward_mul_mat"}
    assert rl["ggml_worker_calls"] > 0, "the second thread entered no node: counting once per node is untested"


def test_ggml_unverified_version_refused(stacks, tmp_path):
    """A CPU backend beside a libggml-base.so whose ggml_version() says 0.25.9 (the string patched in
    a copy), and one with no libggml-base.so at all: one line each, no roofline for ggml, and the
    run goes on (exit 0, its probes counted)."""
    need(stacks, "llama")
    backend = next((os.path.join(LLAMA_BINS, f) for f in sorted(os.listdir(LLAMA_BINS))
                    if re.match(r"libggml-cpu-x64\.so$", f)), None)
    if not backend:
        pytest.skip("no libggml-cpu-x64.so in node-llama-cpp's binaries")
    patched, alone = tmp_path / "patched", tmp_path / "alone"
    patched.mkdir()
    alone.mkdir()
    for d in (patched, alone):
        shutil.copy(backend, d)
    with open(os.path.join(LLAMA_BINS, "libggml-base.so"), "rb") as f:
        base = f.read()
    assert base.count(b"\x000.25.1\x00") == 1
    (patched / "libggml-base.so").write_bytes(base.replace(b"\x000.25.1\x00", b"\x000.25.9\x00"))
    for d, line in ((patched, r"ggml 0\.25\.9, whose tensor structs are not verified \(only ggml 0\.25\.1\)"),
                    (alone, r"ggml's version cannot be read \(no ggml_version\(\) in it nor in .*libggml-base\.so\)")):
        lib = str(d / "libggml-cpu-x64.so")
        out = str(tmp_path / "r.json")
        r = run_tmabpf(["--batch", "--json", out, "--roofline", "--uprobe", f"{lib}:ggml_graph_compute",
                        "--uprobe", "libc.so.6:getpid", "--", PY, "-c", "import os; [os.getpid() for _ in range(7)]"])
        assert r.returncode == 0, r.stderr
        said = [l for l in r.stderr.splitlines() if "no roofline for its matrix multiplies" in l]
        assert len(said) == 1 and re.search(line, said[0]) and said[0].startswith("tmabpf: --roofline: "), r.stderr
        report = load_json(out)
        assert calls(report, "getpid") >= 7
        assert not [s for s in report["roofline"]["shapes"] if s["function"].startswith("ggml")]


GGMLNODES = os.path.join(BUILD, "workloads", "ggmlnodes")


def test_ggml_nodes_exact_and_bad_calls(tmp_path):
    """ggmlnodes: 200 nodes of random shapes (batch dimensions too) and weight types, each entered by
    two threads' params (ith 0 and 1), then 6 calls with a zero or negative dimension, no src[1], a
    removed type, a row length not a multiple of the block, an unmapped dst: tmabpf's FLOPs, bytes,
    weight bytes per type, node count, worker entries and unreadable calls equal the workload's
    own, exactly."""
    out = str(tmp_path / "r.json")
    r = run_tmabpf(["--batch", "--json", out, "--roofline", "--uprobe", f"{GGMLNODES}:ggml_compute_forward_mul_mat",
                    "--", GGMLNODES])
    assert r.returncode == 0, r.stderr
    truth = json.loads(next(l for l in r.stdout.splitlines() if l.startswith('{"nodes"')))
    rl = load_json(out)["roofline"]
    rows = [s for s in rl["shapes"] if s["function"] == "ggml_compute_forward_mul_mat"]
    got = Counter()
    for s in rows:
        got[s["dtype"]] += s["weight_bytes"]
    assert dict(got) == truth["weight_bytes"]
    assert sum(s["flops"] for s in rows) == truth["flops"]
    assert sum(s["bytes"] for s in rows) == truth["bytes"]
    assert sum(s["calls"] for s in rows) == truth["nodes"]
    assert rl["ggml_worker_calls"] == truth["workers"]
    assert rl["unreadable_calls"] == truth["bad"]
    assert sum(1 for l in r.stderr.splitlines() if "calls with unreadable arguments" in l) == 1, r.stderr


def test_ggml_nodes_other_version_refused(tmp_path):
    """ggmlnodes with its ggml_version() string patched to 0.24.0 in a copy: one line, no ggml rows,
    the probe's calls still counted, exit 0."""
    with open(GGMLNODES, "rb") as f:
        exe = f.read()
    assert exe.count(b"\x000.25.1\x00") == 1
    copy = tmp_path / "ggmlnodes"
    copy.write_bytes(exe.replace(b"\x000.25.1\x00", b"\x000.24.0\x00"))
    copy.chmod(0o755)
    out = str(tmp_path / "r.json")
    r = run_tmabpf(["--batch", "--json", out, "--roofline", "--uprobe", f"{copy}:ggml_compute_forward_mul_mat",
                    "--", str(copy), "20"])
    assert r.returncode == 0, r.stderr
    said = [l for l in r.stderr.splitlines() if "no roofline for its matrix multiplies" in l]
    assert len(said) == 1 and "ggml 0.24.0, whose tensor structs are not verified (only ggml 0.25.1)" in said[0], \
        r.stderr
    report = load_json(out)
    assert calls(report, "ggml_compute_forward_mul_mat") == 2 * 20 + 6
    assert not [s for s in report["roofline"]["shapes"] if s["function"].startswith("ggml")]
