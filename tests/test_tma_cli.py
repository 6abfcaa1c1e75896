"""The TMA engine through the CLI: list, --dry-run (no PMU needed), analyze of perf stat CSVs.
The formulas and encodings themselves are checked against perf 6.12 in tests/test_tma_perf.py."""
import json
import os

import pytest

from conftest import ROOT, run_tmabpf

DATA = os.path.join(ROOT, "tests", "data")
CPUS = ["skylake", "skylakex", "cascadelakex", "icelakex", "sapphirerapids", "amdzen4", "amdzen5",
        "neoverse-v1", "neoverse-n2", "neoverse-v2"]


def test_list_shows_host_and_recipes():
    r = run_tmabpf(["list"])
    assert r.returncode == 0, r.stderr
    assert "host CPU:" in r.stdout and "sapphirerapids" in r.stdout


@pytest.mark.parametrize("cpu", CPUS)
def test_dry_run_every_cpu(cpu):
    r = run_tmabpf(["--dry-run", "--cpu", cpu, "--tma=1"])
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if l.startswith("[")]
    assert lines, r.stdout
    assert all("config=" in l and "need=" in l and "leader=" in l for l in lines)
    assert sum("leader=yes" in l for l in lines) >= 1


def test_dry_run_user_events_with_libpfm_and_raw_names():
    r = run_tmabpf(["--dry-run", "--cpu", "skylakex", "-e",
                    "core_power.lvl2_turbo_license,r01c2,cpu/event=0xa3,umask=0x14,cmask=20/"])
    assert r.returncode == 0, r.stderr
    out = r.stdout.lower()
    assert "config=0x2028" in out  # CORE_POWER.LVL2_TURBO_LICENSE: event 0x28, umask 0x20
    assert "config=0x1c2" in out and "config=0x140014a3" in out


def test_dry_run_without_recipe_lists_software_defaults(tmp_path):
    """A CPU without a recipe (Rocket Lake, family 6 model 167), whatever this host is."""
    info = tmp_path / "cpuinfo"
    info.write_text("vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 167\nstepping\t: 1\n")
    r = run_tmabpf(["--dry-run"], env=dict(os.environ, TMABPF_CPUINFO=str(info)))
    assert r.returncode == 0, r.stderr
    assert "CPU (none)" in r.stdout and "task-clock" in r.stdout and "page-faults" in r.stdout, r.stdout


def test_analyze_llm_decode_profile_json():
    r = run_tmabpf(["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "skylakex", "--tma=3", "--json"])
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["tma_backend_bound"] > 50 and m["tma_dram_bound"] > m["tma_l3_bound"]
    total = m["tma_frontend_bound"] + m["tma_bad_speculation"] + m["tma_backend_bound"] + m["tma_retiring"]
    assert abs(total - 100) < 0.5


def test_analyze_text_names_bottleneck_path():
    r = run_tmabpf(["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "skylakex", "--tma=3"])
    assert r.returncode == 0, r.stderr
    assert "Backend_Bound" in r.stdout and "›" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["analyze", "/nonexistent.csv", "--cpu", "skylakex"], "nonexistent"),
    (["analyze", os.path.join(DATA, "bad_line.csv"), "--cpu", "skylakex"], "line"),
    (["analyze", os.path.join(DATA, "skx_llm_decode.csv"), "--cpu", "pentium4"], "pentium4"),
    (["--dry-run", "--cpu", "pentium4"], "unknown CPU"),
])
def test_tma_cli_errors(args, needle):
    r = run_tmabpf(args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_no_pmu_run_says_tma_skipped_and_has_no_hardware_numbers(tmp_path):
    out = str(tmp_path / "r.json")
    r = run_tmabpf(["--tma=2", "-d", "0.3", "--json", out, "--quiet"])
    rep = json.load(open(out))
    if rep["host"]["pmu"]:
        pytest.skip("host has a PMU")
    assert r.returncode == 0, r.stderr
    assert "hardware counters unavailable" in r.stderr
    assert all(t["tma"] == {} for t in rep["threads"])
    assert all(e["type"] == "software" for e in rep["events"])
