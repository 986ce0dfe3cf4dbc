"""Helpers for ONNX lowerings that compose nodes: drawing a spelling among those writable at the
graph's opset (``has``, ``spell``, ``attrs``), computing half types as torch's kernels do (``opmath``),
and numerics ONNX has no node for (``log1p``, ``expm1``, torch's ``softplus`` and elu kernel), each
accurate to a few ulps like the torch kernel it stands for, where the textbook one-liner (Log(1 + x),
Exp(x) - 1) loses every digit of a small result.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np
from onnx import defs, helper

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.onnx.builder import first_opset_with

HALF = (DType.float16, DType.bfloat16)


def has(g, op_type: str, *dtypes: DType) -> bool:
    """Whether ``op_type`` takes inputs of ``dtypes`` at the graph's opset."""
    types = tuple(d.onnx() for d in dtypes)
    return first_opset_with(op_type, types, {}, 1, g.opset - 1, g.opset) is not None


def spell(g, key: str, table: Dict[str, Optional[Callable[[], str]]]) -> str:
    """Draw one spelling of ``table`` ({name: build, or None where it cannot be written here}; the
    first is the canonical one) and build it."""
    names = [k for k, build in table.items() if build is not None]
    return table[g.draw(key, names)]()


def attrs(g, op_type: str, **values) -> dict:
    """``values`` as attributes of ``op_type``, each one that equals the schema's default at the graph's
    opset given or omitted (drawn; float attributes compared as the float32 they are stored as)."""
    schema = defs.get_schema(op_type, g.opset)
    out = {}
    for name, value in values.items():
        default = helper.get_attribute_value(schema.attributes[name].default_value)
        default = default.decode() if isinstance(default, bytes) else default
        same = np.float32(value) == np.float32(default) if isinstance(value, float) else value == default
        if not (same and g.flip(name, "omitted", "given")):
            out[name] = value
    return out


def opmath(g, x: str, build: Callable[[str], str]) -> str:
    """``build(v)`` on ``x`` as torch's CPU kernels compute one op: float16 and bfloat16 in float32,
    rounded once at the end; other dtypes in their own. For ONNX compositions of one torch kernel."""
    dt = g.dtype(x)
    if dt not in HALF:
        return build(x)
    return g.cast(build(g.cast(x, DType.float32)), dt)


def clip(g, x: str, lo, hi) -> str:
    """min(max(x, lo), hi) with bounds of x's dtype: Clip with both bounds, Min of Max, or two Clips
    with one bound each (the other omitted), drawn."""
    lo_c, hi_c = g.like(lo, x), g.like(hi, x)
    return spell(g, "clip", {
        "Clip": lambda: g.op("Clip", x, lo_c, hi_c),
        "Max-Min": lambda: g.op("Min", g.op("Max", x, lo_c), hi_c),
        "Clip-Clip": lambda: g.op("Clip", g.op("Clip", x, lo_c), None, hi_c),
    })


def log1p(g, v: str) -> str:
    """log(1 + v) to a few ulps (ONNX has no Log1p, and Log(1 + v) gives 0 for a tiny v). With
    u = 1 + v rounded, either Goldberg's log(u) * (v / (u - 1)) (v where u == 1) or the first-order
    correction log(u) - ((u - 1) - v) / u of the rounding of u (drawn). v > -1."""
    one = g.like(1, v)
    u = g.op("Add", v, one)
    d = g.op("Sub", u, one)
    if g.draw("log1p", ["ratio", "correction"]) == "ratio":
        ratio = g.op("Mul", g.op("Log", u), g.op("Div", v, d))
        return g.op("Where", g.op("Equal", d, g.like(0, v)), v, ratio)
    return g.op("Sub", g.op("Log", u), g.op("Div", g.op("Sub", d, v), u))


def expm1(g, v: str) -> str:
    """e^v - 1 to a few ulps for v <= 0 (Kahan; ONNX has no Expm1): with u = e^v rounded,
    (u - 1) * (v / log(u)); v where u == 1, and -1 where u - 1 rounds to -1."""
    u = g.op("Exp", v)
    um1 = g.op("Sub", u, g.like(1, v))
    ratio = g.op("Mul", um1, g.op("Div", v, g.op("Log", u)))
    ratio = g.op("Where", g.op("Equal", um1, g.like(-1, v)), um1, ratio)
    return g.op("Where", g.op("Equal", u, g.like(1, v)), v, ratio)


def elu_like(g, v: str, neg_coef, input_scale=1.0, pos_coef=1.0) -> str:
    """torch's elu kernel: v * pos_coef where v > 0, else expm1(v * input_scale) * neg_coef (the
    coefficients already rounded to v's dtype as torch does). expm1 sees min(v, 0), so that no
    intermediate overflows."""
    neg = g.op("Min", v, g.like(0, v))
    if input_scale != 1.0:
        neg = g.op("Mul", neg, g.like(input_scale, v))
    neg = g.op("Mul", expm1(g, neg), g.like(neg_coef, v))
    pos = v if pos_coef == 1.0 else g.op("Mul", v, g.like(pos_coef, v))
    return g.op("Where", g.op("Greater", v, g.like(0, v)), pos, neg)


def softplus(g, v: str) -> str:
    """torch's softplus (beta 1, threshold 20): v where v > 20, else log1p(e^v) (e^ of min(v, 20),
    so that no intermediate overflows)."""
    twenty = g.like(20, v)
    smooth = log1p(g, g.op("Exp", g.op("Min", v, twenty)))
    return g.op("Where", g.op("Greater", v, twenty), v, smooth)
