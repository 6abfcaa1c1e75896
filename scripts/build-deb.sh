#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# make deb: build the Debian package from a copy of the checkout's files (tracked and untracked,
# not ignored) in build/deb/tmabpf-VERSION, with dpkg-buildpackage and debian/, then run lintian.
# Prints the .deb's path last.  make sets VERSION (user/lib/version.h) and TMABPF_GIT (what --version
# reports as git).
set -eu
cd "$(dirname "$0")/.."
version=${VERSION:?run it as make deb}
for tool in dpkg-buildpackage dh lintian go-md2man; do
	command -v $tool >/dev/null || { echo "build-deb: $tool is missing (run: make deps)" >&2; exit 2; }
done
out=build/deb
src=$out/tmabpf-$version
rm -rf "$out"
mkdir -p "$src"
git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"
export TMABPF_GIT="${TMABPF_GIT:?run it as make deb}"
(cd "$src" && dpkg-buildpackage -b -us -uc -j2) > "$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }
deb=$(ls "$out"/tmabpf_"$version"_*.deb)
lintian --fail-on error --display-info "$out"/tmabpf_"$version"_*.changes | tee "$out/lintian.txt" ||
	{ echo "build-deb: lintian found errors" >&2; exit 1; }
echo "$deb"
