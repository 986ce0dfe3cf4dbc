"""The most specific part of a system's error message, for signatures: the failing op of the system's IR
and the innermost check with its message template.

Systems wrap errors in layers, and the first line is the outermost (OpenVINO's ``Exception from
src/inference/src/cpp/core.cpp:105:`` heads every compile failure; ORT's ``[ONNXRuntimeError] : 1 :
FAIL :``). What tells root causes apart is inside: the innermost ``Check '...' failed at file:line``
(OpenVINO) or ``Check failed: (...)`` (TVM) and the text after it, and the op named by the system
(``-- Resize-23 with a message:``, ``Node (Mul_3) Op (Mul)``, ``Error converting operator Pow``,
``While validating node 'opset1::MatMul ...'``).
"""
from __future__ import annotations

import re
from typing import Tuple

# the op the system names, most specific first
_OP = [
    re.compile(r"^-- (\w+)-\d+ with a message:", re.M),                     # OpenVINO's unconverted-ops log
    re.compile(r"While validating node '(?:opset\d+|\w+)::(\w+) ", re.M),   # OpenVINO core node
    re.compile(r"While validating ONNX node '<Node\((\w+)\)", re.M),         # OpenVINO ONNX frontend node
    re.compile(r"\bNode \([^)]*\) Op \((\w+)\)"),                           # ONNX Runtime
    re.compile(r"Error converting operator (\w+)"),                         # TVM's ONNX frontend
    re.compile(r"operators are not supported for frontend ONNX: (\w+)"),    # TVM
]
# an innermost check: OpenVINO ``Check 'cond' failed at file:line:``, ``Exception from file:line:``;
# TVM ``Check failed: (cond) is false:``; ORT's bracketed error class
_CHECK = re.compile(r"Check '(?P<ov>.*?)' failed at (?P<ovf>[\w./-]+?):\d+:"
                    r"|Exception from (?P<exf>[\w./-]+?):\d+:"
                    r"|Check failed: (?P<tvm>.*?)(?: is false)?:(?=\s)"
                    r"|\[(?P<ort>\w+Error|\w+Exception)\]")
WORKER_OUTPUT = "--- worker output ---"  # err.log's section with what the sandbox worker printed
_NOISE = re.compile(r"^(?:While validating (?:ONNX )?node .*|Summary:.*|-- Conversion is failed for.*|"
                    r"FrontEnd API failed with .*|Model wasn't fully converted.*|Traceback .*|\s*File .*)$")


def failing_op(text: str) -> str:
    for pattern in _OP:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return ""


def _first_block(text: str) -> str:
    """OpenVINO's unconverted-ops log: the message of the first failed op only."""
    m = _OP[0].search(text)
    if not m:
        return text
    rest = text[m.end():]
    end = re.search(r"^(?:-- \w+-\d+ with a message:|Summary:)", rest, re.M)
    return rest[: end.start()] if end else rest


def innermost(text: str) -> str:
    """The innermost check's condition and file (basename) and the first line of message after it, or
    "" when the text has no check."""
    text = _first_block(text)
    checks = list(_CHECK.finditer(text))
    if not checks:
        return ""
    m = checks[-1]
    where = m.group("ov") or m.group("tvm") or m.group("ort") or ""
    path = m.group("ovf") or m.group("exf") or ""
    head = " ".join(x for x in (where, path.rsplit("/", 1)[-1]) if x)
    after = [ln.strip() for ln in text[m.end():].splitlines() if ln.strip() and not _NOISE.match(ln.strip())]
    return f"{head}: {after[0]}" if after else head


def first_sentence(message: str) -> str:
    """A message's template: its first sentence (what follows usually prints the values and the IR)."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    return re.split(r"(?<=[a-z)])\.\s|, with inputs:", line, maxsplit=1)[0]


def root_cause(summary: str, err_log: str) -> Tuple[str, str]:
    """``(op, message)``: the op the system names (or "") and its innermost check with the message after
    it, else the first sentence of the exception's message. The worker's own output (warnings the system
    printed while compiling) is not part of the message."""
    full = err_log if err_log.strip() else summary
    text = full.split(WORKER_OUTPUT)[0]
    typed = re.match(r"^[A-Za-z_][\w.]*:\s*", summary)
    # the op may be named only in what the system printed (TVM's "Error converting operator X")
    return failing_op(text) or failing_op(full), \
        innermost(text) or first_sentence(summary[typed.end():] if typed else summary)
