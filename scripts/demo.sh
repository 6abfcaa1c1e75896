#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The README's demo: profile the bundled OpenBLAS transformer decoder with tmabpf.
set -euf  # -f: the uprobe globs stay globs
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "demo: tmabpf loads BPF programs: run as root (sudo make demo)" >&2
	exit 2
fi
# OpenBLAS picks its kernels for this CPU (HASWELL, SKYLAKEX, COOPERLAKE...): the globs probe every
# CPU's, and the ones it picked fire (forcing OPENBLAS_CORETYPE hid that the README's did not match)
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
SPECS="--uprobe libopenblas.so.0:cblas_sgemm --uprobe libopenblas.so.0:sgemm_kernel_*"
echo "== tmabpf --batch -I 1000 $SPECS --json build/demo.json -- build/workloads/decoder --layers 8 --gen 192"
build/tmabpf --batch -I 1000 --top 8 $SPECS --json build/demo.json -- build/workloads/decoder --layers 8 --gen 192
echo "== JSON report: build/demo.json ($(wc -c < build/demo.json) bytes)"
