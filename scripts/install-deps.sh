#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Install everything tmabpf needs to build, test and run, from Debian's archive only.
# Idempotent: does nothing when all packages are already present.
# Usage: scripts/install-deps.sh [--check]   (--check only lists what is missing)
set -eu

BPO_PKGS="libbpf-dev libbpf1 bpftool linux-perf"
PKGS="clang-19 llvm-19 make gcc g++ binutils pkg-config libelf-dev libdw-dev zlib1g-dev libzstd-dev \
libpfm4-dev libncurses-dev libmicrohttpd-dev libjson-c-dev libprotobuf-c-dev protobuf-c-compiler golang-go \
libcapstone-dev \
libopenblas-dev libopenblas0-pthread libblas3 libdnnl-dev libomp-14-dev \
bpftrace tmux time util-linux prometheus python3 python3-pytest libclang-rt-19-dev libcap2-bin libc6-dbg likwid mbw librsvg2-bin chromium \
go-md2man man-db debhelper dpkg-dev lintian strace systemd python3-yaml python3-jsonschema \
gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm debian-archive-keyring"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
bpo_needed=0
# libbpf >= 1.4 and bpftool >= 7.5 are only in bookworm-backports on Debian 12.
libbpf_ver=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null || true)
bpftool_ver=$(dpkg-query -W -f='${Version}' bpftool 2>/dev/null || true)
if [ -z "$libbpf_ver" ] || dpkg --compare-versions "$libbpf_ver" lt "1:1.4"; then bpo_needed=1; fi
if [ -z "$bpftool_ver" ] || dpkg --compare-versions "$bpftool_ver" lt "7.5"; then bpo_needed=1; fi
# perf 6.12 is the oracle of the TMA tests (its metric tables and expr.y rules): bookworm-backports.
perf_ver=$(dpkg-query -W -f='${Version}' linux-perf 2>/dev/null || true)
if [ -z "$perf_ver" ] || dpkg --compare-versions "$perf_ver" lt "6.12"; then bpo_needed=1; fi

if [ -z "$missing" ] && [ $bpo_needed = 0 ]; then
	echo "deps: all packages present (libbpf-dev $libbpf_ver, bpftool $bpftool_ver, linux-perf $perf_ver)"
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "deps: missing:$missing$( [ $bpo_needed = 1 ] && echo ' (libbpf-dev>=1.4 bpftool>=7.5 linux-perf 6.12 from bookworm-backports)')"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install:$missing $BPO_PKGS (run: sudo make deps)" >&2
	exit 2
fi

. /etc/os-release
codename=${VERSION_CODENAME:-bookworm}
if [ "$codename" = bookworm ] && ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo "deps: adding bookworm-backports to /etc/apt/sources.list.d/bookworm-backports.sources"
	cat > /etc/apt/sources.list.d/bookworm-backports.sources <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $PKGS
if [ "$codename" = bookworm ]; then
	apt-get install -y -q --no-install-recommends -t bookworm-backports $BPO_PKGS
else
	apt-get install -y -q --no-install-recommends $BPO_PKGS
fi
echo "deps: installed"
