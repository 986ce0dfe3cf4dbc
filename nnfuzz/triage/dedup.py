"""One report per root cause: a frozen signature per bug, and the index of a bug store.

Signatures:
- crash / timeout whose error names an op downstream of the fault (triage/crash_prefix.py: the graph up
  to it runs, and a node before it that feeds it is wrong on its own inputs): that node's fault, signed as
  an inconsistency localized to it is: system | inconsistency | its op | kind. A node that gives a wrong
  shape is one fault whether the test's outputs show it or a consumer's shape check fails on it
  (bugs/kept/0011's reduce gave 4 signatures in a dynamic openvino-cpu campaign: the inconsistency, and
  crashes of the Slice, Pad and Conv after it);
- other crashes / timeouts: system | symptom | stage (| backward: a gradient test's backward graph failed,
  oracles/grad.py) | exception type | the op the system names | its
  innermost check with the first line of message after it (triage/rootcause.py), with numbers, hex
  addresses, paths, quoted names, graph names and ONNX node names stripped (| ``dropped <op>``: the error
  names a value whose producer, of that op, the system's passes removed, root_cause method ``dropped``) |
  the function names of the top three frames of a native backtrace; a crash known only by its signal (triage/signal_crash.py) adds
  ``at`` the op it localizes to (root_cause method ``signal``) and the crashing thread's Python frames:
  the system's top three and nnfuzz's op lowering under them (``op linear._matmul``);
- inconsistency: system | inconsistency | the root-cause op (meta.json ``root_cause``: the first node
  whose own error passes its accuracy budget, triage/local_error.py; named as the system ran it where
  its ONNX lowering is one node: Softshrink is Shrink; a shape or dtype fault by the op family that
  shares its shape rule: Reduce*; a wrong shape that exposing every value hides, by the first node whose
  output has it with nothing exposed, triage/truncate.py) | the kind of error (shape, dtype, missing,
  non-finite, values, precision). One fault gives one signature however its error grows downstream,
  and in whichever dtypes it shows: meta.json keeps the dtype, the signature does not (issue 26's item 7
  measured that the dtype split one fault into a signature per dtype: inconsistency recall 0.15, 0.44
  without it, precision 0.96 and 0.99). Folders without a root cause (saved before it existed, or
  localized by first divergence alone): the op at the first divergent node | the nature of the
  divergence; ``unlocalized`` with the normalized summary when localization found no node. A
  metamorphic disagreement (meta.json ``rewrite``) names the rewrite kinds instead of a node:
  ``rewrite <kinds>``; an invalid model whose outputs contradict their declared types (``invalid``):
  ``invalid <rule> <op>``.

``nnfuzz dedup bugs/`` groups every folder by signature and writes ``bugs/index.json`` and a
readable ``bugs/README.md`` table; campaigns put ``signature`` and ``duplicate_of`` in each new
bug's meta.json as they save it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

SIGNATURE_VERSION = 19  # 2: Relax's first binding (lv) normalizes like lv7; 3: ONNX node and temp names;
# 4: the innermost check and failing op for crashes, the divergence's nature (not dtype) for inconsistencies;
# 5: the names ONNX node tests give expanded functions' nodes and edges, OpenVINO's "Operation name: x";
# 6: an inconsistency's root cause by each node's own error (op | dtype | kind); 7: without the dtype;
# 8: a rank in a name (Resize2D, resize3d) is a number, a system's name for an ONNX op is that op (resize2d:
# Resize), and reduction's note in err.log is not part of the message; 9: a shape or dtype root cause
# names the op family that shares its shape rule (Reduce*); 10: a gradient test's crash in the backward says so;
# 11: an inconsistency only a dynamic model shows names its root cause's op (dynamic | Add | values);
# 12: a crash charged to a node before the op its error names is signed as that node's inconsistency, a
# wrong shape hidden by exposing every value by the first node that gives it (truncate), Conv's family;
# 13: a crash known only by its signal names the op it localizes to and its Python frames (signal_crash.py);
# 14: a kernel that fails in inductor's compile workers is signed by the worker's own exception, CUDA code
# that NVRTC refuses (tvm-gpu) by NVRTC's first error; a shape in a message is one token whatever its rank;
# of several failed conversions, the op first in the model signs; a stand-in node goes by its ONNX op; the QDQ
# writer's variable names (v9_dq) are variables; 15: TVM's Relax type-inference errors name their op ("Concat
# expects ..."), and a Relax-native model's parameter check names its value (param=v2): both charged to the node
# that gives it (crash_prefix.py); a full-integer (int8) test's inconsistency names its one op; 16: TVM's
# TOPI buffer names (T_add, T_divide) are variables: one FuseTIR check signed by the op fused first (kept 0098)
# 17: the QDQ writer's names for a temp's Q and DQ values (_resh15_q) are variables, as v6_q is: kept 0100 was
# signed 3 ways; 18: ORT's "in node (X)" is any node (an ORT pass's gemm_input_reshape_arg_q signed 0100 again),
# and the types in ORT's dump of a node it rejects are not part of it; 19: an ORT_ENFORCE's function, file and
# condition, not the op whose kernel ran it (kept 0105 once per QuantizeLinear and DequantizeLinear); a crash on a
# value whose producer a pass removed names that producer's op (``dropped Softplus``: kept 0001, 0019 and the
# LayerNorm fusion said the same "Node input ... is not a graph input")

# root_cause methods that name the node a fault is in (triage/localize.py, truncate.py, crash_prefix.py)
NODE_METHODS = ("local-error", "cut", "truncate")

_NORMALIZE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:/[\w.@+-]+)+(?::\d+)?"), "<path>"),   # /a/b/c.cc:83
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<name>"),                       # quoted names
    # ORT's "of operator (QuantizeLinear) in node (X)": X is any node's name, nnfuzz's (v7_q) or one an ORT pass
    # made (gemm_input_reshape_arg_q); the operator is named beside it
    (re.compile(r"(\bin node \()[^()]*(\))"), r"\1<node>\2"),
    # ORT's dump of a node it rejects, "In Node, (name, op, domain, version) : (input: type, ...) -> (output:
    # type, ...) , Error ...": the op and the error sign it, the types of its values do not (kept 0079 was
    # signed once per quantized dtype)
    (re.compile(r"(In Node, \([^()]*\) : )\((?:<name>: [^,]*,)*\) -> \((?:<name>: [^,]*,)*\)"), r"\1<values>"),
    # GraphIR (v9, and the QDQ writer's v9_dq, v9_q2 and _resh15_q: its pair for a value or a temp), Relax (lv,
    # lv7), LLVM
    (re.compile(r"\b(?:[viwp]\d+(?:_[a-z]+\d*)?|_[a-z]+\d+_[a-z]+\d*|(?:lv|gv|alloc|tmp)\d*)\b|%[\w.]+"), "<var>"),
    (re.compile(r"\bT_[a-z][a-z0-9_]*\b"), "<var>"),                   # TVM's TOPI buffers: T_add, T_divide
    # the direct path's node names (Relu_3) and temps (_gath12), which depend on the drawn spellings
    (re.compile(r"\b_[a-z]+\d+\b|\b[A-Z][A-Za-z0-9]*_\d+\b"), "<node>"),
    # ONNX node tests name an expanded function's nodes and edges "<Op>_<test name>_expanded_function_<x>"
    # (onnx.backend.test.case.node): the test's name is in every one, one root cause per test otherwise
    (re.compile(r"\b[A-Z][A-Za-z0-9]*_test_\w+"), "<node>"),
    (re.compile(r"(Operation name: )\S+"), r"\1<node>"),                   # OpenVINO's CPU plugin: any IR name
    (re.compile(r"(?<=[A-Za-z])\d(?=[dD]\b)"), "<n>"),                  # ranks in names: Resize2D, conv3d
    (re.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"), "<n>"),             # numbers
    # a shape, whatever its rank and brackets (OpenVINO's "Shapes [2,3,4] and [2,3,4]" at compile, "{2,3}" at
    # inference: one GatherElements check signed by rank as several root causes)
    (re.compile(r"[\[{](?:\s*(?:-?<n>|\?)(?:\.\.-?<n>)?\s*,)*\s*(?:-?<n>|\?)?(?:\.\.-?<n>)?\s*[\]}]"), "<shape>"),
    (re.compile(r"\s+"), " "),
]
_FRAME = re.compile(r"^\s*\d+:\s+(\S.*?)\s*$", re.M)      # "  3: tvm::relax::Foo(...)" backtraces
_TYPE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Fail|Failure|Abort)?)\s*:")


def normalize(text: str) -> str:
    out = text.strip()
    for pattern, repl in _NORMALIZE:
        out = pattern.sub(repl, out)
    return out.strip()


def signature(meta, err_log: str = "") -> str:
    """The frozen signature of a bug from its BugMeta (or meta.json's object) and err.log (for the
    system's full message and native backtraces)."""
    from nnfuzz.triage.meta import BugMeta
    from nnfuzz.triage.rootcause import root_cause
    from nnfuzz.triage.signal_crash import signal_only, stack_terms

    if not isinstance(meta, BugMeta):
        meta = BugMeta.from_json(meta)
    system, symptom = str(meta.system or None), str(meta.symptom or None)
    if symptom == "inconsistency":
        from nnfuzz.oracles.base import oracle_signature_term

        term = oracle_signature_term(meta)  # the oracle's own fields place it (a rewrite, an invalid rule)
        if term is not None:
            return f"{system} | inconsistency | {term} | {divergence(meta)}"
        root = meta.root_cause
        if root and root.get("method") in NODE_METHODS:
            return node_fault(system, root)
        node = meta.first_divergent_node
        if node:  # (as the system ran it, where localization found its one ONNX node: localize.py)
            op = str((root or {}).get("system_op") or node.get("op", "?")).split("(")[0]
            return f"{system} | inconsistency | {op} | {divergence(meta)}"
        return f"{system} | inconsistency | unlocalized | {normalize(str(meta.summary))[:120]}"
    from nnfuzz.oracles.base import oracle_crash_term

    term = oracle_crash_term(meta)  # the oracle's own fields place it: a gradient test's backward
    stage = f"{meta.stage} | {term}" if term else str(meta.stage)
    root = meta.root_cause
    if root and root.get("method") == "prefix":  # the fault lies before the op the error names
        return node_fault(system, root)
    summary = str(meta.summary)
    m = _TYPE.match(summary)
    etype = m.group(1) if m else "?"
    op, inner = root_cause(summary, err_log)
    message = normalize(inner or (summary[m.end():] if m else summary))[:160]
    frames = [normalize(f.split("(")[0])[:80] for f in _FRAME.findall(err_log)[:3]]  # names, not arguments
    parts = [system, symptom, stage, etype] + ([op] if op else []) + [message]
    if root and root.get("method") == "dropped":  # a pass removed this op's node and left a reader (crash_prefix.py)
        parts.append(f"dropped {root_op(root)}")
    if meta.signal:
        parts.append(f"signal {meta.signal}")
    if signal_only(meta, err_log):  # nothing but the signal: where it died tells one fault from another
        parts += ([f"at {root_op(root)}"] if root and root.get("method") == "signal" else []) + stack_terms(err_log)
    return " | ".join(parts + frames)


def node_fault(system: str, root: dict) -> str:
    """The signature of a fault localized to one node (meta.json ``root_cause``), however the test showed it:
    an inconsistency, or a crash of a consumer that its wrong output reached (crash_prefix.py)."""
    return f"{system} | inconsistency | {root_op(root)} | {root.get('kind')}"


# ONNX ops that share one definition of their output's shape and dtype (axes, keepdims), which each
# system implements once for the family (OpenVINO's reduce shape inference, ignoring the axes attribute
# below opset 18, showed in ReduceL1, ReduceLogSumExp, ReduceSum, ... as 16 signatures): a shape or dtype
# fault of one of them is the family's. Values faults stay per op: each computes its own values.
_SHAPE_FAMILIES = ((re.compile(r"Reduce[A-Z]\w*"), "Reduce*"), (re.compile(r"Arg(?:Max|Min)"), "ArgMax/ArgMin"),
                   (re.compile(r"(?:Max|Average|Lp)Pool"), "MaxPool/AveragePool/LpPool"),
                   # ONNX's one convolution shape rule; OpenVINO converts each to its Convolution (the
                   # kernel-1 strided Conv of bugs/kept/0066 came as Conv and as ConvInteger)
                   (re.compile(r"Conv(?:Integer)?|QLinearConv"), "Conv/ConvInteger/QLinearConv"))
_STRUCTURAL = ("shape", "dtype")


def root_op(root: dict) -> str:
    """The root cause's op as the system ran it (its one ONNX node's type), else nnfuzz's op; for a shape
    or dtype fault, the family that shares the op's shape rule."""
    op = str(root.get("system_op") or root.get("op"))
    if root.get("kind") in _STRUCTURAL:
        op = next((name for pattern, name in _SHAPE_FAMILIES if pattern.fullmatch(op)), op)
    return op


def divergence(meta) -> str:
    """What kind of difference an inconsistency is: shape, dtype, missing output, non-finite where the
    reference is finite (or back), values, or a recompilation no guard asks for."""
    from nnfuzz.triage.static_check import RECOMPILE

    if isinstance(meta.dynamic, dict) and meta.dynamic.get("unguarded"):
        return RECOMPILE  # no value differs: the system recompiled where no guard asks it to
    s = str(meta.summary)
    if "!= reference" in s:
        return "shape" if ": shape " in s else "dtype"
    if "missing" in s:
        return "missing output"
    if any((e or {}).get("nonfinite_mismatch") for e in meta.errors.values()):
        return "non-finite"
    return "values"


def representative_op(meta) -> str:
    if meta.root_cause and meta.root_cause.get("op"):
        return str(meta.root_cause["op"])
    node = meta.first_divergent_node
    if node:
        return str(node.get("op", "?")).split("(")[0]
    return "-"


def index_store(root) -> dict:
    """Group every bug folder under ``root`` by signature; unreadable folders are listed apart."""
    from nnfuzz.triage.bugstore import BUG_DIR, read_err_log
    from nnfuzz.triage.folder import BugFolderError
    from nnfuzz.triage.meta import read_meta
    from nnfuzz.triage.rootcause import headline

    root = Path(root)
    groups: Dict[str, List[str]] = {}
    rows, broken = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and BUG_DIR.match(p.name)):
        try:
            meta = read_meta(folder / "meta.json", required=())
        except BugFolderError as e:
            broken.append({"id": folder.name, "error": f"{type(e).__name__}: {e}"})
            continue
        err = read_err_log(folder)
        sig = signature(meta, err)
        first = groups.setdefault(sig, [])
        first.append(folder.name)
        rows.append({"id": folder.name, "signature": sig, "system": meta.system,
                     "symptom": meta.symptom, "op": representative_op(meta), "nodes": meta.nodes,
                     "blame": meta.blame, "flaky": bool(meta.flaky),
                     "message": headline(str(meta.summary), err),
                     "status": "unique" if len(first) == 1 else f"duplicate of {first[0]}"})
    return {"version": SIGNATURE_VERSION, "bugs": len(rows), "unique": len(groups),
            "groups": [{"signature": s, "folders": f} for s, f in groups.items()], "rows": rows,
            "unreadable": broken}


