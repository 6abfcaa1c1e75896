# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The documentation against the code and real runs: the README stays short; every relative link and
anchor of every markdown file resolves (no network); the JSON report contract (docs/report.schema.json,
rendered into docs/report-json.md) is valid, current and checked on a report with every section;
every Prometheus series a real daemon serves, and every JSON-lines key, is in docs/metrics.md; every
live-view column and key is in docs/live-view.md."""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

import pytest

from conftest import GROUNDTRUTH, ROOT, TMABPF, load_json, start_groundtruth
from daemon_util import Daemon
from report_schema import check_report, properties, schema

README_MAX_LINES = 300


def doc(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


# ---- the README and the links of every markdown file ----

def test_readme_is_short():
    n = doc("README.md").count("\n")
    assert n <= README_MAX_LINES, f"README.md has {n} lines (at most {README_MAX_LINES}): move reference to docs/"


def markdown_files():
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z", "*.md"],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"{ROOT} is not a git checkout: {r.stderr.strip()}")
    return sorted(f for f in r.stdout.split("\0") if f)


FENCE = re.compile(r"^\s{0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    """GitHub's anchor of a heading: its text (links and code marks removed), lower case, without
    punctuation but for - and _, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            s = slug(m.group(2))
            out.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
        out.update(HTML_ANCHOR.findall(line))
    return out


def broken_links(root, rel, text, read=None):
    """Problems of the relative links of one markdown file (rel: its path under root)."""
    read = read or (lambda p: open(p, encoding="utf-8").read())
    problems = []
    for n, line in prose_lines(text):
        line = CODE_SPAN.sub("", line)
        targets = LINK.findall(line) + [m.group(1) for m in [REF_DEF.match(line)] if m]
        for target in targets:
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # external (http:, https:, mailto:): no network here
            path, _, frag = target.partition("#")
            path = urllib.parse.unquote(path)
            dest = os.path.normpath(os.path.join(root, os.path.dirname(rel), path)) if path else os.path.join(root, rel)
            where = f"{rel}:{n}: {target}"
            if not (dest + os.sep).startswith(os.path.normpath(root) + os.sep) and dest != os.path.normpath(root):
                problems.append(f"{where}: points outside the repository")
            elif not os.path.exists(dest):
                problems.append(f"{where}: {os.path.relpath(dest, root)} does not exist")
            elif frag and dest.endswith(".md") and frag not in anchors(read(dest)):
                problems.append(f"{where}: no heading or anchor #{frag} in {os.path.relpath(dest, root)}")
    return problems


def test_every_markdown_link_and_anchor_resolves():
    files = markdown_files()
    assert "README.md" in files and len(files) > 10, files
    problems = []
    for rel in files:
        problems += broken_links(ROOT, rel, doc(rel))
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_link_check_finds_what_is_broken(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Top\n\n## Accounting modes (`--accounting=auto|tasks`)\n"
                                            "## Top\n```\n# not a heading\n```\n")
    (tmp_path / "a.md").write_text(
        "[ok](docs/b.md) [ok](docs/b.md#accounting-modes---accountingautotasks) [ok](docs/b.md#top-1)\n"
        "[ok](#here) [ext](https://example.org/x) `[code](nowhere.md)`\n"
        "```\n[in a block](nowhere.md)\n```\n"
        "## Here\n"
        "[bad](docs/c.md) [bad](docs/b.md#not-a-heading) [bad](#there) [bad](../../outside.md)\n"
        "[ref]: docs/missing.md\n")
    problems = broken_links(str(tmp_path), "a.md", (tmp_path / "a.md").read_text())
    assert len(problems) == 5, problems
    assert [p.split(": ")[1] for p in problems] == ["docs/c.md", "docs/b.md#not-a-heading", "#there",
                                                    "../../outside.md", "docs/missing.md"], problems


# ---- the JSON report contract ----

