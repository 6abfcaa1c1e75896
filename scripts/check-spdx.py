#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Every source file of tmabpf carries the project's SPDX line (see LICENSE).

usage: scripts/check-spdx.py [--fix] [FILE...]
  Checks the tracked and untracked-but-not-ignored files of the checkout (or the
  FILEs given): C, headers, C++, Python, shell, Makefiles, systemd units, YAML,
  config files and debian/rules.  Prints one line per file without the line and
  exits 1; --fix rewrites an SPDX line with another identifier, or inserts the
  line (after a #! line) in the file's comment style, and exits 0.
"""
import os
import re
import subprocess
import sys

LICENSE = "GPL-2.0-only OR BSD-2-Clause"
SPDX = re.compile(r"SPDX-License-Identifier:\s*(.*?)\s*(\*/)?\s*$")
# generated or foreign files: the kernel's BTF dump carries the kernel's terms (debian/copyright)
EXEMPT = re.compile(r"^vmlinux/")
HASH = (".py", ".sh", ".service", ".yml", ".yaml", ".conf", ".bash")


def style(path):
    """Comment style of a checked file: 'c', 'h' (block comment), '#', or None (not checked)."""
    base = os.path.basename(path)
    if EXEMPT.match(path):
        return None
    if path.endswith((".c", ".cc")):
        return "c"
    if path.endswith(".h"):
        return "h"
    if base == "Makefile" or path.endswith(HASH) or path in ("debian/rules", "deploy/bash-completion/tmabpf"):
        return "#"
    try:
        with open(path, "rb") as f:
            head = f.readline()
    except OSError:
        return None
    if head.startswith(b"#!") and re.search(rb"\b(sh|bash|python3?)\b", head):
        return "#"
    return None


def line_for(st):
    return {"c": f"// SPDX-License-Identifier: {LICENSE}",
            "h": f"/* SPDX-License-Identifier: {LICENSE} */"}.get(st, f"# SPDX-License-Identifier: {LICENSE}")


def check(path, fix):
    """None when the file is right (or fixed), else the reason."""
    st = style(path)
    if not st:
        return None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    for i, l in enumerate(lines[:3]):
        m = SPDX.search(l)
        if not m:
            continue
        if m.group(1) == LICENSE:
            return None
        if not fix:
            return f"SPDX identifier '{m.group(1)}' instead of '{LICENSE}'"
        lines[i] = line_for(st)
        break
    else:
        if not fix:
            return "no SPDX-License-Identifier line in its first 3 lines"
        lines.insert(1 if lines and lines[0].startswith("#!") else 0, line_for(st))
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("\n".join(lines))
    print(f"{path}: fixed")
    return None


def main(argv):
    fix = "--fix" in argv
    files = [a for a in argv if a != "--fix"]
    if any(a.startswith("-") for a in files):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if not files:
        root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                              check=True).stdout.strip()
        os.chdir(root)
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                               text=True, check=True).stdout.split("\n")
    bad = 0
    for p in filter(None, files):
        if not os.path.isfile(p):
            continue
        why = check(p, fix)
        if why:
            print(f"{p}: {why} (fix: scripts/check-spdx.py --fix)")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
