# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Runs the C unit-test programs (build/tests/test_*): each must exit 0."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD, ROOT

UNIT_BINS = sorted(glob.glob(os.path.join(BUILD, "tests", "test_*")))
UNIT_BINS = [b for b in UNIT_BINS if os.access(b, os.X_OK) and not b.endswith(".d")]


@pytest.mark.parametrize("binary", UNIT_BINS, ids=[os.path.basename(b) for b in UNIT_BINS])
def test_unit_program(binary):
    r = subprocess.run([binary], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, f"{os.path.basename(binary)} failed:\n{r.stdout[-4000:]}\n{r.stderr[-2000:]}"
    assert " passed" in r.stdout, "unit program printed no summary"


def test_unit_programs_exist():
    assert UNIT_BINS, "no unit-test programs were built"
