"""The part of a standalone reproduction script that replays a dynamic model's bug (meta.json ``dynamic``,
docs/dynamic-shapes.md) at every shape: the family's shapes as literal arrays (``SHAPES``: each shape's
symbol sizes, inputs and expected outputs, in the family's order), and the loop that runs the model,
compiled once before it, at each shape, compares each with its expected outputs and names the shapes that
differ. A crash at a shape is preceded by that shape's line. The ONNX scripts (script.py) and the inductor
script (script_torch.py) put their own run code in the loop.
"""
from __future__ import annotations

import textwrap
from typing import List

import numpy as np

from nnfuzz.triage.readable import arrays_source

DIFFERENCES = '''

def differences():
    for name, want in EXPECTED.items():
        got = np.asarray(OUTPUTS[name])
        if got.shape != want.shape:
            yield f"{name}: shape {list(got.shape)} != expected {list(want.shape)}"
        elif got.dtype != want.dtype:
            yield f"{name}: dtype {got.dtype} != expected {want.dtype}"
        elif got.dtype.kind == "f" or got.dtype.name == "bfloat16":
            g, w = got.astype(np.float64), want.astype(np.float64)
            off = ~np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
            if off.any():
                yield (f"{name}: {off.sum()}/{off.size} values off (max abs {np.nanmax(np.abs(g - w)[off]):.3g}; "
                       f"rtol {RTOL}, atol {ATOL})")
        elif (got != want).any():
            yield f"{name}: {(got != want).sum()}/{got.size} values differ"
'''

_LOOP = '''

FAILED = []
for k, (SIZES, INPUTS, EXPECTED) in enumerate(SHAPES):  # one compiled model, every shape
    print(f"shape {{k}} {{SIZES}}: ", end="", flush=True)  # (a crash from here on is at this shape)
{run}
    DIFFERENT = list(differences())
    print("outputs differ" if DIFFERENT else "outputs match")
    FAILED += [f"shape {{k}} {{SIZES}}: {{d}}" for d in DIFFERENT]
if FAILED:  # exit code 1: the bug shows
    print("reproduced: the outputs differ from the expected ones\\n  " + "\\n  ".join(FAILED))
    raise SystemExit(1)
print("every shape's outputs match the reference: not reproduced")
'''


def is_dynamic(bug) -> bool:
    """Whether ``bug`` is a dynamic model's, with every shape's values recorded (oracle.pkl ``shapes``)."""
    return bug.meta.dynamic is not None and bool(bug.oracle.get("shapes"))


def shapes_source(bug) -> str:
    """``SHAPES``: for each recorded shape, (its symbols' sizes, its INPUTS, its EXPECTED outputs)."""
    sizes = bug.meta.dynamic.get("assignments") or []
    lines: List[str] = ["SHAPES = []  # (symbol sizes, INPUTS, EXPECTED: torch eager at that shape), per shape"]
    for k, shape in enumerate(bug.oracle["shapes"]):
        expected = {n: np.asarray(v) for n, v in (shape["output"] or {}).items()}
        lines += [arrays_source("INPUTS", shape["input"]), arrays_source("EXPECTED", expected),
                  f"SHAPES.append(({dict(sizes[k]) if k < len(sizes) else {}!r}, INPUTS, EXPECTED))"]
    return "\n".join(lines)


def dims_comment(bug) -> str:
    """A comment line naming the model's symbolic input dims (``None``: a static axis)."""
    return f"# symbolic input dims (None: static): {dict(bug.meta.dynamic.get('dims') or {})!r}"


def shapes_loop(run: str) -> str:
    """The comparison and the loop around ``run`` (code that fills OUTPUTS from INPUTS)."""
    return DIFFERENCES + _LOOP.format(run=textwrap.indent(run.strip("\n"), "    "))
