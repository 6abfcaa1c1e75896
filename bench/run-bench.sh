#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Benchmarks: print ratios against baselines measured in the same run (not timed tests).
set -eu
cd "$(dirname "$0")/.."
echo "== host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
echo "== switch cost (issue: spine)"
build/bench/switch_cost build/bench build/tmabpf
echo "== uprobe cost (issue: per-function deltas)"
many=$(mktemp -d)
tests/workloads/gen_manyfuncs.sh 1000 "$many" >/dev/null
build/bench/uprobe_cost build/tmabpf "$many/libmanyfuncs.so"
rm -rf "$many"
echo "== decoder overhead (issue: per-function deltas)"
/usr/bin/python3 bench/bench-decoder-overhead.py
echo "== TMA engine cost per tma_compute call, compiled formulas cold vs warm (issue: live view)"
build/bench/tma_cost 200
echo "== --itt: an ITT span against a probed call =="
build/bench/itt_cost build/tmabpf build/libtmabpf-itt.so
echo "== live view cost (issue: live view): tmabpf's own CPU with 1000 threads, 1 s refresh"
build/bench/live_cost build/tmabpf 20 1000
echo "== fleet daemon overhead (issue: fleet mode)"
bench/bench-daemon-overhead.sh
echo "== the CLI's --sample-events on a switch-bound load (issue: fleet mode)"
bench/bench-cli-accounting.sh
if [ "${SOAK:-0}" = 1 ]; then
	echo "== fleet daemon soak, long (SOAK=1)"
	bench/bench-daemon-soak.sh
fi
echo "== sampling overhead (issue: sampling)"
/usr/bin/python3 bench/bench-sampling.py
echo "== --roofline's cost beside a probe (issue: roofline without a PMU)"
/usr/bin/python3 bench/bench-roofline.py
echo "== per-call overhead on llama.cpp (issue: per-token profile)"
/usr/bin/python3 bench/bench-percall.py
