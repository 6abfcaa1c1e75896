# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A glob in the library part of --uprobe ('libggml-cpu-*.so:*') matches files as the function glob
matches symbols: without a directory the names of the files the target maps (now with -p, or as a
command maps them), with one the files on disk.  Ground truth: tests/data/nested_libs.c, whose
libwin_outer.so calls libwin_inner.so 16 times per call."""
import os
import subprocess

from conftest import load_json, run_tmabpf
from test_uprobe_window import calls_by_thread, nested  # noqa: F401 (a fixture)
from wrapped_text import joined_lines


def one_error_line(r, needle):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if "error:" in l]
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_lib_glob_matches_mapped_files_and_files_on_disk(nested, tmp_path):
    inner, outer, prog = nested
    d = os.path.dirname(inner)
    p = subprocess.Popen([prog, "1"], stdout=subprocess.PIPE, text=True)
    try:
        p.stdout.readline()
        for spec in ("libwin_*.so:win_*", os.path.join(d, "libwin_[io]*.so") + ":win_*"):
            out = str(tmp_path / "r.json")
            r = run_tmabpf(["--batch", "--quiet", "--json", out, "-p", str(p.pid), "-d", "0.3", "--uprobe", spec])
            assert r.returncode == 0, r.stderr
            c = calls_by_thread(load_json(out))[None]
            assert set(c) == {"win_inner", "win_outer"}, (spec, c)
            assert c["win_outer"] > 0 and c["win_inner"] == 16 * c["win_outer"], (spec, c)
        dry = run_tmabpf(["--dry-run", "-p", str(p.pid), "--uprobe", "libwin_*.so:win_*"])
        assert dry.returncode == 0, dry.stderr
        listed = [l.split()[1].rstrip(":") for l in joined_lines(dry.stdout) if l.startswith("uprobe /")]
        assert listed == [inner, outer], dry.stdout
        # a file glob that matches nothing, a function glob that matches in none of the files
        one_error_line(run_tmabpf(["-p", str(p.pid), "-d", "0.3", "--uprobe", os.path.join(d, "libzz*.so:f")]),
                       "no file matches")
        one_error_line(run_tmabpf(["-p", str(p.pid), "-d", "0.3", "--uprobe", "libwin_*.so:nomatch*"]),
                       "no function matches 'nomatch*' in the 2 files matching 'libwin_*.so' "
                       "(libwin_inner.so, libwin_outer.so)")
    finally:
        p.kill()
        p.wait()
    # nothing to match a name glob against
    one_error_line(run_tmabpf(["-d", "0.3", "--uprobe", "libwin_*.so:win_*"]), "no process to match")


def test_lib_glob_attaches_each_file_a_command_maps(nested, tmp_path):
    """A command maps nothing before it runs: the glob attaches every file of a matching name the
    command maps (two here), found ahead in the directories it loads libraries from (its RUNPATH:
    probed before it maps them) or when it maps them."""
    inner, outer, prog = nested
    out = str(tmp_path / "r.json")
    r = run_tmabpf(["--batch", "--json", out, "--uprobe", "libwin_*.so:win_*", "--", prog, "1", "2"])
    assert r.returncode == 0, r.stderr
    for lib in (inner, outer):
        assert (f"mapped {lib}: 1 functions of 'libwin_*.so:win_*' attached" in r.stderr or
                f"uprobe: resolved {lib} -> {lib}" in r.stderr), r.stderr
    c = calls_by_thread(load_json(out))[None]
    assert c["win_outer"] > 0 and c["win_inner"] > 0, c
