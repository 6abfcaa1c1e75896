# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The emulated-PMU tier (make test-pmu, docs/emulated-pmu.md): tmabpf's arm64
build on Linux's armv8_pmuv3 driver under QEMU with exact instruction counting,
checked against an assembly workload's exact counts, perf stat, and the
daemon's /metrics.  Its own checks print PASS/FAIL lines and "N passed, N
failed"; this test runs it and collects that line."""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# every check tests/pmu/pmu_checks.py runs (a check that cannot run counts as failed)
MIN_CHECKS = 43


def test_emulated_pmu_tier():
    for tool in ("qemu-system-aarch64", "aarch64-linux-gnu-gcc"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} missing (make deps installs qemu-system-arm and gcc-aarch64-linux-gnu)")
    r = subprocess.run(["make", "--no-print-directory", "test-pmu"], cwd=ROOT, capture_output=True, text=True,
                       timeout=1200)
    out = r.stdout + r.stderr
    if "fetch-arm64: apt-get update" in out:
        pytest.skip("Debian's archive unreachable: the arm64 kernel and packages cannot be fetched "
                    "(they are cached under .cache/arm64 once fetched)")
    m = re.search(r"^(\d+) passed, (\d+) failed$", r.stdout, re.M)
    assert m, f"make test-pmu printed no summary (exit {r.returncode}):\n{out[-3000:]}"
    failed = [l for l in r.stdout.splitlines() if l.startswith("FAIL")]
    assert int(m.group(2)) == 0 and not failed, "\n".join(failed)
    assert int(m.group(1)) >= MIN_CHECKS, f"only {m.group(1)} checks ran:\n{r.stdout[-3000:]}"
    assert r.returncode == 0, out[-2000:]
