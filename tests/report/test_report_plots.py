"""The campaign plots at a 20-second and an 8-hour scale (synthetic logs, tests/report/synthetic_log.py):
one time axis for every plot of a campaign, a log axis for verdict counts orders of magnitude apart,
fixed verdict colours, whole-number ticks for counts, one tests/s figure."""
import re

import pytest
from report_stores import copy_bugs
from synthetic_log import long_campaign, short_campaign

from nnfuzz.cli import main
from nnfuzz.report.charts import LEFT, RIGHT, VERDICT_COLORS, W, Axis, nice_ticks

AXIS_END = float(W - RIGHT)


def _page(store, tmp_path, capsys) -> str:
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out), "--no-stats"]) == 0
    capsys.readouterr()
    return out.read_text()


def _svg(html: str, ident: str) -> str:
    start = html.index(f'<svg id="{ident}"')
    return html[start:html.index("</svg>", start)]


def _xs(svg: str):
    return [float(p.split(",")[0]) for pts in re.findall(r'points="([^"]+)"', svg) for p in pts.split()]


def _ticks(svg: str):
    return re.findall(r'class="tick">([^<]+)</text>', svg)


def test_ticks_for_counts_are_whole_and_log_ticks_are_decades():
    assert nice_ticks(0, 2, integer=True) == [0, 1, 2]
    assert nice_ticks(0, 2) == [0, 0.5, 1, 1.5, 2]
    assert Axis(0.0, log=True).ticks(1500) == [0, 1, 10, 100, 1000, 10000]
    assert Axis(1.0, 20.0, log=True).ticks(20) == [1, 10, 20]   # the axis' end is labelled


@pytest.fixture
def short_store(tmp_path):
    store = copy_bugs(tmp_path / "s", ["0002", "0001"])
    short_campaign(store, ["0000", "0001"])
    return store


def test_twenty_seconds(short_store, tmp_path, capsys):
    html = _page(short_store, tmp_path, capsys)
    svgs = {k: _svg(html, f"plot-{k}") for k in ("rate", "verdicts", "coverage", "bugs")}
    for k in ("verdicts", "coverage", "bugs"):  # every plot of the campaign ends where it ended
        assert max(_xs(svgs[k])) == pytest.approx(AXIS_END, abs=0.2), k
    assert LEFT < max(_xs(svgs["rate"])) <= AXIS_END
    assert "seconds since the start" in svgs["rate"] and "seconds since the start" in svgs["bugs"]
    # pass (hundreds) and inconsistency (1) are orders of magnitude apart: a log axis, 1 off the floor
    assert "log scale" in svgs["verdicts"] and {"1", "10", "100"} <= set(_ticks(svgs["verdicts"]))
    colors = dict(re.findall(r'stroke="(#[0-9a-f]{6})" stroke-width="1.6" points="[^"]+"><title>([^<]+)</title>',
                             svgs["verdicts"]))
    assert {v: k for k, v in colors.items()}["inconsistency"] == VERDICT_COLORS["inconsistency"] != VERDICT_COLORS["pass"]
    assert {v: k for k, v in colors.items()}["unsupported"] == VERDICT_COLORS["unsupported"]
    assert all(t in ("0", "1", "2") for t in _ticks(svgs["bugs"])[:3])  # counts: no 0.5, 1.5
    # one tests/s figure: the summary's is the rate plot's mean line
    summary = re.search(r"<b>([\d.]+)</b> tests/s", html).group(1)
    assert f"mean {summary}/s" in svgs["rate"]
    assert "the last new one at" in svgs["coverage"] and "log time axis" in svgs["coverage"]


def test_eight_hours(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002"])
    tests = long_campaign(store, ["0000"])
    html = _page(store, tmp_path, capsys)
    assert "per-minute aggregates" in html
    svgs = {k: _svg(html, f"plot-{k}") for k in ("rate", "verdicts", "coverage", "bugs")}
    for k in ("verdicts", "coverage", "bugs"):
        assert max(_xs(svgs[k])) == pytest.approx(AXIS_END, abs=0.2), k
        assert "hours since the start" in svgs[k]
    assert "8" in _ticks(svgs["bugs"]) and "8" in _ticks(svgs["coverage"])
    ticks = _ticks(svgs["verdicts"])
    assert "1M" in ticks and "100k" in ticks and "log scale" in svgs["verdicts"]
    summary = float(re.search(r"<b>([\d.]+)</b> tests/s", html).group(1))
    assert summary == pytest.approx(tests / (8 * 3600 + 1), abs=0.05)
    assert f"mean {summary:.1f}/s" in svgs["rate"]
    phases = _svg(html, "plot-phases")
    assert re.search(r"[\d.]+ (h|min) \(\d+ %\)", phases)  # phase times as durations


def test_bugs_plot_counts_new_and_known_root_causes_apart(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002", "0013", "0013"])   # copies of kept bugs: known
    meta = (store / "0001" / "meta.json")
    meta.write_text(meta.read_text().replace('"system": "openvino-cpu"', '"system": "ort-cpu"'))  # 0001: new
    short_campaign(store, ["0000", "0001", "0002"])
    bugs = _svg(_page(store, tmp_path, capsys), "plot-bugs")
    assert "bugs saved (3)" in bugs and "new root causes (1)" in bugs and "known root causes (2)" in bugs
