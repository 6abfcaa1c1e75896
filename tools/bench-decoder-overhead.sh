#!/bin/sh
# Throughput of the OpenBLAS decoder: alone, under 'tmabpf --uprobe libopenblas.so.0:cblas_sgemm',
# and under bpftrace counting the same probe; best of N runs each, measured in the same run.
set -eu
cd "$(dirname "$0")/.."
N=${N:-3}
ARGS=${DECODER_ARGS:---layers 8 --gen 128}
export OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell
LIB=$(readlink -f /usr/lib/x86_64-linux-gnu/libopenblas.so.0)
tps() { sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p'; }
best() { sort -g | tail -1; }
base=$(for i in $(seq $N); do build/tools/decoder $ARGS | tps; done | best)
tm=$(for i in $(seq $N); do build/tmabpf --quiet --uprobe libopenblas.so.0:cblas_sgemm -- build/tools/decoder $ARGS 2>/dev/null | tps; done | best)
bt=$(for i in $(seq $N); do
	bpftrace -e "uprobe:$LIB:cblas_sgemm { @c = count(); } uretprobe:$LIB:cblas_sgemm { @r = count(); }" \
		-c "build/tools/decoder $ARGS" 2>/dev/null | tps; done | best)
awk -v b="$base" -v t="$tm" -v p="$bt" 'BEGIN {
	printf "decoder tokens/s: alone %.1f | tmabpf --uprobe cblas_sgemm %.1f (loss %.2f%%) | bpftrace entry+return count %.1f (loss %.2f%%)\n",
		b, t, 100 * (1 - t / b), p, 100 * (1 - p / b);
	printf "goal: tmabpf loss <= 2%% and below bpftrace\n" }'
