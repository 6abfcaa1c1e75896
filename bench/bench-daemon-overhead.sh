#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Throughput under 'tmabpf daemon' (defaults, or $DAEMON_ARGS) against no tmabpf, measured in the same
# run as N back-to-back pairs (order alternating to cancel drift); prints the median of the per-pair
# ratios, which the shared box's noise disturbs least:
#   - the OpenBLAS decoder (compute bound, few context switches): tokens/s
#   - bench/pingpong --pin --batch (context-switch bound: 2 switches per round trip, the spine's worst case),
#     under the daemon at its defaults (tasks accounting where every event is derivable) and under
#     --accounting=switch (the spine at every sched_switch) and --accounting=sampled (every event sampled
#     with its own period, nothing per context switch: the PMU hosts' default), each in its own pairs
# plus what the daemon reported of its own cost: BPF CPU (tmabpf_bpf_cpu_ratio) and user-space CPU
# (process_cpu_seconds_total) per second.
set -eu
cd "$(dirname "$0")/.."
N=${N:-7}
DEC_ARGS=${DECODER_ARGS:---layers 8 --gen 48}
PP_ARGS=${PINGPONG_ARGS:---pin --batch -n 300000}
DAEMON_ARGS=${DAEMON_ARGS:-}
TMABPF=${TMABPF:-build/tmabpf}
extra=
export OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell
tmp=$(mktemp -d)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT

metric() { curl -s "$url" | sed -n "s/^$1 //p"; }

start_daemon() {
	# shellcheck disable=SC2086
	"$TMABPF" daemon --listen 127.0.0.1:0 -I 1000 $DAEMON_ARGS $extra 2>"$tmp/daemon.err" &
	dpid=$!
	for _ in $(seq 100); do
		grep -q "serving http://" "$tmp/daemon.err" 2>/dev/null && break
		sleep 0.1
	done
	url=$(grep -o 'http://[^ ]*/metrics' "$tmp/daemon.err" | head -1)
	grep -o 'tmabpf: accounting: [a-z-]*' "$tmp/daemon.err" | head -1 | sed 's/^tmabpf: //' >"$tmp/mode$extra"
	sleep 1.2	# steady state
	cpu0=$(metric process_cpu_seconds_total)
	t0=$(date +%s.%N)
}

stop_daemon() {	# $1: workload name
	sleep 1.1	# a refresh after the workload
	echo "$(metric tmabpf_bpf_cpu_ratio) $(metric process_cpu_seconds_total) $cpu0 $t0 $(date +%s.%N)" >>"$tmp/self.$1"
	kill -TERM "$dpid"
	wait "$dpid" || true
	dpid=
}

dec() { build/workloads/decoder $DEC_ARGS | sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p'; }
# "WALL:CPU": ns per round trip, elapsed and CPU (user + system of both threads, which other tenants
# of a shared box disturb less; BPF run at sched_switch is charged to the threads switching)
pp() { build/bench/pingpong $PP_ARGS | sed -n 's/.* ns_per_roundtrip=\([0-9.]*\).*cpu_ns_per_roundtrip=\([0-9.]*\).*/\1:\2/p'; }
ppsw() { pp; }	# the same load; its pairs run the daemon with --accounting=switch
ppsa() { pp; }	# ... with --accounting=sampled

pair() {	# $1: workload; one run alone and one under the daemon, in the order $2
	if [ "$2" = 0 ]; then
		a=$($1)
		start_daemon; d=$($1); stop_daemon "$1"
	else
		start_daemon; d=$($1); stop_daemon "$1"
		a=$($1)
	fi
	echo "$a $d" >>"$tmp/pairs.$1"
}

for i in $(seq "$N"); do
	pair dec $((i % 2))
	pair pp $((i % 2))
	extra=--accounting=switch
	pair ppsw $((i % 2))
	extra=--accounting=sampled
	pair ppsa $((i % 2))
	extra=
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# loss in throughput per pair: tokens/s falls, ns per round trip rises
dec_loss=$(awk '{ print 100 * (1 - $2 / $1) }' "$tmp/pairs.dec" | median)
# pingpong pairs: "aWALL:aCPU dWALL:dCPU"; field 1 wall, 2 CPU
ppcol() { awk -v f="$2" '{ split($1, a, ":"); split($2, d, ":"); print a[f], d[f] }' "$tmp/pairs.$1"; }
pploss() { ppcol "$1" "$2" | awk '{ print 100 * (1 - $1 / $2) }' | median; }
ppmed() { ppcol "$1" "$2" | awk -v c="$3" '{ print $c }' | median; }

dec_a=$(awk '{ print $1 }' "$tmp/pairs.dec" | median); dec_d=$(awk '{ print $2 }' "$tmp/pairs.dec" | median)

self() { awk '{ printf "%.4f %.4f\n", 100 * $1, 100 * ($2 - $3) / ($5 - $4) }' "$tmp/self.$1" | sort -g | awk '
	{ b[NR] = $1; u[NR] = $2 } END { m = int((NR + 1) / 2); printf "BPF %.3f%% + user space %.3f%% of a CPU", b[m], u[m] }'; }
echo "host: $(nproc) CPUs, $(uname -r); $N pairs each, medians"
printf "decoder  tokens/s: alone %s, under the daemon %s: loss %.2f%% (per-pair median); daemon %s\n" \
	"$dec_a" "$dec_d" "$dec_loss" "$(self dec)"
for w in pp ppsw ppsa; do
	case $w in
	pp) what="daemon at defaults ($(cat "$tmp/mode"))";;
	ppsw) what="daemon --accounting=switch ($(cat "$tmp/mode--accounting=switch"))";;
	ppsa) what="daemon --accounting=sampled ($(cat "$tmp/mode--accounting=sampled"))";;
	esac
	printf "pingpong (pinned, 2 switches per round trip), %s:\n" "$what"
	printf "  ns/roundtrip: alone %s, under the daemon %s: throughput loss %.2f%% (per-pair median)\n" \
		"$(ppmed $w 1 1)" "$(ppmed $w 1 2)" "$(pploss $w 1)"
	printf "  CPU ns/roundtrip: alone %s, under the daemon %s: CPU cost %+.2f%% (per-pair median); daemon %s\n" \
		"$(ppmed $w 2 1)" "$(ppmed $w 2 2)" "$(ppcol $w 2 | awk '{ print 100 * ($2 / $1 - 1) }' | median)" "$(self $w)"
	printf "  per-pair throughput losses: %s\n" "$(ppcol $w 1 | awk '{ printf "%.1f ", 100 * (1 - $1 / $2) }')"
	printf "  per-pair CPU costs: %s\n" "$(ppcol $w 2 | awk '{ printf "%+.1f ", 100 * ($2 / $1 - 1) }')"
done
echo "per-pair decoder losses: $(awk '{ printf "%.1f ", 100 * (1 - $2 / $1) }' "$tmp/pairs.dec")"
echo "goal: <= 1% throughput loss at defaults"
