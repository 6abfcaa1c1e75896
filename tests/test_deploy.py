# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""deploy/: the systemd unit's sandbox against what the daemon really does (strace),
the example configuration, the Kubernetes DaemonSet (structure, the unit's
capabilities, what the daemon accepts), the Prometheus configuration and recording
rules (promtool, and exact values), and the Grafana dashboard (its queries run by a
real Prometheus scraping a real daemon, naming only series that exist)."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request

import pytest
import yaml

from conftest import ROOT, TMABPF, GROUNDTRUTH
from daemon_util import PROMTOOL, Daemon, Prometheus, parse_exposition

DEPLOY = os.path.join(ROOT, "deploy")
UNIT = os.path.join(DEPLOY, "systemd", "tmabpf.service")
CONF = os.path.join(DEPLOY, "systemd", "daemon.conf")
K8S = os.path.join(DEPLOY, "kubernetes", "tmabpf-daemonset.yaml")
DOCKERFILE = os.path.join(DEPLOY, "kubernetes", "Dockerfile")
PROM_CONFIG = os.path.join(DEPLOY, "prometheus", "prometheus.yml")
RULES = os.path.join(DEPLOY, "prometheus", "tmabpf-rules.yml")
RULES_TEST = os.path.join(ROOT, "tests", "data", "tmabpf-rules-test.yml")
DASHBOARD = os.path.join(DEPLOY, "grafana", "tmabpf-dashboard.json")
# series, and their labels, only a host with a hardware PMU exports
PMU_ONLY = {"tmabpf_tma_ratio"}
PMU_ONLY_LABELS = {"level", "node"}


def unit_settings():
    """{key: [values]} of the unit file (a key may repeat)."""
    out = {}
    with open(UNIT) as f:
        for line in f:
            if "=" in line and not line.startswith("#"):
                k, v = line.rstrip("\n").split("=", 1)
                out.setdefault(k, []).append(v)
    return out


def unit_caps():
    return set(unit_settings()["AmbientCapabilities"][0].split())


def need(tool):
    if not shutil.which(tool):
        pytest.skip(f"{tool} is not installed (make deps installs it)")


def test_unit_capabilities_and_exposure():
    s = unit_settings()
    assert set(s["CapabilityBoundingSet"][0].split()) == unit_caps()
    assert s["DynamicUser"] == ["yes"] and s["NoNewPrivileges"] == ["yes"]
    assert s["ExecStart"] == ["/usr/bin/tmabpf daemon --config /etc/tmabpf/daemon.conf"]
    need("systemd-analyze")
    r = subprocess.run(["systemd-analyze", "security", "--offline=true", UNIT], capture_output=True, text=True,
                       timeout=60)
    m = re.search(r"Overall exposure level for tmabpf.service: ([\d.]+)", r.stdout)
    assert m, r.stdout + r.stderr
    print(f"systemd-analyze security: exposure {m.group(1)}")
    assert float(m.group(1)) <= 3.0, r.stdout  # 2.7 when written; the unit before hardening: 6.5


def syscall_groups():
    """{'@group': [members]} from systemd-analyze syscall-filter."""
    out = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, check=True).stdout
    groups, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@"):
            cur = groups.setdefault(line.split()[0], [])
        elif cur is not None and line.strip() and not line.strip().startswith("#"):
            cur.append(line.strip())
    return groups


def expand(names, groups):
    out = set()
    for n in names:
        out |= expand(groups.get(n, []), groups) if n.startswith("@") else {n}
    return out


