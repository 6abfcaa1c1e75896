#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""What a probed call costs on arm64 by the class of the probed instruction, and whether a return
probe survives past paciasp: tests/pmu/entry_cost_arm64.c in the emulated-PMU guest (the kernel and
QEMU of `make test-pmu`; -icount shift=0, so the guest's ns are instructions retired at every
level, kernel included, and exact).  A uprobe and a uretprobe (tracefs) on a function's first or
second instruction, N calls; each case twice in one boot, in both orders (the first probes of a
boot cost twice as much).  Prints instructions per probed call over the unprobed call, both runs,
and for a run that failed its exit status and the hits.  Answers issue 29's "arm64: bti c / paciasp, measure before you add them"
(docs/emulated-pmu.md)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "pmu"))
import pmu_tier  # noqa: E402  the guest's kernel, packages, initramfs and boot

N = 20000
CASES = [("f_stp", 0), ("f_bti", 0), ("f_bti", 4), ("f_bti_nop", 0), ("f_bti_nop", 4), ("f_bti_adrp", 0),
         ("f_bti_adrp", 4), ("f_bti_b", 0), ("f_bti_b", 4), ("f_bti_mov", 0), ("f_bti_mov", 4), ("f_nop", 0),
         ("f_pac", 0), ("f_pac", 4)]
WHAT = {("f_stp", 0): "stp x29, x30 (first)", ("f_bti", 0): "bti c", ("f_bti", 4): "stp after bti c",
        ("f_bti_nop", 0): "bti c (nop next)", ("f_bti_nop", 4): "nop after bti c",
        ("f_bti_adrp", 0): "bti c (adrp next)", ("f_bti_adrp", 4): "adrp after bti c",
        ("f_bti_b", 0): "bti c (b next)", ("f_bti_b", 4): "b after bti c",
        ("f_bti_mov", 0): "bti c (mov next)", ("f_bti_mov", 4): "mov after bti c", ("f_nop", 0): "nop (first)",
        ("f_pac", 0): "paciasp", ("f_pac", 4): "stp after paciasp"}


def main():
    cache = os.path.join(ROOT, ".cache", "arm64")
    vmlinuz, guest, kver = pmu_tier.fetch(cache)
    work = tempfile.mkdtemp(prefix="arm64-entry-cost-")
    prog = os.path.join(work, "m")
    subprocess.run(["aarch64-linux-gnu-gcc", "-O2", "-static", "-march=armv8.5-a", "-o", prog,
                    os.path.join(ROOT, "tests", "pmu", "entry_cost_arm64.c")], check=True)
    nm = subprocess.run(["aarch64-linux-gnu-nm", prog], check=True, capture_output=True, text=True).stdout
    load = subprocess.run(["aarch64-linux-gnu-readelf", "-lW", prog], check=True, capture_output=True, text=True).stdout
    seg = next(l.split() for l in load.splitlines() if l.strip().startswith("LOAD") and "E" in l.split()[-2:])
    base = int(seg[2], 16) - int(seg[1], 16)	# vaddr - file offset of the text segment
    syms = {l.split()[2]: int(l.split()[0], 16) - base for l in nm.splitlines() if " f_" in l}
    order = CASES[:-1] + list(reversed(CASES[:-1])) + [CASES[-1]]	# the crash case last
    steps = ["T=/sys/kernel/tracing", f"step base /m all {N}"]
    for i, (fn, d) in enumerate(order):
        off, name = syms[fn] + d, f"c{i}"
        steps += [f"echo 'p:ac/e{i} /m:{off:#x}' >> $T/uprobe_events", f"echo 'r:ac/r{i} /m:{off:#x}' >> $T/uprobe_events",
                  "echo 1 > $T/events/ac/enable", f"step {name} /m {fn} {N}",
                  f"cat $T/uprobe_profile > /out/{name}.profile", "echo 0 > $T/events/ac/enable",
                  "echo > $T/uprobe_events"]
    steps_sh = os.path.join(work, "steps.sh")
    open(steps_sh, "w").write("\n".join(steps) + "\n")
    initrd = os.path.join(work, "initrd")
    pmu_tier.sh([sys.executable, os.path.join(pmu_tier.HERE, "initramfs.py"), initrd, "--root", guest,
                 f"init={pmu_tier.HERE}/guest_init.sh", f"steps.sh={steps_sh}", f"bin/busybox={guest}/bin/busybox",
                 "bin/sh=@busybox", "proc/", "sys/", "tmp/", "dev/", f"m={prog}"])
    out = {os.path.basename(k): v.decode(errors="replace") for k, v in
           pmu_tier.boot(vmlinuz, initrd, 1, os.path.join(work, "console.log"), 900).items()}
    bare = {l.split()[0]: float(l.split()[1]) for l in out.get("base.out", "").splitlines()}
    got = {}
    for i, (fn, d) in enumerate(order):
        rc = int(out.get(f"c{i}.rc", "-1").strip() or -1)
        line = out.get(f"c{i}.out", "").split()
        hits = [int(l.split()[2]) for l in out.get(f"c{i}.profile", "").splitlines() if len(l.split()) > 2]
        got.setdefault((fn, d), []).append((float(line[1]) - bare[fn] if line else None, rc, hits))
    print(f"guest kernel {kver}; {N} calls a case; instructions per probed call (entry + return) over the "
          "unprobed call, each case twice")
    for case in CASES:
        runs = got[case]
        costs = [c for c, rc, _ in runs if c is not None and rc == 0]
        status = ", ".join(f"exit {rc} after {h} hits" for c, rc, h in runs if rc != 0)
        print(f"  {WHAT[case]:24s} {' '.join(f'{c:6.0f}' for c in costs) or '     -':14s} "
              f"{'(' + status + ')' if status else ''}")


if __name__ == "__main__":
    main()
