#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# /init of the emulated-PMU guest (tests/pmu/pmu_tier.py builds the
# initramfs): mount what tmabpf needs, run /steps.sh, send /out back over the
# console as a base64 tar between markers, power off.
/bin/busybox mkdir -p /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t tracefs none /sys/kernel/tracing
mount -t debugfs none /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
ip link set lo up
ulimit -l unlimited
# the emulated CPU is slow: perf would lower the sampling rate limit after
# "interrupt took too long"; the checks choose their rates themselves (the
# limit cannot be written once the throttling is off: first the limit)
echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
mkdir -p /out
export PATH=/usr/bin:/usr/sbin:/bin:/sbin

# step NAME CMD...: stdout, stderr, exit status and guest seconds into /out/NAME.*
step() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" >/out/$name.out 2>/out/$name.err
	echo $? >/out/$name.rc
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$t0 $t1" >/out/$name.time
	echo "step $name: rc $(cat /out/$name.rc), $t0 -> $t1 s"
}

cat /proc/uptime >/out/boot.uptime
. /steps.sh
dmesg >/out/dmesg.txt
echo "=====TMABPF-OUT-BEGIN====="
tar -C /out -czf - . | base64
echo "=====TMABPF-OUT-END====="
poweroff -f
