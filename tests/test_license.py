# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The license: every source file says it (scripts/check-spdx.py), the BPF programs
declare the GPL-compatible side of it to the kernel, and the texts ship."""
import glob
import os
import re
import subprocess

from conftest import ROOT

CHECK = os.path.join(ROOT, "scripts", "check-spdx.py")
LICENSE = "GPL-2.0-only OR BSD-2-Clause"


def test_every_source_file_has_the_spdx_line():
    r = subprocess.run([CHECK], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stdout, r.stdout + r.stderr


def test_check_spdx_finds_and_fixes(tmp_path):
    """A file without the line, or with another identifier, is named (exit 1);
    --fix puts the line in each file's comment style, after a #! line."""
    files = {
        "a.c": "#include <stdio.h>\n",
        "b.h": "/* SPDX-License-Identifier: MIT */\n#define X 1\n",
        "c.py": "#!/usr/bin/python3\nprint(1)\n",
        "Makefile": "all:\n",
        "d.sh": "#!/bin/sh\necho hi\n",
        "e.service": "[Unit]\n",
        "data.csv": "a,b\n",  # not a source file: not checked
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    r = subprocess.run([CHECK], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    named = {l.split(":")[0] for l in r.stdout.splitlines()}
    assert r.returncode == 1 and named == set(files) - {"data.csv"}, r.stdout
    assert "'MIT' instead of" in r.stdout
    r = subprocess.run([CHECK, "--fix"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.c").read_text() == f"// SPDX-License-Identifier: {LICENSE}\n#include <stdio.h>\n"
    assert (tmp_path / "b.h").read_text().splitlines()[0] == f"/* SPDX-License-Identifier: {LICENSE} */"
    assert (tmp_path / "c.py").read_text().splitlines()[:2] == ["#!/usr/bin/python3",
                                                                 f"# SPDX-License-Identifier: {LICENSE}"]
    assert (tmp_path / "data.csv").read_text() == "a,b\n"
    r = subprocess.run([CHECK], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stdout, r.stdout


def test_bpf_programs_declare_the_gpl_compatible_pair():
    """The kernel reads the license section: "Dual BSD/GPL" is GPL-2.0 OR BSD (the
    GPL-only helpers the programs call need a GPL-compatible one)."""
    progs = glob.glob(os.path.join(ROOT, "bpf", "*.bpf.c")) + glob.glob(os.path.join(ROOT, "bench", "*.bpf.c"))
    assert progs
    for p in progs:
        with open(p) as f:
            m = re.search(r'SEC\("license"\)\s*=\s*"([^"]*)"', f.read())
        assert m and m.group(1) == "Dual BSD/GPL", p


def test_license_texts_ship():
    with open(os.path.join(ROOT, "LICENSE")) as f:
        text = f.read()
    assert LICENSE in text
    with open(os.path.join(ROOT, "LICENSES", "GPL-2.0-only.txt")) as f:
        assert "GNU GENERAL PUBLIC LICENSE\n                       Version 2, June 1991" in f.read()
    with open(os.path.join(ROOT, "LICENSES", "BSD-2-Clause.txt")) as f:
        assert "Redistributions in binary form must reproduce" in f.read()
