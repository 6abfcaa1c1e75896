# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""tmabpf check: one line per capability, the missing ones with their fix, and
on a PMU host the calibrated loop against perf stat (the emulated PMU of
test_pmu.py runs that part)."""
import os
import re
import subprocess

from wrapped_text import joined_lines
from conftest import TMABPF

ITEMS = ["kernel", "privileges", "perf_event_paranoid", "BTF", "PMU driver", "NMI watchdog", "other agents",
         "uprobe_multi links", "uprobe session links", "recipe"]


def run_check(*args):
    return subprocess.run([TMABPF, "check", *args], capture_output=True, text=True, timeout=300)


def test_check_reports_every_item():
    r = run_check()
    lines = joined_lines(r.stdout)
    status = {}
    for l in lines:
        m = re.match(r"^(OK|WARN|FAIL|SKIP|PASS|INFO) +([^:]+):", l)
        if m:
            status[m.group(2)] = m.group(1)
    assert all(i in status for i in ITEMS), r.stdout
    fails, warns = (sum(l.startswith(s) for l in lines) for s in ("FAIL", "WARN"))
    assert lines[-1] == f"{fails} FAIL, {warns} WARN", r.stdout
    pmu = os.path.exists("/sys/bus/event_source/devices/cpu/type") or \
        any(os.path.exists(f"/sys/bus/event_source/devices/{p}/type") for p in ("cpu_core", "armv8_pmuv3"))
    if not pmu:
        # no PMU: said on one line with what is missing and the fix; the rest still reported
        pmu_line = [l for l in lines if l.startswith("FAIL") and "PMU driver: none" in l]
        assert len(pmu_line) == 1 and "fix:" in pmu_line[0], r.stdout
        assert ".;" not in pmu_line[0], pmu_line  # the kernel's sentence quoted without its full stop
        assert "SKIP  calibrated loop against perf stat: needs a PMU" in lines
        assert r.returncode == 1
    else:
        assert [l for l in lines if l.startswith("PASS") and "instructions:u" in l], r.stdout
    assert status["BTF"] == "OK" and status["kernel"] == "OK"


def test_check_bad_usage():
    for args, want in ((["--bogus"], "unknown argument --bogus"), (["--loops", "0"], "--loops wants a count > 0"),
                       (["--cpu", "nonesuch"], "unknown CPU 'nonesuch'")):
        r = run_check(*args)
        assert r.returncode == 2 and want in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_calibrated_loop_helper():
    """The loop the check counts: a child that runs it and exits 0 (its count is checked on a PMU)."""
    r = run_check("--calibrate", "1000")
    assert r.returncode == 0 and r.stdout == ""
