# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--quiet (issue 32, part 4): nothing on stderr but errors.  The same run without --quiet says
its notes and warnings there; with it stderr is empty and the warnings are still in the JSON's
"warnings"; an error is still said in one line."""
from conftest import load_json, run_tmabpf

RUN = ["--sample", "--offcpu-stacks", "--uprobe", "libc.so.6:getpid", "--", "sh", "-c", "sleep 0.2"]


def test_quiet_says_only_errors(tmp_path):
    loud_json, quiet_json = str(tmp_path / "loud.json"), str(tmp_path / "quiet.json")
    loud = run_tmabpf(["--batch", "--json", loud_json, *RUN])
    assert loud.returncode == 0, loud.stderr
    said = [l[len("tmabpf: "):] for l in loud.stderr.splitlines()]
    assert len(said) >= 3, loud.stderr  # the uprobe and sampling notes at least
    quiet = run_tmabpf(["--quiet", "--json", quiet_json, *RUN])
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout == "", quiet.stdout
    loud_kept, kept = load_json(loud_json)["warnings"], load_json(quiet_json)
    assert all(w in said for w in loud_kept), (loud_kept, said)
    if not kept["host"]["pmu"]:  # a warning this host always has: kept, not said
        assert any(w.startswith("hardware counters unavailable") for w in kept["warnings"]), kept["warnings"]
    bad = run_tmabpf(["--quiet", "-e", "task-clok", "-d", "1"])
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "did you mean 'task-clock'?" in bad.stderr