def test_unit_sandbox_fits_what_the_daemon_does(tmp_path):
    """Under strace, with sampling, a uprobe and a scrape, the daemon (and what it
    runs) makes only system calls the unit's SystemCallFilter allows, opens only
    sockets of RestrictAddressFamilies, and writes no file (ProtectSystem=strict)."""
    need("strace")
    need("systemd-analyze")
    s = unit_settings()
    allowed = expand(s["SystemCallFilter"][0].split(), syscall_groups())
    families = set(s["RestrictAddressFamilies"][0].split())
    log = tmp_path / "strace.txt"
    wrap = ["strace", "-f", "-qq", "-o", str(log)]
    with Daemon("-I", "200", "--uprobe", f"{GROUNDTRUTH}:gt_spin", wrap=wrap) as d:
        subprocess.run([GROUNDTRUTH, "--out", str(tmp_path / "gt.json"), "spin:300"], check=True,
                       stdout=subprocess.DEVNULL, timeout=60)
        time.sleep(0.5)
        assert d.metrics()
        # SIGTERM to the daemon itself (strace, signalled, would detach and leave it running)
        with open(f"/proc/{d.p.pid}/task/{d.p.pid}/children") as f:
            os.kill(int(f.read().split()[0]), signal.SIGTERM)
        assert d.p.wait(30) == 0, d.stderr()
    calls, socks, writes = set(), set(), set()
    for line in log.read_text().splitlines():
        m = re.match(r"\d+\s+([a-z_0-9]+)\((.*)", line)
        if not m:
            continue
        calls.add(m.group(1))
        if m.group(1) in ("socket", "socketpair"):
            socks.add(m.group(2).split(",")[0])
        if m.group(1) in ("open", "openat", "creat") and re.search(r"O_WRONLY|O_RDWR|O_CREAT", m.group(2)):
            path = re.search(r'"([^"]*)"', m.group(2)).group(1)
            if not path.startswith(("/dev/null", str(tmp_path))):
                writes.add(path)
    assert "bpf" in calls and "perf_event_open" in calls, sorted(calls)  # the trace saw the real work
    assert calls <= allowed, f"system calls outside SystemCallFilter: {sorted(calls - allowed)}"
    assert socks <= families, f"socket families outside RestrictAddressFamilies: {sorted(socks - families)}"
    assert not writes, f"files opened for writing: {sorted(writes)}"


