# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Collectors own their state (issue 30): each feature is one table entry in a file of its own
whose state struct is private to that file; what one feature needs from another is a typed field
of struct run_links, never another's state; the shared context (struct run_ctx) stays small; the
drivers stay small; the daemon drives the features through the same table as a run.  Each check
is also run against a planted breach, so that it can fail."""
import glob
import os
import re

from conftest import ROOT

COLLECTOR_H = os.path.join(ROOT, "user", "collect", "collector.h")
MAX_CTX_FIELDS = 12
MAX_DRIVER_LINES = 250
MAX_DAEMON_INCLUDES = 12


def collector_files():
    """The run's collectors (the daemon's own three keep the daemon as their state)."""
    return sorted(glob.glob(os.path.join(ROOT, "user", "run", "*_collector.c")))


def struct_fields(text, name):
    """The members of struct name (one a declaration; nested enums count as one)."""
    m = re.search(r"^struct %s \{\n(.*?)^\};" % name, text, re.S | re.M)
    assert m, name
    body, depth, fields = m.group(1), 0, 0
    for ch in re.sub(r"/\*.*?\*/", "", body, flags=re.S):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            fields += 1
    return fields


SELF = re.compile(r"struct (\w+) \*\w+ = self\b|\(\(?struct (\w+) \*\)self\b")


def private_states():
    """{state struct name: the collector file whose operations take it as self}."""
    out = {}
    for f in collector_files():
        for a, b in SELF.findall(open(f).read()):
            out[a or b] = f
    return out


def state_breaches(sources):
    """(file, struct) pairs where a file of the hallway (the drivers, the run, the daemon, the other
    collectors) names a collector's state."""
    states = private_states()
    bad = []
    for path, text in sources.items():
        for name, owner in states.items():
            if path != owner and re.search(r"\bstruct %s\b" % name, text):
                bad.append((os.path.relpath(path, ROOT), name))
    return bad


def user_sources():
    return {p: open(p).read() for p in glob.glob(os.path.join(ROOT, "user", "run", "*.[ch]")) +
            glob.glob(os.path.join(ROOT, "user", "daemon", "*.[ch]")) +
            glob.glob(os.path.join(ROOT, "user", "collect", "collector*.[ch]"))}


def test_run_ctx_is_small():
    n = struct_fields(open(COLLECTOR_H).read(), "run_ctx")
    assert n <= MAX_CTX_FIELDS, n
    planted = open(COLLECTOR_H).read().replace("struct run_ctx {\n", "struct run_ctx {\n" + "int x;\n" * 13)
    assert struct_fields(planted, "run_ctx") > MAX_CTX_FIELDS


def test_drivers_are_small():
    n = sum(1 for _ in open(os.path.join(ROOT, "user", "collect", "collectors.c")))
    assert n < MAX_DRIVER_LINES, n


def test_the_interface_is_below_the_run():
    """The collector interface and its drivers are collect/'s: they include nothing of run/ (the
    features that read the run's options have their files in run/)."""
    for f in ("collector.h", "collectors.c"):
        text = open(os.path.join(ROOT, "user", "collect", f)).read()
        assert not re.findall(r'^#include "run/', text, re.M), f


def test_every_collector_keeps_its_state_private():
    states = private_states()
    # the features that keep state: each one's struct is defined in its collector file, and the
    # header the run and the daemon include never holds one
    assert len(states) >= 8, states
    assert not state_breaches(user_sources())
    ctx = open(COLLECTOR_H).read()
    for name in states:
        assert not re.search(r"\bstruct %s\b" % name, ctx), name


def test_a_collector_reading_anothers_state_is_caught():
    sources = user_sources()
    sampling = os.path.join(ROOT, "user", "run", "sampling_collector.c")
    sources[sampling] += "\nstatic int peek(struct percall_state *p) { return p != 0; }\n"
    assert (os.path.relpath(sampling, ROOT), "percall_state") in state_breaches(sources)


def test_no_collector_reaches_another_entry():
    """Only the drivers walk the table's states."""
    for f in collector_files():
        text = open(f).read()
        assert "->self[" not in text and ".self[" not in text, f


def test_daemon_includes_few_headers():
    text = open(os.path.join(ROOT, "user", "daemon", "daemon.c")).read()
    n = len(re.findall(r'^#include "', text, re.M))
    assert n <= MAX_DAEMON_INCLUDES, n
    # and reads its data through the table: no loader's read of its own
    for direct in ("tasks_read(", "threads_read(", "uprobes_read(", "tasks_self_stats(", "threads_self_stats(",
                   "uprobes_run_stats("):
        assert direct not in text, direct


def exported_functions(header):
    return re.findall(r"^[a-z_ ]+\**\b([a-z_0-9]+)\(", open(header).read(), re.M)


def test_each_daemon_file_exports_its_own_prefix():
    """A name says which file holds it: daemon_http_start is in daemon_http.c (cmd_daemon, the
    subcommand's entry, is named as every subcommand's)."""
    bad = []
    for h in sorted(glob.glob(os.path.join(ROOT, "user", "daemon", "*.h"))):
        stem = os.path.basename(h)[:-2]
        bad += [(stem, f) for f in exported_functions(h)
                if f != stem and not f.startswith(stem + "_") and f != "cmd_" + stem]
    assert not bad, bad
