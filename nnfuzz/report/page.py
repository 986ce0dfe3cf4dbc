"""The report as one static HTML page: inline CSS and a few lines of inline JS (table sorting), plots and
graphs as inline SVG, nothing fetched (a Content-Security-Policy forbids any load and any script but the
page's own), every text taken from the store HTML-escaped."""
from __future__ import annotations

import base64
import hashlib
import math
import time
from typing import List

import nnfuzz
from nnfuzz.report import bugpage
from nnfuzz.report.charts import VERDICT_COLORS, Axis, bar_chart, esc, line_chart
from nnfuzz.report.store import StoreData
from nnfuzz.report.timeline import KNOWN, NEW, timeline


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 16px 40px;color:#222}
h1{font-size:22px}h2{border-bottom:1px solid #ccc;margin-top:32px}h3{margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
#bug-table th{background:#f3f3f3;cursor:pointer}#bug-table td.msg{font-family:monospace;font-size:11px;max-width:360px;overflow-wrap:anywhere}
.facts th{background:#f7f7f7;width:130px}pre{background:#f6f6f6;border:1px solid #ddd;padding:8px;overflow:auto;
max-height:420px;font-size:12px}.problem{color:#b00}.note{color:#666}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plot{border:1px solid #eee;max-width:100%;height:auto}
.plot .grid{stroke:#eee}.plot .hline{stroke:#555;stroke-dasharray:6 3}.plot .mark{stroke:#999;stroke-dasharray:4 3}.plot .axis{stroke:#888}.plot text{font-size:11px;fill:#333}.plot .ptitle{font-size:13px;
font-weight:600}.graph{max-width:100%;height:auto}.graph .edge{fill:none;stroke:#555;stroke-width:1.3}
.graph rect{fill:#e8f0fb;stroke:#4a78b5}.graph .input rect{fill:#eef7e8;stroke:#5a9a3c}
.graph .weight rect{fill:#f7f2e6;stroke:#b08a3a}.graph .out rect{stroke-width:2.5}
.graph .divergent rect{fill:#fde4e4;stroke:#c22}.graph .t1{font:600 11px monospace}.graph .t2{font:10px monospace;fill:#555}.graph .t3{font:10px monospace;fill:#a11}
.summary span{display:inline-block;margin-right:22px}.status{font-weight:600}.status.new{color:#b00}
.status.known,.status.kept{color:#555}.bugnote{font-style:italic}.cause{font-family:monospace;font-size:12px}
.legend{font-size:12px;color:#444}.legend .sw{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px;
border:1px solid #4a78b5;background:#e8f0fb;vertical-align:middle}.legend .sw.input{background:#eef7e8;
border-color:#5a9a3c}.legend .sw.weight{background:#f7f2e6;border-color:#b08a3a}.legend .sw.out{border-width:2.5px}
.legend .sw.divergent{background:#fde4e4;border-color:#c22}
"""

# Click a column header of the bug table to sort by it (numbers as numbers).
JS = """
document.querySelectorAll('#bug-table th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1;
    th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent, y = b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      return dir * (isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

# Nothing may be loaded, and only the page's own script runs (by its hash): were some text from a store
# ever not escaped, a script in it would still not run.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-"
       + base64.b64encode(hashlib.sha256(JS.encode()).digest()).decode() + "'")

# nnfuzz stats' metrics of the bug graphs, each with what it counts (docs/stats.md has the formulas)
STATS_ROWS = (("graphs", "bug graphs read"), ("NOO", "operators per graph (mean)"),
              ("NOT", "distinct op types per graph (mean)"),
              ("NOP", "distinct op-type pairs joined by an edge, per graph (mean)"),
              ("OTC", "op type coverage: share of the op corpus's types seen"),
              ("IDC", "input degree coverage: share of each op type's possible input counts seen (mean)"),
              ("SEC", "successor coverage: share of op-type pairs seen on an edge"),
              ("DEC", "share of op-type triples seen along two adjacent edges"),
              ("op_types", "op types seen"), ("op_x_dtype", "distinct (op type, input dtypes) seen"),
              ("op_x_rank_x_attr_bin", "distinct (op type, input ranks, binned attributes) seen"))


def render(data: StoreData) -> str:
    body = [_header(data), _skipped(data), _campaigns(data), _bug_table(data)]
    by_id = {b.id: b for b in data.bugs}
    body += [bugpage.section(b, by_id) for b in data.unique]
    body.append(_stats(data))
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            f"<title>nnfuzz report: {esc(data.root)}</title><style>{CSS}</style></head><body>"
            + "".join(body) + f"<script>{JS}</script></body></html>\n")


def _header(data: StoreData) -> str:
    systems = sorted({str(b.meta.system) for b in data.bugs})
    tests = sum(c.n_tested for c in data.campaigns)
    return (f"<h1>nnfuzz report: {esc(data.root)}</h1>"
            f'<p class="note">written {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} by nnfuzz '
            f"{esc(nnfuzz.__version__)} (<code>nnfuzz report</code>)</p><p class=\"summary\">"
            f"<span><b>{len(data.unique)}</b> unique bugs{_by_status(data)}</span>"
            f"<span><b>{len(data.bugs)}</b> bug folders</span>"
            f"<span><b>{len(systems)}</b> systems: {esc(', '.join(systems) or '-')}</span>"
            f"<span><b>{len(data.campaigns)}</b> campaigns, <b>{tests}</b> tests logged{_rate(data)}</span>"
            f"<span><b>{len(data.skipped)}</b> entries skipped</span></p>"
            '<p><a href="#campaign">campaign over time</a> · <a href="#bugs">unique bugs</a> · '
            '<a href="#stats">graph statistics of the bug graphs</a></p>')


def _rate(data: StoreData) -> str:
    """", 68.7 tests/s": the mean over the logged time (the figure the rate plot's dashed line shows)."""
    if not any(c.n_records for c in data.campaigns):
        return ""
    tl = timeline(data.campaigns, {})
    return f", <b>{tl.mean_rate:.1f}</b> tests/s" if tl.span > 0 else ""


def _by_status(data: StoreData) -> str:
    """": 2 new, 3 known" (the unique bugs by report/standing.py's status)."""
    from nnfuzz.report.standing import by_status

    counts = by_status(data.unique)
    return (": " + ", ".join(f"<b>{n}</b> {esc(k)}" for k, n in counts.items())) if counts else ""


def _skipped(data: StoreData) -> str:
    if not data.skipped:
        return ""
    rows = "".join(f"<tr><td>{esc(s.what)}</td><td>{esc(s.error)}</td></tr>" for s in data.skipped)
    return (f'<h2 id="skipped">Skipped entries ({len(data.skipped)})</h2><p class="problem">These could not be read '
            f'and are left out of what follows.</p><table id="skipped-table"><tr><th>entry</th><th>why</th></tr>'
            f"{rows}</table>")


def _campaigns(data: StoreData) -> str:
    head = '<h2 id="campaign">The campaign over time</h2>'
    if not data.has_log:
        return head + (f'<p class="note">{esc(data.root)} has no campaign.jsonl (a store of kept bugs, or one whose '
                       "log was removed): there is nothing to plot over time.</p>")
    if not any(c.n_records for c in data.campaigns):
        return head + '<p class="note">campaign.jsonl holds no test records.</p>'
    tl = timeline(data.campaigns, {b.id: b.signature for b in data.bugs},
                  {b.signature for b in data.bugs if b.status in ("known", "kept")})
    clock = "" if tl.clock == "wall" else "busy "
    if any(c.minutes for c in data.campaigns):
        head += ('<p class="note">This log was rotated (campaign.NNN.jsonl.bz2 parts): the plots are drawn from '
                 "its per-minute aggregates, campaign.minutes.jsonl, one point a minute.</p>")
    rows = "".join(
        f"<tr><td>{k + 1}</td><td>{esc(c.header.get('backend', '-'))}</td><td>{esc(c.header.get('oracle', '-'))}</td>"
        f"<td>{esc(c.header.get('seed', '-'))}</td><td>{esc(c.header.get('started', '-'))}</td>"
        f"<td>{esc(c.header.get('time_s', '-'))}</td><td>{c.n_records}</td>"
        f"<td>{esc((c.end or {}).get('stopped') or ('-' if c.end else 'no end line (killed?)'))}</td></tr>"
        for k, c in enumerate(data.campaigns))
    plots = _plots(tl, clock)
    return (head + "<table><tr><th>#</th><th>backend</th><th>oracle</th><th>seed</th><th>started</th><th>time_s</th>"
            f"<th>records</th><th>stopped</th></tr>{rows}</table>" + f'<div class="plots">{"".join(plots)}</div>'
            + VERDICT_WORDS)


# what each verdict of the plots means (nnfuzz/verdict.py, fuzz/loop.py), said once under them
VERDICT_WORDS = ('<p class="note">Verdicts: <b>pass</b> the system agreed with the reference; <b>unsupported</b> the '
                 "system said it does not take an op or dtype of the model (probed limits, not a bug); <b>crash</b>, "
                 "<b>inconsistency</b> (outputs differ beyond tolerance), <b>timeout</b>: bugs; <b>no-graph</b> the "
                 "generator gave up on a graph; <b>undefined-values</b> no inputs keep every value finite; "
                 "<b>nnfuzz-error</b> a fault of nnfuzz itself. The time axes start at each campaign's start, the "
                 "sandbox's start-up included.</p>")


def _plots(tl, clock: str) -> List[str]:
    """The campaign's plots on one time axis (0 to its end, in s, min or h by its length)."""
    unit, div = ("s", 1.0) if tl.span <= 180 else ("min", 60.0) if tl.span <= 3 * 3600 else ("h", 3600.0)
    xlabel = f"{clock}{ {'s': 'seconds', 'min': 'minutes', 'h': 'hours'}[unit]} since the start" + (
        " (this log has no t: summed phase times)" if clock else "")

    def sc(series):
        return [(x / div, y) for x, y in series]

    span = tl.span / div
    x = Axis(0.0, span)
    marks = [m / div for m in tl.boundaries[1:]]
    verdicts = {v: sc(tl.verdicts[v]) for v in sorted(tl.verdicts, key=_verdict_order)}
    finals = [s[-1][1] for s in verdicts.values() if s and s[-1][1] > 0]
    spread = len(finals) > 1 and max(finals) / min(finals) >= 30  # orders of magnitude apart: a log axis
    cov = sc(tl.coverage)
    first = next((px for px, py in cov if py > 0), None)
    lo = 10 ** math.floor(math.log10(first)) if first else max(span / 1000, 1e-3)
    last_new = cov[-2][0] if len(cov) > 1 and cov[-1][1] == cov[-2][1] else (cov[-1][0] if cov else 0.0)
    cov_title = f"op types tested (log time axis; the last new one at {_fmt_x(last_new)} {unit})"
    rate = tl.mean_rate
    return [
        line_chart("tests per second", {"tests/s": sc(tl.rate)}, xlabel, "tests/s", step=False, css_id="plot-rate",
                   marks=marks, x=x, legend={"tests/s": "per slice"}, hlines=[(rate, f"mean {rate:.1f}/s")]),
        line_chart("verdicts (cumulative" + (", log scale)" if spread else ")"), verdicts, xlabel, "tests",
                   css_id="plot-verdicts", marks=marks, x=x, y=Axis(0.0, log=spread, integer=True),
                   colors=VERDICT_COLORS),
        line_chart(cov_title, {"op types": cov}, xlabel, "distinct op types", css_id="plot-coverage", marks=marks,
                   x=Axis(lo, span, log=True), y=Axis(integer=True)),
        line_chart("bugs found", {k: sc(v) for k, v in tl.bugs.items()}, xlabel, "bugs", css_id="plot-bugs",
                   marks=marks, x=x, y=Axis(integer=True), dashed=(NEW, KNOWN),
                   colors={"bugs saved": "#1f77b4", NEW: VERDICT_COLORS["crash"], KNOWN: VERDICT_COLORS["unsupported"]}),
        bar_chart("time per phase (summed over workers)", tl.phases, " s", css_id="plot-phases"),
    ]


def _verdict_order(v: str) -> int:
    order = list(VERDICT_COLORS)
    return order.index(v) if v in order else len(order)


def _fmt_x(v: float) -> str:
    return f"{v:.3g}"


def _bug_table(data: StoreData) -> str:
    from nnfuzz.report.standing import seen_text, status_text

    head = f'<h2 id="bugs">Unique bugs ({len(data.unique)})</h2>'
    if not data.unique:
        return head + '<p class="note">no readable bug folder.</p>'
    cols = ("id", "status", "system", "symptom", "op", "note", "message", "nodes", "first seen", "duplicates")
    rows: List[str] = []
    for b in data.unique:
        m = b.meta
        cells = [f'<a href="#{esc(bugpage.anchor(b.id))}">{esc(b.id)}</a>',
                 f'<span class="status {esc(b.status)}">{esc(status_text(b))}</span>', esc(m.system),
                 esc(m.symptom) + f" at {esc(m.stage or '-')}" + (" (flaky)" if m.flaky else ""), esc(b.op),
                 esc(b.note or "-"), esc(_clip(bugpage.cause_line(b))), esc(bugpage.nodes_text(b)),
                 esc(seen_text(b, short=True)),
                 str(len(b.duplicates)) + (f" ({esc(', '.join(b.duplicates))})" if b.duplicates else "")]
        rows.append("<tr>" + "".join(f'<td class="msg">{c}</td>' if k == 6 else f"<td>{c}</td>"
                                     for k, c in enumerate(cells)) + "</tr>")
    return (head + '<p class="note">status: <b>new</b> (a root cause no kept bug or known-bugs entry names), '
            "<b>known</b> (and as what), <b>duplicate</b> (a signature the store held before), <b>kept</b> (a "
            "folder of the repository's bugs/kept); the campaign log's word where it has one, else matched now "
            '(docs/known-bugs.md). message: the system\'s innermost message (a crash) or the summary; each bug\'s '
            "section gives its signature.</p>"
            '<table id="bug-table"><thead><tr>' + "".join(f"<th>{c}</th>" for c in cols)
            + f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _clip(text: str, n: int = 140) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _stats(data: StoreData) -> str:
    head = '<h2 id="stats">Graph statistics of the bug graphs (<code>nnfuzz stats</code>)</h2>'
    s = data.stats
    if not s:
        return head + '<p class="note">none (no readable graph; see the skipped entries).</p>'
    cells = []
    for k, what in STATS_ROWS:
        v = s.get(k)
        text = "-" if v is None else (f"{100 * v:.3g} %" if k in ("OTC", "IDC", "SEC", "DEC") else
                                      f"{v:.2f}" if isinstance(v, float) else str(v))
        cells.append(f"<tr><th>{esc(k)}</th><td>{esc(text)}</td><td>{esc(what)}</td></tr>")
    level = ("ONNX op types, read from each folder's model.onnx (<code>nnfuzz stats --from=onnx</code>)"
             if s.get("_level") == "onnx" else "nnfuzz's op types, read from each folder's gir.json")
    return (head + '<p class="note">What the saved bug graphs exercise, as <code>nnfuzz stats</code> prints it: '
            f'the Isra and HirGen metrics, relative to the op corpus {esc(s.get("op_corpus"))} (n_C = '
            f'{esc(s.get("n_C"))} op types), over {level}; docs/stats.md gives each formula.</p><table id="stats-table">'
            f'<tr><th>metric</th><th>value</th><th>what it counts</th></tr>{"".join(cells)}</table>')
