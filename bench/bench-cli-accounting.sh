#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The CLI's accounting on a context-switch-bound load: bench/pingpong --pin --batch (2 switches per
# round trip) alone, under 'tmabpf -a --sample-events' (accounting sampled: the task iterator and
# event samples, nothing per context switch) and under 'tmabpf -a' with the same events (the
# per-switch program), as N back-to-back triples in rotating order; prints each mode's median
# per-triple throughput loss against the run alone.
set -eu
cd "$(dirname "$0")/.."
N=${N:-7}
PP_ARGS=${PINGPONG_ARGS:---pin --batch -n 300000}
EVENTS=${EVENTS:-page-faults,task-clock}
TMABPF=${TMABPF:-build/tmabpf}
tmp=$(mktemp -d)
tpid=
trap '[ -n "$tpid" ] && kill "$tpid" 2>/dev/null; rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086
pp() { build/bench/pingpong $PP_ARGS | sed -n 's/.* ns_per_roundtrip=\([0-9.]*\).*/\1/p'; }
alone() { pp; }
under() {	# $1: extra tmabpf options
	# shellcheck disable=SC2086
	"$TMABPF" -a -e "$EVENTS" --quiet -d 600 $1 >/dev/null 2>"$tmp/err" &
	tpid=$!
	for _ in $(seq 100); do	# attached: its first line after loading
		grep -q "accounting\|sample-events\|tmabpf" "$tmp/err" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	r=$(pp)
	kill -INT "$tpid"
	wait "$tpid" || true
	tpid=
	echo "$r"
}
sampled() { under --sample-events; }
switch() { under ""; }

for i in $(seq "$N"); do
	case $((i % 3)) in
	0) a=$(alone); s=$(sampled); w=$(switch);;
	1) s=$(sampled); w=$(switch); a=$(alone);;
	*) w=$(switch); a=$(alone); s=$(sampled);;
	esac
	echo "$a $s $w" >>"$tmp/triples"
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
loss() { awk -v c="$1" '{ print 100 * (1 - $1 / $c) }' "$tmp/triples" | median; }
echo "host: $(nproc) CPUs, $(uname -r); $N triples, medians; pingpong $PP_ARGS; events $EVENTS"
printf "ns/roundtrip: alone %s, --sample-events %s, per-switch %s\n" "$(awk '{ print $1 }' "$tmp/triples" | median)" \
	"$(awk '{ print $2 }' "$tmp/triples" | median)" "$(awk '{ print $3 }' "$tmp/triples" | median)"
printf "throughput loss (per-triple median): --sample-events %.2f%%, per-switch %.2f%%\n" "$(loss 2)" "$(loss 3)"
printf "per-triple losses, --sample-events: %s\n" "$(awk '{ printf "%.1f ", 100 * (1 - $1 / $2) }' "$tmp/triples")"
printf "per-triple losses, per-switch: %s\n" "$(awk '{ printf "%.1f ", 100 * (1 - $1 / $3) }' "$tmp/triples")"
echo "goal: --sample-events within 1% of alone (nothing per context switch)"
