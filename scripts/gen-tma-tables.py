#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write user/tma/tma_perf_tables.c: perf's own TMA trees, as tmabpf's recipes hold them.

For each x86 recipe, ask the installed perf (6.12, `make deps`) for its metric
table with PERF_CPUID naming that CPU (perf's convention: vendor-family-MODEL-
stepping, family decimal, model and stepping hex) and keep every node of the
top-down tree (Intel: tma_L1_group..tma_L6_group; AMD: PipelineL1/L2) plus the
helper metrics those nodes reference, with perf's expressions verbatim, and
perf's FLOPs metric (FLOPS_METRIC) where perf has one: the --roofline's measured
FLOPs with a PMU (tma.h tma_flops_named).

  scripts/gen-tma-tables.py [-o user/tma/tma_perf_tables.c]

tests/test_tma_perf.py checks the result against the same perf at test time:
the node set, levels, parents, scales and, on random and edge-case counts,
every value (so a perf update or a hand edit cannot go unnoticed).
"""
import argparse
import json
import os
import re
import subprocess
import sys

# recipe name, C identifier, PERF_CPUID (perf's x86 mapfile convention).  Not here: Granite
# Rapids (GenuineIntel-6-AD-1): perf 6.12's table for it has events but no metrics.
CPUS = [
    ("skylake", "skl", "GenuineIntel-6-5E-3"),
    ("skylakex", "skx", "GenuineIntel-6-55-4"),
    ("cascadelakex", "clx", "GenuineIntel-6-55-7"),
    ("icelakex", "icx", "GenuineIntel-6-6A-6"),
    ("sapphirerapids", "spr", "GenuineIntel-6-8F-8"),
    ("emeraldrapids", "emr", "GenuineIntel-6-CF-2"),
    ("amdzen4", "zen4", "AuthenticAMD-25-11-1"),
    ("amdzen5", "zen5", "AuthenticAMD-26-02-1"),
]

# TMA's usual order at the top of the tree; deeper nodes follow perf's names
ORDER = ["frontend_bound", "fetch_latency", "fetch_bandwidth", "bad_speculation", "branch_mispredicts",
         "machine_clears", "backend_bound", "memory_bound", "l1_bound", "l2_bound", "l3_bound", "dram_bound",
         "mem_bandwidth", "mem_latency", "pmm_bound", "store_bound", "core_bound", "smt_contention", "retiring",
         "light_operations", "heavy_operations",
         # AMD: children carry the parent's name
         "latency", "bandwidth", "mispredicts", "pipeline_restarts", "memory", "cpu", "fastpath", "microcode"]
UPPER = {"itlb", "dtlb", "stlb", "ms", "lcp", "dsb", "mite", "lsd", "fb", "sq", "dram", "mem", "pmm", "alu",
         "fp", "cisc", "amx", "cpu", "smt", "x87", "l1", "l2", "l3", "tlb", "avx", "sse", "vnni", "int"}
SPECIAL = {"icache": "ICache", "4k": "4K"}
# perf's retired floating-point operations per second (FP_ARITH_INST_RETIRED.* weighted by the
# lanes of each width, FMA counted twice), over duration_time: Intel's tables have it; perf 6.12's
# AMD (Zen 4, Zen 5) tables have no FLOPs metric
FLOPS_METRIC = "tma_info_system_gflops"


def perf_table(cpuid):
    env = dict(os.environ, PERF_CPUID=cpuid)
    out = subprocess.run(["perf", "list", "-j", "--details"], env=env, capture_output=True, text=True, check=True)
    metrics = {}
    for e in json.loads(out.stdout):
        if "MetricName" not in e:
            continue
        m = metrics.setdefault(e["MetricName"], dict(e, groups=set()))
        if e.get("MetricGroup"):
            m["groups"].add(e["MetricGroup"])
    return metrics


def level_of(m):
    for g in m["groups"]:
        r = re.fullmatch(r"(?:tma_L|PipelineL|TopdownL)(\d)(?:_group)?", g)
        if r and not m["MetricName"].startswith("tma_info_"):
            return int(r.group(1))
    return 0


def scale_of(m):
    r = re.match(r"[0-9.e+-]+", m.get("ScaleUnit", "1"))
    return float(r.group(0)) if r else 1.0


def label_of(name, parent):
    n = name[4:] if name.startswith("tma_") else name
    if parent and not name.startswith("tma_") and n.startswith(parent + "_"):
        n = re.sub(r"^(by|from)_", "", n[len(parent) + 1:])
    return "_".join(SPECIAL.get(w, w.upper() if w in UPPER else w[:1].upper() + w[1:]) for w in n.split("_"))


def ids_of(expr):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", expr))


def tree(metrics):
    nodes = {n: m for n, m in metrics.items() if level_of(m)}
    parent = {}
    for n, m in nodes.items():
        ps = [g[:-6] for g in m["groups"] if g.endswith("_group") and g[:-6] in nodes]
        if level_of(m) > 1 and len(ps) != 1:
            sys.exit(f"gen-tma-tables: {n}: expected one parent group, got {ps}")
        parent[n] = ps[0] if level_of(m) > 1 else None
    helpers, todo = set(), [m["MetricExpr"] for m in nodes.values()]
    while todo:
        for i in ids_of(todo.pop()):
            if i in metrics and i not in nodes and i not in helpers:
                helpers.add(i)
                todo.append(metrics[i]["MetricExpr"])

    def key(n):
        b = n[4:] if n.startswith("tma_") else n
        if parent[n] and not n.startswith("tma_"):
            b = re.sub(r"^(by|from)_", "", b[len(parent[n]) + 1:])
        return (ORDER.index(b) if b in ORDER else len(ORDER), n)
    order = []

    def walk(p):
        for c in sorted((n for n in nodes if parent[n] == p), key=key):
            order.append(c)
            walk(c)
    walk(None)
    return order, parent, sorted(helpers)


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", default=os.path.join(os.path.dirname(__file__), "..", "user", "tma", "tma_perf_tables.c"))
    a = ap.parse_args()
    ver = subprocess.run(["perf", "version"], capture_output=True, text=True, check=True).stdout.strip()
    out = ["// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause",
           "/*",
           " * perf's top-down trees, generated by scripts/gen-tma-tables.py from",
           f" * `perf list -j --details` of {ver} with PERF_CPUID set per CPU.",
           " * Every node of the tree (Intel tma_L1..L6_group, AMD PipelineL1/L2) and the",
           " * helper metrics the nodes reference, and perf's FLOPs metric where perf has",
           " * one (--roofline's measured FLOPs); expressions are perf's, verbatim.",
           " * Do not edit: re-run the generator (tests/test_tma_perf.py compares this",
           " * file with the installed perf).",
           " */",
           '#include <stddef.h>',
           '#include "tma/tma_recipes.h"',
           ""]
    for name, ident, cpuid in CPUS:
        metrics = perf_table(cpuid)
        order, parent, helpers = tree(metrics)
        flops = FLOPS_METRIC if FLOPS_METRIC in metrics else None
        if flops and flops not in helpers:
            if ids_of(metrics[flops]["MetricExpr"]) & set(metrics):
                sys.exit(f"gen-tma-tables: {name}: {flops} references other metrics; add them as helpers")
            helpers = sorted(helpers + [flops])
        if not order:
            sys.exit(f"gen-tma-tables: perf knows no top-down tree for PERF_CPUID={cpuid} ({name})")
        out.append(f"/* {name}: PERF_CPUID={cpuid}, {len(order)} nodes, {len(helpers)} helpers */")
        out.append(f"static const struct tma_metric {ident}_metrics[] = {{")
        for n in order + helpers:
            m = metrics[n]
            lvl = level_of(m)
            p = parent.get(n)
            lab = cstr(label_of(n, p)) if lvl else "NULL"
            out.append(f"\t{{ {cstr(n)}, {lab}, {cstr(p) if p else 'NULL'}, {lvl}, {scale_of(m):g}, "
                       f"{cstr(m['MetricExpr'])} }},")
        out.append("};")
        out.append(f"const struct tma_formulation tma_perf_{ident} = {{")
        out.append(f"\t.name = \"perf\", .desc = \"perf 6.12 metrics (PERF_CPUID={cpuid})\", .m = {ident}_metrics,")
        out.append(f"\t.n = (int)(sizeof({ident}_metrics) / sizeof({ident}_metrics[0])),")
        if flops:
            out.append(f"\t.flops = {cstr(flops)},")
        out.append("};")
        out.append("")
    with open(a.o, "w") as f:
        f.write("\n".join(out))
    print(f"gen-tma-tables: wrote {a.o} from {ver}")


if __name__ == "__main__":
    main()
