#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Fetch Debian arm64 packages on any host without adding arm64 to the host's
dpkg architectures: apt runs with private state (sources, lists, status,
archives) under CACHE; the .debs stay there between runs; dpkg -x unpacks
them into DEST.

  scripts/fetch_arm64.py [--closure] [--exclude PKG,...] [--only PATH,...] CACHE DEST PKG[/SUITE]...

--closure also fetches every package they depend on, as an install on an
empty system would resolve it (less --exclude).  PKG/SUITE takes PKG from that
suite (libbpf-dev/bookworm-backports); a PKG with glob characters names the
newest matching package (linux-image-6.12.*+deb12-arm64-unsigned).  Prints
NAME=VERSION for each package unpacked.  Absolute symlinks in DEST are made
relative to DEST.
"""
import argparse
import fnmatch
import os
import subprocess
import sys
import time

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
SUITES = [("debian", "bookworm"), ("debian", "bookworm-updates"), ("debian", "bookworm-backports"),
          ("debian-security", "bookworm-security")]


def die(msg):
    print(f"fetch-arm64: {msg}", file=sys.stderr)
    sys.exit(1)


class Apt:
    def __init__(self, cache):
        self.dir = os.path.abspath(os.path.join(cache, "apt"))
        for d in ("lists/partial", "archives/partial", "debs"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        status = os.path.join(self.dir, "status")
        if not os.path.exists(status):
            open(status, "w").close()
        if not os.access(KEYRING, os.R_OK):
            die(f"{KEYRING} missing (fix: apt-get install debian-archive-keyring)")
        sources = os.path.join(self.dir, "sources.list")
        with open(sources + ".new", "w") as f:
            for repo, suite in SUITES:
                f.write(f"deb [signed-by={KEYRING}] http://deb.debian.org/{repo} {suite} main\n")
        os.replace(sources + ".new", sources)
        # private state only: the host's sources, pins and dpkg status are never read
        self.opts = ["-o", "APT::Architecture=arm64", "-o", "APT::Architectures=arm64",
                     "-o", f"Dir::Etc::SourceList={sources}", "-o", "Dir::Etc::SourceParts=/dev/null",
                     "-o", "Dir::Etc::Preferences=/dev/null", "-o", "Dir::Etc::PreferencesParts=/dev/null",
                     "-o", f"Dir::State::Lists={self.dir}/lists", "-o", f"Dir::State::status={status}",
                     "-o", f"Dir::Cache={self.dir}", "-o", f"Dir::Cache::archives={self.dir}/archives",
                     "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=",
                     "-o", "APT::Install-Recommends=0", "-o", "Debug::NoLocking=1", "-q"]

    def run(self, tool, *args, cwd=None):
        r = subprocess.run([tool, *self.opts, *args], cwd=cwd, capture_output=True, text=True)
        if r.returncode:
            die(f"{tool} {' '.join(args)[:200]}: {(r.stderr or r.stdout).strip()[-600:]}")
        return r.stdout

    def update(self, force=False):
        lists = os.path.join(self.dir, "lists")
        fresh = [f for f in os.listdir(lists) if "_Packages" in f and
                 time.time() - os.path.getmtime(os.path.join(lists, f)) < 86400]
        if force or not fresh:
            self.run("apt-get", "update")

    def newest(self, glob):
        """The newest package whose name matches glob (apt-cache's own version order)."""
        names = [n for n in self.run("apt-cache", "pkgnames").split() if fnmatch.fnmatchcase(n, glob)]
        if not names:
            die(f"no arm64 package matches '{glob}'")
        best = names[0]
        for n in names[1:]:
            if subprocess.run(["dpkg", "--compare-versions", self.candidate(n), "gt", self.candidate(best)]).returncode == 0:
                best = n
        return best

    def candidate(self, name):
        for line in self.run("apt-cache", "policy", name).splitlines():
            if line.strip().startswith("Candidate:"):
                return line.split()[1]
        die(f"no candidate version for {name}")

    def resolve(self, specs, closure):
        """NAME=VERSION of specs (and their dependencies when closure)."""
        out = self.run("apt-get", "install", "-s", *specs)
        inst = {}
        for line in out.splitlines():
            if line.startswith("Inst "):
                f = line.split()
                inst[f[1]] = f[2].lstrip("(")
        if closure:
            return inst
        want = {s.split("/")[0] for s in specs}
        return {n: v for n, v in inst.items() if n in want}

    def download(self, name, version):
        debs = os.path.join(self.dir, "debs")
        # apt-get download writes the epoch as %3a; the archive's names have none
        prefixes = (f"{name}_{version.replace(':', '%3a')}_", f"{name}_{version.split(':')[-1]}_")

        def have():
            return [f for f in os.listdir(debs) if f.startswith(prefixes) and f.endswith(".deb")]

        if not have():
            self.run("apt-get", "download", f"{name}={version}", cwd=debs)
            if not have():
                die(f"apt-get download {name}={version} left no .deb in {debs}")
        return os.path.join(debs, have()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--closure", action="store_true")
    ap.add_argument("--exclude", default="")
    ap.add_argument("--only", default="", help="unpack only these paths, e.g. ./boot")
    ap.add_argument("cache")
    ap.add_argument("dest")
    ap.add_argument("pkgs", nargs="+")
    a = ap.parse_args()
    apt = Apt(a.cache)
    apt.update()
    specs = []
    for p in a.pkgs:
        name, _, suite = p.partition("/")
        if any(c in name for c in "*?["):
            name = apt.newest(name)
        specs.append(f"{name}/{suite}" if suite else name)
    try:
        pkgs = apt.resolve(specs, a.closure)
    except SystemExit:
        apt.update(force=True)	# stale lists: versions gone from the mirror
        pkgs = apt.resolve(specs, a.closure)
    skip = set(filter(None, a.exclude.split(",")))
    os.makedirs(a.dest, exist_ok=True)
    for name, version in sorted(pkgs.items()):
        if name in skip:
            continue
        deb = apt.download(name, version)
        if a.only:
            r = subprocess.run(f"dpkg-deb --fsys-tarfile '{deb}' | tar -x -C '{a.dest}' {a.only.replace(',', ' ')}",
                               shell=True, capture_output=True, text=True)
        else:
            r = subprocess.run(["dpkg-deb", "-x", deb, a.dest], capture_output=True, text=True)
        if r.returncode:
            die(f"unpacking {deb}: {r.stderr.strip()}")
        print(f"{name}={version}")
    relative_links(a.dest)


def relative_links(root):
    """Absolute symlinks in -dev packages (libz.so -> /lib/aarch64-linux-gnu/...)
    point into the host: make them relative to root."""
    root = os.path.abspath(root)
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            if os.path.islink(p) and os.readlink(p).startswith("/"):
                t = os.path.join(root, os.readlink(p).lstrip("/"))
                os.unlink(p)
                os.symlink(os.path.relpath(t, d), p)


if __name__ == "__main__":
    main()
