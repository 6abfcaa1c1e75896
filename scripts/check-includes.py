#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Check the include graph of user/ and bpf/ against the layers of scripts/layers.py.

usage: scripts/check-includes.py [--root DIR] [--layers]

Every #include "..." of a file in user/FOLDER/ must name its folder ("model/report.h",
"bpf/tmabpf.h"; generated headers: *.skel.h, version_build.h) and a folder that FOLDER may
include: its own, or one below it that scripts/layers.py lists for it.  bpf/ files include
only bpf/ files; user code includes bpf/'s shared .h files, never its .bpf.h ones.  The
layer table itself must be acyclic, each folder including only lower layers.  No two headers
of bpf/ and user/ share a name (a newcomer's "memsamples.h" is one file).  Prints one
line per violation and exits 1; exits 0 when the graph holds.  --layers prints the layers.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import ALLOWED, LAYER, LAYERS  # noqa: E402

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GENERATED = re.compile(r"^[\w-]+\.skel\.h$|^version_build\.h$|^[\w-]+\.pb-c\.h$")


def check_table():
    bad = []
    for folder, allowed in ALLOWED.items():
        for dep in allowed:
            if dep not in LAYER:
                bad.append(f"scripts/layers.py: {folder} may include '{dep}', which is no layer")
            elif LAYER[dep] >= LAYER[folder]:
                bad.append(f"scripts/layers.py: {folder} (layer {LAYER[folder]}) may include {dep} "
                           f"(layer {LAYER[dep]}): not below it")
    return bad


def sources(root, top):
    for d, _, files in sorted(os.walk(os.path.join(root, top))):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), root)


def check_user(root, path):
    parts = path.split(os.sep)
    bad = []
    if len(parts) != 3:
        return [f"{path}: user/ files live in user/FOLDER/ (one of: {', '.join(ALLOWED)})"]
    folder = parts[1]
    if folder not in ALLOWED or folder == "bpf":
        return [f"{path}: user/{folder}/ is no layer of scripts/layers.py"]
    text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
    for m in INCLUDE.finditer(text):
        inc, line = m.group(1), text.count("\n", 0, m.start()) + 1
        if GENERATED.match(inc):
            continue
        if "/" not in inc:
            bad.append(f"{path}:{line}: #include \"{inc}\" does not name its folder (\"FOLDER/{inc}\")")
            continue
        dep = inc.split("/")[0]
        target = os.path.join(root, inc) if dep == "bpf" else os.path.join(root, "user", inc)
        if not os.path.isfile(target):
            bad.append(f"{path}:{line}: #include \"{inc}\": no such file")
        elif dep == "bpf" and inc.endswith(".bpf.h"):
            bad.append(f"{path}:{line}: #include \"{inc}\": user code includes bpf/'s shared .h files, "
                       "not its BPF-only .bpf.h ones")
        elif dep != folder and dep not in ALLOWED[folder]:
            bad.append(f"{path}:{line}: #include \"{inc}\": {folder} (layer {LAYER[folder]}) may not include "
                       f"{dep} (layer {LAYER.get(dep, '?')}); it may include "
                       f"{', '.join(sorted(ALLOWED[folder], key=LAYER.get)) or 'nothing but itself'}")
    return bad


def check_bpf(root, path):
    text = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
    bad = []
    for m in INCLUDE.finditer(text):
        inc, line = m.group(1), text.count("\n", 0, m.start()) + 1
        if inc == "vmlinux.h":
            continue
        if "/" in inc or not os.path.isfile(os.path.join(root, "bpf", inc)):
            bad.append(f"{path}:{line}: #include \"{inc}\": bpf/ includes only bpf/ files (and vmlinux.h)")
    return bad


def check_unique_headers(root):
    seen = {}
    for top in ("bpf", "user"):
        for path in sources(root, top):
            if path.endswith(".h"):
                seen.setdefault(os.path.basename(path), []).append(path)
    return [f"{' and '.join(paths)}: two headers named {name}; give each a name of its own"
            for name, paths in sorted(seen.items()) if len(paths) > 1]


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = list(argv)
    if "--root" in args:
        i = args.index("--root")
        root = args[i + 1]
        del args[i:i + 2]
    if "--layers" in args:
        for n, folder, inc, role in LAYERS:
            print(f"{n} {folder:8s} {role}")
        return 0
    if args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bad = check_table()
    for path in sources(root, "user"):
        bad += check_user(root, path)
    for path in sources(root, "bpf"):
        bad += check_bpf(root, path)
    bad += check_unique_headers(root)
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} include(s) against the layers (scripts/layers.py, docs/design.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
