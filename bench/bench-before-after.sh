#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# This tree's per-switch and per-hit BPF time against REV's, measured in one run, alternately:
# a change that should not touch the BPF side (a user-space refactor) prints ratios near 1.00.
#   bench/bench-before-after.sh REV [ROUNDS]
# REV's tmabpf is built in a temporary worktree (removed at the end).
set -eu
rev=${1:?usage: bench/bench-before-after.sh REV [ROUNDS]}
rounds=${2:-3}
cd "$(dirname "$0")/.."
make --no-print-directory -j2 build/tmabpf build/bench/switch_cost build/bench/uprobe_cost >/dev/null
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/tree" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/tree" "$rev"
make --no-print-directory -C "$tmp/tree" -j2 build/tmabpf >/dev/null
many="$tmp/many"
mkdir -p "$many"
tests/workloads/gen_manyfuncs.sh 1000 "$many" >/dev/null
col() {	# the BPF ns of a config's row (its name, then numbers): its last number
	awk -v k="$1" '$0 ~ "^" k " +[0-9]" { v = $NF } END { print v }'
}
: >"$tmp/sw.before"; : >"$tmp/sw.after"; : >"$tmp/up.before"; : >"$tmp/up.after"
i=0
while [ "$i" -lt "$rounds" ]; do
	build/bench/switch_cost build/bench "$tmp/tree/build/tmabpf" | col "tmabpf -a" >>"$tmp/sw.before"
	build/bench/switch_cost build/bench build/tmabpf | col "tmabpf -a" >>"$tmp/sw.after"
	build/bench/uprobe_cost "$tmp/tree/build/tmabpf" "$many/libmanyfuncs.so" | col "tmabpf --uprobe" >>"$tmp/up.before"
	build/bench/uprobe_cost build/tmabpf "$many/libmanyfuncs.so" | col "tmabpf --uprobe" >>"$tmp/up.after"
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for k in sw up; do
	b=$(median "$tmp/$k.before"); a=$(median "$tmp/$k.after")
	what=$([ "$k" = sw ] && echo "BPF ns per switch (tmabpf -a)" || echo "BPF ns per call, 2 hits (tmabpf --uprobe)")
	awk -v w="$what" -v b="$b" -v a="$a" -v r="$rev" -v n="$rounds" \
		'BEGIN { printf "%s: %s %.0f, this tree %.0f: ratio %.2f (median of %d alternating rounds)\n", w, r, b, a, (b > 0 ? a / b : 0), n }'
done
