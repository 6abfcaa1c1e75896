#!/bin/sh
# Benchmarks: print ratios against baselines measured in the same run (not timed tests).
set -eu
cd "$(dirname "$0")/.."
echo "== host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
echo "== switch cost (issue: spine)"
build/bench/switch_cost build/bench build/tmabpf
