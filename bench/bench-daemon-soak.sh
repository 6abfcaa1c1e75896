#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The daemon's soak test, long: SOAK_THREADS short threads (default 200000) and their processes churned
# over SOAK_SECONDS (default 600) through an LRU threads map of 512 with 600 threads held alive; prints
# RSS early / late / peak, map fill, exits folded and what was lost.  'make test' runs a 40 s variant.
set -eu
cd "$(dirname "$0")/.."
TMABPF_SOAK_THREADS=${SOAK_THREADS:-200000} TMABPF_SOAK_SECONDS=${SOAK_SECONDS:-600} \
	/usr/bin/python3 -m pytest -q -s -p no:cacheprovider tests/test_daemon.py -k soak 2>&1 | grep -E "^soak:|passed|failed"
