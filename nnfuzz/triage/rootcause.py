"""The most specific part of a system's error message, for signatures: the failing op of the system's IR
and the innermost check with its message template.

Systems wrap errors in layers, and the first line is the outermost (OpenVINO's ``Exception from
src/inference/src/cpp/core.cpp:105:`` heads every compile failure; ORT's ``[ONNXRuntimeError] : 1 :
FAIL :``). What tells root causes apart is inside: the innermost ``Check '...' failed at file:line``
(OpenVINO) or ``Check failed: (...)`` (TVM) and the text after it, and the op named by the system
(``-- Resize-23 with a message:``, ``Node (Mul_3) Op (Mul)``, ``Error converting operator Pow``,
``While validating node 'opset1::MatMul ...'``).

These patterns are each system's own (``Backend.error_ops`` and friends, in the backend's knowledge module);
this module reads them through the backend classes and holds what is common to all.
"""
from __future__ import annotations

import functools
import re
from typing import Optional, Tuple

WORKER_OUTPUT = "--- worker output ---"  # err.log's section with what the sandbox worker printed
_REDUCED = "[reduced from {} to {} nodes]"  # the line reduction appends to a reduced folder's err.log
# Python's own lines and nnfuzz's reduction note: never the system's message
_TRACEBACK = (r"Traceback .*", r"\s*File .*", re.escape(_REDUCED).replace(r"\{\}", r"\d+"))


def reduced_note(before: int, after: int) -> str:
    return _REDUCED.format(before, after)


class _Patterns:
    """The error patterns the systems declare (``Backend.error_ops``, ``error_checks``, ``error_noise``,
    ``error_blocks``), compiled: every built-in backend's, in the registry's order, and the named
    system's where it is not a built-in (an entry-point or "module:Class" backend). A system whose name
    the registry cannot resolve (a "module:Class" backend records only its ``name`` in meta.json) adds
    no patterns: the built-ins' still apply."""

    def __init__(self, system: Optional[str]):
        from nnfuzz.backends.registry import builtin_classes

        classes = builtin_classes() + _own_class(system)

        def each(attr):
            return list(dict.fromkeys(p for c in classes for p in getattr(c, attr)))

        self.ops = [re.compile(p) for p in each("error_ops")]
        self.nodes = [re.compile(p) for p in each("error_nodes")]
        self.dropped = [re.compile(p) for p in each("error_dropped")]
        checks = each("error_checks")
        self.check = re.compile("|".join(f"(?:{p.replace('(?P<where>', f'(?P<w{i}>').replace('(?P<file>', f'(?P<f{i}>')})"
                                         for i, p in enumerate(checks)) or r"(?!)")
        self.noise = re.compile(f"^(?:{'|'.join(each('error_noise') + list(_TRACEBACK))})$")
        self.blocks = [tuple(map(re.compile, b)) for b in dict.fromkeys(c.error_blocks for c in classes if c.error_blocks)]

    def group(self, m, kind: str) -> str:
        return next((v for k, v in m.groupdict().items() if k[0] == kind and v), "")


def _own_class(system: Optional[str]) -> list:
    """[the class of ``system``] where it is a backend outside the built-ins that the registry resolves."""
    from nnfuzz.backends.registry import BACKENDS, backend_class, known_target

    if system and system not in BACKENDS and known_target(system) is not None:
        return [backend_class(system)]
    return []  # a built-in, or a name only a "module:Class" path gave (meta.json records the name)


@functools.lru_cache(maxsize=None)
def _patterns(system: Optional[str] = None) -> _Patterns:
    return _Patterns(system)


@functools.lru_cache(maxsize=1)
def _onnx_ops() -> dict:
    import onnx.defs

    return {s.name.lower(): s.name for s in onnx.defs.get_all_schemas_with_history() if not s.domain}


def canonical_op(name: str) -> str:
    """The ONNX op a system's own name for it stands for, where the name is the ONNX op's in other case,
    or with a rank suffix (TVM's TOPI ``resize2d`` and ``resize3d`` are both the frontend's ``Resize``,
    ``sign`` is ``Sign``): one fault reached through either name gives one signature. Other names stay."""
    if name[:1].isupper():  # already spelled as ONNX spells its ops (and no onnx import for it)
        return name
    ops = _onnx_ops()
    low = name.lower()
    return ops.get(low) or ops.get(re.sub(r"\d+d$", "", low)) or name


def failing_op(text: str, system: Optional[str] = None) -> str:
    head, _ = _earliest_block(text, system)
    text = text if head is None else text[head:]  # (the op the first failed op's heading names)
    for pattern in _patterns(system).ops:
        m = pattern.search(text)
        if m:
            return canonical_op(m.group(1))
    return ""


