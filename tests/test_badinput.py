"""Bad input: one clear error line on stderr and exit code 2, nothing left attached."""
import subprocess

import pytest

from conftest import TMABPF, run_tmabpf


def error_lines(stderr):
    return [l for l in stderr.splitlines() if l.strip()]


def assert_usage_error(r, needle):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = error_lines(r.stderr)
    assert len(lines) == 1, f"expected one line, got: {r.stderr!r}"
    assert needle in lines[0], lines[0]


def missing_pid():
    pid = 4000000
    while subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode == 0:
        pid -= 1
    return pid


def test_missing_pid():
    assert_usage_error(run_tmabpf(["-p", str(missing_pid()), "-d", "1"]), "no such process")


def test_missing_tid():
    assert_usage_error(run_tmabpf(["-t", str(missing_pid()), "-d", "1"]), "no such thread")


@pytest.mark.parametrize("spec,needle", [
    ("bogus-event", "unknown event"),
    ("page-faults,,task-clock", "empty event"),
    ("page-faults,", "empty event"),
    ("msr/nosuchterm/", "no term or event"),
    ("nosuchpmu/event=1/", "unknown PMU"),
    ("msr/event=zz/", "bad value"),
    ("r12zz", "bad raw event"),
    ("/", "malformed"),
])
def test_malformed_event(spec, needle):
    assert_usage_error(run_tmabpf(["-e", spec, "-d", "1"]), needle)


@pytest.mark.parametrize("args,needle", [
    (["--no-such-option"], "unknown option"),
    (["-d", "abc"], "bad duration"),
    (["-d", "-1"], "bad duration"),
    (["-I", "0"], "bad interval"),
    (["-p", "12x"], "bad pid"),
    (["-p", "1", "-a"], "choose one target"),
    (["-d"], "needs a value"),
])
def test_bad_options(args, needle):
    assert_usage_error(run_tmabpf(args), needle)


def test_command_not_found():
    assert_usage_error(run_tmabpf(["--", "/nonexistent/cmd"]), "cannot execute")
    assert_usage_error(run_tmabpf(["--", "no-such-command-xyz"]), "cannot execute")


def test_command_not_executable(tmp_path):
    f = tmp_path / "notexec"
    f.write_text("#!/bin/sh\n")
    f.chmod(0o644)
    assert_usage_error(run_tmabpf(["--", str(f)]), "cannot execute")


def test_not_root_without_capabilities():
    r = subprocess.run(["setpriv", "--bounding-set=-all", "--inh-caps=-all", TMABPF, "-d", "1"],
                       capture_output=True, text=True, timeout=30)
    assert_usage_error(r, "insufficient privilege")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", TMABPF, "-d", "1"],
                       capture_output=True, text=True, timeout=30)
    assert_usage_error(r, "need root")


def test_help_and_version():
    r = run_tmabpf(["--help"])
    assert r.returncode == 0 and "usage: tmabpf" in r.stdout
    r = run_tmabpf(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("tmabpf ")
