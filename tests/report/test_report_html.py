"""`nnfuzz report`: the page of a store of real kept bugs, of a hostile store, and the campaign timeline
(the browser's view of the page is test_report_browser.py)."""
import json
import re
import time

import pytest
from report_stores import PWN, copy_bugs

from nnfuzz.cli import main
from nnfuzz.fuzz.runlog import RunLog
from nnfuzz.report.store import Campaign
from nnfuzz.report.timeline import timeline


def _report(store, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out), "--no-stats"]) == 0
    return out.read_text(), capsys.readouterr()


def test_kept_bugs_table_sections_and_duplicates(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0000", "0000", "0002", "0005"])  # 0001 duplicates 0000
    html, _ = _report(store, tmp_path, capsys)
    rows = re.findall(r'<tr><td><a href="#bug-(\d{4})">', html)
    assert rows == ["0000", "0002", "0003"]
    for i in rows:  # each link has its section, with a drawn graph, the error and the repro command
        sec = html[html.index(f'<section class="bug" id="bug-{i}">'):]
        sec = sec[:sec.index("</section>")]
        assert '<svg class="graph"' in sec and '<pre class="err">' in sec
        assert f"nnfuzz repro {store / i}" in sec and "import onnx" in sec
    assert "1 (0001)" in html and "no campaign.jsonl" in html
    assert "10 → 1" in html  # bug 0000's reduction (to the single Shrink: bugs/kept/0000)
    assert html.count("<script>") == 1 and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_hostile_store_lists_what_it_skips_and_escapes_everything(hostile_store, tmp_path, capsys):
    html, cap = _report(hostile_store, tmp_path, capsys)
    skipped = re.findall(r"<tr><td>([^<]+)</td><td>", html[html.index('id="skipped-table"'):html.index("</table>", html.index('id="skipped-table"'))])
    assert skipped == ["0001", "0002"] + [f"campaign.jsonl line {n}" for n in (3, 4, 5, 6, 7)], skipped
    assert "not readable JSON" in html and "malformed field" in html
    assert "skipped 0001" in cap.err
    assert PWN not in html and "<img" not in html and html.count("<script>") == 1
    assert "&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;" in html  # shown as text
    sec = html[html.index('id="bug-0003"'):]
    assert "graph not drawn: gir.json is not a GraphIR object" in sec
    assert "no script: BugFolderError" in sec and "is not a valid ONNX model" in sec
    assert 'id="plot-verdicts"' in html  # the one good log record is plotted
    assert "campaign 1 at +2 s" in html[html.index('id="bug-0000"'):]  # its record names bug 0000 at t=1.5


def test_bad_arguments_and_empty_store(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert main(["report", str(tmp_path)]) == 2
    assert "holds no bug folders" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--bogus"]) == 2
    assert main(["report", str(tmp_path), "-o"]) == 2


def test_default_output_is_in_the_store(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002"])
    assert main(["report", str(store), "--no-stats"]) == 0
    assert (store / "report.html").stat().st_mode & 0o444 == 0o444


def test_timeline_counts():
    recs = [{"t": 1.0, "verdict": "pass", "ops": ["A", "B"], "seconds": {"generate": 1.0}},
            {"t": 2.0, "verdict": "inconsistency", "ops": ["B", "C"], "bug": "/x/0000", "seconds": {"compile": 0.5}},
            {"t": 3.0, "verdict": "no-graph"},
            {"t": 4.0, "verdict": "crash", "ops": ["D"], "bug": "/x/0001"},
            {"t": 5.0, "verdict": "crash", "ops": ["D"], "bug": "/x/0002"}]
    later = [{"t": 0.5, "verdict": "pass", "ops": ["E"]}]  # a second campaign appended to the log
    tl = timeline([Campaign({}, recs), Campaign({}, later)], {"0000": "s1", "0001": "s2", "0002": "s2"})
    assert tl.clock == "wall" and tl.span == 5.5 and tl.boundaries == [0.0, 5.0]
    assert tl.verdicts["pass"][-1] == (5.5, 2) and tl.verdicts["crash"][-1][1] == 2
    assert tl.coverage[-1][1] == 5 and tl.bugs["bugs saved"][-1][1] == 3 and tl.bugs["new root causes"][-1][1] == 2
    assert dict(tl.phases) == {"generate": 1.0, "compile": 0.5}
    assert sum(r * tl.span / len(tl.rate) for _, r in tl.rate) == pytest.approx(5)  # tests/s integrates to the tests


def test_timeline_without_t_uses_busy_time():
    recs = [{"verdict": "pass", "seconds": {"generate": 2.0}}, {"verdict": "pass", "seconds": {"execute": 1.0}}]
    tl = timeline([Campaign({}, recs)], {})
    assert tl.clock == "busy" and tl.verdicts["pass"] == [(0.0, 0), (2.0, 1), (3.0, 2)]


def test_campaign_log_lines_carry_t(tmp_path):
    log = RunLog(tmp_path / "c.jsonl", started=time.monotonic() - 5)
    log.write({"verdict": "pass"})
    log.close()
    rec = json.loads((tmp_path / "c.jsonl").read_text())
    assert rec["verdict"] == "pass" and 5 <= rec["t"] < 60


def test_a_rotated_log_is_drawn_from_its_minutes_and_its_bugs_are_placed(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002"])
    log = RunLog(store / "campaign.jsonl", rotate_bytes=4000)   # rotated after a few lines
    log.write({"campaign": {"seed": 7, "backend": "ort-cpu", "oracle": "reference"}, "t": 0.1})
    for k in range(400):  # 200 s: three whole minutes and a part of a fourth
        t = round(0.5 * k + 0.3, 3)
        rec = {"seed": 7 + k, "nodes": 2, "ops": ["Add", f"Op{k % 7}"], "verdict": "unsupported" if k % 4 else "pass",
               "format": "onnx", "stage": None, "seconds": {"compile": 0.25}, "t": t}
        if k == 130:
            rec.update(verdict="crash", bug=str(store / "0000"))
        log.write(rec)
    log.write({"campaign_end": {"stopped": None, "tests": 400, "lost": 0}, "t": 200.5})
    log.close()
    html, cap = _report(store, tmp_path, capsys)
    assert "skipped" not in cap.err and "per-minute aggregates" in html
    assert "<b>400</b> tests logged" in html and "<td>400</td>" in html    # the summary and the campaign's records
    assert "op types (8)" in html and "bugs saved (1)" in html and "known root causes (1)" in html
    from nnfuzz.report.store import gather

    data = gather(store, with_stats=False)
    (c,) = data.campaigns
    assert [m["m"] for m in c.minutes] == [0, 1, 2, 3] and sum(m["tests"] for m in c.minutes) == 400
    assert data.bugs[0].seen["t"] == 120.0    # the end of the minute it was found in (minute 1: 60-120 s)
    tl = timeline(data.campaigns, {})
    assert tl.verdicts["pass"][-1][1] == 100 and dict(tl.phases) == {"compile": pytest.approx(100.0)}
