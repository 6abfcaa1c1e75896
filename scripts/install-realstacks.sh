#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Install the real inference stacks that tests/test_realstack_*.py profile:
#   torch  python3-torch (Debian main; OpenBLAS and oneDNN underneath)
#   mkl    libmkl-rt 2020 (Debian non-free) through a private apt sources list and lists
#          directory under $CACHE: non-free is never enabled system-wide
#   llama  node-llama-cpp and its prebuilt linux-x64 llama.cpp from the npm registry,
#          pinned, installed into $CACHE/npm (outside the repository)
#   pprof  pprof-format from the npm registry, pinned, into $CACHE/npm-pprof: the pprof
#          reader and writer of Pyroscope's Node.js SDK, a second reader of tmabpf's profiles
#          beside go tool pprof (no Pyroscope, Parca or Alloy server is in Debian or npm)
# Idempotent and offline once installed: a stack already present costs a dpkg query or a
# stat.  Usage: scripts/install-realstacks.sh [torch|mkl|llama|pprof]...   (default: all four)
# Prints one line per stack: "realstacks: NAME ok|installed|unavailable: REASON".
# Exit status 0 even when a stack is unavailable (the tests skip, naming the reason).
set -u

CACHE=${TMABPF_REALSTACKS_CACHE:-/var/cache/tmabpf-realstacks}
NODE_LLAMA_CPP_VERSION=3.22.1
PPROF_FORMAT_VERSION=2.3.2
export DEBIAN_FRONTEND=noninteractive
APT_LOCK="-o DPkg::Lock::Timeout=600"

have_pkg() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "realstacks: $1 unavailable: installing needs root (sudo $0 $1)"
		return 1
	fi
}

install_torch() {
	if have_pkg python3-torch; then
		echo "realstacks: torch ok ($(dpkg-query -W -f='${Version}' python3-torch))"
		return
	fi
	need_root torch || return
	if apt-get install -y -q $APT_LOCK --no-install-recommends python3-torch >"$CACHE/torch.log" 2>&1 ||
	   { apt-get update -q $APT_LOCK >>"$CACHE/torch.log" 2>&1 &&
	     apt-get install -y -q $APT_LOCK --no-install-recommends python3-torch >>"$CACHE/torch.log" 2>&1; }; then
		echo "realstacks: torch installed ($(dpkg-query -W -f='${Version}' python3-torch))"
	else
		echo "realstacks: torch unavailable: apt-get install python3-torch failed: $(tail -n 1 "$CACHE/torch.log")"
	fi
}

# A private apt configuration: its own sources list (bookworm non-free only) and lists
# directory, so the system's apt never sees non-free.
mkl_apt() {
	apt-get -q $APT_LOCK \
		-o Dir::Etc::SourceList="$CACHE/apt/sources.list" \
		-o Dir::Etc::SourceParts="$CACHE/apt/sources.list.d" \
		-o Dir::State::Lists="$CACHE/apt/lists" \
		-o Dir::Cache="$CACHE/apt/cache" "$@"
}

install_mkl() {
	if have_pkg libmkl-rt; then
		echo "realstacks: mkl ok ($(dpkg-query -W -f='${Version}' libmkl-rt))"
		return
	fi
	need_root mkl || return
	. /etc/os-release
	codename=${VERSION_CODENAME:-bookworm}
	mkdir -p "$CACHE/apt/sources.list.d" "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $codename non-free" \
		>"$CACHE/apt/sources.list"
	if ! mkl_apt update >"$CACHE/mkl.log" 2>&1; then
		echo "realstacks: mkl unavailable: the archive refused the private non-free list: $(grep -E '^(E|Err):' "$CACHE/mkl.log" | head -n 1)"
		return
	fi
	# libmkl-rt's dependencies outside non-free (libc6, libgcc-s1) are on every system.
	if mkl_apt install -y --no-install-recommends libmkl-rt >>"$CACHE/mkl.log" 2>&1; then
		echo "realstacks: mkl installed ($(dpkg-query -W -f='${Version}' libmkl-rt))"
	else
		echo "realstacks: mkl unavailable: apt-get install libmkl-rt (private non-free list) failed: $(grep -E '^E:' "$CACHE/mkl.log" | head -n 1)"
	fi
}

install_llama() {
	dir="$CACHE/npm"
	pkg="$dir/node_modules/node-llama-cpp/package.json"
	bin="$dir/node_modules/@node-llama-cpp/linux-x64/bins"
	if [ -f "$pkg" ] && [ -d "$bin" ] &&
	   grep -q "\"version\": \"$NODE_LLAMA_CPP_VERSION\"" "$pkg"; then
		echo "realstacks: llama ok (node-llama-cpp $NODE_LLAMA_CPP_VERSION)"
		return
	fi
	node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
	if [ "$node_major" -lt 20 ]; then
		echo "realstacks: llama unavailable: node-llama-cpp $NODE_LLAMA_CPP_VERSION needs Node.js >= 20 (this host: $(node --version 2>/dev/null || echo none); Debian 12 ships 18)"
		return
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "realstacks: llama unavailable: npm not found (apt-get install npm)"
		return
	fi
	if [ "$(uname -m)" != x86_64 ]; then
		echo "realstacks: llama unavailable: @node-llama-cpp/linux-x64 is x86-64 only (this host: $(uname -m))"
		return
	fi
	mkdir -p "$dir"
	# --ignore-scripts: no postinstall that downloads or builds llama.cpp; the prebuilt
	# binaries come from the pinned @node-llama-cpp/linux-x64 package itself.
	if (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --omit=optional \
		--cache "$CACHE/npm-cache" \
		"node-llama-cpp@$NODE_LLAMA_CPP_VERSION" "@node-llama-cpp/linux-x64@$NODE_LLAMA_CPP_VERSION") \
		>"$CACHE/llama.log" 2>&1; then
		echo "realstacks: llama installed (node-llama-cpp $NODE_LLAMA_CPP_VERSION)"
	else
		echo "realstacks: llama unavailable: npm install failed: $(grep -i 'err' "$CACHE/llama.log" | head -n 1)"
	fi
}

install_pprof() {
	dir="$CACHE/npm-pprof"
	pkg="$dir/node_modules/pprof-format/package.json"
	if [ -f "$pkg" ] && grep -q "\"version\": \"$PPROF_FORMAT_VERSION\"" "$pkg"; then
		echo "realstacks: pprof ok (pprof-format $PPROF_FORMAT_VERSION)"
		return
	fi
	if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
		echo "realstacks: pprof unavailable: npm or node not found (apt-get install npm)"
		return
	fi
	mkdir -p "$dir"
	if (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --cache "$CACHE/npm-cache" \
		"pprof-format@$PPROF_FORMAT_VERSION") >"$CACHE/pprof.log" 2>&1; then
		echo "realstacks: pprof installed (pprof-format $PPROF_FORMAT_VERSION)"
	else
		echo "realstacks: pprof unavailable: npm install failed: $(grep -i 'err' "$CACHE/pprof.log" | head -n 1)"
	fi
}

mkdir -p "$CACHE" 2>/dev/null || { echo "realstacks: cannot create $CACHE (run as root)"; exit 0; }
[ $# = 0 ] && set -- torch mkl llama pprof
for s in "$@"; do
	case $s in
	torch) install_torch ;;
	mkl) install_mkl ;;
	llama) install_llama ;;
	pprof) install_pprof ;;
	*) echo "realstacks: unknown stack '$s' (torch, mkl, llama, pprof)" >&2; exit 2 ;;
	esac
done
exit 0
