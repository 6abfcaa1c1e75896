# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""TMA recipes against perf itself (perf 6.12, installed by `make deps`): the trees and formulas of
every recipe, the Ice Lake-X / Sapphire / Emerald Rapids general-counter formulation, and every event
encoding --dry-run prints.  perf supplies its tables (tests/perf_oracle.py); the comparison runs
in build/tests/tma_oracle with the project's evaluator.  Nothing outside the repository is read."""
import os
import re
import subprocess

import pytest

import perf_oracle
from conftest import BUILD, run_tmabpf

ORACLE = os.path.join(BUILD, "tests", "tma_oracle")
RECIPES = list(perf_oracle.CPUS)
SETS = os.environ.get("TMABPF_ORACLE_SETS", "100")


@pytest.fixture(scope="module", autouse=True)
def need_perf():
    why = perf_oracle.perf_missing()
    if why:
        pytest.skip(why)


def perf_table_or_skip(cpu):
    cpuid = perf_oracle.CPUS[cpu][0]
    if not perf_oracle.metrics(cpuid):
        pytest.skip(f"{perf_oracle.perf_version()} knows no metrics for PERF_CPUID={cpuid} ({cpu}): "
                    f"perf's x86_64 build carries only the x86 pmu-events tables; run this test on an arm64 host")
    return cpuid


def oracle(*args):
    r = subprocess.run([ORACLE, *args], capture_output=True, text=True, timeout=600)
    summary = [l for l in r.stdout.splitlines() if l.startswith("summary ")]
    assert r.returncode == 0 and summary, r.stdout[-6000:] + r.stderr[-2000:]
    print(r.stdout[-3000:])
    return dict(kv.split("=") for kv in summary[-1].split()[3:])


@pytest.mark.parametrize("cpu", RECIPES)
def test_perf_cpuid_names_the_recipe(cpu, tmp_path):
    """The PERF_CPUID used for a recipe is the CPU tmabpf's own detection maps to that recipe."""
    info = tmp_path / "cpuinfo"
    info.write_text(perf_oracle.CPUS[cpu][1])
    r = run_tmabpf(["list"], env=dict(os.environ, TMABPF_CPUINFO=str(info)))
    assert r.returncode == 0, r.stderr
    assert re.search(rf"^recipe: {re.escape(cpu)} ", r.stdout, re.M), r.stdout


@pytest.mark.parametrize("cpu", RECIPES)
def test_formulas_equal_perf(cpu, tmp_path):
    """Every node of perf's tree is in the recipe (level, parent, scale), and on random and edge-case
    counts under every #SMT_on/#core_wide/#has_pmem setting the engine's tree equals perf's
    expressions, node by node, computable exactly when perf's compute_ids finds every event."""
    cpuid = perf_table_or_skip(cpu)
    tsv = tmp_path / "metrics.tsv"
    perf_oracle.write_metrics_tsv(cpuid, tsv)
    s = oracle("formulas", cpu, str(tsv), SETS)
    assert int(s["mismatches"]) == 0 and int(s["nodes"]) >= 4 and int(s["compared"]) > 1000, s


@pytest.mark.parametrize("cpu", ["icelakex", "sapphirerapids", "emeraldrapids"])
def test_general_counter_formulation_equals_perf(cpu, tmp_path):
    """The BPF path's general-counter nodes equal perf's perf-metrics (slots, topdown-*) formulas on
    counts where each general-counter event counts what its perf-metrics fraction counts."""
    cpuid = perf_table_or_skip(cpu)
    tsv = tmp_path / "metrics.tsv"
    perf_oracle.write_metrics_tsv(cpuid, tsv)
    s = oracle("gc", cpu, str(tsv), SETS)
    assert int(s["mismatches"]) == 0 and int(s["compared"]) > 100, s


