# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Bad input: one clear error line on stderr and exit code 2, nothing left attached."""
import os
import subprocess
import time

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
    (["-d", "0x10"], "bad duration"),  # strtod read it as 16 s
    (["-d", "inf"], "bad duration"),
    (["--"], "needs a COMMAND"),  # ran system-wide
    (["-d", "0.2", "--"], "needs a COMMAND"),
    (["--json", "same", "--pprof", "same", "--sample"], "are one file"),  # the report lost the profile
    (["--json", "./same", "--folded", "same", "--sample"], "are one file"),
    (["--max-rate", "0x10", "--uprobe", "libc.so.6:malloc"], "bad --max-rate"),
])
def test_bad_options(args, needle):
    assert_usage_error(run_tmabpf(args), needle)


def test_daemon_hex_duration():
    """'daemon -d 0x10' was 16 s."""
    assert_usage_error(run_tmabpf(["daemon", "-d", "0x10"]), "bad duration")


def memory_cgroup():
    """(directory of our memory cgroup, its limit file): cgroup v1's memory controller, else v2."""
    v2 = None
    with open("/proc/self/cgroup") as f:
        for line in f.read().splitlines():
            _, ctrl, path = line.split(":", 2)
            if "memory" in ctrl.split(","):
                return f"/sys/fs/cgroup/memory{path}", "memory.limit_in_bytes"
            if ctrl == "":
                v2 = (f"/sys/fs/cgroup{path}", "memory.max")
    return v2


def test_memcg_hint_names_the_cgroup_limit():
    """Maps too large for the memory cgroup: the hint said 'raise RLIMIT_MEMLOCK', which the kernel no
    longer applies (BPF memory is charged to the memory cgroup since 5.11); it names the limit."""
    parent, limit = memory_cgroup()
    cg = os.path.join(parent, f"tmabpf-memcg-{os.getpid()}")
    try:
        os.mkdir(cg)
        with open(os.path.join(cg, limit), "w") as f:
            f.write(str(64 << 20))
    except OSError as e:
        pytest.skip(f"cannot make a memory cgroup under {parent}: {e}")
    try:
        r = subprocess.run(["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec "$@"', "sh", TMABPF, "--quiet",
                            "--max-threads", "4000000", "-d", "0.2"], capture_output=True, text=True, timeout=60)
    finally:
        os.rmdir(cg)
    (line,) = [l for l in r.stderr.splitlines() if "error:" in l]
    assert r.returncode != 0 and "Cannot allocate memory" in line, (r.returncode, r.stderr)
    assert f"{cg}/{limit} (now {64 << 20})" in line and "RLIMIT_MEMLOCK does not apply" in line, line


def test_uprobe_on_another_architectures_library(tmp_path):
    """An aarch64 library (here: libm with e_machine 183) was probed on x86-64 at its aarch64 offsets,
    in the middle of unrelated instructions; now refused with one line naming the machine."""
    if os.uname().machine != "x86_64":
        pytest.skip("the check's foreign library is made for an x86-64 host")
    lib = tmp_path / "libm-aarch64.so.6"
    data = bytearray(open("/lib/x86_64-linux-gnu/libm.so.6", "rb").read())
    data[18:20] = (183).to_bytes(2, "little")  # EM_AARCH64
    lib.write_bytes(data)
    assert_usage_error(run_tmabpf(["--uprobe", f"{lib}:sin", "-d", "0.2"]),
                       "is built for ELF machine 183 (aarch64), not this x86-64 host's 62")


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


