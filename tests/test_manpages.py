# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""What a user reads: the man pages (no groff warnings, every option of --help
documented), --help (every option the parser accepts, grouped), --version and the
build facts the JSON report and /metrics repeat, and the bash completion."""
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT, TMABPF, GROUNDTRUTH
from report_schema import check_report
from daemon_util import Daemon, parse_exposition, select

MAN = os.path.join(ROOT, "build", "man")
COMPLETION = os.path.join(ROOT, "completions", "tmabpf.bash")
# the C files whose long_opts[] a command's parser takes (the others parse by hand)
PARSERS = {"": "user/cmd/cli.c", "daemon": "user/daemon/daemon_cli.c"}


def subcommands():
    """What main() dispatches on (its cmds[] table): a new subcommand needs its man page, help and
    completion."""
    with open(os.path.join(ROOT, "user", "cmd", "main.c")) as f:
        return re.findall(r'\{ "([a-z-]+)", cmd_[a-z_]+ \}', f.read())


def man_page(sub):
    """File name of the man page of 'tmabpf SUB' ('' for tmabpf itself), from man/*.md."""
    stem = "tmabpf" + (f"-{sub}" if sub else "")
    found = [f[:-3] for f in os.listdir(os.path.join(ROOT, "man")) if re.fullmatch(rf"{stem}\.[18]\.md", f)]
    assert len(found) == 1, f"no man page for 'tmabpf {sub}': write man/{stem}.1.md or man/{stem}.8.md"
    return found[0]


COMMANDS = ["", *subcommands()]
LONG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def page(name):
    path = os.path.join(MAN, name)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: run 'make man' (go-md2man comes with 'make deps')")
    return path


def help_text(sub):
    r = subprocess.run([TMABPF, *([sub] if sub else []), "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not r.stderr, (sub, r.stderr)
    return r.stdout


def help_options(sub):
    return set(LONG.findall(help_text(sub)))


def parser_options(src):
    """Long option names of a getopt_long table: the entries of 'long_opts[] = { ... };'."""
    with open(os.path.join(ROOT, src)) as f:
        text = f.read()
    table = re.search(r"struct option long_opts\[\]\s*=\s*\{(.*?)\n\};", text, re.S).group(1)
    return set(re.findall(r'\{\s*"([a-z][a-z0-9-]*)"', table))


@pytest.mark.parametrize("sub", COMMANDS)
def test_man_page_renders_without_warnings(sub):
    name = man_page(sub)
    path = page(name)
    r = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "MANWIDTH": "80"})
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "SEE ALSO"):
        assert re.search(rf"^{section}$", r.stdout, re.M), f"{name}: no {section} section"
    first = r.stdout.splitlines()[0]
    assert first.split()[0] == f"{name.rsplit('.', 1)[0].upper()}({name.rsplit('.', 1)[1]})", first
    # the version in the footer is the binary's
    version = subprocess.run([TMABPF, "--version"], capture_output=True, text=True).stdout.split()[1]
    assert f"tmabpf {version}" in r.stdout.splitlines()[-1], r.stdout.splitlines()[-1]


@pytest.mark.parametrize("sub", list(COMMANDS))
def test_every_option_of_help_is_in_the_man_page(sub):
    """An option added to --help without its man page entry fails here."""
    name = man_page(sub)
    with open(page(name)) as f:
        roff = f.read()
    documented = set(LONG.findall(re.sub(r"\\f[BIRP]", " ", roff)))
    missing = help_options(sub) - documented
    assert not missing, f"{name} lacks {sorted(missing)} (edit man/{name}.md)"


@pytest.mark.parametrize("sub", list(PARSERS))
def test_every_option_the_parser_takes_is_in_help(sub):
    src = PARSERS[sub]
    missing = parser_options(src) - help_options(sub)
    assert not missing, f"'tmabpf {sub} --help' lacks {sorted(missing)} ({src})"


# the live view's key codes (user/view/view_curses.c) as tmabpf(8) names them; KEY_RESIZE is no key
KEY_NAMES = {"' '": "Space", "'\\n'": "Enter", "'\\r'": "Enter", "KEY_ENTER": "Enter", "KEY_RIGHT": "Right",
             "KEY_LEFT": "Left", "KEY_UP": "Up", "KEY_DOWN": "Down", "KEY_PPAGE": "PgUp", "KEY_NPAGE": "PgDn",
             "KEY_HOME": "Home", "KEY_END": "End", "KEY_BACKSPACE": "Backspace", "127": "Backspace",
             "8": "Backspace", "27": "Esc", "21": "Ctrl-U", "KEY_RESIZE": None}


def view_keys():
    """{name: handler} of every key the live view's handlers accept: key()'s cases and, in the filter
    prompt, edit_key()'s comparisons (typed characters aside)."""
    src = open(os.path.join(ROOT, "user", "view", "view_curses.c")).read()
    body = lambda fn: src.split(fn, 1)[1].split("\n}\n", 1)[0]
    codes = {c: "key" for c in re.findall(r"case ('\\?.'|\w+):", body("static int key("))}
    codes.update({c: "edit_key" for c in re.findall(r"\bch == ('\\?.'|\w+)", body("static void edit_key("))})
    out = {}
    for code, fn in codes.items():
        name = KEY_NAMES[code] if code in KEY_NAMES else code[1:-1] if re.fullmatch(r"'[!-~]'", code) else False
        assert name is not False, f"{fn}() takes {code}: name it in KEY_NAMES and in tmabpf(8)'s LIVE VIEW KEYS"
        if name:
            out[name] = fn
    return out


def test_every_live_view_key_is_in_the_man_page_and_no_other():
    section = open(os.path.join(ROOT, "man", "tmabpf.8.md")).read().split("\n# LIVE VIEW KEYS\n", 1)[1]
    section = section.split("\n# ", 1)[0]
    listed = {k for k in re.findall(r"\*\*([^*]+)\*\*", section) if not k.startswith("-")}
    keys = view_keys()
    assert {"q", "/", "Esc", "Ctrl-U", "PgUp"} <= set(keys), keys
    assert set(keys) == listed, (f"taken but not in tmabpf(8): {sorted(set(keys) - listed)}; "
                                 f"in tmabpf(8) but not taken: {sorted(listed - set(keys))}")


def test_the_synopsis_names_every_subcommand():
    synopsis = open(os.path.join(ROOT, "man", "tmabpf.8.md")).read().split("# SYNOPSIS", 1)[1].split("\n# ", 1)[0]
    missing = [s for s in subcommands() if f"**{s}**" not in synopsis]
    assert not missing, f"tmabpf(8)'s SYNOPSIS lacks {missing}"


def recipes():
    """The recipe names, as `tmabpf list` prints them (the completion offers the same)."""
    out = subprocess.run([TMABPF, "list"], capture_output=True, text=True).stdout
    out = re.sub(r"\n  (?=\S)", " ", out)  # its lines wrap at 80 columns (piped), continuations indented
    return re.search(r"^recipes: (.*)$", out, re.M).group(1).split(", ")


def test_cpu_names_in_the_man_pages_are_the_recipes():
    """A --cpu entry that names the CPUs names every recipe tmabpf has, and only those (the others
    point to tmabpf list)."""
    listing = 0
    for sub in COMMANDS:
        name = man_page(sub)
        with open(os.path.join(ROOT, "man", name + ".md")) as f:
            entry = re.search(r"^\*\*--cpu\*\*=\*NAME\*\n(.*?)\n\n", f.read(), re.M | re.S)
        named = re.findall(r"\*\*([a-z0-9][a-z0-9-]*)\*\*", entry.group(1)) if entry else []
        assert named in ([], recipes()), f"man/{name}.md --cpu lists {named} (edit it)"
        listing += bool(named)
    assert listing >= 3, listing


def test_help_is_grouped_short_and_points_to_the_man_pages():
    text = help_text("")
    lines = text.splitlines()
    assert len(lines) <= 60 and max(map(len, lines)) <= 100, (len(lines), max(map(len, lines)))
    heads = [l.split(" (")[0].rstrip(":") for l in lines if l and not l.startswith(" ") and l.endswith(":")]
    assert heads[:8] == ["Target", "Counters and TMA", "Per function", "Per call", "Sampling", "Output", "Limits",
                         "Examples"], heads
    usage = re.search(r"^ +tmabpf ([a-z-]+(?: \| [a-z-]+)*) \[OPTIONS\]", text, re.M)
    assert usage and sorted(usage.group(1).split(" | ")) == sorted(subcommands()), "the usage line names every subcommand"
    for sub in COMMANDS:
        p = man_page(sub)
        assert f"{p[:-2]}({p[-1]})" in text, p
        if sub:
            assert f"{p[:-2]}({p[-1]})" in help_text(sub), sub


def build_facts():
    """(version, git, libbpf) from tmabpf --version."""
    out = subprocess.run([TMABPF, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.match(r"tmabpf (\S+) \(git (\S+)\)\n", out)
    assert m, out
    lib = re.search(r"^  libbpf: +(\S+) \(built against (\d+\.\d+)\)$", out, re.M)
    assert lib, out
    return m.group(1), m.group(2), lib.group(1), lib.group(2), out


def test_version_against_git_dpkg_and_the_kernel():
    version, git, libbpf, built, out = build_facts()
    with open(os.path.join(ROOT, "user", "lib", "version.h")) as f:
        assert f'#define TMABPF_VERSION "{version}"' in f.read()
    # git describe of a commit of this repository (the tree may have changed since the build)
    commit = re.search(r"(?:^|-g)([0-9a-f]{7,40})(?:-dirty)?$", git)
    assert commit or git == "unknown", git
    if commit and os.path.exists(os.path.join(ROOT, ".git")):
        assert subprocess.run(["git", "-C", ROOT, "cat-file", "-e", commit.group(1) + "^{commit}"]).returncode == 0, git
    # the libbpf the dynamic linker loads: the libbpf1 package's upstream version
    pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libbpf1"], capture_output=True, text=True).stdout
    upstream = re.sub(r"^\d+:", "", pkg).split("-")[0]
    assert upstream.startswith(libbpf + "."), (libbpf, pkg)
    hdr = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libbpf-dev"], capture_output=True, text=True).stdout
    assert re.sub(r"^\d+:", "", hdr).startswith(built + "."), (built, hdr)
    kernel = re.search(r"^  kernel: +(\S+) (\S+), BTF (\S+)", out, re.M)
    assert kernel and kernel.group(1) == os.uname().release and kernel.group(2) == os.uname().machine, out
    assert (kernel.group(3) == "yes") == os.path.exists("/sys/kernel/btf/vmlinux"), out
    # as root the probes run; this kernel loads tmabpf, so each must say yes
    assert re.search(r"^  BPF probes: +perf_event yes, raw_tracepoint \(tp_btf\) yes, kprobe \(uprobes\) yes, "
                     r"ringbuf yes$", out, re.M), out


def test_json_report_and_metrics_carry_the_same_build(tmp_path):
    version, git, libbpf, _, _ = build_facts()
    r = subprocess.run([TMABPF, "-d", "0.3", "--quiet", "--json", "-", "--", GROUNDTRUTH, "--out",
                        str(tmp_path / "gt.json"), "spin:50"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    check_report(report, "--json -")
    head = report["tmabpf"]
    arch = {"x86_64": "x86", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    assert head["version"] == version and head["git"] == git and head["libbpf"] == libbpf, head
    assert head["bpf_arch"] == arch, head
    with Daemon("-I", "200", "--no-sample") as d:
        m = d.metrics()
        assert d.stop() == 0
    (labels, value), = select(m, "tmabpf_build_info")
    assert value == 1 and labels["version"] == version and labels["git"] == git, labels
    assert labels["libbpf"] == libbpf and labels["bpf_arch"] == arch, labels


def complete(*words):
    """COMPREPLY of the completion for a command line whose last word is being typed."""
    script = (f'source {COMPLETION}\nCOMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n'
              '_tmabpf\nprintf "%s\\n" "${COMPREPLY[@]}"\n')
    env = {**os.environ, "PATH": os.path.dirname(TMABPF) + ":" + os.environ["PATH"]}
    r = subprocess.run(["bash", "-c", script, "bash", *words], capture_output=True, text=True, timeout=60,
                       env=env)
    assert r.returncode == 0, r.stderr
    return set(filter(None, r.stdout.split("\n")))


def test_bash_completion():
    assert complete("tmabpf", "") == set(subcommands())
    for sub in COMMANDS:
        words = ["tmabpf", *([sub] if sub else []), "--"]
        assert complete(*words) == {"--" + o for o in help_options(sub)}, sub
    assert complete("tmabpf", "--cpu", "") == set(recipes())
    assert complete("tmabpf", "daemon", "--accounting", "") == {"auto", "tasks", "sampled", "switch"}
    assert complete("tmabpf", "--mem-samples=p") == {"--mem-samples=pmu", "--mem-samples=page-faults"}
    assert str(os.getpid()) in complete("tmabpf", "-p", str(os.getpid()))
    assert "tmabpf" in complete("tmabpf", "--", "tmab")  # the command to profile
