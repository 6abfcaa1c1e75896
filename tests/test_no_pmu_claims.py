# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""On a host without a PMU (issue 32, part 3), tmabpf claims only what the host keeps: --dry-run
says which events a real run would open here and which not (checked against the events a real
run then counts), an -e list none of whose events opens is an error (exit 2, one line), one where
some open runs with those and names the dropped ones, and 'check' as user nobody SKIPs what it
could not try, naming the missing privilege (not "kernel < 6.6" on a 6.18 kernel)."""
import os
import re
import subprocess

import pytest

from wrapped_text import joined, joined_lines
from conftest import TMABPF, load_json, run_tmabpf

PMU = any(os.path.exists(f"/sys/bus/event_source/devices/{p}/type") for p in ("cpu", "cpu_core", "armv8_pmuv3"))
pytestmark = pytest.mark.skipif(PMU, reason="the host has a PMU: these are the claims of a host without one")


def dry_run(*args):
    r = run_tmabpf(["--dry-run", *args])
    assert r.returncode == 0, r.stderr
    out = joined(r.stdout)  # (its lines wrap to 80 columns)
    planned = re.findall(r"^\[\d+\] (\S+) ", out, re.M)
    here = re.search(r"^here: (\d+) of (\d+) would open on this host", out, re.M)
    assert here and int(here.group(2)) == len(planned), out
    refused = re.findall(r"^  event '([^']+)' \(type \d+ config \S+\) cannot be opened: (.*)$", out, re.M)
    assert int(here.group(1)) == len(planned) - len(refused), out
    return out, planned, [n for n, _ in refused]


def test_dry_run_plans_what_a_run_opens_here(tmp_path):
    """Plain --dry-run: the software events a real run counts here, no recipe events, TMA off said;
    -e cycles,task-clock: cycles would not open (why given), and the real run counts exactly the
    rest."""
    out, planned, refused = dry_run()
    assert planned == ["task-clock", "page-faults"] and not refused, out
    assert "tma: off on this host: no core PMU" in out and "--cpu NAME" in out, out
    out, planned, refused = dry_run("-e", "cycles,task-clock")
    assert planned == ["cycles", "task-clock"] and refused == ["cycles"], out
    assert "hardware counters are unavailable on this host" in out, out
    js = str(tmp_path / "r.json")
    r = run_tmabpf(["-e", "cycles,task-clock", "-d", "0.3", "--quiet", "--json", js])
    assert r.returncode == 0, r.stderr
    assert [e["name"] for e in load_json(js)["events"]] == [p for p in planned if p not in refused]
    # --cpu plans a recipe for another machine: listed, and said not to open here
    out, planned, refused = dry_run("--cpu", "skylakex", "--tma=1")
    assert planned and refused == planned and "planned for the CPU --cpu names" in out, out


@pytest.mark.parametrize("events", ["cycles", "cycles,instructions", "{cycles,instructions}"])
def test_no_event_opens_is_an_error(events):
    r = run_tmabpf(["-e", events, "-d", "1"])
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and f"-e {events}: none of" in lines[0] and "cannot be opened" in lines[0], r.stderr


def test_some_events_open_run_with_those(tmp_path):
    js = str(tmp_path / "r.json")
    r = run_tmabpf(["-e", "cycles,task-clock", "--json", js, "--batch", "--", "sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
    assert r.returncode == 0, r.stderr
    rep = load_json(js)
    assert [e["name"] for e in rep["events"]] == ["task-clock"]
    dropped = [w for w in rep["warnings"] if w.startswith("event 'cycles'") and "continuing without it" in w]
    assert len(dropped) == 1 and dropped[0] in r.stderr, rep["warnings"]
    assert sum(t["counters"]["task-clock"] for t in rep["threads"]) > 0


def test_check_as_nobody_skips_with_the_missing_privilege():
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", TMABPF, "check"],
                       capture_output=True, text=True, timeout=120)
    lines = joined_lines(r.stdout)
    assert r.returncode == 1 and "kernel <" not in r.stdout, r.stdout
    assert any(l.startswith("FAIL  privileges:") and "CAP_BPF" in l for l in lines), r.stdout
    for item in ("uprobe_multi links", "uprobe session links"):
        line = next(l for l in lines if item in l)
        assert line.startswith(f"SKIP  {item}: not tried: insufficient privilege") and "sudo" in line, line
    agents = next(l for l in lines if "other agents" in l)
    assert agents.startswith("SKIP  other agents: not seen:") and "CAP_SYS_PTRACE" in agents, agents
