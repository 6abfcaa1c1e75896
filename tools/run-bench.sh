#!/bin/sh
# Benchmarks: print ratios against baselines measured in the same run (not timed tests).
set -eu
cd "$(dirname "$0")/.."
echo "== host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
echo "== switch cost (issue: spine)"
build/bench/switch_cost build/bench build/tmabpf
echo "== uprobe cost (issue: per-function deltas)"
many=$(mktemp -d)
tools/gen_manyfuncs.sh 1000 "$many" >/dev/null
build/bench/uprobe_cost build/tmabpf "$many/libmanyfuncs.so"
rm -rf "$many"
tools/bench-decoder-overhead.sh
echo "== sampling overhead (issue: sampling)"
/usr/bin/python3 tools/bench-sampling.py
