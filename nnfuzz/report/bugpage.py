"""One unique bug's section of the report: its facts, the reduced graph drawn (and the original one),
the error, the repro command and the standalone reproduction script.

Each part that cannot be read from the folder (a model.onnx that does not parse, a gir.json that is not a
graph, a script that cannot be written for this system) is replaced by a visible note saying why.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Dict, List

from nnfuzz.errors import NNFuzzError
from nnfuzz.report.charts import esc
from nnfuzz.report.errbox import error_box
from nnfuzz.report.store import BugEntry

ERR_LOG_MAX = 20000  # characters of err.log shown; the rest is in the folder


def anchor(bug_id: str) -> str:
    return f"bug-{bug_id}"


def nodes_text(b: BugEntry) -> str:
    red = b.meta.reduced if isinstance(b.meta.reduced, dict) else None
    if red and "nodes_before" in red:
        return f"{red.get('nodes_before')} → {red.get('nodes_after')}"
    return str(b.meta.nodes) if b.meta.nodes is not None else "-"


def cause_line(b: BugEntry) -> str:
    """A bug's one line: for a crash or timeout the system's innermost message, the one its signature
    reads (triage/rootcause.py; the summary is the outermost wrapper, e.g. OpenVINO's "Exception from
    src/inference/src/cpp/core.cpp:105:"), for an inconsistency its summary."""
    m = b.meta
    if m.symptom in ("crash", "timeout"):
        from nnfuzz.triage.rootcause import root_cause

        line = root_cause(str(m.summary), b.err_log)[1] or str(m.summary)
        check = _CHECK.match(line)  # an innermost check "<condition> <file>: <message>": the words first
        return f"{check.group(2)} (check {check.group(1)})" if check else line
    return str(m.summary)


_CHECK = re.compile(r"^(.+?\.(?:hpp|cpp|cc|cxx|h|c|cu|py)(?::\d+)?): (.+)$")


def heading_op(b: BugEntry) -> str:
    if b.op != "-":
        return b.op
    return f"a {b.meta.nodes}-node graph" if isinstance(b.meta.nodes, int) else "a graph whose error names no op"


LEGEND = ('<p class="legend"><span class="sw input"></span>graph input <span class="sw weight"></span>weight '
          '<span class="sw op"></span>node: nnfuzz\'s op(attributes), below it each output var: dtype[shape] '
          '<span class="sw op out"></span>thick border: a graph output <span class="sw divergent"></span>red: the '
          'blamed node (the root cause, else the first divergent node, else the node the error names), its third '
          'line the ONNX node the system was given; arrows run from producer to consumer</p>')


def section(b: BugEntry, by_id: Dict[str, BugEntry]) -> str:
    from nnfuzz.report.standing import seen_text, status_text

    m = b.meta
    blamed, onnx_lines = blamed_onnx(b)
    facts = [("status", status_text(b)), ("signature", b.signature),
             ("system", f"{m.system} {m.version or ''} ({m.version_id or '-'})"),
             ("symptom", f"{m.symptom} at {m.stage or '-'}" + (" (flaky)" if m.flaky else "")),
             ("op", b.op), ("ONNX of the blamed node", "\n".join(onnx_lines) or "-"), ("nodes", nodes_text(b)),
             ("blame", m.blame or "-"), ("localization", m.localization_note or "-"), ("seed", m.seed),
             ("first seen", seen_text(b))]
    if isinstance(m.oracle, dict) and isinstance(m.oracle.get("expected"), dict):
        exp = m.oracle["expected"]
        facts.append(("compared with", f"{exp.get('system')} {exp.get('version', '')}"))
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v).replace(chr(10), '<br>')}</td></tr>" for k, v in facts)
    dups = "".join(f"<li>{esc(d)}: {esc(cause_line(by_id[d])[:200])}</li>" for d in b.duplicates)
    dup_html = f"<h4>Duplicates ({len(b.duplicates)})</h4><ul>{dups}</ul>" if b.duplicates else ""
    original = b.path / "original"
    orig_html = ""
    if original.is_dir():
        orig_html = (f"<details><summary>original graph (before reduction)</summary>"
                     f"{graph_html(original, b.id + '-orig', None)}</details>")
    err = error_box(b.err_log) if b.err_log else "(no err.log)"
    more = f"\n… {len(err) - ERR_LOG_MAX} more characters in err.log" if len(err) > ERR_LOG_MAX else ""
    script_name, script = repro_script(b)
    run_script = (f"\npython {shlex.quote(str(b.path / script_name))}   # the standalone script below: numpy, onnx "
                  f"and the system only" if (b.path / script_name).is_file() else "")
    note = f'<p class="bugnote">{esc(b.note)}</p>' if b.note else ""
    return (f'<section class="bug" id="{esc(anchor(b.id))}"><h3>Bug {esc(b.id)}: {esc(m.system)} '
            f'{esc(m.symptom)} in {esc(heading_op(b))} <span class="status {esc(b.status)}">{esc(b.status)}</span></h3>'
            f'{note}<p class="cause">{esc(cause_line(b))}</p><table class="facts">{rows}</table>{dup_html}'
            f'<h4>Graph{" (reduced)" if m.reduced else ""}</h4>'
            f'{graph_html(b.path, b.id, blamed, _onnx_label(onnx_lines))}{LEGEND}{orig_html}'
            f'<h4>Error</h4><pre class="err">{esc(err[:ERR_LOG_MAX] + more)}</pre>'
            f'<h4>Reproduce</h4><pre class="cmd">{esc(repro_command(b) + run_script)}</pre>'
            f'<details><summary>standalone script ({esc(script_name)})</summary><pre class="script">{esc(script)}'
            f'</pre></details><p><a href="#bugs">back to the table</a></p></section>')


