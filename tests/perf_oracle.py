# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""perf itself as the oracle for TMA formulas and event encodings.

perf 6.12 (installed by `make deps`) carries every CPU's pmu-events tables and
prints them for any CPU when PERF_CPUID names it, even on a host without a PMU:
  PERF_CPUID=GenuineIntel-6-55-4 perf list -j --details   -> metrics (MetricExpr, groups, ScaleUnit)
Event encodings are listed only for a PMU that exists; a stand-in sysfs with the
vendor's core-PMU format files (SYSFS_PATH, perf's own override of the sysfs
mount point) makes perf list them (Encoding: cpu/event=0xc0,umask=0x1,.../).
Nothing here reads files outside the repository or the temporary directory."""
import json
import os
import re
import shutil
import subprocess
from functools import lru_cache

# recipe -> PERF_CPUID in perf's conventions (x86: vendor-family-MODEL-stepping, family
# decimal, model/stepping hex; arm64: the MIDR as 0x%016x), and the cpuinfo lines that
# tmabpf's own detection reads for the same CPU
CPUS = {
    "skylake": ("GenuineIntel-6-5E-3", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 94\nstepping\t: 3\n"),
    "skylakex": ("GenuineIntel-6-55-4", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 4\n"),
    "cascadelakex": ("GenuineIntel-6-55-7", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nstepping\t: 7\n"),
    "icelakex": ("GenuineIntel-6-6A-6", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\nstepping\t: 6\n"),
    "sapphirerapids": ("GenuineIntel-6-8F-8", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nstepping\t: 8\n"),
    "emeraldrapids": ("GenuineIntel-6-CF-2", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\nstepping\t: 2\n"),
    "amdzen4": ("AuthenticAMD-25-11-1", "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nstepping\t: 1\n"),
    "amdzen5": ("AuthenticAMD-26-02-1", "vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nstepping\t: 1\n"),
    "neoverse-v1": ("0x00000000410fd400", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n"),
    "neoverse-n2": ("0x00000000410fd490", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd49\n"),
    "neoverse-v2": ("0x00000000410fd4f0", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n"),
}

# the core PMU's sysfs format files, as the kernel's x86 and arm64 drivers publish them
FORMATS = {
    "intel": {"event": "config:0-7", "umask": "config:8-15", "edge": "config:18", "pc": "config:19",
              "any": "config:21", "inv": "config:23", "cmask": "config:24-31", "in_tx": "config:32",
              "in_tx_cp": "config:33", "offcore_rsp": "config1:0-63", "ldlat": "config1:0-15",
              "frontend": "config1:0-23"},
    "amd": {"event": "config:0-7,32-35", "umask": "config:8-15", "edge": "config:18", "inv": "config:23",
            "cmask": "config:24-31"},
    "arm": {"event": "config:0-15", "long": "config1:0"},
}


def perf_missing():
    """None when perf 6.12 is here, else why the oracle cannot run."""
    if not shutil.which("perf"):
        return "perf is not installed (make deps installs linux-perf 6.12 from bookworm-backports)"
    r = subprocess.run(["perf", "version"], capture_output=True, text=True)
    if r.returncode or not re.search(r"perf version 6\.12\.", r.stdout):
        return f"the oracle is perf 6.12 (make deps); this host has '{r.stdout.strip() or r.stderr.strip()}'"
    return None


def perf_version():
    return subprocess.run(["perf", "version"], capture_output=True, text=True).stdout.strip()


def _perf_list(cpuid, sysfs=None):
    env = dict(os.environ, PERF_CPUID=cpuid)
    if sysfs:
        env["SYSFS_PATH"] = sysfs
    r = subprocess.run(["perf", "list", "-j", "--details"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def _level(name, groups):
    for g in groups:
        m = re.fullmatch(r"(?:tma_L|PipelineL|TopdownL)(\d)(?:_group)?", g)
        if m and not name.startswith("tma_info_"):
            return int(m.group(1))
    return 0


@lru_cache(maxsize=None)
def metrics(cpuid):
    """{name: {"expr", "level", "parent", "scale"}} from perf's table for cpuid (empty when perf has none)."""
    ms = {}
    for e in _perf_list(cpuid):
        if "MetricName" not in e:
            continue
        m = ms.setdefault(e["MetricName"], {"expr": e["MetricExpr"], "groups": set(),
                                            "unit": e.get("ScaleUnit", "1")})
        if e.get("MetricGroup"):
            m["groups"].add(e["MetricGroup"])
    for name, m in ms.items():
        m["level"] = _level(name, m["groups"])
        ps = [g[:-6] for g in m["groups"] if g.endswith("_group") and g[:-6] in ms and _level(g[:-6], ms[g[:-6]]["groups"])]
        m["parent"] = ps[0] if m["level"] > 1 and ps else ""
        s = re.match(r"[0-9.e+-]+", m["unit"])
        m["scale"] = float(s.group(0)) if s else 1.0
    return ms


def write_metrics_tsv(cpuid, path):
    with open(path, "w") as f:
        for name, m in sorted(metrics(cpuid).items()):
            f.write(f"{name}\t{m['level']}\t{m['parent']}\t{m['scale']:g}\t{m['expr']}\n")


def vendor_of(cpuid):
    return "intel" if cpuid.startswith("GenuineIntel") else "amd" if cpuid.startswith("AuthenticAMD") else "arm"


@lru_cache(maxsize=None)
def _events(cpuid, tmpdir):
    vendor = vendor_of(cpuid)
    sysfs = os.path.join(tmpdir, "sysfs-" + vendor)
    pmu = os.path.join(sysfs, "bus", "event_source", "devices", "cpu" if vendor != "arm" else "armv8_pmuv3_0")
    os.makedirs(os.path.join(pmu, "format"), exist_ok=True)
    with open(os.path.join(pmu, "type"), "w") as f:
        f.write("4\n")
    with open(os.path.join(pmu, "cpus"), "w") as f:
        f.write("0\n")
    for term, fmt in FORMATS[vendor].items():
        with open(os.path.join(pmu, "format", term), "w") as f:
            f.write(fmt + "\n")
    out = {}
    for e in _perf_list(cpuid, sysfs):
        enc = e.get("Encoding", "")
        m = re.fullmatch(r"[a-z0-9_]+/(.*)/", enc)
        if e.get("EventType") == "Kernel PMU event" and m and "EventName" in e:
            out[e["EventName"].lower()] = {"terms": m.group(1), "desc": e.get("BriefDescription", "")}
    return out


def events(cpuid, tmpdir):
    """{event name (lower case): {"terms": "event=0xc0,umask=0x1,...", "desc"}} from perf's table."""
    return _events(cpuid, str(tmpdir))


def write_events_tsv(cpuid, tmpdir, path):
    with open(path, "w") as f:
        for name, e in sorted(events(cpuid, tmpdir).items()):
            f.write(f"{name}\t{e['terms']}\n")


def terms(s):
    """'event=0xcd,umask=0x1,ldlat=0x80' -> {"event": 0xcd, ...}"""
    out = {}
    for t in s.split(","):
        k, _, v = t.partition("=")
        out[k] = int(v, 0) if v else 1
    return out
