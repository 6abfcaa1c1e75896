# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Short libFuzzer runs of the CSV and event-spec parsers (longer runs: build/fuzz/X -max_total_time=N)."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD, ROOT

FUZZERS = sorted(f for f in glob.glob(os.path.join(BUILD, "fuzz", "fuzz_*")) if not f.endswith(".d"))
SECONDS = os.environ.get("TMABPF_FUZZ_SECONDS", "15")


@pytest.mark.parametrize("fuzzer", FUZZERS, ids=[os.path.basename(f) for f in FUZZERS])
def test_fuzz_short_run(fuzzer, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds = [os.path.join(ROOT, "tests", "data")] if "csv" in fuzzer else []
    r = subprocess.run([fuzzer, f"-max_total_time={SECONDS}", "-rss_limit_mb=2048", str(corpus), *seeds],
                       capture_output=True, text=True, timeout=int(SECONDS) + 120)
    assert r.returncode == 0, r.stderr[-3000:]


def test_fuzzers_built():
    assert len(FUZZERS) >= 2
