# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""README.md runs as written (issue 32 part 6): every command of its fenced shell blocks is run on
this host, as root, and what it prints must have the shape of the excerpt the README shows after it;
a command shown without an excerpt must exit 0 (or as SPECIAL below says).  The live-view example,
given in prose, runs in a terminal (tmux) and is quit with q; the prose's other `tmabpf ...` commands
must exit 0.

The convention, for whoever edits the README:
- a block whose lines start with '$ ' holds commands, each followed by the excerpt of its output
  (stdout and stderr); any other block whose every line starts with make, sudo or echo is commands
  alone (a line ending in '|' goes on on the next); other blocks are output only;
- 'sudo' is dropped (the test runs as root), 'tmabpf' is the build's, 'build/...' the checkout's, and
  OPENBLAS_CORETYPE is unset, so OpenBLAS picks this CPU's kernels as it does for a user;
- a number in a line stands for any number, and so does a cgroup="..." label; '...' ends a line early;
  a line matches on its first word and its words ending in ':', a table header on its
  column names; rows (lines starting with a number) are not compared; on a host with a hardware
  PMU, the lines about having none are not expected;
- what differs on this host is in SUBSTITUTIONS, what cannot run here in SKIPPED, each with why."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import BUILD, DECODER, ROOT
from test_live import Tmux

README = os.path.join(ROOT, "README.md")
# README text -> (what replaces it here, why)
SUBSTITUTIONS = {
    "-p 2738": ("-p {decoder}", "the pid of a decoder the test starts, as the README's run profiled one"),
    "make install": ("make install DESTDIR={tmp}/root", "into a throwaway root, not this host's /usr/local"),
}
# command -> why it does not run here (the place that runs or checks it instead)
SKIPPED = {
    "make deb": "tests/test_package.py builds the package with it (40 s) and checks lintian's verdict",
    "echo 'deb http://deb.debian.org/debian bookworm-backports main' | sudo tee "
    "/etc/apt/sources.list.d/bookworm-backports.list && sudo apt update":
        "would change this host's apt sources and needs the network; tests/test_deploy.py checks the "
        "Dockerfile enables backports with this line",
    "sudo apt install -t bookworm-backports ./build/deb/tmabpf_*.deb":
        "would install on this host; tests/test_package.py runs this command in a throwaway root",
}
# commands named in the prose (`tmabpf ...` outside the blocks) that run: substitutions, skips, and the
# names that only name a subcommand (each subcommand's block runs it)
PROSE_SUBSTITUTIONS = {"tmabpf analyze stat.csv": ("tmabpf analyze " + os.path.join(ROOT, "tests", "data", "skx_llm_decode.csv"),
                                                   "a perf stat -x, file of a Skylake-X host, from tests/data")}
PROSE_SKIPPED = {
    "sudo tmabpf roofs": "measures for a minute and writes /var/lib/tmabpf/roofs.json on this host; tests/test_roofs.py "
                         "runs it and checks its roofs against likwid-bench and mbw",
}
PROSE_NAMES = {"tmabpf analyze", "tmabpf check", "tmabpf daemon", "tmabpf diff", "tmabpf roofs"}
# command (its start) -> (exit statuses accepted, why); the others must exit 0
SPECIAL = {
    "tmabpf diff ": ({1}, "exit 1 when a budget breaks, as the README says"),
    "sudo tmabpf check": ({0, 1}, "exit 1 when a check fails (a host without a PMU)"),
}
# commands that run until stopped: started, left running for the next command, then stopped
UNTIL_STOPPED = {"sudo tmabpf daemon": signal.SIGTERM}
PMU_LINE = re.compile(r"PMU|pmu: no")