def failing_node(text: str, system: Optional[str] = None) -> str:
    """The model's node (its ONNX node name) that the system's error names as failing, in the first failed
    op's block of a log listing several (``Backend.error_nodes``), or ""."""
    block = _first_block(text, system)
    for pattern in _patterns(system).nodes:
        m = pattern.search(block)
        if m:
            return m.group(1)
    return ""


def dropped_value(text: str, system: Optional[str] = None) -> str:
    """The model's value that the system's error says its optimized graph reads with no node giving it
    (``Backend.error_dropped``), or ""."""
    for pattern in _patterns(system).dropped:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return ""


def _first_block(text: str, system: Optional[str] = None) -> str:
    """An error log listing several failed ops (OpenVINO's unconverted-ops log): the message of the one
    that comes first in the model (``_earliest_block``)."""
    head, end = _earliest_block(text, system)
    return text if head is None else text[head:end]


def _earliest_block(text: str, system: Optional[str] = None) -> Tuple[Optional[int], int]:
    """(start, end) of the block, in a log listing several failed ops, of the op that comes first in the
    model: the lowest number at the end of the node name it names (nnfuzz writes ``<Op>_<k>`` in graph
    order), else the first listed; (None, len) when the text has no such log. OpenVINO lists them by name,
    so a QLinearConv that failed (bugs/kept/0088) and the DepthToSpace after it that failed on its output
    signed as the DepthToSpace."""
    pats = _patterns(system)
    for head, end in pats.blocks:
        starts = [m.start() for m in head.finditer(text)]
        if not starts:
            continue
        stop = end.search(text, starts[-1])
        bounds = list(zip(starts, starts[1:] + [stop.start() if stop else len(text)]))

        def position(b) -> float:
            names = (m.group(1) for p in pats.nodes for m in [p.search(text, b[0], b[1])] if m)
            k = next((re.search(r"_(\d+)$", n) for n in names), None)
            return int(k.group(1)) if k else float("inf")

        return min(bounds, key=position)  # (the first listed among equals)
    return None, len(text)


def _innermost_parts(text: str, system: Optional[str] = None) -> Tuple[str, str, str]:
    """(the innermost check's condition and file (basename), the first line of message after it, the
    check's own text), or ("", "", "") when the text has no check."""
    pats = _patterns(system)
    text = _first_block(text, system)
    checks = list(pats.check.finditer(text))
    if not checks:
        return "", "", ""
    m = checks[-1]
    where, path = pats.group(m, "w"), pats.group(m, "f")
    head = " ".join(x for x in (where, path.rsplit("/", 1)[-1]) if x)
    after = [ln.strip() for ln in text[m.end():].splitlines() if ln.strip() and not pats.noise.match(ln.strip())]
    return head, after[0] if after else "", m.group(0)


def innermost(text: str, system: Optional[str] = None) -> str:
    """The innermost check's condition and file (basename) and the first line of message after it, or
    "" when the text has no check."""
    head, after, _ = _innermost_parts(text, system)
    return f"{head}: {after}" if after else head


def headline(summary: str, err_log: str = "", system: Optional[str] = None, name_op: bool = True) -> str:
    """The one line to show for an error (the status panel, ``nnfuzz repro``, ``nnfuzz dedup``'s table):
    the exception's type, the op the system names and the system's innermost message, the part the
    signature reads, not the outermost wrapper (OpenVINO's ``Exception from src/inference/src/cpp/
    core.cpp:105:``); the op only with ``name_op``. The summary's first line where it holds the
    innermost check already, or where the text has none."""
    first = summary.strip().splitlines()[0] if summary.strip() else ""
    full = err_log if err_log.strip() else summary
    text = full.split(WORKER_OUTPUT)[0]
    head, after, check = _innermost_parts(text, system)
    if not head or check in first:  # no check, or the first line is the innermost check already
        return first
    typed = re.match(r"^([A-Za-z_][\w.]*):\s*", first)
    op = failing_op(text, system) if name_op else ""
    return (f"{typed.group(1)}: " if typed else "") + (f"{op}: " if op else "") + (after or head)


def first_sentence(message: str) -> str:
    """A message's template: its first sentence (what follows usually prints the values and the IR)."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    return re.split(r"(?<=[a-z)])\.\s|, with inputs:", line, maxsplit=1)[0]


def root_cause(summary: str, err_log: str, system: Optional[str] = None) -> Tuple[str, str]:
    """``(op, message)``: the op the system names (or "") and its innermost check with the message after
    it, else the first sentence of the exception's message. The worker's own output (warnings the system
    printed while compiling) is not part of the message. ``system``: the bug's system, whose patterns are
    read too where it is not a built-in backend."""
    full = err_log if err_log.strip() else summary
    text = full.split(WORKER_OUTPUT)[0]
    typed = re.match(r"^[A-Za-z_][\w.]*:\s*", summary)
    # the op may be named only in what the system printed (TVM's "Error converting operator X")
    return failing_op(text, system) or failing_op(full, system), \
        innermost(text, system) or first_sentence(summary[typed.end():] if typed else summary)
