# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--roofline: every GEMM/GEMV call's work from its arguments, against the exact totals the
workload (tests/workloads/gemmwork.c) counts itself, on OpenBLAS and on MKL (with MKL_VERBOSE's
own line per call as a second oracle for the shapes); verdicts on known cases against roofs the
test measures; bad input."""
import itertools
import json
import math
import os
import re
import shutil
import subprocess
from collections import Counter, defaultdict

import pytest

from conftest import BUILD, ROOT, TMABPF, load_json, run_tmabpf

GEMMWORK = os.path.join(BUILD, "workloads", "gemmwork")
MKL_RT = "/usr/lib/x86_64-linux-gnu/libmkl_rt.so"
PMU = any(os.path.exists(f"/sys/bus/event_source/devices/{p}/type") for p in ("cpu", "cpu_core", "armv8_pmuv3"))


def roofline_run(tmp_path, mode, n=None, extra=(), env=None, name="r.json"):
    out = tmp_path / name
    r = run_tmabpf(["--roofline", "--batch", "--json", str(out), *extra, "--", GEMMWORK, mode,
                    *([str(n)] if n else [])], timeout=300, env=dict(os.environ, **(env or {})))
    assert r.returncode == 0, r.stderr
    own = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
    return load_json(out)["roofline"], own, r


def per_function(rl):
    t = defaultdict(Counter)
    for s in rl["shapes"]:
        t[s["function"]].update(calls=s["calls"], flops=s["flops"], bytes=s["bytes"])
    return t


def shape_key(s):
    if s["k"]:
        return f'{s["function"]} {s["m"]}x{s["n"]}x{s["k"]} {"TN"[not s["trans_a"]]}{"TN"[not s["trans_b"]]}'
    return f'{s["function"]} {s["m"]}x{s["n"]} {"TN"[not s["trans_a"]]}'


def check_exact(rl, own):
    got = per_function(rl)
    for f in ("cblas_sgemm", "cblas_dgemm", "cblas_sgemv", "sgemm_", "sgemv_"):
        assert own[f]["calls"] > 0, (f, own)
        assert dict(got[f]) == own[f], (f, dict(got[f]), own[f])
    shapes = Counter()
    for s in rl["shapes"]:
        shapes[shape_key(s)] += s["calls"]
    assert shapes == Counter(own["shapes"])
    assert rl["unreadable_calls"] == 0 and rl["abandoned_calls"] == 0 and rl["shapes_full_calls"] == 0, rl
    # beta is read behind the Fortran routines' pointers only
    for s in rl["shapes"]:
        assert (s["beta_nonzero"] is None) == s["function"].startswith("cblas_"), s


def test_exact_work_openblas(tmp_path):
    rl, own, _ = roofline_run(tmp_path, "mixed", 400)
    check_exact(rl, own)
    assert rl["calls"] == 400 and rl["nested_calls"] == 0


def test_uprobe_probed_entries_read_their_own_arguments(tmp_path):
    """--uprobe on every known entry gemmwork calls: the uprobe program's entry reads the arguments
    (no --roofline program runs on those addresses: its BPF run count is 0) and the work is still
    exactly the workload's own; the probed rows count the same calls."""
    probes = []
    for f in ("cblas_sgemm", "cblas_dgemm", "cblas_sgemv", "sgemm_", "sgemv_"):
        probes += ["--uprobe", f"libopenblas.so.0:{f}"]
    rl, own, r = roofline_run(tmp_path, "mixed", 400, extra=probes)
    check_exact(rl, own)
    assert rl["calls"] == 400 and rl["nested_calls"] == 0
    assert rl["bpf_run_count"] == 0, rl["bpf_run_count"]
    rows = Counter()
    for f in load_json(tmp_path / "r.json")["functions"]:
        rows[f["symbol"]] = max(rows[f["symbol"]], f["calls"])
    assert all(rows[f] == own[f]["calls"] for f in ("cblas_sgemm", "cblas_dgemm", "cblas_sgemv", "sgemm_", "sgemv_"))
    if not PMU:
        # no PMU: no measured FLOPs claimed, the reason given once in the JSON, no text line
        assert rl["measured_flops"] == [] and rl["measured_flops_missing"].startswith("no hardware PMU"), rl
        assert "measured FLOPs" not in r.stdout + r.stderr


REF_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"


