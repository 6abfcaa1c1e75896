#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The README's demo: profile the bundled OpenBLAS transformer decoder with tmabpf.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "demo: tmabpf loads BPF programs: run as root (sudo make demo)" >&2
	exit 2
fi
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
SPECS="--uprobe libopenblas.so.0:cblas_sgemm --uprobe libopenblas.so.0:sgemm_[io][nt]copy_HASWELL --uprobe libopenblas.so.0:sgemm_kernel_HASWELL"
echo "== tmabpf --batch -I 1000 $SPECS --json build/demo.json -- build/workloads/decoder --layers 8 --gen 192"
build/tmabpf --batch -I 1000 --top 8 $SPECS --json build/demo.json -- build/workloads/decoder --layers 8 --gen 192
echo "== JSON report: build/demo.json ($(wc -c < build/demo.json) bytes)"