@pytest.mark.parametrize("cpu", RECIPES)
def test_measured_flops_equal_perf(cpu, tmp_path):
    """--roofline's measured FLOPs with a PMU: the recipe carries perf's FLOPs metric
    (tma_info_system_gflops, FP_ARITH_INST_RETIRED.* weighted by lanes) exactly where perf has one,
    with perf's events, and on random counts and durations the engine's FLOPs equal perf's GFLOP/s
    x 1e9 x duration (perf 6.12 has none for Zen 4 and Zen 5: the engine has none either)."""
    cpuid = perf_table_or_skip(cpu)
    tsv = tmp_path / "metrics.tsv"
    perf_oracle.write_metrics_tsv(cpuid, tsv)
    s = oracle("flops", cpu, str(tsv), SETS)
    assert int(s["mismatches"]) == 0, s
    assert (s["metric"] == "none") == ("tma_info_system_gflops" not in perf_oracle.metrics(cpuid)), s
    if s["metric"] != "none":
        assert int(s["compared"]) > 100 and int(s["events"]) >= 4, s


FLOPS_COMBOS = {"scalar": ("scalar_single", "scalar_double"), "4_flops": ("128b_packed_single", "256b_packed_double"),
                "8_flops": ("256b_packed_single", "512b_packed_double")}


@pytest.mark.parametrize("cpu", [c for c in RECIPES if not c.startswith("neoverse")])
def test_roofline_plans_perf_flops_events(cpu, tmp_path):
    """--roofline on a CPU with perf's FLOPs metric plans its events (each alone), with perf's own
    encodings; on one without (Zen 4, Zen 5), one line says the FLOPs are the analytic ones."""
    cpuid = perf_table_or_skip(cpu)
    r = run_tmabpf(["--dry-run", "--width", "10000", "--cpu", cpu, "--roofline"])  # its lines whole
    assert r.returncode == 0, r.stderr
    planned = dict(re.findall(r"^\[\d+\] (\S+) .* (event=\S+) need=--roofline measured FLOPs", r.stdout, re.M))
    m = perf_oracle.metrics(cpuid).get("tma_info_system_gflops")
    if not m:
        assert not planned and r.stderr.count("no FLOPs metric of perf 6.12") == 1, r.stdout + r.stderr
        return
    want = {e for e in re.findall(r"[A-Z][A-Z0-9_.]+", m["expr"]) if "." in e}
    assert set(planned) == want, (sorted(planned), sorted(want))
    perf_events = perf_oracle.events(cpuid, tmp_path)
    for name, terms in planned.items():
        ours = perf_oracle.terms(terms)
        theirs = perf_oracle.terms(perf_events[name.lower()]["terms"])
        base, _, umask = name.lower().partition(".")
        if umask in FLOPS_COMBOS:
            # a combined umask is the OR of its parts' (perf 6.12's Skylake-X and Cascade Lake-X tables
            # give 8_FLOPS umask 0x18, 4_FLOPS's, so perf stat's tma_info_system_gflops counts 4_FLOPS
            # twice there and misses 256-bit single and 512-bit double: tmabpf counts the parts)
            parts = [perf_oracle.terms(perf_events[f"{base}.{p}"]["terms"]) for p in FLOPS_COMBOS[umask]]
            theirs = dict(theirs, umask=parts[0]["umask"] | parts[1]["umask"])
            assert all(p["event"] == theirs["event"] for p in parts), (name, parts)
        assert all(ours.get(k, 0) == v for k, v in theirs.items() if k != "period"), (name, terms, theirs)


@pytest.mark.parametrize("cpu", RECIPES)
def test_encodings_equal_perf_or_libpfm4(cpu, tmp_path):
    """Every attr --dry-run plans (every level, SMT and watchdog setting) against perf's event table
    (event, umask, cmask, edge, inv, any, ldlat), else libpfm4; an event neither knows is a named skip."""
    cpuid = perf_oracle.CPUS[cpu][0]
    tsv = tmp_path / "events.tsv"
    perf_oracle.write_events_tsv(cpuid, tmp_path, tsv)
    s = oracle("encodings", cpu, str(tsv))
    assert int(s["bad"]) == 0, s
    if int(s["skipped"]):
        assert int(s["perf"]) + int(s["libpfm4"]) == 0, s
        pytest.skip(f"{s['skipped']} of {s['events']} {cpu} events are in neither perf's nor libpfm4's tables "
                    f"here (the x86_64 builds carry no Arm events)")