def test_known_calls_nested_across_the_two_programs_count_once(tmp_path):
    """Reference BLAS (Debian's libblas3, preloaded): each CBLAS call calls its Fortran routine.
    With --uprobe on cblas_sgemm and sgemv_, the uprobe program opens those (in the thread's slot)
    and the --roofline program the others (in task storage): a Fortran call under a probed
    cblas_sgemm, and a probed sgemv_ under cblas_sgemv, are nested in the other program's open
    call and counted once; the work is exactly the workload's and every CBLAS call nests one."""
    if not os.path.exists(REF_BLAS):
        pytest.skip(f"{REF_BLAS} (libblas3) not installed: make deps")
    probes = ("--uprobe", f"{REF_BLAS}:cblas_sgemm", "--uprobe", f"{REF_BLAS}:sgemv_")
    rl, own, _ = roofline_run(tmp_path, "mixed", 300, extra=probes, env={"LD_PRELOAD": REF_BLAS})
    check_exact(rl, own)
    assert rl["calls"] == 300 + sum(own[f]["calls"] for f in ("cblas_sgemm", "cblas_dgemm", "cblas_sgemv"))
    assert rl["nested_calls"] == sum(own[f]["calls"] for f in ("cblas_sgemm", "cblas_dgemm", "cblas_sgemv")), rl
    assert rl["unreadable_calls"] == 0 and rl["abandoned_calls"] == 0