# The table of bad input: every case one line on stderr and exit 2, before anything is loaded.
BAD = [
    # outputs
    (["--json"], "option '--json' needs a value"),
    (["--json=", "-d", "1"], "--json: empty file name"),
    (["--json", "/dev/full", "-d", "1"], "is a character device"),
    (["--json", "/", "-d", "1"], "is a directory"),
    (["--json", "/nonexistent-dir/x.json", "-d", "1"], "cannot create a file in /nonexistent-dir"),
    (["--trace"], "option '--trace' needs a value"),
    (["--sample", "-d", "1", "--folded", "/"], "--folded /: is a directory"),
    (["--folded", "x.txt"], "needs --sample or --offcpu-stacks"),
    (["--mode", "999"], "bad --mode '999'"),
    (["--mode", "abc"], "bad --mode 'abc'"),
    (["--mode", "-600"], "bad --mode '-600'"),
    # option syntax
    (["-x"], "unknown option '-x'"),
    (["--no-inherit=1"], "option '--no-inherit' takes no value"),
    (["--pid"], "option '--pid' needs a value"),
    (["-d", "1e9"], "bad duration '1e9'"),
    (["-d", "nan"], "bad duration 'nan'"),
    (["-I", "abc"], "bad interval"),
    (["--max-exited", "0"], "bad --max-exited '0'"),
    (["--max-threads", "1"], "bad --max-threads '1'"),
    (["--max-pids", "0"], "bad --max-pids '0'"),
    (["--max-stacks", "0"], "bad --max-stacks '0'"),
    (["--max-funcs", "0"], "bad --max-funcs '0'"),
    (["--max-sample-stacks", "1"], "bad --max-sample-stacks '1'"),
    (["--top", "0"], "bad --top '0'"),
    (["--tma=4"], "bad --tma level '4'"),
    (["--sample=0"], "bad --sample rate"),
    (["--sample=abc"], "bad --sample rate"),
    (["--max-rate", "0"], "bad --max-rate '0'"),
    (["--mem-samples=bogus"], "bad --mem-samples source 'bogus'"),
    (["--cpu", "nosuchcpu", "-d", "1"], "unknown CPU 'nosuchcpu'"),
    # targets
    (["-p", "1,", "-d", "1"], "trailing ','"),
    (["-p", ""], "empty pid/tid list"),
    (["-t", "0"], "bad pid/tid list '0'"),
    (["-p", "1", "-t", "1"], "choose one target"),
    (["-p", "1", "--", "true"], "choose one target"),
    (["-p", "2", "-d", "1"], "is a kernel thread"),
    (["-t", "2", "-d", "1"], "is a kernel thread"),
    # --uprobe
    (["--uprobe", "nocolon", "-d", "1"], "no ':' separating library and function glob"),
    (["--uprobe", "libc.so.6:nosuchfunction_xyz", "-d", "1"], "no function matches 'nosuchfunction_xyz'"),
    (["--uprobe", "/nonexistent/lib.so:f", "-d", "1"], "No such file or directory"),
    (["--uprobe", "/etc/passwd:f", "-d", "1"], "not an ELF file"),
    (["--uprobe", "x:f"] * 17, "too many --uprobe options"),
    # daemon
    (["daemon", "--listen", "bad"], "bad listen address 'bad'"),
    (["daemon", "--listen", "127.0.0.1:99999"], "bad listen address"),
    (["daemon", "--listen"], "option '--listen' needs a value"),
    (["daemon", "--interval", "10"], "bad --interval"),
    (["daemon", "--max-overhead", "0"], "bad --max-overhead '0'"),
    (["daemon", "--sample-hz", "0.5"], "bad --sample-hz '0.5'"),
    (["daemon", "--accounting", "x"], "bad --accounting 'x'"),
    (["daemon", "--expire", "0"], "bad --expire"),
    (["daemon", "--mode", "8"], "bad --mode '8'"),
    (["daemon", "extra"], "unexpected argument 'extra'"),
    (["daemon", "--jsonl", "/"], "--jsonl /: is a directory"),
    (["daemon", "--jsonl", "/dev/null"], "--jsonl /dev/null: is a character device"),
    (["daemon", "--config", "/nonexistent"], "--config: cannot read '/nonexistent'"),
    (["daemon", "--config", "/tmp"], "'/tmp' is a directory, expected a file"),
    # diff
    (["diff"], "expected two reports"),
    (["diff", "a.json"], "expected two reports"),
    (["diff", "/nonexistent", "/nonexistent"], "cannot read the report"),
    (["diff", "/", "/"], "cannot read the report: a directory"),
    (["diff", "/dev/null", "/dev/null"], "a character device, not a file"),  # refused before reading
    (["diff", "--bogus"], "unknown option '--bogus'"),
    (["diff", "a", "b", "--fail-on"], "option '--fail-on' needs a value"),
    # list
    (["list", "--cpu", "nosuch"], "unknown CPU name 'nosuch'"),
    (["list", "--bogus"], "unknown argument '--bogus'"),
]


@pytest.mark.parametrize("args,needle", BAD, ids=[" ".join(a)[:60] for a, _ in BAD])
def test_bad_input_table(args, needle):
    assert_usage_error(run_tmabpf(args), needle)


@pytest.mark.parametrize("text,needle", [
    ("bogus = 1\n", "expected 'key = value' with a long option name as key, got 'bogus'"),
    ("he = 1\n", "got 'he'"),  # an abbreviation getopt would take (it printed the help)
    ("interval = x\n", "cfg:1: bad --interval (ms) 'x'"),
    ("# ok\n\nlisten\n", "cfg:3: option '--listen' needs a value"),
    ("no-sample = 3\n", "option '--no-sample' takes no value"),
    ("x" * 5000 + "\n", "line too long"),
])
def test_bad_daemon_config(tmp_path, text, needle):
    cfg = tmp_path / "cfg"
    cfg.write_text(text)
    assert_usage_error(run_tmabpf(["daemon", "--config", str(cfg)]), needle)


