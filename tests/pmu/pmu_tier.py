#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""make test-pmu: tmabpf on a real PMU driver (Linux's armv8_pmuv3) under
QEMU's arm64 emulation with exact instruction counting (-icount shift=0),
checked against exact ground truth (tests/pmu/gt_arm64.S).

  tests/pmu/pmu_tier.py --build build/arm64 --cache .cache/arm64 [--keep DIR]

Fetches (once, cached) Debian's arm64 kernel, busybox, perf and bpftool;
builds an initramfs with the arm64 tmabpf and the workload; boots it twice
(-smp 1 for exact counts, -smp 2 for migrations); prints one PASS/FAIL line
per check with its numbers, then "N passed, N failed".  See
docs/emulated-pmu.md for what is proven here and the constants used.
"""
import argparse
import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pmu_checks  # noqa: E402  the workload's model, the guest's steps and their checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNEL_PKG = "linux-image-6.12.*+deb12-arm64-unsigned"
GUEST_PKGS = ["busybox-static", "linux-perf/bookworm-backports", "bpftool/bookworm-backports"]
QEMU = ["qemu-system-aarch64", "-M", "virt", "-cpu", "max,pauth-impdef=on", "-m", "2G", "-icount", "shift=0",
        "-nographic", "-no-reboot", "-nic", "none"]
APPEND = "console=ttyAMA0 loglevel=1 panic=-1"

# ---- host side: fetch, initramfs, boot ----

def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def fetch(cache):
    """The kernel Image and the guest's packages, fetched once into cache."""
    fetch_py = os.path.join(ROOT, "scripts", "fetch_arm64.py")
    kdir, gdir = os.path.join(cache, "kernel"), os.path.join(cache, "guest")
    if not os.path.exists(os.path.join(kdir, ".stamp")):
        shutil.rmtree(kdir, ignore_errors=True)
        out = sh([fetch_py, "--only", "./boot", cache, kdir, KERNEL_PKG])
        open(os.path.join(kdir, ".stamp"), "w").write(out)
    if not os.path.exists(os.path.join(gdir, ".stamp")):
        shutil.rmtree(gdir, ignore_errors=True)
        out = sh([fetch_py, "--closure", cache, gdir] + GUEST_PKGS)
        open(os.path.join(gdir, ".stamp"), "w").write(out)
    vmlinuz = [f for f in os.listdir(os.path.join(kdir, "boot")) if f.startswith("vmlinuz-")]
    return os.path.join(kdir, "boot", vmlinuz[0]), gdir, open(os.path.join(kdir, ".stamp")).read().strip()


def initramfs(out, build, cache, guest, steps):
    steps_sh = os.path.join(os.path.dirname(out), "steps.sh")
    with open(steps_sh, "w") as f:
        f.write(steps)
    files = [f"init={HERE}/guest_init.sh", f"steps.sh={steps_sh}", f"bin/busybox={guest}/bin/busybox",
             "bin/sh=@busybox", "proc/", "sys/", "tmp/", "dev/",
             f"usr/bin/tmabpf={build}/tmabpf", f"{pmu_checks.GT.lstrip('/')}={build}/pmu/gt_arm64",
             f"usr/bin/perf={guest}/usr/bin/perf", f"usr/sbin/bpftool={guest}/usr/sbin/bpftool"]
    sh([sys.executable, os.path.join(HERE, "initramfs.py"), out, "--root", guest,
        "--root", os.path.join(cache, "sysroot"), "--lib-dir", "/usr/aarch64-linux-gnu/lib"] + files)


def boot(vmlinuz, initrd, smp, log, timeout):
    """Boot, wait for poweroff; returns {name: bytes} of the guest's /out."""
    t0 = time.time()
    with open(log, "wb") as lf:
        p = subprocess.run(QEMU + ["-smp", str(smp), "-kernel", vmlinuz, "-initrd", initrd, "-append", APPEND],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=timeout)
        lf.write(p.stdout)
    text = p.stdout.decode(errors="replace")
    m = re.search(r"=====TMABPF-OUT-BEGIN=====\r?\n(.*?)=====TMABPF-OUT-END=====", text, re.S)
    if not m:
        raise RuntimeError(f"the -smp {smp} guest sent no results (console log: {log}; last lines: "
                           f"{text[-600:]!r})")
    b64 = "".join(l.strip() for l in m.group(1).splitlines() if re.fullmatch(r"[A-Za-z0-9+/=]+", l.strip()))
    files = {}
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(b64)), mode="r:gz") as tf:
        for ti in tf:
            if ti.isfile():
                files[ti.name.lstrip("./")] = tf.extractfile(ti).read()
    files["_host_seconds"] = str(time.time() - t0).encode()
    return files


# ---- checks ----

class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail):
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        return ok


class Out:
    """A boot's /out: step NAME's stdout, stderr, exit status, files."""

    def __init__(self, files):
        self.f = files

    def text(self, name):
        return self.f.get(name, b"").decode(errors="replace")

    def rc(self, step):
        t = self.text(step + ".rc").strip()
        return int(t) if t else None

    def json(self, name):
        return json.loads(self.f[name]) if name in self.f else None

    def ran(self, step, res, ok_rc=(0,)):
        rc = self.rc(step)
        if rc in ok_rc:
            return True
        res.check(step, False, f"exit status {rc}; stderr: {self.text(step + '.err').strip()[-800:]!r}")
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--keep", help="keep the initramfs, console logs and guest outputs here")
    a = ap.parse_args()
    t_start = time.time()
    res = Results()
    work = a.keep or tempfile.mkdtemp(prefix="tmabpf-pmu-")
    os.makedirs(work, exist_ok=True)
    vmlinuz, guest, kver = fetch(a.cache)
    print(f"test-pmu: kernel {kver}; fetched in {time.time() - t_start:.1f} s", flush=True)
    for smp, steps, checks in pmu_checks.BOOTS:
        initrd = os.path.join(work, f"initrd-smp{smp}.cpio.gz")
        initramfs(initrd, a.build, a.cache, guest, steps)
        t0 = time.time()
        files = boot(vmlinuz, initrd, smp, os.path.join(work, f"console-smp{smp}.log"), 420)
        print(f"test-pmu: -smp {smp} guest ran in {time.time() - t0:.1f} s", flush=True)
        if a.keep:
            d = os.path.join(work, f"out-smp{smp}")
            os.makedirs(d, exist_ok=True)
            for n, b in files.items():
                open(os.path.join(d, n), "wb").write(b)
        for c in checks:
            try:
                c(Out(files), res)
            except Exception as e:	# a check that crashes is a failed check, with its reason
                res.check(c.__name__, False, f"{type(e).__name__}: {e}")
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"test-pmu: {time.time() - t_start:.1f} s in all", flush=True)
    print(f"{res.passed} passed, {res.failed} failed")
    sys.exit(1 if res.failed else 0)


if __name__ == "__main__":
    main()
