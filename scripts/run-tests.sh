#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Run every test (unit programs, fuzz smoke runs, integration against ground truth and peers).
# Needs root (BPF). Ends with a line "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "run-tests: tmabpf's tests load BPF programs: run as root (sudo make test)" >&2
	exit 2
fi
# bpftrace and tracefs-based checks need tracefs; mount it when the host has not.
if ! grep -q tracefs /proc/mounts && [ -d /sys/kernel/tracing ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
ulimit -l unlimited 2>/dev/null || true
mkdir -p build
/usr/bin/python3 -m pytest -v -p no:cacheprovider --junitxml=build/junit.xml tests/ "$@"
rc=$?
/usr/bin/python3 - <<'PY'
import xml.etree.ElementTree as ET
try:
    root = ET.parse("build/junit.xml").getroot()
except Exception:
    print("0 passed, 1 failed")
    raise SystemExit
suites = [root] if root.tag == "testsuite" else list(root)
tests = sum(int(s.get("tests", 0)) for s in suites)
failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(f"{tests - failed - skipped} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