def test_attached_process_sums_still_in_the_threads_slots(tmp_path):
    """-p PID for a second with --uprobe on cblas_sgemm: the probed calls' sums wait in the running
    thread's slot (never flushed: one shape, and the thread lives on), and the report reads them
    there: the shape's calls are the probed row's, its FLOPs 2*8*8*8 each."""
    p = subprocess.Popen([GEMMWORK, "tiny", "100000000"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        out = tmp_path / "r.json"
        r = run_tmabpf(["-p", str(p.pid), "-d", "1", "--batch", "--json", str(out), "--roofline", "--uprobe",
                        "libopenblas.so.0:cblas_sgemm"], timeout=120)
        assert r.returncode == 0, r.stderr
    finally:
        p.kill()
        p.wait()
    rep = load_json(out)
    calls = [f["calls"] for f in rep["functions"] if f["symbol"] == "cblas_sgemm" and f["tid"] is None]
    row = only_row(rep["roofline"])
    assert calls and calls[0] > 1000 and row["calls"] == calls[0], (row, calls)
    assert row["flops"] == 1024 * row["calls"] and (row["m"], row["n"], row["k"]) == (8, 8, 8)


@pytest.fixture(scope="module")
def mkl():
    r = subprocess.run([os.path.join(ROOT, "scripts", "install-realstacks.sh"), "mkl"], capture_output=True,
                       text=True, timeout=900)
    m = re.search(r"realstacks: mkl (ok|installed|unavailable)(?:: (.*))?", r.stdout)
    if not m or m.group(1) == "unavailable" or not os.path.exists(MKL_RT):
        pytest.skip(f"MKL: {m.group(2) if m else r.stdout + r.stderr}")
    return MKL_RT


def test_exact_work_mkl_and_mkl_verbose(tmp_path, mkl):
    """MKL's CBLAS calls its own Fortran routines: counted once (nested); MKL_VERBOSE prints a line
    per Fortran-level call, whose shapes are tmabpf's."""
    rl, own, r = roofline_run(tmp_path, "mixed", 300, env={"LD_PRELOAD": mkl, "MKL_VERBOSE": "1"})
    check_exact(rl, own)
    assert rl["nested_calls"] > 0
    verbose = Counter()
    for m in re.finditer(r"^MKL_VERBOSE ([SD])GEM([MV])\(([^)]*)\)", r.stdout, re.M):
        a = m.group(3).split(",")
        if m.group(2) == "M":
            verbose[(m.group(1), a[0], a[1], int(a[2]), int(a[3]), int(a[4]))] += 1
        else:
            verbose[(m.group(1), a[0], "-", int(a[1]), int(a[2]), 0)] += 1
    ours = Counter()
    for s in rl["shapes"]:
        ours[("D" if s["dtype"] == "f64" else "S", "TN"[not s["trans_a"]], "TN"[not s["trans_b"]] if s["k"] else "-",
              s["m"], s["n"], s["k"])] += s["calls"]
    assert sum(verbose.values()) == 300 and verbose == ours


def test_mkl_batch_interfaces_sum_the_batch(tmp_path, mkl):
    """MKL's cblas_sgemm_batch (1-3 groups of random shapes behind pointers) and
    cblas_sgemm_batch_strided: FLOPs and bytes summed over each batch equal the workload's own,
    exactly, and each call is keyed by its first group's shape."""
    rl, own, _ = roofline_run(tmp_path, "batch", 60, env={"LD_PRELOAD": mkl})
    got = per_function(rl)
    for f in ("cblas_sgemm_batch", "cblas_sgemm_batch_strided"):
        assert own[f]["calls"] == 60 and dict(got[f]) == own[f], (f, dict(got[f]), own[f])
    assert Counter({shape_key(s): s["calls"] for s in rl["shapes"]}) == Counter(own["shapes"])
    assert rl["unreadable_calls"] == 0 and rl["calls"] == 120


@pytest.fixture(scope="module")
def roofs(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("roofs") / "roofs.json")
    r = subprocess.run([TMABPF, "roofs", "--only", "peak-fp32,read-L1,read-L2,read-L3,read-DRAM", "--repeats", "3",
                        "--seconds", "0.3", "--quiet", "--file", path], capture_output=True, text=True, timeout=600)
    if r.returncode and "likwid-bench not found" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    return path


def only_row(rl):
    assert len(rl["shapes"]) == 1, rl["shapes"]
    return rl["shapes"][0]


def test_decode_gemv_past_l3_is_memory_bound_dram(tmp_path, roofs):
    rl, own, _ = roofline_run(tmp_path, "gemv-big", 20, extra=("--roofs", roofs))
    row = only_row(rl)
    assert row["calls"] == 20 and row["flops"] == own["cblas_sgemv"]["flops"]
    assert row["intensity"] == pytest.approx(0.5, rel=1e-3)
    assert row["level"] == "DRAM" and row["verdict"] == "memory-bound (DRAM)", row
    assert 0.2 <= row["share"] <= 1.5, row
    assert rl["roofs"]["file"] == roofs


def test_gemm_1024_is_compute_bound(tmp_path, roofs):
    rl, _, _ = roofline_run(tmp_path, "gemm", 4, extra=("--roofs", roofs))
    row = only_row(rl)
    assert (row["m"], row["n"], row["k"]) == (1024, 1024, 1024) and row["intensity"] > 100
    assert row["verdict"] == "compute-bound", row


def test_tiny_gemms_are_below_both_roofs(tmp_path, roofs):
    rl, _, _ = roofline_run(tmp_path, "tiny", 100000, extra=("--roofs", roofs))
    row = only_row(rl)
    assert row["calls"] == 100000 and row["verdict"] == "below both roofs", row
    text = run_tmabpf(["--roofline", "--roofs", roofs, "--batch", "--width", "200", "--", GEMMWORK, "tiny",
                       "1000"]).stdout
    assert re.search(r"^cblas_sgemm +8x8x8 NN +1000 .* below both roofs$", text, re.M), text


def test_bad_dimensions_are_unreadable_calls(tmp_path):
    rl, _, r = roofline_run(tmp_path, "bad")
    assert rl["unreadable_calls"] == 3 and rl["shapes"] == [] and rl["calls"] == 3, rl
    said = [l for l in r.stderr.splitlines() if "unreadable arguments" in l]
    assert len(said) == 1 and "3 calls" in said[0], r.stderr


def test_calls_blas_rejects_are_not_counted(tmp_path):
    """8 calls OpenBLAS rejects (its xerbla prints one 'illegal value' line each: the peer) - a
    layout, CBLAS and Fortran transposes of GEMM and GEMV - are unreadable and invalid calls, said
    in one line (the old code counted them as full work; leading dimensions and increments are on
    the stack and not read, for the cost: docs/roofline.md);
    the 4 legal calls at the edges (row-major at its smallest leading dimensions, lower-case 't' and
    'c', a negative increment) are counted exactly."""
    rl, own, r = roofline_run(tmp_path, "illegal")
    assert r.stdout.count("had an illegal value") == own["illegal"] == 8, r.stdout
    got = per_function(rl)
    for f in ("cblas_sgemm", "cblas_sgemv", "sgemm_", "sgemv_"):
        assert dict(got[f]) == {k: v for k, v in own[f].items() if own[f]["calls"]}, (f, dict(got[f]), own[f])
    assert Counter({shape_key(s): s["calls"] for s in rl["shapes"]}) == Counter(own["shapes"])
    assert rl["calls"] == 12 and rl["invalid_calls"] == 8 and rl["unreadable_calls"] == 8, rl
    said = [l for l in r.stderr.splitlines() if "BLAS rejects" in l]
    assert len(said) == 1 and "8 calls" in said[0] and "8 of them" in said[0], r.stderr


SLOTS_SRC = r"""
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_barrier_t bar;
__attribute__((noinline, used)) void cblas_sgemm(int layout, int ta, int tb, int M, int N, int K, float alpha,
	const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	__asm__ volatile("" : : "r"(A), "r"(B), "r"(C) : "memory");
	usleep(1000);	/* the 4 threads in their calls at once, on any number of CPUs */
}
static void *run(void *arg)
{
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 100; i++)
		cblas_sgemm(101, 111, 111, 16, 16, 16, 1, 0, 16, 0, 16, 0, 0, 16);
	return NULL;
}
int main(void)
{
	pthread_t t[4];
	pthread_barrier_init(&bar, NULL, 4);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
"""


def test_known_calls_without_a_call_stack_slot_are_said(tmp_path):
    """A probed known entry keeps its roofline work in the thread's --uprobe slot: 4 threads of
    100 calls with 2 slots (--max-stacks 2) leave some calls without one; the slots-taken line says
    their roofline work is missing too (it said only 'without deltas').  With enough slots the
    400 calls are all in the shapes and nothing is said."""
    src, exe = tmp_path / "slots.c", tmp_path / "slots"
    src.write_text(SLOTS_SRC)
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(exe), str(src)], check=True)
    for stacks in (2, 1024):
        out = tmp_path / f"s{stacks}.json"
        r = run_tmabpf(["--roofline", "--max-stacks", str(stacks), "--uprobe", f"{exe}:cblas_sgemm", "--batch",
                        "--quiet", "--json", str(out), "--", str(exe)], timeout=120)
        assert r.returncode == 0, r.stderr
        rep = load_json(out)
        summed = sum(s["calls"] for s in rep["roofline"]["shapes"])
        said = [w for w in rep["warnings"] if "call-stack slots taken" in w]
        if stacks == 2:	# the 4 threads are in their calls at once (a barrier, 100 calls of 1 ms asleep)
            assert summed < 400 and len(said) == 1 and "without their roofline work" in said[0], \
                (summed, rep["warnings"])
        else:
            assert summed == 400 and not said, (summed, said)


