# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--flamegraph FILE.svg: the flame graph tmabpf draws itself, checked against the folded stacks
written in the same run (--folded): every box's place and width in the SVG, and the widest boxes as
headless Chromium lays them out, within a pixel; its click-to-zoom and search run in the browser."""
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import GROUNDTRUTH, read_folded, run_tmabpf

SVG = "{http://www.w3.org/2000/svg}"
WIDTH, PAD, FH = 1200, 10, 16		# user/output/flamegraph_svg.h and .c
GW = WIDTH - 2 * PAD
OFF_ROOTS = ("[blocked]", "[runqueue]")
CHROMIUM = shutil.which("chromium")


def expected_boxes(lines):
    """{(depth, x rounded to 0.01 px): (name, x, width)}, and the total, of the graph of these folded lines, laid out
    as flamegraph.pl does: the root "all" at depth 0, callees above, siblings by name, a frame's
    own weight (stacks ending there) left of its callees."""
    tree, total = {}, sum(n for _, n in lines)
    for stack, n in lines:
        node = tree
        for i, f in enumerate(stack):
            node = node.setdefault(f, [0, 0, {}])
            node[0] += n
            node[1] += n if i == len(stack) - 1 else 0
            node = node[2]
    boxes = {(0, PAD): ("all", PAD, GW)}

    def walk(children, depth, start):
        for name in sorted(children):
            v, own, sub = children[name]
            x, w = PAD + start / total * GW, v / total * GW
            if w >= 0.1:
                boxes[(depth, round(x, 2))] = (name, x, w)
            walk(sub, depth + 1, start + own)
            start += v
    walk(tree, 1, 0)
    return boxes, total


def svg_graphs(path):
    """{graph name: (total, [(name, depth, x, width), ...])} as the SVG holds them."""
    graphs = {}
    for g in ET.parse(path).getroot().iter(SVG + "g"):
        if g.get("class") != "graph":
            continue
        frames = []
        for f in g.iter(SVG + "g"):
            if f.get("class") != "f":
                continue
            title, rect = f.find(SVG + "title").text, f.find(SVG + "rect")
            frames.append((title[:title.rindex(" (")], int(rect.get("y")), float(rect.get("x")),
                           float(rect.get("width"))))
        base = max(y for _, y, _, _ in frames)		# the root's row
        graphs[g.get("data-name")] = (int(g.get("data-total")),
                                      [(n, (base - y) // FH, x, w) for n, y, x, w in frames])
    return graphs


PROBE = """<pre id="out"></pre><script>
var errors = [];
window.onerror = function (m) { errors.push(String(m)); };
function boxes() {
  return Array.prototype.map.call(document.querySelectorAll('g.f'), function (f) {
    var b = f.querySelector('rect').getBoundingClientRect(), t = f.querySelector('title').textContent;
    return [f.parentNode.getAttribute('data-name'), t.slice(0, t.lastIndexOf(' (')),
            Number(f.querySelector('rect').getAttribute('y')), b.x, b.width,
            getComputedStyle(f).display !== 'none'];
  });
}
window.addEventListener('load', function () {
  var out = {errors: errors, boxes: boxes()};
  var on = document.querySelector('g.graph[data-name="On-CPU"]');
  var fs = Array.prototype.slice.call(on.querySelectorAll('g.f')), z = null;
  fs.forEach(function (f) { if (f.querySelector('title').textContent.indexOf('ZOOM (') === 0) z = f; });
  z.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  out.zoomed = boxes();
  document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  out.unzoomed = boxes();
  search('^SEARCH$');
  out.matched = document.getElementById('matched').textContent;
  out.errors = errors;
  document.getElementById('out').textContent = JSON.stringify(out);
});
</script>"""


def render(tmp_path, svg_path, zoom, search):
    """The SVG inline in an HTML page, loaded in headless Chromium; the page's own script then
    measures every box (getBoundingClientRect), clicks the box named zoom, resets, searches."""
    svg = open(svg_path).read()
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><body style='margin:0'>" + svg[svg.index("<svg"):] +
                    PROBE.replace("ZOOM", zoom).replace("SEARCH", re.escape(search)) + "</body></html>")
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1200,900",
                        f"--user-data-dir={tmp_path / 'chromium'}", "--dump-dom", f"file://{page}"],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="out">(.*?)</pre>', r.stdout, re.S)
    assert m and m.group(1), r.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


@pytest.fixture(scope="module")
def flame(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flame")
    folded, svg, gt = str(tmp / "tm.folded"), str(tmp / "tm.svg"), str(tmp / "gt.json")
    r = run_tmabpf(["--quiet", "--sample=199", "--offcpu-stacks", "--folded", folded, "--flamegraph", svg, "--",
                    GROUNDTRUTH, "--delay-ms", "300", "--out", gt, "spin:500", "sleep:300"])
    assert r.returncode == 0, r.stderr
    lines = read_folded(folded)
    return {"tmp": tmp, "svg": svg, "graphs": svg_graphs(svg),
            "On-CPU": [l for l in lines if l[0][0] not in OFF_ROOTS],
            "Off-CPU": [l for l in lines if l[0][0] in OFF_ROOTS]}


@pytest.mark.parametrize("graph", ["On-CPU", "Off-CPU"])
def test_every_box_is_its_folded_share(flame, graph):
    """Each box of the SVG is where and as wide as the folded file's stacks make it, to 0.01 px; no
    box is missing (but those under 0.1 px, as flamegraph.pl) and none is made up."""
    boxes, total = expected_boxes(flame[graph])
    assert total > 0 and flame["graphs"][graph][0] == total
    got = sorted((depth, x, name, w) for name, depth, x, w in flame["graphs"][graph][1])
    want = sorted((depth, x, name, w) for (depth, _), (name, x, w) in boxes.items())
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert g[0] == e[0] and g[2] == e[2] and abs(g[1] - e[1]) < 0.01 and abs(g[3] - e[3]) < 0.01, (g, e)


def widest(lines, depth, n):
    """The n widest boxes at depth (1: the stacks' first frame) with their shares of the total."""
    sums = {}
    for stack, c in lines:
        if len(stack) >= depth:
            key = tuple(stack[:depth])
            sums[key] = sums.get(key, 0) + c
    total = sum(c for _, c in lines)
    return sorted(((v / total, k[-1]) for k, v in sums.items()), reverse=True)[:n]


@pytest.mark.skipif(not CHROMIUM, reason="chromium not installed (make deps installs it)")
def test_rendered_in_chromium(flame):
    """In headless Chromium the widest boxes (the roots' children, and the chain down to gt_spin)
    are as wide as their folded shares, within a pixel; clicking gt_spin's caller fills the width
    with it; a search for gt_spin reports its share of each graph."""
    on, off = flame["On-CPU"], flame["Off-CPU"]
    spin_share = {g: sum(c for s, c in flame[g] if "gt_spin" in s) / sum(c for _, c in flame[g])
                  for g in ("On-CPU", "Off-CPU")}
    assert spin_share["On-CPU"] > 0.5, spin_share	# the spin thread's samples are mostly in gt_spin
    page = render(flame["tmp"], flame["svg"], "run_spin", "gt_spin")
    assert page["errors"] == []
    rendered = {}
    for g, name, y, x, w, shown in page["boxes"]:
        rendered.setdefault((g, name), []).append(w)
    checked = 0
    for g, lines in (("On-CPU", on), ("Off-CPU", off)):
        for depth in (1, 2, 3):
            for share, name in widest(lines, depth, 3):
                if share * GW < 1:
                    continue
                assert any(abs(w - share * GW) <= 1 for w in rendered[(g, name)]), (g, name, share * GW,
                                                                                    rendered[(g, name)])
                checked += 1
    assert checked >= 6
    # zoom: run_spin fills the graph; gt_spin above it keeps its share of run_spin
    z = [b for b in page["zoomed"] if b[0] == "On-CPU" and b[1] == "run_spin" and b[5]]
    assert len(z) == 1 and abs(z[0][4] - GW) <= 1 and abs(z[0][3] - PAD) <= 1, z
    in_run = sum(c for s, c in on if "run_spin" in s)
    in_spin = sum(c for s, c in on if "run_spin" in s and "gt_spin" in s)
    zs = [b for b in page["zoomed"] if b[0] == "On-CPU" and b[1] == "gt_spin" and b[5]]
    assert zs and abs(sum(b[4] for b in zs) - in_spin / in_run * GW) <= 1, (zs, in_spin, in_run)
    shown = {b[1] for b in page["zoomed"] if b[0] == "On-CPU" and b[5]}
    assert "all" in shown and not shown - {f for s, _ in on if "run_spin" in s for f in s} - {"all"}, shown
    assert sorted(page["unzoomed"]) == sorted(page["boxes"])
    m = dict(re.findall(r"(On-CPU|Off-CPU) ([0-9.]+)%", page["matched"]))
    for g in ("On-CPU", "Off-CPU"):
        assert abs(float(m[g]) - 100 * spin_share[g]) <= 0.05 + 1e-9, (page["matched"], spin_share)


def test_flamegraph_alone_samples(tmp_path):
    """--flamegraph without --sample or --offcpu-stacks samples at --sample's default rate: an
    on-CPU graph, no off-CPU one."""
    svg = str(tmp_path / "f.svg")
    r = run_tmabpf(["--flamegraph", svg, "--", "sh", "-c",  # no --quiet: the note is on stderr
                    "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
    assert r.returncode == 0, r.stderr
    graphs = svg_graphs(svg)
    assert list(graphs) == ["On-CPU"] and graphs["On-CPU"][0] > 0
    assert "at 49 Hz" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--flamegraph", "/nonexistent-dir/f.svg"], "--flamegraph"),
    (["--folded", "/tmp/tmabpf-same.svg", "--flamegraph", "/tmp/tmabpf-same.svg"], "are one file"),
    (["--flamegraph"], "--flamegraph"),
])
def test_bad_flamegraph_options(args, needle):
    r = run_tmabpf(["-d", "1"] + args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not os.path.exists("/tmp/tmabpf-same.svg")