def test_fifo_config_and_outputs_never_block(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert_usage_error(run_tmabpf(["daemon", "--config", str(fifo)], timeout=20), "not a regular file")
    assert_usage_error(run_tmabpf(["daemon", "--jsonl", str(fifo)], timeout=20), "is a FIFO")
    assert_usage_error(run_tmabpf(["--json", str(fifo), "-d", "1"], timeout=20), "is a FIFO")


def test_zombie_pid():
    """-p of a zombie exited 0 with an empty report and no word why."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        time.sleep(0.2)
        assert_usage_error(run_tmabpf(["-p", str(pid), "-d", "1"]), f"process {pid} is a zombie")
    finally:
        os.waitpid(pid, 0)


def test_error_lines_have_no_control_bytes():
    """A value holding a newline or control bytes still gives one line (it printed a NUL or a
    newline byte for a long option missing its value)."""
    for args in (["-e", "foo\nbar\x01"], ["--mode", "6\n0"], ["diff", "a\nb", "c"]):
        r = run_tmabpf(args)
        assert r.returncode == 2, r.stderr
        lines = error_lines(r.stderr)
        assert len(lines) == 1 and "\x00" not in r.stderr and "\x01" not in r.stderr, r.stderr


@pytest.mark.parametrize("typo,meant", [("deamon", "daemon"), ("daemn", "daemon"), ("chek", "check"),
                                        ("analyse", "analyze"), ("lst", "list"), ("dif", "diff"),
                                        ("roof", "roofs"), ("rofs", "roofs")])
def test_subcommand_typo_is_never_run_as_a_command(typo, meant, tmp_path):
    """One or two edits from a subcommand: the suggestion, exit 2, and nothing run (a program of
    that name in PATH would have been profiled before)."""
    marker = tmp_path / "ran"
    prog = tmp_path / typo
    prog.write_text(f"#!/bin/sh\ntouch {marker}\n")
    prog.chmod(0o755)
    r = run_tmabpf([typo], env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert_usage_error(r, f"did you mean 'tmabpf {meant}'?")
    assert f"tmabpf -- {typo}" in r.stderr and not marker.exists()


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    """A real report (software counters, a thread of 'true') for diff's metric names."""
    out = str(tmp_path_factory.mktemp("typo") / "r.json")
    r = run_tmabpf(["--quiet", "--json", out, "--", "true"])
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("args,meant", [
    (["--uprobes", "libc.so.6:malloc"], "did you mean '--uprobe'?"),
    (["--jsno", "x.json"], "did you mean '--json'?"),
    (["--sampel"], "did you mean '--sample'?"),
    (["--dryrun"], "did you mean '--dry-run'?"),
    (["--durations", "1"], "did you mean '--duration'?"),
    (["--ofcpu-stacks"], "did you mean '--offcpu-stacks'?"),
    (["-uprobe", "libc.so.6:malloc"], "did you mean '--uprobe'?"),
    (["-a", "--quite"], "did you mean '--quiet'?"),
    (["diff", "a.json", "b.json", "--fail-of", "wall_ns>+5%"], "did you mean '--fail-on'?"),
    (["roofs", "--qiuet"], "did you mean '--quiet'?"),
    (["daemon", "--listne", ":9464"], "did you mean '--listen'?"),
    (["-e", "cylces", "-d", "1"], "did you mean 'cycles'?"),
    (["-e", "task-clok", "-d", "1"], "did you mean 'task-clock'?"),
    (["-e", "page-faults,context-switch", "-d", "1"], "did you mean 'context-switches'?"),
    (["-p", "1", "2"], "use -p 1,2"),
    (["-t", "1,3", "2"], "use -t 1,3,2"),
    (["deamon"], "did you mean 'tmabpf daemon'?"),
    (["chekc"], "did you mean 'tmabpf check'?"),
    (["diff", "{r}", "{r}", "--fail-on", "wal_ns>+5%"], "did you mean 'wall_ns'?"),
    (["diff", "{r}", "{r}", "--fail-on", "thread.oncpu_n>+5%"], "did you mean 'oncpu_ns'?"),
    (["diff", "{r}", "{r}", "--fail-on", "process[true].page-fault>+1%"], "did you mean 'page-faults'?"),
])
def test_typo_gets_its_suggestion(args, meant, small_report):
    """Issue 32: every typo of an option (long, with one dash, of each subcommand), a subcommand, an
    event or a --fail-on metric gets the right suggestion in one line, exit 2, nothing run."""
    r = run_tmabpf([a.format(r=small_report) for a in args])
    assert_usage_error(r, meant)