def test_example_config_parses_as_is_and_uncommented(tmp_path):
    """The installed daemon.conf (every line a comment) and every option it shows,
    uncommented, are accepted by the daemon."""
    r = subprocess.run([TMABPF, "daemon", "--config", CONF, "--listen", "127.0.0.1:0", "-d", "0.3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with open(CONF) as f:
        text = re.sub(r"^#([a-z])", r"\1", f.read(), flags=re.M)
    keys = re.findall(r"^([a-z-]+) =", text, re.M)
    assert {"listen", "interval", "max-overhead", "uprobe", "jsonl", "event"} <= set(keys), keys
    text = re.sub(r"^uprobe = .*$", f"uprobe = {GROUNDTRUTH}:gt_spin", text, flags=re.M)
    text = re.sub(r"^jsonl = .*$", f"jsonl = {tmp_path}/snap.jsonl", text, flags=re.M)
    text = re.sub(r"^listen = .*$", "listen = 127.0.0.1:0", text, flags=re.M)
    (tmp_path / "all.conf").write_text(text)
    r = subprocess.run([TMABPF, "daemon", "--config", str(tmp_path / "all.conf"), "-d", "0.5"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "snap.jsonl").stat().st_size > 0


def k8s_docs():
    with open(K8S) as f:
        return {d["kind"]: d for d in yaml.safe_load_all(f)}


def test_kubernetes_daemonset(tmp_path):
    docs = k8s_docs()
    assert set(docs) == {"Namespace", "ConfigMap", "Service", "DaemonSet"}
    ds = docs["DaemonSet"]
    ns = docs["Namespace"]["metadata"]["name"]
    assert ds["apiVersion"] == "apps/v1" and all(d["metadata"].get("namespace", ns) == ns for d in docs.values())
    spec = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert spec["hostPID"] is True
    (c,) = spec["containers"]
    sc = c["securityContext"]
    # exactly the systemd unit's capabilities, not privileged
    assert sc["privileged"] is False and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert {"CAP_" + x for x in sc["capabilities"]["add"]} == unit_caps()
    # BTF, tracefs and debugfs from the host, read-only
    vols = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    for path in ("/sys/kernel/btf", "/sys/kernel/tracing", "/sys/kernel/debug"):
        assert mounts[path]["readOnly"] is True and vols[mounts[path]["name"]]["hostPath"]["path"] == path, path
    # scrape annotations, the port the daemon listens on, the headless Service, Prometheus' job
    ann = ds["spec"]["template"]["metadata"]["annotations"]
    port = c["ports"][0]["containerPort"]
    assert ann["prometheus.io/scrape"] == "true" and int(ann["prometheus.io/port"]) == port
    assert ann["prometheus.io/path"] == "/metrics"
    args = c["args"]
    assert args[0] == "daemon" and args[args.index("--listen") + 1] == f"0.0.0.0:{port}"
    svc = docs["Service"]
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["ports"][0]["port"] == port
    with open(PROM_CONFIG) as f:
        jobs = {j["job_name"]: j for j in yaml.safe_load(f)["scrape_configs"]}
    dns = jobs["tmabpf-kubernetes"]["dns_sd_configs"][0]
    assert dns["names"] == [f"{svc['metadata']['name']}.{ns}.svc.cluster.local"] and dns["port"] == port
    # the daemon accepts the container's arguments and the ConfigMap's file (on loopback here)
    cm = docs["ConfigMap"]
    vol = next(v for v in spec["volumes"] if v.get("configMap", {}).get("name") == cm["metadata"]["name"])
    cfg_dir = next(m["mountPath"] for m in c["volumeMounts"] if m["name"] == vol["name"])
    for name, text in cm["data"].items():
        (tmp_path / name).write_text(text)
    run = [a.replace(cfg_dir, str(tmp_path)).replace(f"0.0.0.0:{port}", "127.0.0.1:0") for a in args]
    assert c["command"] == ["/usr/bin/tmabpf"]
    r = subprocess.run([TMABPF, *run, "-d", "0.3"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def install_commands(text):
    """The package install commands of a text ('[sudo] apt[-get] install ... tmabpf_*.deb'), as their
    arguments less sudo, the environment, -y and --no-install-recommends (what differs between a
    terminal and an image build)."""
    out = []
    for m in re.finditer(r"\bapt(?:-get)? install\b[^\n]*?tmabpf_\*\.deb", text):
        out.append([w for w in m.group(0).split()
                    if w not in ("apt", "apt-get", "-y", "-q", "--no-install-recommends") and "=" not in w])
    return out


def fenced_blocks(markdown):
    return "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", markdown, re.S | re.M))


def test_dockerfile_daemonset_and_readme_install_the_same_way():
    """Not built here (no docker): the DaemonSet's image Dockerfile read statically.  It starts from
    Debian 12, enables bookworm-backports with the README's line, installs the package that make deb
    writes with the README's one install command (the DaemonSet's comment gives the same), and runs
    what the DaemonSet and the systemd unit run; the image tag is the version's."""
    with open(DOCKERFILE) as f:
        docker = f.read()
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    with open(K8S) as f:
        k8s = f.read()
    with open(os.path.join(ROOT, "user", "lib", "version.h")) as f:
        version = re.search(r'#define TMABPF_VERSION "([^"]*)"', f.read()).group(1)
    instr = [ln.split(None, 1) for ln in re.sub(r"\\\n", " ", docker).splitlines() if ln.strip() and not ln.startswith("#")]
    assert instr[0] == ["FROM", "debian:bookworm-slim"], instr[0]
    run = " ".join(arg for op, arg in instr if op == "RUN")
    # one install command, the README's, in the three places
    want = [["install", "-t", "bookworm-backports", "./build/deb/tmabpf_*.deb"]]
    readme_cmds = install_commands(fenced_blocks(readme))
    comment = "\n".join(ln for ln in k8s.splitlines() if ln.startswith("#"))
    assert [c[1:] if c[0] == "sudo" else c for c in readme_cmds] == want, readme_cmds
    assert install_commands(run) == want, run
    assert install_commands(comment) == want, comment
    backports = "deb http://deb.debian.org/debian bookworm-backports main"
    assert backports in fenced_blocks(readme) and backports in run
    # it copies what make deb writes (scripts/build-deb.sh: build/deb/tmabpf_VERSION_ARCH.deb)
    with open(os.path.join(ROOT, "scripts", "build-deb.sh")) as f:
        build_deb = f.read()
    assert "out=build/deb" in build_deb and 'deb=$(ls "$out"/tmabpf_"$version"_*.deb)' in build_deb
    copies = [arg.split() for op, arg in instr if op == "COPY"]
    assert copies == [["build/deb/tmabpf_*.deb", "build/deb/"]], copies
    with open(os.path.join(DOCKERFILE + ".dockerignore")) as f:
        assert [ln for ln in f.read().splitlines() if ln and not ln.startswith("#")] == ["*", "!build/deb/tmabpf_*.deb"]
    # the program, its configuration and its command as the package installs and the unit runs them
    with open(os.path.join(ROOT, "debian", "rules")) as f:
        assert "$(MAKE) install PREFIX=/usr" in f.read()
    entry = json.loads(next(arg for op, arg in instr if op == "ENTRYPOINT"))
    cmd = json.loads(next(arg for op, arg in instr if op == "CMD"))
    assert " ".join(entry + cmd) == unit_settings()["ExecStart"][0]
    ds = k8s_docs()["DaemonSet"]["spec"]["template"]["spec"]["containers"][0]
    assert ds["command"] == entry and ds["args"][:3] == cmd
    # the image the DaemonSet runs is the one the comments build
    build = f"make deb && docker build -f deploy/kubernetes/Dockerfile -t {ds['image']} ."
    assert ds["image"] == f"tmabpf:{version}" and build in docker and build in comment, ds["image"]


def test_prometheus_config_and_rules():
    need(PROMTOOL)
    r = subprocess.run([PROMTOOL, "check", "config", PROM_CONFIG], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([PROMTOOL, "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    # the rules against values computed by hand (tests/data/tmabpf-rules-test.yml says how)
    r = subprocess.run([PROMTOOL, "test", "rules", os.path.basename(RULES_TEST)], cwd=os.path.dirname(RULES_TEST),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def rule_names():
    with open(RULES) as f:
        return {r["record"] for g in yaml.safe_load(f)["groups"] for r in g["rules"]}


def dashboard_queries():
    """Every PromQL of the dashboard: panel targets and template variable queries."""
    with open(DASHBOARD) as f:
        d = json.load(f)
    assert d["uid"] and d["title"] and d["schemaVersion"] >= 30
    qs = []
    for p in d["panels"]:
        assert {"id", "type", "title", "gridPos"} <= set(p), p
        if p["type"] == "row":
            continue
        assert p["targets"] and p["datasource"]["uid"] == "${ds}", p["title"]
        qs += [t["expr"] for t in p["targets"]]
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            m = re.fullmatch(r"label_values\((.*), (\w+)\)", v["query"]["query"])
            assert m, v
            qs.append(m.group(1))
    titles = " ".join(p["title"] for p in d["panels"])
    for want in ("TMA level 1", "On-CPU vs blocked vs runqueue", "Top functions"):
        assert want in titles, want
    return qs


def concrete(q):
    """A dashboard query with Grafana's variables replaced for a direct Prometheus query."""
    return q.replace("$__rate_interval", "1m").replace('=~"$instance"', '=~".*"').replace('=~"$comm"', '=~".*"')


def test_dashboard_queries_run_on_a_real_daemon(tmp_path):
    """A real Prometheus with deploy/prometheus/tmabpf-rules.yml scrapes a real
    daemon; every dashboard query runs, names only series the daemon exports or the
    rules record, and the on/off-CPU ones return data."""
    need(PROMTOOL)
    queries = dashboard_queries()
    with Daemon("-I", "250", "--uprobe", f"{GROUNDTRUTH}:gt_spin") as d:
        samples = d.metrics()
        exported = {n for n, _ in samples}
        labels = {k for _, ls in samples for k, _ in ls} | {"instance", "job"}
        pmu = next(dict(ls)["pmu"] for n, ls in samples if n == "tmabpf_build_info") == "1"
        recorded = rule_names()
        names = {n for q in queries for n in re.findall(r"\b(tmabpf[a-z0-9_:]*)", q)}
        unknown = names - exported - recorded - (set() if pmu else PMU_ONLY)
        assert not unknown, f"dashboard names series the daemon does not export: {sorted(unknown)}"
        assert "tmabpf_tma_ratio" in exported or not pmu
        used = {l for q in queries for l in re.findall(r"[{,]\s*([a-z_]+)\s*=~?", q)}
        used |= {l for q in queries for b in re.findall(r"\bby \(([^)]*)\)", q) for l in re.split(r",\s*", b)}
        known = labels | {"state"} | (set() if pmu else PMU_ONLY_LABELS)  # state: added by the rules
        assert used <= known, sorted(used - known)
        shutil.copy(RULES, tmp_path / "rules.yml")
        prom = Prometheus(str(tmp_path), d.addr, rules="rules.yml")
        try:
            prom.wait_value('count(tmabpf:thread_seconds:rate1m{state="oncpu"})', lambda v: v > 0, settle=0)
            for q in queries:
                res = prom.query(concrete(q))  # asserts status "success"
                if "tma" not in q and "function" not in q and "drops" not in q:
                    assert res, f"no data: {q}"
        finally:
            prom.stop()
        assert d.stop() == 0
