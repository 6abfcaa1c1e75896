# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The daemon's host and cgroup totals under process churn, against the kernel's /proc/stat: a real
Prometheus evaluates deploy/'s recording rules on a real daemon.  The host rule before summed the
per-pid series, which come and go with the processes: it read 1.85 CPUs where /proc/stat said 1.99
(here 1.889 against 1.999); tmabpf:host_oncpu_cpus:rate1m now is rate() of the daemon's own
tmabpf_host_oncpu_seconds_total (1.994).  80 s of churn (the rule's window is one minute), and the
issue's check: 5 minutes of churn, every minute and the whole, with the refresh age."""
import json
import os
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import ROOT
from daemon_util import CHURN, Cgroup, Daemon, Prometheus, select

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def busy_ns():
    """The host's busy CPU time (/proc/stat: user nice system irq softirq; guest time is in user,
    steal is the hypervisor's and not the guest's runtime)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:8]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) * TICK_NS


def query_at(prom, q, t):
    url = f"http://127.0.0.1:{prom.port}/api/v1/query?" + urllib.parse.urlencode({"query": q, "time": f"{t:.3f}"})
    with urllib.request.urlopen(url, timeout=10) as r:
        d = json.load(r)
    assert d["status"] == "success", d
    return [(x["metric"], float(x["value"][1])) for x in d["data"]["result"]]


def busy_at(samples, t):
    """/proc/stat busy ns at unix time t, interpolated between the samples around it."""
    for (ta, ba), (tb, bb) in zip(samples, samples[1:]):
        if ta <= t <= tb:
            return ba + (bb - ba) * (t - ta) / (tb - ta)
    raise AssertionError(f"{t} outside the samples {samples[0][0]}..{samples[-1][0]}")


def test_host_rule_matches_proc_stat_under_churn(tmp_path):
    """A real Prometheus scrapes a real daemon every second and evaluates deploy/'s recording rules
    while processes churn (600 processes, 6000 threads over 80 s): the host rule over its last
    minute against /proc/stat's busy time over the same minute, within 2 %."""
    rules = os.path.join(ROOT, "deploy", "prometheus", "tmabpf-rules.yml")
    # refreshes every 250 ms: Prometheus stamps a sample at its scrape, its value is of the refresh
    # before (tmabpf_refresh_age_seconds), and the ages at the window's two ends differ by up to an
    # interval: 1 s of 60 at the default interval, 1.7 % of the rate
    with Daemon("-I", "250") as d:
        prom = Prometheus(str(tmp_path), d.addr, rules=rules)
        churn = subprocess.Popen([CHURN, "--threads", "6000", "--procs", "600", "--seconds", "80"],
                                 stdout=subprocess.DEVNULL)
        # the host busy as in the case (1.99 CPUs read as 1.85): one spinner per CPU, niced so
        # the churn runs; on an idle host a few ms a second of anything dominates a 2 % bound
        spinners = [subprocess.Popen(["nice", "-n", "19", "sh", "-c", "while :; do :; done"])
                    for _ in range(os.cpu_count())]
        samples = []
        try:
            t_end = time.time() + 75
            while time.time() < t_end:
                samples.append((time.time(), busy_ns()))
                time.sleep(0.5)
            t = samples[-1][0] - 3	# scraped and evaluated by then
            rule = query_at(prom, "tmabpf:host_oncpu_cpus:rate1m", t)
            old = query_at(prom, "sum by (instance) (rate(tmabpf_oncpu_seconds_total[1m]))", t)
            cgroups = query_at(prom, "sum by (instance) (tmabpf:cgroup_oncpu_cpus:rate1m)", t)
            age = query_at(prom, "max_over_time(tmabpf_refresh_age_seconds[1m])", t)
        finally:
            for p in spinners + [churn]:
                p.kill()
                p.wait()
            prom.stop()
        assert d.stop() == 0
    proc = (busy_at(samples, t) - busy_at(samples, t - 60)) / 60e9
    print(f"host on-CPU over the minute to t: /proc/stat {proc:.3f} CPUs, tmabpf:host_oncpu_cpus:rate1m "
          f"{rule[0][1]:.3f}, the rule before (per-pid series summed) {old[0][1]:.3f}; refresh age at most "
          f"{age[0][1]:.2f} s")
    assert len(rule) == 1 and abs(rule[0][1] - proc) <= 0.02 * proc, (rule, proc)
    # every thread is in a cgroup: the cgroups' totals add up to the host's
    assert abs(cgroups[0][1] - rule[0][1]) <= 0.01 * rule[0][1], (cgroups, rule)


def test_host_rule_and_refresh_age_over_5_minutes_of_churn(tmp_path):
    """The issue's check: a real Prometheus evaluates deploy/'s host rule while processes churn for 5
    minutes (400 threads and 40 processes a second, one niced spinner per CPU); the rule at the end of
    each of the 5 minutes, and the 5 minutes' increase of the host counter, within 2 % of /proc/stat's
    busy time over the same span; the refresh age Prometheus scraped stays under 2 refresh intervals
    throughout (the phases' times are printed: tmabpf_refresh_phase_seconds_total).  Here: each minute
    within 0.4 %, max age 0.86 s; the symbolizer's rebuilds under this churn (19 in the run before
    test_daemon's test_symbolizer_forgets_exited_processes_and_keeps_symbols, 3 after) cost the
    refreshes 15.8 s of symbolizing then, 4.3 s now."""
    rules = os.path.join(ROOT, "deploy", "prometheus", "tmabpf-rules.yml")
    interval, warmup, span = 0.5, 20, 300
    with Daemon("-I", str(int(interval * 1000))) as d:
        prom = Prometheus(str(tmp_path), d.addr, rules=rules)
        churn = subprocess.Popen([CHURN, "--threads", str(400 * (warmup + span + 10)), "--procs",
                                  str(40 * (warmup + span + 10)), "--seconds", str(warmup + span + 10)],
                                 stdout=subprocess.DEVNULL)
        spinners = [subprocess.Popen(["nice", "-n", "19", "sh", "-c", "while :; do :; done"])
                    for _ in range(os.cpu_count())]
        samples = []
        try:
            t0 = time.time() + warmup	# the processes' files first named before the window
            while time.time() < t0 + span + 4:
                samples.append((time.time(), busy_ns()))
                time.sleep(0.5)
            assert churn.poll() is None, "the churn ended inside the window"
            t_end = t0 + span
            minutes = [(t, query_at(prom, "tmabpf:host_oncpu_cpus:rate1m", t))
                       for t in range(int(t0) + 60, int(t_end) + 1, 60)]
            total = query_at(prom, "sum by (instance) (increase(tmabpf_host_oncpu_seconds_total[5m]))", int(t_end))
            age = query_at(prom, "max_over_time(tmabpf_refresh_age_seconds[5m])", int(t_end))
            scrapes = query_at(prom, "count_over_time(tmabpf_refresh_age_seconds[5m])", int(t_end))
        finally:
            for p in spinners + [churn]:
                p.kill()
                p.wait()
            prom.stop()
        m = d.metrics()
        assert d.stop() == 0
    phases = {l["phase"]: round(v, 2) for l, v in select(m, "tmabpf_refresh_phase_seconds_total")}
    rebuilds = select(m, "tmabpf_sampler_symbolizer_rebuilds_total")
    print(f"refresh phases (s): {phases}; symbolizer rebuilds {rebuilds[0][1] if rebuilds else None:.0f}; "
          f"max refresh age {age[0][1]:.2f} s in {scrapes[0][1]:.0f} scrapes")
    bad = []
    for t, rule in minutes:
        proc = (busy_at(samples, t) - busy_at(samples, t - 60)) / 60e9
        print(f"minute to {t - int(t0)} s: /proc/stat {proc:.3f} CPUs, host rule {rule[0][1]:.3f}")
        if len(rule) != 1 or abs(rule[0][1] - proc) > 0.02 * proc:
            bad.append((t - int(t0), rule, proc))
    proc5 = (busy_at(samples, int(t_end)) - busy_at(samples, int(t_end) - span)) / 1e9
    print(f"5 minutes: /proc/stat {proc5:.1f} CPU s, increase of the host counter {total[0][1]:.1f}")
    assert len(minutes) == 5 and not bad, bad
    assert len(total) == 1 and abs(total[0][1] - proc5) <= 0.02 * proc5, (total, proc5)
    assert scrapes[0][1] >= 0.9 * span and age[0][1] < 2 * interval, (age, scrapes, phases)


def test_cgroup_made_again_at_its_path_keeps_one_series(tmp_path):
    """A cgroup removed and made again at the same path (a restarted service) has a new id: its
    series go on under the one label.  Before, the old id's record stayed (until --expire) beside
    the new one's, every series of the label was exported twice, and Prometheus rejects a scrape
    with a duplicate series whole (seen: [other] twice while another suite's cgroup came back)."""
    cg = Cgroup("tmabpf-test-again")
    if not cg.path:
        pytest.skip("no cgroup2 mount")
    spin = "import time\nt = time.time()\nwhile time.time() - t < 0.5: pass\n"
    cpu = 0
    with Daemon("-I", "100") as d:
        for _ in range(2):
            os.makedirs(cg.path, exist_ok=True)
            p = subprocess.Popen(["/bin/sh", "-c", f'echo $$ > {cg.path}/cgroup.procs && exec "$0" "$@"',
                                  "/usr/bin/python3", "-c", spin])
            _, _, ru = os.wait4(p.pid, 0)
            p.returncode = 0
            cpu += ru.ru_utime + ru.ru_stime
            d.metrics_after(refreshes=3)	# raises on a duplicate series
            cg.remove()
        m = d.metrics_after(refreshes=3)
        assert d.stop() == 0
    rows = select(m, "tmabpf_cgroup_oncpu_seconds_total", cgroup=cg.rel)
    # both runs: their getrusage (the shell before exec too, in ticks of the same runtime)
    assert len(rows) == 1 and 0.9 * cpu - 0.02 <= rows[0][1] <= 1.1 * cpu + 0.02, (rows, cpu)