LONGJMP_SRC = r"""
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
static jmp_buf jb;
__attribute__((noinline, used)) void cblas_sgemm(int layout, int ta, int tb, int M, int N, int K, float alpha,
	const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
	__asm__ volatile("" : : "r"(A), "r"(B), "r"(C) : "memory");
	if (M == 7)
		longjmp(jb, 1);	/* an error handler that leaves by longjmp (R's xerbla) */
}
__attribute__((noinline)) void deep(int d)
{
	volatile char pad[8];
	pad[0] = (char)d;
	if (d)
		deep(d - 1);
	else
		cblas_sgemm(101, 111, 111, 64, 64, 64, 1, 0, 64, 0, 64, 0, 0, 64);
	__asm__ volatile("" : : "r"(pad) : "memory");
}
int main(int argc, char **argv)
{
	if (atoi(argv[1]) && !setjmp(jb))
		cblas_sgemm(101, 111, 111, 7, 7, 7, 1, 0, 7, 0, 7, 0, 0, 7);
	for (int i = 0; i < 1000; i++)
		deep(4);
	return 0;
}
"""


def test_call_left_by_longjmp_does_not_swallow_later_calls(tmp_path):
    """A known call left by longjmp never returns; the 1000 calls made later from deeper in the
    stack are not nested in it (its frame, where the kernel's return trampoline was, has been
    written over): all 1000 summed and the left one counted abandoned.  The old code counted all
    1000 as nested and summed none (review finding)."""
    src, exe = tmp_path / "lj.c", tmp_path / "lj"
    src.write_text(LONGJMP_SRC)
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    for lj in (0, 1):
        out = tmp_path / f"lj{lj}.json"
        r = run_tmabpf(["--roofline", "--uprobe", f"{exe}:main", "--batch", "--quiet", "--json", str(out), "--",
                        str(exe), str(lj)], timeout=120)	# --uprobe: the executable's own entries are known
        assert r.returncode == 0, r.stderr
        rl = load_json(out)["roofline"]
        assert [(s["m"], s["calls"]) for s in rl["shapes"]] == [(64, 1000)], rl
        assert rl["calls"] == 1000 + lj and rl.get("abandoned_calls", 0) == lj and not rl.get("nested_calls"), rl


DNNL_SRC = r"""
#include <stdio.h>
#include <oneapi/dnnl/dnnl.h>
static float a[4096], b[4096], c[4096];
int main(void)
{
	int bad = 0, good = 0;
	/* row-major 16x8x4: lda >= K (NN) */
	struct { char ta, tb; long lda, ldb, ldc; } v[] = {
		{ 'N', 'N', 4, 8, 8 }, { 'T', 'T', 16, 4, 8 }, { 'n', 't', 4, 4, 8 },
		{ 'X', 'N', 4, 8, 8 }, { 'N', 'Q', 4, 8, 8 }, { 't', 'z', 16, 4, 8 }, { 'C', 'N', 16, 8, 8 }, { 'Y', 'T', 4, 4, 8 },
	};
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		dnnl_status_t s = dnnl_sgemm(v[i].ta, v[i].tb, 16, 8, 4, 1, a, v[i].lda, b, v[i].ldb, 0, c, v[i].ldc);
		if (s == dnnl_success) good++; else bad++;
	}
	printf("{\"good\": %d, \"bad\": %d}\n", good, bad);
	return 0;
}
"""


