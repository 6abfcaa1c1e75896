# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The tests need nothing outside the repository: no tracked file points outside it, and a
`git clone` of the committed tree into an empty directory (nothing beside it, nothing above it
but empty directories) builds and passes the unit programs and the TMA tests that once read
reference files beside the repository."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

OUTSIDE = re.compile(r"\.\./shared|/work/shared|pmu-reference|TMABPF_PMU_REF")


def tracked_files():
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"{ROOT} is not a git checkout: {r.stderr.strip()}")
    return [f for f in r.stdout.split("\0") if f]


def test_no_tracked_file_reads_outside_the_repository():
    hits = []
    for f in tracked_files():
        if f == "tests/test_fresh_clone.py":
            continue
        try:
            with open(os.path.join(ROOT, f), errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    if OUTSIDE.search(line):
                        hits.append(f"{f}:{n}: {line.strip()[:120]}")
        except (IsADirectoryError, FileNotFoundError):
            continue
    assert not hits, "files that point outside the repository:\n" + "\n".join(hits)


def test_fresh_clone_builds_and_passes(tmp_path):
    """Costs about 30 s on 2 cores: a clone, `make unit build/tmabpf`, the unit programs, the
    TMA pytest files.  What is tested is HEAD: commit first."""
    tracked_files()
    repo = tmp_path / "empty" / "parent" / "tmabpf"
    repo.parent.mkdir(parents=True)
    r = subprocess.run(["git", "clone", "-q", ROOT, str(repo)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(repo.parent)) == ["tmabpf"] and os.listdir(repo.parent.parent) == ["parent"]
    r = subprocess.run(["make", "-j2", "unit", "build/tmabpf"], cwd=repo, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    failed = []
    for b in sorted(os.listdir(repo / "build" / "tests")):
        path = repo / "build" / "tests" / b
        if not b.startswith("test_") or b.endswith(".d") or not os.access(path, os.X_OK):
            continue
        u = subprocess.run([str(path)], cwd=repo, capture_output=True, text=True, timeout=300)
        if u.returncode or " passed" not in u.stdout:
            failed.append(f"{b}: {u.stdout[-1500:]} {u.stderr[-500:]}")
    assert not failed, "\n".join(failed)
    r = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_tma_cli.py",
                        "tests/test_tma_perf.py", "tests/test_memsamples.py::test_dry_run_intel_matches_perf",
                        "tests/test_memsamples.py::test_dry_run_amd_ibs"],
                       cwd=repo, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    shutil.rmtree(repo, ignore_errors=True)