def _onnx_label(lines: List[str]) -> str:
    """The blamed node's third line in the drawing: ``ONNX Resize(axes=[-1], ...)`` (its last ONNX node,
    the one that writes its output, without the node's name and inputs)."""
    if not lines:
        return ""
    call = lines[-1].split(": ", 1)[-1].split("  inputs: ")[0]
    return f"ONNX {call}"


def blamed_onnx(b: BugEntry):
    from nnfuzz.report.onnxnode import blamed_onnx as lines

    try:
        gir = json.loads((b.path / "gir.json").read_text(errors="replace")) if (b.path / "gir.json").is_file() else {}
        gir_vars = gir.get("vars", {}) if isinstance(gir, dict) else {}
    except (ValueError, RecursionError):
        gir_vars = {}
    return lines(b.path, b.meta, b.op, gir_vars if isinstance(gir_vars, dict) else {})


def repro_command(b: BugEntry) -> str:
    return f"nnfuzz repro {shlex.quote(str(b.path))}"


def graph_html(folder: Path, ident: str, divergent_var, extra: str = "") -> str:
    """The folder's graph as SVG: from gir.json, else from model.onnx; a note where neither draws."""
    from nnfuzz.report.graph import GraphDrawError, draw, from_gir_json, from_onnx

    try:
        if (folder / "gir.json").is_file():
            try:
                data = json.loads((folder / "gir.json").read_text(errors="replace"))
            except (ValueError, RecursionError) as e:
                raise GraphDrawError(f"gir.json is not JSON: {e}") from e
            return draw(from_gir_json(data, divergent_var, extra), ident)
        if (folder / "model.onnx").is_file():
            return draw(from_onnx(_load_onnx(folder / "model.onnx")), ident)
    except NNFuzzError as e:
        return f'<p class="problem">graph not drawn: {esc(e)}</p>'
    return '<p class="note">no gir.json or model.onnx to draw</p>'


def _load_onnx(path: Path):
    import onnx
    from google.protobuf.message import DecodeError

    from nnfuzz.report.graph import GraphDrawError

    try:
        return onnx.load_from_string(path.read_bytes())
    except (DecodeError, ValueError, OSError) as e:
        raise GraphDrawError(f"{path.name} does not parse as ONNX ({type(e).__name__}: {e})") from e


def repro_script(b: BugEntry):
    """(file name, text) of the standalone script: the folder's repro_<system>.py (`nnfuzz repro
    --script`), else one written now (triage/script.py), else why none can be."""
    saved: List[Path] = sorted(b.path.glob("repro_*.py"))
    own = b.path / f"repro_{b.meta.system}.py"
    pick = own if own.is_file() else (saved[0] if saved else None)
    if pick is not None:
        return pick.name, pick.read_text(errors="replace")
    from nnfuzz.triage.bugstore import load_bug
    from nnfuzz.triage.script import write_script
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    try:
        return "written for this report", write_script(load_bug(b.path), b.meta.system, DEFAULT_TOLERANCES)
    except NNFuzzError as e:
        return "none", f"no script: {type(e).__name__}: {e}"