def test_dnnl_sgemm_calls_onednn_rejects_are_not_counted(tmp_path):
    """dnnl_sgemm (row-major, 16 x 8 x 4) with 3 legal and 5 illegal transposes (its leading
    dimensions are on the stack, not read): oneDNN's own status (dnnl_invalid_arguments) is the peer: 5 invalid calls, the 3
    others' shapes counted."""
    if not os.path.exists("/usr/include/oneapi/dnnl/dnnl.h"):
        pytest.skip("libdnnl-dev not installed")
    src, exe = tmp_path / "dn.c", tmp_path / "dn"
    src.write_text(DNNL_SRC)
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src), "-ldnnl"], check=True)
    out = tmp_path / "dn.json"
    r = run_tmabpf(["--roofline", "--batch", "--json", str(out), "--", str(exe)], timeout=120,
                   env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    own = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
    rl = load_json(out)["roofline"]
    assert own == {"good": 3, "bad": 5}
    assert sorted((s["trans_a"], s["trans_b"], s["calls"]) for s in rl["shapes"]) == \
        [(False, False, 1), (False, True, 1), (True, True, 1)], rl["shapes"]
    assert rl["invalid_calls"] == own["bad"] and rl["unreadable_calls"] == own["bad"], rl


WRAP_SRC = r"""
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* ggml 0.25.1's tensor and params, as bpf/roof_ggml.bpf.h reads them (src at 152) */
struct ggml_tensor { int type; void *buffer; int64_t ne[4]; size_t nb[4]; int op; int32_t op_params[16]; int32_t flags;
	struct ggml_tensor *src[10]; struct ggml_tensor *view_src; size_t view_offs; void *data; char name[64]; void *extra;
	char padding[8]; };
_Static_assert(__builtin_offsetof(struct ggml_tensor, src) == 152, "src");
struct ggml_compute_params { int ith, nth; size_t wsize; void *wdata; void *threadpool; _Bool use_ref; };
const char *ggml_version(void) { return "0.25.1"; }
__attribute__((noinline, noipa)) void ggml_compute_forward_mul_mat(const struct ggml_compute_params *p, struct ggml_tensor *dst)
{ __asm__ volatile("" : : "r"(p), "r"(dst) : "memory"); }
__attribute__((noinline, noipa)) void cblas_dgemm_batch(int layout, const int *ta, const int *tb, const int *m, const int *n,
	const int *k, const double *alpha, const double **a, const int *lda, const double **b, const int *ldb,
	const double *beta, double **c, const int *ldc, int groups, const int *size)
{ __asm__ volatile("" : : "r"(ta), "r"(m), "r"(size) : "memory"); }
int main(void)
{
	struct ggml_compute_params p = { 0, 1 };
	struct ggml_tensor dst = { 0 }, w = { 0 }, act = { 0 };
	/* weight and result f64 [2^20, 2^20, 2^10, 2^10]: 2^63 B each, activations f32 [2^20]: the sum is 2^64 + 2^22 */
	w.type = 28; w.ne[0] = 1 << 20; w.ne[1] = 1 << 20; w.ne[2] = 1 << 10; w.ne[3] = 1 << 10;
	dst.type = 28; memcpy(dst.ne, w.ne, sizeof(w.ne));
	act.type = 0; act.ne[0] = 1 << 20; act.ne[1] = 1; act.ne[2] = 1; act.ne[3] = 1;
	dst.src[0] = &w; dst.src[1] = &act;
	ggml_compute_forward_mul_mat(&p, &dst);
	/* one group of 2^20 dgemm 2^20 x 2^20 x 1, beta 1: FLOPs 2^61, bytes 8 (2^20 + 2^20 + 2 2^40) 2^20 = 2^64 + 2^44 */
	int ta = 111, tb = 111, m = 1 << 20, n = 1 << 20, k = 1, size = 1 << 20, ld = 1 << 20;
	double alpha = 1, beta = 1;
	cblas_dgemm_batch(101, &ta, &tb, &m, &n, &k, &alpha, 0, &ld, 0, &ld, &beta, 0, &ld, 1, &size);
	return 0;
}
"""


def test_work_whose_byte_sums_would_wrap_is_unreadable(tmp_path):
    """A ggml node of 2^63 + 2^63 + 2^22 bytes and a dgemm batch of 2^64 + 2^44 bytes (FLOPs below
    2^64 both): each sum would wrap a u64 (the old code reported 4 MiB and 16 TiB): both are
    unreadable calls, no shape."""
    src, exe = tmp_path / "wrap.c", tmp_path / "wrap"
    src.write_text(WRAP_SRC)
    subprocess.run(["cc", "-O1", "-o", str(exe), str(src)], check=True)
    out = tmp_path / "wrap.json"
    r = run_tmabpf(["--roofline", "--uprobe", f"{exe}:main", "--batch", "--json", str(out), "--", str(exe)], timeout=120)
    assert r.returncode == 0, r.stderr
    rl = load_json(out)["roofline"]
    assert rl["calls"] == 2 and rl["unreadable_calls"] == 2 and rl["shapes"] == [], rl


def test_without_roofs_work_is_still_reported(tmp_path):
    rl, own, r = roofline_run(tmp_path, "gemm", 1, extra=("--roofs", str(tmp_path / "none.json")))
    assert rl["roofs"] is None and "tmabpf roofs" in rl["roofs_missing"]
    row = only_row(rl)
    assert row["verdict"] == "no roofs" and row["roof_flop_per_s"] is None and row["flops"] == 2 * 1024 ** 3
    said = [l for l in r.stderr.splitlines() if "--roofline:" in l]
    assert len(said) == 1 and "no measured roofs" in said[0] and "sudo tmabpf roofs" in said[0], said


def test_foreign_roofs_are_refused(tmp_path, roofs):
    with open(roofs) as f:
        doc = json.load(f)
    doc["host"]["cpu"] = "Another CPU"
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(doc))
    rl, _, r = roofline_run(tmp_path, "gemm", 1, extra=("--roofs", str(foreign)))
    assert rl["roofs"] is None and only_row(rl)["verdict"] == "no roofs"
    said = [l for l in r.stderr.splitlines() if "--roofline:" in l]
    assert len(said) == 1 and "measured on another host" in said[0], said