def host_has_pmu():
    devs = "/sys/bus/event_source/devices"
    return any(os.path.exists(os.path.join(devs, d)) for d in ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3_0"))


def blocks():
    """[(line number, text before it, [lines])] of README's fenced blocks."""
    out, cur, start, prose = [], None, 0, []
    with open(README) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("```"):
                if cur is None:
                    cur, start = [], n
                else:
                    out.append((start, "\n".join(prose[-12:]), cur))
                    cur, prose = None, []
            elif cur is not None:
                cur.append(line)
            else:
                prose.append(line)
    return out


def commands(lines):
    """[(command, [excerpt lines])] of a block; [] when it is output only."""
    if any(ln.startswith("$ ") for ln in lines):
        out = []
        for ln in lines:
            if ln.startswith("$ "):
                out.append((ln[2:], []))
            elif out:
                out[-1][1].append(ln)
        return out
    joined, cur = [], ""
    for ln in lines:
        cur = f"{cur} {ln.strip()}" if cur else ln.strip()
        if not cur.endswith("|"):
            joined.append(cur)
            cur = ""
    if joined and all(re.match(r"(make|sudo|echo) ", c) for c in joined if c):
        return [(c, []) for c in joined if c]
    return []


def without_comment(cmd):
    """The command less a trailing '# comment' (a '#' after a blank, outside quotes)."""
    quote = None
    for i, ch in enumerate(cmd):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i and cmd[i - 1] == " ":
            return cmd[:i].rstrip()
    return cmd.rstrip()


def shape(line):
    """What must match in an output line, or None for a line not compared (a row)."""
    words = re.sub(r'cgroup="[^"]*"', 'cgroup="C"', line.split("...", 1)[0]).split()
    s = [re.sub(r"\d+(\.\d+)?", "N", w) for w in words]
    if not s or s[0].startswith(("N", "+N", "-N")):
        return None
    caps = [n for w, n in zip(words, s) if re.fullmatch(r"[A-Z][A-Z0-9_%/()-]*", w)]
    if len(caps) >= 3 and 2 * len(caps) >= len(s):  # a table header: its column names
        return ("header", tuple(caps))
    return ("line", s[0], tuple(w for w in s if w.endswith(":")))


def matches(excerpt_line, output_shapes):
    want = shape(excerpt_line)
    if "..." not in excerpt_line:
        return want in output_shapes
    # cut short: the output line goes on
    return any(have[:2] == want[:2] and have[2][:len(want[2])] == want[2] for have in output_shapes
               if have and have[0] == "line")


def missing_lines(excerpt, output):
    """The excerpt's lines that no output line matches in shape."""
    have = {shape(ln) for ln in output.splitlines()}
    pmu = host_has_pmu()
    return [ln for ln in excerpt if shape(ln) is not None and not matches(ln, have)
            and not (pmu and PMU_LINE.search(ln))]


def wait_serving(port, pid, proc, timeout=60):
    """Until the daemon's /metrics has a series of pid (a refresh behind it), the daemon ends, or timeout."""
    want = f'pid="{pid}"'.encode()
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                body = b""
                while chunk := s.recv(65536):
                    body += chunk
            if want in body:
                return
        except OSError:
            pass
        time.sleep(0.2)


def port_free(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


CASES = [(n, prose, cmds) for n, prose, lines in blocks() for cmds in [commands(lines)] if cmds]


def start_decoder(*args):
    return subprocess.Popen([DECODER, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=run_env())


def run_env():
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["PATH"] = BUILD + ":" + env.get("PATH", "/usr/bin:/bin")
    return env


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.mark.parametrize("n,prose,cmds", CASES, ids=[re.sub(r"\W+", "-", without_comment(c[0][0]).replace("sudo ", ""))[:40].strip("-") for _, _, c in CASES])
def test_readme_block_runs_as_written(n, prose, cmds, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the README's commands run as root")
    cmds = [(without_comment(c), excerpt) for c, excerpt in cmds]
    make_block = all(c.startswith("make ") or c in SKIPPED for c, _ in cmds)
    if any("libmkl" in c for c, _ in cmds):
        if not os.path.exists("/usr/lib/x86_64-linux-gnu/libmkl_def.so"):
            pytest.skip("MKL is not installed (scripts/install-realstacks.sh installs it)")
        if "AuthenticAMD" not in open("/proc/cpuinfo").read():
            pytest.skip("the README's MKL excerpt is an AMD host's: on Intel MKL loads its AVX-512 kernels")
    # the commands' files (JSON reports, folded stacks) go to a scratch directory, build/ is the checkout's
    cwd = ROOT if make_block else str(tmp_path)
    if not make_block:
        os.symlink(BUILD, tmp_path / "build")
    decoder = start_decoder("--layers", "8", "--gen", "60000")
    background, problems, ran = [], [], 0
    try:
        for cmd, excerpt in cmds:
            if cmd in SKIPPED:
                print(f"skipped: {cmd}: {SKIPPED[cmd]}")
                continue
            line = cmd
            for text, (repl, _) in SUBSTITUTIONS.items():
                line = line.replace(text, repl.format(decoder=decoder.pid, tmp=tmp_path))
            line = re.sub(r"(^|[|&;]\s*)sudo ", r"\1", line)
            # never into this host's /usr/local
            assert not re.match(r"make (un)?install\b", line) or "DESTDIR=" in line, line
            ran += 1
            if cmd in UNTIL_STOPPED:
                if "daemon" in line and not port_free(9464):
                    pytest.skip("127.0.0.1:9464 is taken here (an installed tmabpf.service?)")
                p = subprocess.Popen(["bash", "-c", line], cwd=cwd, env=run_env(), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
                background.append((cmd, excerpt, p, UNTIL_STOPPED[cmd]))
                wait_serving(9464, decoder.pid, p)
                continue
            # pipefail, but not into head: it closes the pipe early, and what writes into it gets SIGPIPE (141)
            pipefail = [] if re.search(r"\|\s*head\b", line) else ["-o", "pipefail"]
            r = subprocess.run(["bash", *pipefail, "-c", line], cwd=cwd, env=run_env(), capture_output=True,
                               text=True, timeout=240)
            out = r.stdout + r.stderr
            ok = next((v for k, v in SPECIAL.items() if cmd.startswith(k)), ({0}, ""))[0]
            if r.returncode not in ok:
                problems.append(f"{cmd}\n  exit {r.returncode} (expected {sorted(ok)}):\n{out[-1500:]}")
            lost = missing_lines(excerpt, out)
            if lost:
                problems.append(f"{cmd}\n  the README shows lines this run has no line shaped like:\n    " +
                                "\n    ".join(lost) + f"\n  the run printed:\n{out[-3000:]}")
        for cmd, excerpt, p, sig in background:
            stop(p, sig)
            out = p.stdout.read()
            if p.returncode != 0:
                problems.append(f"{cmd}\n  exit {p.returncode} after {sig.name}:\n{out[-1500:]}")
            lost = missing_lines(excerpt, out)
            if lost:
                problems.append(f"{cmd}\n  no line shaped like:\n    " + "\n    ".join(lost) + f"\n{out[-3000:]}")
    finally:
        for _, _, p, _ in background:
            stop(p, signal.SIGKILL)
        stop(decoder, signal.SIGKILL)
    if ran == 0:
        pytest.skip("; ".join(f"{c}: {SKIPPED[c]}" for c, _ in cmds))
    assert not problems, "\n\n".join(problems)


def test_every_command_block_is_run_and_every_table_entry_is_used():
    """No command of the README escapes the test: the blocks above are every block with a command
    in it, and every substitution and skip names text the README still has."""
    with open(README) as f:
        text = f.read()
    found = {without_comment(c) for _, _, cmds in CASES for c, _ in cmds}
    for key in (*SUBSTITUTIONS, *SKIPPED, *SPECIAL, *UNTIL_STOPPED):
        assert key in text or key in found, f"{key!r} is no longer in README.md: update tests/test_readme_commands.py"
    assert {"sudo tmabpf check", "make demo", "sudo tmabpf daemon"} <= found, sorted(found)
    # every block is commands or an output excerpt of the live-view example
    others = [lines[0] for _, _, lines in blocks() if not commands(lines)]
    assert len(others) == 2 and others[0].startswith("tmabpf ") and others[1].startswith("=== tmabpf final"), others


def live_view_example():
    """The live-view example, given in prose before the first block: (command, screen, report)."""
    (n1, prose, screen), (n2, _, report) = [b for b in blocks() if not commands(b[2])]
    m = re.search(r"\(`(sudo tmabpf [^`]+)`", prose.replace("\n", " "))
    assert m, prose
    return m.group(1), screen, report


def test_the_live_view_example_runs_in_a_terminal(tmp_path):
    """The README's first command, in a 160x45 terminal: its screen has the excerpt's header lines
    and columns, q ends it with the final report the README shows, and the glob it probes matches
    the kernel OpenBLAS picks for this CPU (a row of it with calls)."""
    if os.geteuid() != 0:
        pytest.skip("the README's commands run as root")
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed (make deps installs it)")
    cmd, screen_excerpt, report_excerpt = live_view_example()
    line = re.sub(r"^sudo ", "", cmd)
    os.symlink(BUILD, tmp_path / "build")
    env = {k: v for k, v in run_env().items() if k in ("PATH", "LD_LIBRARY_PATH")}
    t = Tmux(tmp_path, width=160, height=45, env=env)
    try:
        t.run(f"cd {tmp_path} && {line}; echo rc=$?")
        t.wait(lambda s: not missing_lines(screen_excerpt, s), "the README's live view", timeout=30)
        t.keys("f")
        funcs = t.wait(lambda s: re.search(r"\bsgemm_kernel_\w+", s), "a probed sgemm kernel", timeout=20)
        kernel = re.search(r"\bsgemm_kernel_\w+", funcs).group(0)
        t.keys("q")
        t.wait(lambda s: "rc=" in s and Tmux.at_prompt(s), "the final report", timeout=20)
        s = t.tmux("capture-pane", "-p", "-J", "-S", "-100", "-t", t.name)  # lines wider than the pane joined
        lost = missing_lines(report_excerpt, s)
        assert not lost, "the README's final report shows lines this one lacks:\n" + "\n".join(lost) + "\n" + s
        assert "rc=130" in s or "rc=0" in s, s
        rows = [ln.split() for ln in s.splitlines() if re.match(r"\s*\d+ u sgemm_kernel_", ln)]
        assert rows and int(rows[0][3]) > 0, f"{kernel}: no calls in the final report\n{s}"
    finally:
        t.kill()


def prose_commands():
    """The `tmabpf ...` commands of README's prose (outside the fenced blocks), but the live-view
    example (test_the_live_view_example_runs_in_a_terminal runs it) and bare subcommand names."""
    with open(README) as f:
        prose = re.sub(r"^```.*?^```", "", f.read(), flags=re.S | re.M)
    spans = [re.sub(r"\s+", " ", m) for m in re.findall(r"`((?:sudo )?tmabpf [^`]+)`", prose)]
    live = live_view_example()[0]
    return [c for c in dict.fromkeys(spans) if c != live and c not in PROSE_NAMES]


def test_the_commands_named_in_the_prose_run():
    """`sudo tmabpf -a -d 10`, `tmabpf list`...: each exits 0."""
    if os.geteuid() != 0:
        pytest.skip("the README's commands run as root")
    cmds = prose_commands()
    assert "tmabpf list" in cmds and "sudo tmabpf -a -d 10" in cmds, cmds
    for key in (*PROSE_SUBSTITUTIONS, *PROSE_SKIPPED):
        assert any(c.startswith(key) for c in cmds), f"{key!r} is no longer in README.md's prose"
    problems = []
    for cmd in cmds:
        if cmd in PROSE_SKIPPED:
            print(f"skipped: {cmd}: {PROSE_SKIPPED[cmd]}")
            continue
        line = cmd
        for text, (repl, _) in PROSE_SUBSTITUTIONS.items():
            line = line.replace(text, repl)
        line = re.sub(r"^sudo ", "", line)
        r = subprocess.run(["bash", "-c", line], cwd=ROOT, env=run_env(), capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            problems.append(f"{cmd}: exit {r.returncode}\n{(r.stdout + r.stderr)[-1500:]}")
    assert not problems, "\n\n".join(problems)
