# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The build's shape (issue 30, part 7): an object waits only for the skeletons it includes, so a
BPF edit rebuilds its loaders, not every object; a fresh build still makes a skeleton before the
objects that include it; the unit tests of tma/ and model/ link their folders' static libraries
only, so the linker proves that they reach neither pmu/ nor collect/ nor libbpf/libpfm4."""
import glob
import os
import re
import shutil
import subprocess

from conftest import BUILD, ROOT


def make_n(*args, cwd=ROOT):
    r = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout


def includers(header):
    """The user sources that #include header."""
    pat = re.compile(r'^#include "' + re.escape(header) + '"', re.M)
    return {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "user", "*", "*.c"))
            if pat.search(open(f, encoding="utf-8", errors="replace").read())}


def compiled(out):
    return set(re.findall(r" -c (user/\S+\.c) ", out))


def test_bpf_edit_rebuilds_only_its_skeletons_includers():
    """make -n -W (as if the BPF source had changed): the objects rebuilt are those that include its
    skeleton (plus lib/version.c, whose build-info header is remade on every make)."""
    for prog in ("tasks", "threads"):
        out = make_n("-W", f"bpf/{prog}.bpf.c", "build/tmabpf")
        assert f"bpf/{prog}.bpf.c" in out, out[-2000:]
        want = includers(f"{prog}.skel.h")
        got = compiled(out) - {"user/lib/version.c"}
        assert want and got == want, f"{prog}.bpf.c rebuilds {sorted(got)}; includers {sorted(want)}"
        assert len(got) < 10, got


def test_fresh_build_makes_the_skeleton_first(tmp_path):
    """A tree with no build/ yet: the loader's compile comes after its skeleton's generation."""
    for d in ("user", "bpf", "proto", "mk", "vmlinux"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d)
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path / "Makefile")
    out = make_n("build/user/collect/tasks_loader.o", "build/user/output/pprof.o", cwd=tmp_path)
    for gen, user in (("gen skeleton build/bpf/tasks.bpf.o", "-c user/collect/tasks_loader.c"),
                      ("protoc-c", "-c user/output/pprof.c")):
        assert gen in out and user in out, out[-3000:]
        assert out.index(gen) < out.index(user), out[-3000:]


def test_make_demo_after_make_rebuilds_nothing():
    """After make (the suite runs on a built tree), make -q says "up to date" and make demo's build
    step compiles and links nothing (issue 32 part 6: make demo after make -j2 recompiled 152 of 159
    objects; then the build-info header's FORCE rule had make -n relink tmabpf and every unit test)."""
    r = subprocess.run(["make", "-q", "--no-print-directory", "all"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, "make -q all: not up to date after make\n" + make_n("all")[-2000:]
    out = make_n("demo")
    built = [ln for ln in out.splitlines() if re.search(r" -c | -o build/|gen skeleton|protoc-c|go-md2man", ln)]
    assert not built, "make demo after make rebuilds:\n" + "\n".join(built[:10])
    assert "scripts/demo.sh" in out, out[-2000:]


def test_a_fresh_build_keeps_what_it_generated(tmp_path):
    """A first build in a tree with no build/ yet, then make -q: the BPF object and skeleton a loader
    was built from are kept (make deleted them as intermediates, so the next make rebuilt them and
    every object including them)."""
    for d in ("user", "bpf", "proto", "mk", "vmlinux"):
        shutil.copytree(os.path.join(ROOT, d), tmp_path / d)
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path / "Makefile")
    target = "build/user/collect/tasks_loader.o"
    r = subprocess.run(["make", "--no-print-directory", target], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert (tmp_path / "build" / "bpf" / "tasks.bpf.o").exists(), r.stdout[-2000:]
    r = subprocess.run(["make", "-q", "--no-print-directory", target], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, make_n(target, cwd=tmp_path)[-2000:]


PURE_TESTS = ["test_tma", "test_tma_cache", "test_tma_expr", "test_thread_table", "test_profile"]


def test_tma_and_model_unit_tests_link_without_pmu_collect_libbpf():
    for t in PURE_TESTS:
        out = make_n("-W", f"tests/unit/{t}.c", f"build/tests/{t}")
        link = [ln for ln in out.splitlines() if f"tests/unit/{t}.c" in ln and f"-o build/tests/{t}" in ln]
        assert len(link) == 1, out[-2000:]
        words = link[0].split()
        bad = [w for w in words if re.match(r"build/user/(pmu|collect|run|daemon|cmd)/", w) or
               w in ("-lbpf", "-lpfm") or "libtmabpf-pmu" in w]
        assert not bad, f"{t} links {bad}: {link[0]}"
        assert any(w.startswith("build/libtmabpf-") for w in words), link[0]
        # and the program built from it calls nothing of libbpf or libpfm4
        undef = subprocess.run(["nm", "-u", os.path.join(BUILD, "tests", t)], capture_output=True, text=True,
                               timeout=60).stdout
        assert not re.search(r"\b(bpf_\w+|libbpf_\w+|pfm_\w+)\b", undef), f"{t}: {undef}"


# what the TMA engine may call outside tma/: string and memory work, its cache's mutex, lib's
# err_set (formats an error string); no stdio, no environment, no file, no libpfm4 (issue 30 part 4)
ENGINE_MAY_CALL = {
    "calloc", "malloc", "realloc", "free", "strdup", "memcpy", "memmove", "memset", "memcmp", "snprintf",
    "strcmp", "strncmp", "strcasecmp", "strncasecmp", "strlen", "strchr", "strrchr", "strstr", "strcspn",
    "strtok_r", "strtod", "strtoull", "strtol", "strtoul", "qsort", "__ctype_b_loc", "__ctype_tolower_loc",
    "__ctype_toupper_loc", "__popcountdi2", "__stack_chk_fail", "pthread_mutex_lock", "pthread_mutex_unlock",
    "fabs", "fmax", "fmin", "pow", "log", "exp", "sqrt", "floor", "ceil", "err_set",
}


def symbols(obj, *flags):
    out = subprocess.run(["nm", *flags, obj], capture_output=True, text=True, timeout=60).stdout
    return {ln.split()[-1] for ln in out.splitlines() if ln.split()}


def test_tma_engine_calls_no_io_and_no_library_with_global_state():
    """Every object of tma/ calls only tma/ itself and pure libc: tma_compute cannot reach stdio, setenv
    or libpfm4 (the host's facts are read in pmu/tma_env_host.c, for the plan's caller)."""
    objs = glob.glob(os.path.join(BUILD, "user", "tma", "*.o"))
    assert len(objs) >= 6, objs
    defined = set().union(*(symbols(o, "--defined-only") for o in objs))
    for o in objs:
        bad = symbols(o, "-u") - defined - ENGINE_MAY_CALL
        assert not bad, f"{os.path.relpath(o, BUILD)} calls {sorted(bad)}"