def test_report_doc_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen-report-doc.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def schema_nodes(node, root, path="$"):
    """(path, subschema) of every key the schema names."""
    props = properties(root, node)
    for k, v in (props or {}).items():
        yield f"{path}.{k}", v
        yield from schema_nodes(v, root, f"{path}.{k}")
    resolved = root["$defs"][node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node
    if isinstance(resolved.get("items"), dict):
        yield from schema_nodes(resolved["items"], root, path + "[]")


def test_report_schema_is_valid_and_describes_every_key():
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema is missing (fix: make deps)")
    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["properties"]["tmabpf"]["properties"]["schema"]["const"] == 1
    version_h = doc("user/lib/version.h")
    assert re.search(r"#define TMABPF_SCHEMA 1\b", version_h), "the schema number changed: update the contract"
    missing = [p for p, node in schema_nodes(s, s) if not node.get("description")]
    assert not missing, f"keys without a description: {missing}"


def test_report_check_fails_on_a_wrong_type_and_an_undocumented_key(tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run([TMABPF, "--quiet", "--json", str(out), "--", GROUNDTRUTH, "spin:20"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rep = load_json(out)  # valid
    bad = json.loads(json.dumps(rep))
    bad["threads"][0]["oncpu_ns"] = "12"
    with pytest.raises(AssertionError, match=r"threads/0/oncpu_ns: '12' is not of type 'integer'"):
        check_report(bad)
    bad = json.loads(json.dumps(rep))
    bad["self"]["surprise"] = 1
    bad["threads"][0]["counters"]["any-event-name"] = 3  # a map: any event name is data
    with pytest.raises(AssertionError) as e:
        check_report(bad)
    assert "$.self.surprise is not in docs/report.schema.json" in str(e.value)
    assert "any-event-name" not in str(e.value)
    bad = json.loads(json.dumps(rep))
    del bad["stop_reason"]
    with pytest.raises(AssertionError, match="'stop_reason' is a required property"):
        check_report(bad)


def test_a_report_with_every_section_follows_the_schema(tmp_path):
    """--uprobe, --sample, --offcpu-stacks and --mem-samples=page-faults in one run: every optional
    section is written, and load_json() validates it (types, and no undocumented key)."""
    out, gt_out = tmp_path / "r.json", tmp_path / "gt.json"
    r = subprocess.run([TMABPF, "--quiet", "--uprobe", ":gt_*", "--sample=199", "--offcpu-stacks",
                        "--mem-samples=page-faults", "--json", str(out), "--", GROUNDTRUTH, "--out", str(gt_out),
                        "fault:64", "spin:100", "sleep:50", "outer:16:20"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rep = load_json(out)
    assert {"uprobes", "sampling", "offcpu"} <= set(rep), sorted(rep)
    assert rep["mem_samples"] and rep["mem_samples"]["by_mapping"], rep["mem_samples"]
    assert rep["functions"] and rep["samples"] and rep["offcpu_stacks"]
    assert any(f["tid"] is None for f in rep["functions"]) and any(f["tid"] for f in rep["functions"])


# ---- the daemon's metrics and JSON lines ----

METRIC_ROW = re.compile(r"^\| `([a-z_:]+)` \| (counter|gauge) \|([^|]*)\|")


def documented_metrics():
    """{series: (type, {label names})} from docs/metrics.md's table."""
    out = {}
    for line in doc("docs/metrics.md").splitlines():
        m = METRIC_ROW.match(line)
        if m:
            out[m.group(1)] = (m.group(2), set(re.findall(r"`([a-z_]+)`", m.group(3))))
    return out


def scrape_families(text):
    """{family: (type, {label names seen})} of an exposition."""
    types, labels = {}, {}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            types[m.group(1)] = m.group(2)
            labels.setdefault(m.group(1), set())
        elif line and not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
            labels.setdefault(name, set()).update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', line.split("}")[0]))
    return {n: (types.get(n), ls) for n, ls in labels.items()}


def jsonl_keys(obj, path=""):
    """Key paths of a JSON-lines snapshot, array elements as [] and label keys left out."""
    keys = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if path.endswith("counters") or path.endswith(".tma"):
                continue  # maps: event and TMA node names
            keys.add(f"{path}.{k}".lstrip("."))
            keys |= jsonl_keys(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for v in obj:
            keys |= jsonl_keys(v, path + "[]")
    return keys


def test_every_scraped_series_and_jsonl_key_is_documented(tmp_path):
    """Two real daemons, tasks accounting with sampling (the defaults) and per-switch accounting with a
    uprobe, while a ground-truth workload runs: every family served, its type and its label names
    must be in docs/metrics.md; every key of the JSON lines in its JSON-lines table."""
    documented = documented_metrics()
    assert len(documented) > 40, sorted(documented)
    jsonl = tmp_path / "snap.jsonl"
    seen = {}
    gt = start_groundtruth(["spin:1500", "sleep:300", "fault:256"], str(tmp_path / "gt.json"), delay_ms=200)
    try:
        with Daemon("-I", "200", "--jsonl", str(jsonl), "--min-share", "0") as tasks, \
             Daemon("-I", "200", "--accounting=switch", "--min-share", "0",
                    "--uprobe", f"{GROUNDTRUTH}:gt_*") as switch:
            time.sleep(1.5)
            for d in (tasks, switch):
                _, _, body = d.request()
                for name, (typ, labels) in scrape_families(body).items():
                    t, ls = seen.get(name, (typ, set()))
                    seen[name] = (t, ls | labels)
            assert tasks.stop() == 0 and switch.stop() == 0
    finally:
        gt.wait(30)
    assert "tmabpf_function_calls_total" in seen and "tmabpf_sampled_cpu_seconds_total" in seen, sorted(seen)
    problems = []
    for name, (typ, labels) in sorted(seen.items()):
        if name not in documented:
            problems.append(f"{name} ({typ}) is not in docs/metrics.md")
            continue
        dtype, dlabels = documented[name]
        if dtype != typ:
            problems.append(f"{name}: documented as {dtype}, served as {typ}")
        if labels - dlabels:
            problems.append(f"{name}: labels {sorted(labels - dlabels)} are not documented")
    assert not problems, "\n".join(problems)
    table = doc("docs/metrics.md").split("## JSON lines", 1)[1]
    keys = set()
    for line in jsonl.read_text().splitlines():
        keys |= jsonl_keys(json.loads(line))
    undocumented = sorted(k for k in keys if f"`{k.rsplit('.', 1)[-1].replace('[]', '')}`" not in table)
    assert keys and not undocumented, f"JSON-lines keys not in docs/metrics.md: {undocumented}"


def code_metrics():
    """Every series name the daemon's exporters (user/daemon/*.c) write."""
    code = "".join(doc(os.path.join("user", "daemon", f)) for f in sorted(os.listdir(os.path.join(ROOT, "user", "daemon")))
                   if f.endswith(".c"))
    names = set(re.findall(r'"((?:tmabpf|process)_[a-z_]+)"', code))
    assert len(names) > 40, sorted(names)
    return names


def test_every_metric_in_the_code_is_documented():
    """Series only some hosts serve (TMA needs a PMU) are documented too: every name the daemon's
    exporters write."""
    missing = sorted(code_metrics() - set(documented_metrics()))
    assert not missing, f"series written by user/daemon/ but not in docs/metrics.md: {missing}"


def test_daemon_man_page_lists_every_metric_family():
    """tmabpf-daemon(8)'s METRICS lists each family of docs/metrics.md (which the scrape test holds to
    what a real daemon serves) with its type, and every name the code writes; no other."""
    page = doc("man/tmabpf-daemon.8.md").split("\n# METRICS\n", 1)[1].split("\n# ", 1)[0]
    listed = dict(re.findall(r"^\*\*([a-z_]+)\*\* \((counter|gauge),", page, re.M))
    documented = {name: typ for name, (typ, _) in documented_metrics().items()}
    assert listed == documented, (f"not in the man page: {sorted(set(documented) - set(listed))}; "
                                  f"not in docs/metrics.md: {sorted(set(listed) - set(documented))}; "
                                  f"types differ: {sorted(n for n in listed if documented.get(n, listed[n]) != listed[n])}")
    assert code_metrics() <= set(listed), sorted(code_metrics() - set(listed))


# ---- the live view ----

def test_every_live_view_column_and_key_is_documented():
    page = doc("docs/live-view.md")
    cols = set(re.findall(r'\{ K_\w+, "([^"]+)"', doc("user/view/view_table.c")))
    cols |= set(re.findall(r'add_col\(t, K_\w+, "([^"]+)"', doc("user/view/view_table.c")))
    assert {"ONCPU%", "FUNCTION", "RUNNING%", "TMA_L1"} <= cols, sorted(cols)
    missing = sorted(c for c in cols if f"`{c}`" not in page)
    handler = doc("user/view/view_curses.c").split("static int key(", 1)[1].split("\n}\n", 1)[0]
    keys = set(re.findall(r"case '(.)':", handler))
    assert {"q", "f", "/"} <= keys, sorted(keys)
    missing += [f"key {k!r}" for k in sorted(keys) if (f"`{k}`" if k != " " else "Space") not in page]
    assert not missing, f"not in docs/live-view.md: {missing}"