def write_index(root) -> dict:
    """``index.json`` and ``README.md`` in ``root`` (both replaced; bug folders are not touched)."""
    from nnfuzz.triage.folder import atomic_write_text

    root = Path(root)
    index = index_store(root)
    atomic_write_text(root / "index.json", json.dumps(index, indent=1))
    atomic_write_text(root / "README.md", _readme(index))
    return index


def _readme(index: dict) -> str:
    lines = [
        "# Bugs",
        "",
        f"{index['bugs']} bug folders, {index['unique']} distinct signatures (written by `nnfuzz dedup`; "
        "folder format in docs/bug-format.md of nnfuzz; replay one with `nnfuzz repro <folder>`).",
        "",
        "| id | status | system | symptom | op | nodes | blame | message | signature |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in index["rows"]:
        sig = r["signature"].replace("|", "/")
        lines.append(f"| {r['id']} | {r['status']}{' (flaky)' if r['flaky'] else ''} | {r['system']} | "
                     f"{r['symptom']} | {r['op']} | {r['nodes'] if r['nodes'] is not None else '-'} | "
                     f"{r['blame'] or '-'} | {_cell(r['message'])} | `{sig}` |")
    for b in index["unreadable"]:
        lines.append(f"| {b['id']} | unreadable: {b['error']} | | | | | | | |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A message in a Markdown table cell: one line, no column bar, at most 160 characters."""
    text = " ".join(str(text).split()).replace("|", "/")
    return text if len(text) <= 160 else text[:159] + "…"
