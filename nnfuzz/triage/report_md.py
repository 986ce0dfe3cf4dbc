"""``nnfuzz repro BUG --report``: report.md in the issue template of the system's own tracker, with the
standalone script (triage/script.py) inline. Each backend carries its template (``Backend.issue_template``,
in its knowledge module: nnfuzz/backends/<system>_knowledge.py); this module gathers the facts they fill in.
"""
from __future__ import annotations

import platform

import onnx

from nnfuzz.errors import ConfigError
from nnfuzz.triage.bugstore import read_err_log
from nnfuzz.triage.rootcause import root_cause


def facts(bug, backend: str) -> dict:
    """What every template fills in (strings): the system and its versions, what went wrong, the model's
    ops and opset, the platform, the expected behaviour, the GraphIR printed and the error log."""
    m = bug.meta
    err = read_err_log(bug.path)
    op, inner = root_cause(str(m.summary), err, backend)
    what = (f"an inconsistency: {m.summary}" if m.symptom == "inconsistency" else
            f"a {m.symptom} at {m.stage}: {inner or m.summary}") + _dynamic(m.dynamic)
    nodes = [n.op_type for n in onnx.load_model_from_string(bug.model_bytes).graph.node if n.op_type != "Constant"] \
        if bug.format == "onnx" else list(m.ops or [])
    ops = ", ".join(dict.fromkeys(nodes)) or "?"
    return {
        "backend": backend, "version": m.version, "version_id": m.version_id, "op": op or _first_divergent(m),
        "what": what, "ops": ops, "nodes": len(nodes), "opset": m.opset, "os": platform.platform(),
        "arch": platform.machine(), "python": platform.python_version(), "summary": str(m.summary),
        "expected": _expected(m, backend, bug.format), "graph": _graph_text(bug), "log": err.split("Traceback (most recent call last)")[0].strip()[:3000]
        or str(m.summary),
    }


def _dynamic(dyn) -> str:
    """For a dynamic model's bug (docs/dynamic-shapes.md): its symbolic dims, the shapes it ran and the one it
    failed at, and what the static check of that shape found (triage/static_check.py)."""
    if not isinstance(dyn, dict) or not dyn.get("assignments"):
        return ""
    k, sizes = dyn.get("shape"), dyn["assignments"]
    at = f"; it fails at shape {k} {sizes[k]}" if isinstance(k, int) and 0 <= k < len(sizes) else ""
    from nnfuzz.triage.static_check import static_term

    static = {"dynamic": "; the static model of that shape, compiled alone and inferred as often as the dynamic "
                         "one was, is right",
              "again": "; the static model of that shape, compiled alone, is right on its first inference and "
                       "wrong on the last, as the dynamic one"}.get(static_term(dyn.get("static")), "")
    return (f"\n\nThe model has symbolic input dims ({dyn.get('dims')}); it is compiled once and run at "
            f"{len(sizes)} shapes ({sizes}){at}{static}.")


def _graph_text(bug) -> str:
    """The model as nnfuzz's GraphIR, printed (what a GraphIR bug's script carries as a SavedModel)."""
    if bug.gir_text is None:
        return ""
    from nnfuzz.gir import GraphIR

    return GraphIR.loads(bug.gir_text).pretty()


def _first_divergent(m) -> str:
    node = m.first_divergent_node or {}
    return str(node.get("op", "")).split("(")[0]


def _expected(m, backend: str, fmt: str) -> str:
    from nnfuzz.backends.registry import backend_class

    if fmt != "onnx":  # a TF / torch model built from the GraphIR: compared with its framework's eager run
        reference = backend_class(backend).reference
        ref = (reference and backend_class(reference).as_reference) or "torch eager"
        return (f"The outputs match the reference ({ref}) within the tolerances in the script."
                if m.symptom == "inconsistency" else "The model, which runs in eager mode, compiles and runs.")
    if m.symptom == "inconsistency":
        return "The outputs match the reference (torch eager, which the ONNX reference evaluator agrees with) " \
               "within the tolerances in the script."
    return "The valid model (it passes `onnx.checker.check_model(full_check=True)`) compiles and runs."


def write_report(bug, backend: str, script: str) -> str:
    """report.md of ``bug`` in the issue template of ``backend``'s system (``Backend.issue_template``)."""
    from nnfuzz.backends.registry import backend_class, builtin_classes

    template = backend_class(backend).issue_template
    if template is None:
        engines = sorted({c.engine for c in builtin_classes() if c.issue_template is not None})
        raise ConfigError(f"--report has templates for the engines {engines}; got backend={backend!r}")
    return template(facts(bug, backend), script.strip())
