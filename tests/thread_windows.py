# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Thread accounting at the edges of a run's window: each thread's on-CPU + blocked + runqueue time
is its time in the window (from the window's start, or its first sight: fork, or exec for -- CMD, to
its exit or the stop) within 1 %; and against the kernel's own accounting of it,
/proc/PID/task/TID/schedstat (field 1: runtime ns, field 2: runqueue wait ns), read before and
after the run: the on-CPU time is never more than the runtime that went by, the runqueue time never
more than the wait that went by (the kernel counts a woken thread's wait too, tmabpf books that as
blocked).  On-CPU time is the scheduler's runtime, which leaves out hypervisor steal: the lower
bound allows for the steal seen (StealMeter), never the upper one."""
import os

REL = 0.01
SLACK_NS = 2e6	# the runtime's lag on a running thread (a tick) and the reads' own time


def schedstat(pid, tid):
    """(runtime ns, runqueue wait ns) of a thread, or None when it is gone."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            run, wait = f.read().split()[:2]
    except (OSError, ValueError):
        return None
    return int(run), int(wait)


def all_schedstats(pids=None):
    """{tid: (pid, runtime, wait)} of every thread of pids (every process when None)."""
    out = {}
    for p in pids or [int(d) for d in os.listdir("/proc") if d.isdigit()]:
        try:
            tids = [int(t) for t in os.listdir("/proc/%d/task" % p)]
        except OSError:
            continue
        for t in tids:
            s = schedstat(p, t)
            if s:
                out[t] = (p,) + s
    return out


def window_ns(rep, t):
    """The thread's time in the report's window."""
    start, stop = rep["start_ns"], rep["start_ns"] + rep["duration_ns"]
    return (t["exit_ns"] if t["exited"] else stop) - max(start, t["first_seen_ns"])


def times_ns(t):
    return t["oncpu_ns"] + t["offcpu_blocked_ns"] + t["offcpu_runqueue_ns"]


def bad_windows(rep, steal_ns, tids=None):
    """Threads (of tids, or all) whose on + off CPU is not their time in the window."""
    bad = []
    for t in rep["threads"]:
        if tids is not None and t["tid"] not in tids:
            continue
        w, s = window_ns(rep, t), times_ns(t)
        if not w * (1 - REL) - steal_ns - SLACK_NS <= s <= w * (1 + REL) + SLACK_NS:
            bad.append((t["pid"], t["tid"], t["comm"], t["oncpu_ns"], t["offcpu_blocked_ns"],
                        t["offcpu_runqueue_ns"], w))
    return bad


def bad_against_schedstat(rep, before, after, tids=None):
    """Live threads (of tids, or all) read before and after the run whose on-CPU time is more than
    the runtime that went by, or whose runqueue time is more than the runqueue wait that did."""
    bad = []
    for t in rep["threads"]:
        tid = t["tid"]
        if t["exited"] or (tids is not None and tid not in tids) or tid not in before or tid not in after:
            continue
        if before[tid][0] != after[tid][0] or before[tid][0] != t["pid"]:
            continue	# a tid reused
        run, wait = after[tid][1] - before[tid][1], after[tid][2] - before[tid][2]
        if t["oncpu_ns"] > run * (1 + REL) + SLACK_NS or t["offcpu_runqueue_ns"] > wait * (1 + REL) + SLACK_NS:
            bad.append((t["pid"], tid, t["comm"], t["oncpu_ns"], run, t["offcpu_runqueue_ns"], wait))
    return bad
