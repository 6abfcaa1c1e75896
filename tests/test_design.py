# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""docs/design.md's map of the code is generated from scripts/layers.py and each source file's
opening comment (scripts/gen-design.py): it fails here when the committed file is stale, so the
map cannot rot, and every folder of user/ is a layer the map describes."""
import os
import subprocess
import sys

from conftest import ROOT

GEN = os.path.join(ROOT, "scripts", "gen-design.py")


def test_design_doc_is_current():
    r = subprocess.run([sys.executable, GEN, "--check"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_folder_is_mapped():
    with open(os.path.join(ROOT, "docs", "design.md")) as f:
        doc = f.read()
    folders = sorted(d for d in os.listdir(os.path.join(ROOT, "user"))
                     if os.path.isdir(os.path.join(ROOT, "user", d)))
    assert folders and all(f"**`user/{d}/`**" in doc for d in folders), folders
    loose = [f for f in os.listdir(os.path.join(ROOT, "user")) if os.path.isfile(os.path.join(ROOT, "user", f))]
    assert not loose, f"files outside user/FOLDER/: {loose}"
