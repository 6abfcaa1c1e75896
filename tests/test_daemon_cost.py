# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The daemon's own cost in /metrics: its BPF maps' kernel memory against bpftool's account of
the maps it holds, its whole memory (resident + maps) within 64 MiB, its user-space CPU per
interval against its own process_cpu_seconds_total."""
import json
import os
import shutil
import subprocess
import time

import pytest

from daemon_util import Daemon, select

MEMORY_BUDGET = 64 * 1024 * 1024


def held_map_ids(pid):
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("map_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def value(samples, name):
    ((_, v),) = select(samples, name)
    return v


def test_memory_and_cpu_exported():
    bpftool = shutil.which("bpftool")
    if not bpftool:
        pytest.skip("bpftool is not installed (make deps installs it)")
    with Daemon("-I", "500") as d:
        time.sleep(3)
        m1 = d.metrics()
        ids = held_map_ids(d.p.pid)
        maps = json.loads(subprocess.run([bpftool, "map", "show", "-j"], capture_output=True, text=True,
                                         timeout=60).stdout)
        time.sleep(3)
        m2 = d.metrics()
        assert d.stop() == 0
    truth = sum(m["bytes_memlock"] for m in maps if m["id"] in ids)
    assert value(m1, "tmabpf_bpf_map_memory_bytes") == truth > 0
    whole = value(m1, "process_resident_memory_bytes") + value(m1, "tmabpf_bpf_map_memory_bytes")
    assert whole <= MEMORY_BUDGET, f"resident + BPF maps: {whole / 2**20:.1f} MiB"
    # one interval's ratio is at most the whole CPU the process used between the two scrapes
    # (plus one interval at 100 %: the ratio's interval may start before the first scrape)
    ratio = value(m2, "tmabpf_user_cpu_ratio")
    used = value(m2, "process_cpu_seconds_total") - value(m1, "process_cpu_seconds_total")
    assert 0 < ratio * 0.5 <= used + 0.5 * 0.05
    assert ratio < 0.5
