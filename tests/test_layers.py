# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The source's shape: the include graph of user/ and bpf/ holds to the layers of
scripts/layers.py (data flows bpf -> collect -> model -> output/view/daemon, nothing includes
a layer above it), and the checker catches each kind of breach, planted in a copy of the tree."""
import os
import shutil
import subprocess
import sys

from conftest import ROOT

CHECK = os.path.join(ROOT, "scripts", "check-includes.py")


def run_check(root=None):
    args = [sys.executable, CHECK] + (["--root", str(root)] if root else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def test_include_graph_holds():
    r = run_check()
    assert r.returncode == 0 and not r.stdout, r.stdout + r.stderr


def planted(tmp_path, path, line):
    """A copy of user/ and bpf/ with line added after the first #include of path."""
    for top in ("user", "bpf"):
        shutil.copytree(os.path.join(ROOT, top), tmp_path / top)
    f = tmp_path / path
    text = f.read_text()
    at = text.index("#include")
    f.write_text(text[:at] + line + "\n" + text[at:])
    return run_check(tmp_path)


def test_upward_include_fails(tmp_path):
    """The model must not know who shows it."""
    r = planted(tmp_path, "user/model/counters.c", '#include "view/view_model.h"')
    assert r.returncode == 1, r.stdout
    assert 'user/model/counters.c:' in r.stdout and "model (layer 3) may not include view (layer 5)" in r.stdout


def test_sibling_include_fails(tmp_path):
    """Collectors fill the model and outputs read it: neither includes the other."""
    r = planted(tmp_path, "user/collect/sampling.c", '#include "output/report_sections.h"')
    assert r.returncode == 1 and "collect (layer 4) may not include output (layer 4)" in r.stdout, r.stdout


def test_include_without_folder_fails(tmp_path):
    r = planted(tmp_path, "user/run/run.c", '#include "report.h"')
    assert r.returncode == 1 and 'does not name its folder' in r.stdout, r.stdout


def test_bpf_only_header_from_user_code_fails(tmp_path):
    r = planted(tmp_path, "user/collect/bpf_util.c", '#include "bpf/maps.bpf.h"')
    assert r.returncode == 1 and "not its BPF-only .bpf.h ones" in r.stdout, r.stdout


def test_bpf_including_user_code_fails(tmp_path):
    r = planted(tmp_path, "bpf/threads.bpf.c", '#include "../user/model/counters.h"')
    assert r.returncode == 1 and "bpf/ includes only bpf/ files" in r.stdout, r.stdout


def test_two_headers_of_one_name_fail(tmp_path):
    """Each header has a name of its own: a user/ header named like a bpf/ one is caught."""
    for top in ("user", "bpf"):
        shutil.copytree(os.path.join(ROOT, top), tmp_path / top)
    shutil.copy(tmp_path / "user" / "collect" / "tasks_loader.h", tmp_path / "user" / "collect" / "tasks.h")
    r = run_check(tmp_path)
    assert r.returncode == 1 and "bpf/tasks.h and user/collect/tasks.h: two headers named tasks.h" in r.stdout, \
        r.stdout