def test_function_without_known_signature_is_named_once(tmp_path):
    rl, own, r = roofline_run(tmp_path, "mixed", 20, extra=("--uprobe", "libopenblas.so.0:sgemm_kernel*"))
    said = [l for l in r.stderr.splitlines() if "without a known GEMM/GEMV signature" in l]
    assert len(said) == 1 and "sgemm_kernel_" in said[0], r.stderr
    assert sum(per_function(rl)[f]["calls"] for f in own if f != "shapes") == 20


W32 = (2 * 32 ** 3, 4 * 3 * 32 * 32)  # gemmwork_window's sgemm: FLOPs and compulsory bytes (beta 0)


def windows_run(tmp_path, kids, how, extra=()):
    """gemmwork windows KIDS HOW under --per-call gemmwork_window: the report, the text and stderr."""
    out = tmp_path / f"w_{how}.json"
    r = run_tmabpf(["--roofline", "--per-call", f"{GEMMWORK}:gemmwork_window", "--batch", "--width", "200", "--json",
                    str(out), *extra, "--", GEMMWORK, "windows", str(kids), how], timeout=300,
                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    return rep, sorted(rep["iterations"], key=lambda it: it["start_ns"]), r


def test_per_token_windows_after_many_exited_processes_are_exact(tmp_path):
    """1100 processes (more than roof_procs' 1024) call a GEMM each and exit before the 5 windows: an
    exited process' totals go with it, so each window's work is its 3 GEMMs exactly (the old code
    kept every process' entry and showed the windows as 0 work)."""
    rep, its, r = windows_run(tmp_path, 1100, "exited")
    rl = rep["roofline"]
    assert [(it["roofline"]["calls"], it["roofline"]["flops"], it["roofline"]["bytes"]) for it in its] == \
        [(3, 3 * W32[0], 3 * W32[1])] * 5, its
    assert rl["procs_full_calls"] == 0 and rl["calls"] == 1100 + 15, rl["calls"]


def test_per_token_windows_past_roof_procs_are_unknown_not_zero(tmp_path):
    """1100 live processes hold 1024 totals when the windows run: the 76 others' GEMMs and the
    marker's 15 are counted as procs_full_calls (exactly), said in one line, and the windows' work
    is unknown (null), not 0; no per-token figure is made of them."""
    rep, its, r = windows_run(tmp_path, 1100, "alive")
    rl = rep["roofline"]
    assert len(its) == 5 and all(it["roofline"] is None for it in its), its
    assert rl["procs_full_calls"] == 1100 - 1024 + 15, rl["procs_full_calls"]
    assert rl["per_token"] is None, rl["per_token"]
    said = [l for l in r.stderr.splitlines() if "per-token windows have unknown work" in l]
    assert len(said) == 1 and "91 calls" in said[0] and "1024" in said[0], r.stderr
    assert "per token window" not in r.stdout, r.stdout


def test_per_token_is_the_windows_work_only(tmp_path):
    """per_token is the windows' own work over their count (the marker's process between its
    snapshots), not the run's rows (50 children's GEMMs outside any window, in other processes)
    over the windows; tokens/s is the windows' count over their wall time."""
    rep, its, r = windows_run(tmp_path, 50, "exited")
    rl = rep["roofline"]
    pt = rl["per_token"]
    assert sum(s["flops"] for s in rl["shapes"]) == 15 * W32[0] + 50 * 2 * 8 ** 3  # the rows have the children
    assert pt["flops"] == 3 * W32[0] and pt["bytes"] == 3 * W32[1], pt
    assert pt["tokens"] == 5 and pt["unknown_tokens"] == 0
    assert pt["tokens_per_s"] == pytest.approx(5e9 / sum(it["wall_ns"] for it in its), rel=1e-9)
    assert re.search(r"^per token \(5, --per-call\): 197 KFLOP, 36\.9 KB;", r.stdout, re.M), r.stdout


def test_zero_call_windows_are_left_out_of_the_spread(tmp_path):
    """Windows 1 and 3 call no GEMM: the spread (min / median / max) is of the 3 others' work, and
    the line says 2 were left out (the old code's minimum was 0)."""
    rep, its, r = windows_run(tmp_path, 0, "idle")
    assert [it["roofline"]["calls"] for it in its] == [3, 0, 3, 0, 3], its
    text = re.sub(r"\n  ", " ", r.stdout)
    m = re.search(r"^per token window \(min / median / max\): FLOP (\S+) / (\S+) / (\S+); B (\S+) / (\S+) / "
                  r"(\S+?)(?:[;( ]|$)", text, re.M)
    assert m, r.stdout
    assert [si(x) for x in m.group(1, 2, 3)] == pytest.approx([3 * W32[0]] * 3, rel=0.01), m.groups()
    assert [si(x) for x in m.group(4, 5, 6)] == pytest.approx([3 * W32[1]] * 3, rel=0.01), m.groups()
    assert "(2 without known calls left out)" in text, r.stdout


def test_svg_chart_points_are_the_json_shapes_and_it_renders(tmp_path, roofs):
    """--roofline=FILE.svg: one circle per shape at its intensity and FLOP/s (data-* attributes and
    the position on the log-log axes), the roofs as lines; rsvg-convert renders it."""
    import xml.etree.ElementTree as ET
    svg = tmp_path / "roofline.svg"
    rl, _, _ = roofline_run(tmp_path, "mixed", 200, extra=(f"--roofline={svg}", "--roofs", roofs))
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    x0, x1 = map(float, root.get("data-x-decades").split())
    y0, y1 = map(float, root.get("data-y-decades").split())
    width, height = float(root.get("width")), float(root.get("height"))
    circles = root.findall(f"{ns}circle")
    assert len(circles) == len(rl["shapes"]) == len({(s["function"], shape_key(s), s["pid"]) for s in rl["shapes"]})
    by_key = {(s["function"], shape_key(s).split(" ", 1)[1], s["pid"]): s for s in rl["shapes"]}
    xs = []
    for c in circles:
        s = by_key[(c.get("data-function"), c.get("data-shape"), int(c.get("data-pid")))]
        assert int(c.get("data-calls")) == s["calls"] and int(c.get("data-wall-ns")) == s["wall_ns"]
        assert float(c.get("data-intensity")) == pytest.approx(s["intensity"], rel=1e-6)
        assert float(c.get("data-flop-per-s")) == pytest.approx(s["flop_per_s"], rel=1e-6)
        # on the chart: log10 position between the plot's edges (80 px left, 30 right, 40 top, 60 bottom)
        fx = (math.log10(s["intensity"]) - x0) / (x1 - x0)
        fy = (math.log10(s["flop_per_s"]) - y0) / (y1 - y0)
        assert float(c.get("cx")) == pytest.approx(80 + fx * (width - 110), abs=0.02)
        assert float(c.get("cy")) == pytest.approx(height - 60 - fy * (height - 100), abs=0.02)
        xs.append(float(c.get("cx")))
    assert 0 < min(xs) and max(xs) < width
    # the biggest circle is the shape with the most time
    biggest = max(circles, key=lambda c: float(c.get("r")))
    assert int(biggest.get("data-wall-ns")) == max(s["wall_ns"] for s in rl["shapes"])
    roofs_drawn = {l.get("data-roof") for l in root.findall(f"{ns}line") if l.get("data-roof")}
    assert {"peak-fp32", "read-L1", "read-L2", "read-DRAM"} <= roofs_drawn, roofs_drawn
    if not shutil.which("rsvg-convert"):
        pytest.skip("rsvg-convert missing: make deps (librsvg2-bin)")
    png = tmp_path / "roofline.png"
    r = subprocess.run(["rsvg-convert", str(svg), "-o", str(png)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


DECODER = [os.path.join(BUILD, "workloads", "decoder"), "--layers", "2", "--gen", "12", "--json"]


def decoder_passes(cfg):
    """Each forward pass's (FLOPs, bytes) by the formulas, from the decoder's own shapes: the prefill
    over the prompt's rows, then one row per decode step (beta is not readable: C once)."""
    d, f, v, layers = cfg["dim"], cfg["ffn"], cfg["vocab"], cfg["layers"]
    passes = []
    for rows in [cfg["prompt"]] + [1] * cfg["gen"]:
        flops = nbytes = 0
        for m, n, k in [(rows, d, d)] * 4 + [(rows, f, d), (rows, d, f)]:
            flops += layers * 2 * m * n * k
            nbytes += layers * 4 * (m * k + k * n + m * n)
        flops += 2 * v * d
        nbytes += 4 * (v * d + d + v)
        passes.append((flops, nbytes))
    return passes


def dram_read(roofs, rl):
    """The DRAM read roof of the roofs file, for the threads the report's verdicts use."""
    with open(roofs) as fh:
        return [e["bytes_per_s"]["median"] for e in json.load(fh)["bandwidth"]
                if e["kind"] == "read" and e["level"] == "DRAM"
                and e["threads"] == ("all" if rl["roofs"]["threads"] > 1 else "1")][0]


def test_per_token_bytes_are_the_decoders_weights(tmp_path, roofs):
    """--per-call :forward on the OpenBLAS decoder: FLOPs and bytes per token are the sums of its
    calls' formulas (the weights read once per pass, the activations), exactly, and the bandwidth
    bound is the DRAM roof over them."""
    out = tmp_path / "dec.json"
    r = run_tmabpf(["--roofline", "--roofs", roofs, "--per-call", ":forward", "--batch", "--width", "200", "--json",
                    str(out), "--", *DECODER], timeout=300, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    cfg = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
    passes = decoder_passes(cfg)
    flops, nbytes = sum(p[0] for p in passes), sum(p[1] for p in passes)
    rl = load_json(out)["roofline"]
    pt = rl["per_token"]
    tokens = cfg["gen"] + 1
    assert pt["tokens"] == tokens and rl["calls"] == tokens * (6 * cfg["layers"] + 1)
    assert pt["flops"] == pytest.approx(flops / tokens, rel=1e-12)
    assert pt["bytes"] == pytest.approx(nbytes / tokens, rel=1e-12)
    assert pt["bandwidth_bound_tokens_per_s"] == pytest.approx(dram_read(roofs, rl) / pt["bytes"], rel=1e-9)
    assert pt["share"] == pytest.approx(pt["tokens_per_s"] / pt["bandwidth_bound_tokens_per_s"], rel=1e-9)
    assert re.search(r"^per token \(13, --per-call\): .* tokens/s the DRAM bandwidth allows$", r.stdout, re.M), r.stdout


def si(x):
    """units_si's text ("21.0M", "411M", "512") as a number."""
    m = re.fullmatch(r"([0-9.]+)([kMGTP]?)", x.replace("K", "k"))
    assert m, x
    return float(m.group(1)) * 1000 ** " kMGTP".index(m.group(2) or " ")


def test_per_token_windows_are_each_pass_exactly(tmp_path, roofs):
    """--per-call :forward with --roofline: each token window's FLOPs and bytes (summed in BPF between
    the marker's snapshots) are its own pass's formulas exactly - the prefill's, then each decode
    step's - and the windows add up to the run's shapes; each window's bound is the DRAM roof over its
    bytes and its share its achieved bandwidth over that roof; the text's min / median / max line
    gives the passes' figures within 80 columns.  Without roofs: the same work, no bound, and the
    one line that says how to measure them."""
    for with_roofs in (True, False):
        out = tmp_path / f"w{with_roofs}.json"
        r = run_tmabpf(["--roofline", "--roofs", roofs if with_roofs else str(tmp_path / "none.json"), "--per-call",
                        ":forward", "--batch", "--width", "80", "--json", str(out), "--", *DECODER], timeout=300,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        assert r.returncode == 0, r.stderr
        cfg = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
        passes = decoder_passes(cfg)
        rep = load_json(out)
        rl = rep["roofline"]
        its = sorted(rep["iterations"], key=lambda it: it["start_ns"])
        assert [(it["roofline"]["flops"], it["roofline"]["bytes"]) for it in its] == passes, its
        assert [it["roofline"]["calls"] for it in its] == [6 * cfg["layers"] + 1] * len(passes)
        assert sum(p[0] for p in passes) == sum(s["flops"] for s in rl["shapes"])
        assert sum(p[1] for p in passes) == sum(s["bytes"] for s in rl["shapes"])
        for it in its:
            w = it["roofline"]
            assert 0 < w["calls_wall_ns"] <= it["wall_ns"], it
            assert w["bytes_per_s"] == pytest.approx(w["bytes"] / it["wall_ns"] * 1e9, rel=1e-9)
            assert w["tokens_per_s"] == pytest.approx(1e9 / it["wall_ns"], rel=1e-9)
            if with_roofs:
                assert w["bandwidth_bound_tokens_per_s"] == pytest.approx(dram_read(roofs, rl) / w["bytes"], rel=1e-9)
                assert w["share"] == pytest.approx(w["bytes_per_s"] / dram_read(roofs, rl), rel=1e-9)
            else:
                assert w["bandwidth_bound_tokens_per_s"] is None and w["share"] is None, w
        lines = r.stdout.splitlines()
        at = next(i for i, l in enumerate(lines) if l.startswith("per token window"))
        para = [lines[at]] + [l for l in itertools.takewhile(lambda l: l.startswith("  "), lines[at + 1:])]
        assert all(len(l) <= 80 for l in para), para
        text = re.sub(r"\n  ", " ", r.stdout)  # wrapped lines joined
        m = re.search(r"^per token window \(min / median / max\): FLOP (\S+) / (\S+) / (\S+); B (\S+) / (\S+) / "
                      r"(\S+?)(;|$)", text, re.M)
        assert m, r.stdout
        for col, got in ((0, m.group(1, 2, 3)), (1, m.group(4, 5, 6))):
            want = sorted(p[col] for p in passes)
            assert [si(g) for g in got] == pytest.approx([want[0], want[len(want) // 2], want[-1]], rel=0.01), (got, want)
        shares = sorted(100 * it["roofline"]["share"] for it in its) if with_roofs else None
        sm = re.search(r"share of its bandwidth bound ([0-9.]+) / ([0-9.]+) / ([0-9.]+) %", text)
        if with_roofs:
            assert sm and [float(x) for x in sm.groups()] == pytest.approx(
                [shares[0], shares[len(shares) // 2], shares[-1]], abs=0.051), (sm and sm.groups(), shares)
        else:
            assert not sm and "(no roofs: no bandwidth bound)" in text, r.stdout
            assert r.stderr.count("run 'sudo tmabpf roofs'") == 1, r.stderr
