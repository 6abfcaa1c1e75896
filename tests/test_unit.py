# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Runs the C unit-test programs (build/tests/test_*): each must exit 0.  The same programs built
with ASan + UBSan against the fuzzers' sanitized objects (build/unit-san/test_*, make unit-san;
-fno-sanitize-recover: any report ends the program) must too, and print no sanitizer report."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD, ROOT


def programs(folder):
    bins = sorted(glob.glob(os.path.join(BUILD, folder, "test_*")))
    return [b for b in bins if os.access(b, os.X_OK) and not b.endswith(".d")]


UNIT_BINS = programs("tests")
SAN_BINS = programs("unit-san")
# a report ends the program with its stack; leaks are not checked (test programs keep what they
# load to the end)
SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=86",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87")
SAN_REPORT = ("runtime error:", "ERROR: AddressSanitizer", "ERROR: UndefinedBehaviorSanitizer")


def run_unit(binary, env=None):
    r = subprocess.run([binary], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert r.returncode == 0, f"{os.path.basename(binary)} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    assert " passed" in r.stdout, "unit program printed no summary"
    return r


@pytest.mark.parametrize("binary", UNIT_BINS, ids=[os.path.basename(b) for b in UNIT_BINS])
def test_unit_program(binary):
    run_unit(binary)


@pytest.mark.parametrize("binary", SAN_BINS, ids=[os.path.basename(b) for b in SAN_BINS])
def test_unit_program_sanitized(binary):
    r = run_unit(binary, SAN_ENV)
    assert not any(s in r.stderr for s in SAN_REPORT), r.stderr[-4000:]


def test_unit_programs_exist():
    assert UNIT_BINS, "no unit-test programs were built"
    assert [os.path.basename(b) for b in SAN_BINS] == [os.path.basename(b) for b in UNIT_BINS], \
        "the sanitized unit programs (make unit-san) are missing or differ from build/tests/"
