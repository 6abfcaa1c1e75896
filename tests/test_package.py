# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Installing: make install/uninstall with PREFIX and DESTDIR, and the Debian
package (make deb) checked by lintian, then installed with apt into a throwaway
copy of this machine's root (an overlay in a private mount namespace), used, and
purged there; the machine itself is left alone."""
import glob
import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT

with open(os.path.join(ROOT, "user", "lib", "version.h")) as f:
    VERSION = re.search(r'#define TMABPF_VERSION "([^"]*)"', f.read()).group(1)
MAN_PAGES = {"man8": ["tmabpf.8", "tmabpf-daemon.8", "tmabpf-check.8", "tmabpf-roofs.8"], "man1": ["tmabpf-analyze.1", "tmabpf-diff.1", "tmabpf-list.1"]}
# lintian tags kept, each at most informational (the test fails on any error or warning):
#   package-supports-alternative-init-but-no-init.d-script  the daemon is started by systemd only
#   spelling-error-in-binary  "prefered": the kernel's field names (ifa_prefered) in the BPF objects' BTF
# docs/, installed as /usr/share/doc/tmabpf/NAME (issue 32 part 6)
DOCS = sorted(f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith((".md", ".json")))
KEPT_LINTIAN = {"package-supports-alternative-init-but-no-init.d-script", "spelling-error-in-binary"}


def files_under(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


def make(*args, **kw):
    r = subprocess.run(["make", "--no-print-directory", "-C", ROOT, *args], capture_output=True, text=True,
                       timeout=600, **kw)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.mark.parametrize("prefix,etc,units", [("/usr/local", "usr/local/etc", "usr/local/lib/systemd/system"),
                                              ("/usr", "etc", "lib/systemd/system")])
def test_make_install_and_uninstall(tmp_path, prefix, etc, units):
    dest = tmp_path / "root"
    make("install", f"PREFIX={prefix}", f"DESTDIR={dest}")
    p = prefix.lstrip("/")
    want = {f"{p}/bin/tmabpf", f"{p}/lib/tmabpf/libtmabpf-itt.so", f"{units}/tmabpf.service", f"{etc}/tmabpf/daemon.conf",
            f"{p}/share/bash-completion/completions/tmabpf",
            *(f"{p}/share/man/{sec}/{m}" for sec, ms in MAN_PAGES.items() for m in ms),
            *(f"{p}/share/doc/tmabpf/examples/{e}" for e in
              ("tmabpf-daemonset.yaml", "prometheus.yml", "tmabpf-rules.yml", "tmabpf-dashboard.json")),
            *(f"{p}/share/doc/tmabpf/{d}" for d in DOCS)}
    assert set(files_under(dest)) == want
    r = subprocess.run([dest / p / "bin" / "tmabpf", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith(f"tmabpf {VERSION} "), r.stdout
    # the unit runs the installed binary with the installed configuration
    unit = (dest / units / "tmabpf.service").read_text()
    assert f"ExecStart={prefix}/bin/tmabpf daemon --config /{etc}/tmabpf/daemon.conf\n" in unit
    # a second install keeps an edited configuration; uninstall leaves it, and nothing else
    conf = dest / etc / "tmabpf" / "daemon.conf"
    conf.write_text("listen = 127.0.0.1:9999\n")
    assert "kept" in make("install", f"PREFIX={prefix}", f"DESTDIR={dest}").stdout
    assert conf.read_text() == "listen = 127.0.0.1:9999\n"
    assert "kept the edited" in make("uninstall", f"PREFIX={prefix}", f"DESTDIR={dest}").stdout
    assert files_under(dest) == [f"{etc}/tmabpf/daemon.conf"]
    conf.unlink()
    make("install", f"PREFIX={prefix}", f"DESTDIR={dest}")
    make("uninstall", f"PREFIX={prefix}", f"DESTDIR={dest}")
    assert files_under(dest) == []


def test_changelog_version_is_the_programs():
    r = subprocess.run(["dpkg-parsechangelog", "-l", os.path.join(ROOT, "debian", "changelog"), "-S", "Version"],
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == VERSION


def can_overlay_root():
    """None when this host can mount an overlay of / in a private mount namespace, else why not."""
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("unshare", "chroot"):
        if not shutil.which(tool):
            return f"{tool} is missing"
    r = subprocess.run(["unshare", "-m", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs t $d && mkdir $d/u $d/w $d/r "
                        "&& mount -t overlay o -o lowerdir=/,upperdir=$d/u,workdir=$d/w $d/r"],
                       capture_output=True, text=True)
    return None if r.returncode == 0 else f"no overlay of / here: {r.stderr.strip()}"


INSTALL_SCRIPT = r"""
set -eu
R=$2
mount -t tmpfs tmpfs "$R"
mkdir "$R/upper" "$R/work" "$R/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$R/upper,workdir=$R/work" "$R/root"
for d in proc sys dev; do mount --rbind "/$d" "$R/root/$d"; done
mkdir -p "$R/root/tmp/pkg"
cp "$1" "$R/root/tmp/pkg/"
chroot "$R/root" /bin/sh -s "/tmp/pkg/$(basename "$1")" <<'EOF'
set -eu
export DEBIAN_FRONTEND=noninteractive
echo "== apt"
apt-get install -y -q -t bookworm-backports "$1" 2>&1
echo "== version"; tmabpf --version
echo "== man"; man -w tmabpf tmabpf-daemon tmabpf-analyze tmabpf-diff tmabpf-list
echo "== unit"; cat /lib/systemd/system/tmabpf.service
echo "== enabled"; readlink /etc/systemd/system/multi-user.target.wants/tmabpf.service
echo "== verify"
if systemd-analyze verify /lib/systemd/system/tmabpf.service 2>&1; then echo rc=0; else echo "rc=$?"; fi
echo "== conffiles"; cat /var/lib/dpkg/info/tmabpf.conffiles
echo "== completion"; bash -c '. /usr/share/bash-completion/completions/tmabpf; complete -p tmabpf'
echo "== purge"; apt-get purge -y -q tmabpf >/dev/null 2>&1
echo "== after"; ls /usr/bin/tmabpf /etc/tmabpf /lib/systemd/system/tmabpf.service \
	/etc/systemd/system/multi-user.target.wants/tmabpf.service 2>&1 || true
EOF
"""


def sections(out):
    return {m.group(1): m.group(2) for m in re.finditer(r"^== (\w+)\n(.*?)(?=^== |\Z)", out, re.M | re.S)}


def test_deb_builds_passes_lintian_and_installs_into_a_throwaway_root(tmp_path):
    why = can_overlay_root()
    for tool in ("dpkg-buildpackage", "dh", "lintian"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (make deps installs it)")
    r = make("deb")
    deb = r.stdout.strip().splitlines()[-1]
    assert re.fullmatch(rf"build/deb/tmabpf_{re.escape(VERSION)}_\w+\.deb", deb), r.stdout
    deb = os.path.join(ROOT, deb)
    # lintian: no error, no warning, only the informational tags kept above
    with open(os.path.join(ROOT, "build", "deb", "lintian.txt")) as f:
        tags = [l.split()[:3] for l in f if re.match(r"^[EWIPX]: ", l)]
    assert not [t for t in tags if t[0] in ("E:", "W:")], tags
    assert {t[2] for t in tags} <= KEPT_LINTIAN, tags
    # --itt's collector, where tmabpf looks for it (../lib/tmabpf from /usr/bin)
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    assert "./usr/lib/tmabpf/libtmabpf-itt.so" in files, files
    # docs/, every page (dh_compress gzips the larger ones)
    packaged = set(re.findall(r"\./usr/share/doc/tmabpf/([^/\s]+?)(?:\.gz)?$", files, re.M))
    assert set(DOCS) <= packaged, sorted(set(DOCS) - packaged)
    # runtime dependencies: libbpf1 from bookworm-backports and every library tmabpf links
    deps = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True, text=True).stdout
    for lib in ("libbpf1 (>= 1:1.4)", "libelf1", "libdw1", "libpfm4", "libncursesw6", "libmicrohttpd12",
                "libjson-c5", "zlib1g"):
        assert lib in deps, (lib, deps)
    if why:
        pytest.skip(f"package built and checked; not installed: {why}")
    host_had = os.path.exists("/usr/bin/tmabpf")
    (tmp_path / "root").mkdir()
    r = subprocess.run(["unshare", "-m", "sh", "-c", INSTALL_SCRIPT, "sh", deb, str(tmp_path / "root")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    s = sections(r.stdout)
    # every dependency already here (make deps installs them): nothing downloaded
    assert f"Setting up tmabpf ({VERSION})" in s["apt"] and "Need to get 0 B/" in s["apt"], s["apt"]
    assert s["version"].startswith(f"tmabpf {VERSION} (git "), s["version"]
    assert s["man"].split() == ["/usr/share/man/man8/tmabpf.8.gz", "/usr/share/man/man8/tmabpf-daemon.8.gz",
                                "/usr/share/man/man1/tmabpf-analyze.1.gz", "/usr/share/man/man1/tmabpf-diff.1.gz",
                                "/usr/share/man/man1/tmabpf-list.1.gz"], s["man"]
    assert "ExecStart=/usr/bin/tmabpf daemon --config /etc/tmabpf/daemon.conf" in s["unit"]
    assert s["enabled"].strip() == "/lib/systemd/system/tmabpf.service"
    assert s["verify"].strip() == "rc=0", s["verify"]
    assert s["conffiles"].split() == ["/etc/tmabpf/daemon.conf"]
    assert s["completion"].strip() == "complete -F _tmabpf tmabpf"
    assert s["after"].count("No such file or directory") == 4, s["after"]
    assert os.path.exists("/usr/bin/tmabpf") == host_had  # the host is untouched
