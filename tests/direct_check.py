"""Check one concrete operator on given values end to end on the direct ONNX path: rules, torch eager,
the numpy reference, the ONNX model written directly (full checker, shape inference) and ONNX Runtime.

Used by the per-family operator tests of ops the TorchScript exporter cannot write (tests/oputil.py
checks the others). Returns "ok", or "unsupported" when ORT says it has no kernel; any disagreement
raises with the op named.

Opset 18 by default. Note that ORT 1.32 runs an op it has no kernel for through the op's ONNX function
body only at that body's own opset (18): PRelu on int32/int64/float64, HardSigmoid and ThresholdedRelu on
float64 run at opset 18 and are NOT_IMPLEMENTED at 13, 21 or 22.
"""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.backends.known import classify
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.reference import evaluate


def one_op_graph(op, inputs) -> GraphIR:
    """A GraphIR of ``op`` on model inputs typed ``inputs`` (AbsTensors)."""
    names = [f"i{k}" for k in range(len(inputs))]
    outs = op.checked_type_transfer(list(inputs))
    unsat = [p for p in op.checked_requires(list(inputs)) if p is not True]
    assert not unsat, f"{op!r} requires fails on {inputs}"
    out_names = [f"o{k}" for k in range(len(outs))]
    gir = GraphIR(vars={**dict(zip(names, inputs)), **dict(zip(out_names, outs))}, inputs=names,
                  insts=[Inst(op, names, out_names)], outputs=out_names)
    return gir.check()


def check_direct(op, arrays, *, opset: int = 18, seed: int = 0, spelling: str = "random") -> str:
    """``op`` on ``arrays`` (in its domain): torch agrees with numpy (integers exactly, floats within 1e-3,
    more for the half types), and the ONNX model written at ``opset`` (or the one its nodes need), with
    spellings drawn from ``seed`` (or canonical), runs on ORT with the same outputs ("ok"), or ORT has no
    kernel for it ("unsupported")."""
    from nnfuzz.abstract.dtype import DType

    arrays = [np.asarray(a) for a in arrays]
    gir = one_op_graph(op, [AbsTensor(list(a.shape), DType.parse(a.dtype)) for a in arrays])
    inputs = dict(zip(gir.inputs, arrays))
    model = build_model(gir, seed, export=ExportSpec(opset=opset, opsets=(opset, 28), spelling=spelling, seed=seed),
                        values=({}, inputs))
    assert model.oracle.output is not None, f"{op!r}: torch gave NaN/Inf on {arrays}"
    want = model.oracle.output
    ref = evaluate(gir, {}, inputs)
    for name in gir.outputs:
        _same(ref[name], want[name], f"{op!r} numpy vs torch")
    import onnxruntime as ort

    try:
        sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(gir.outputs, inputs)
    except Exception as e:  # noqa: BLE001 - a missing kernel is classified; anything else fails the test
        if classify("ort", str(e)) is not None:
            return "unsupported"
        raise AssertionError(f"{op!r} at opset {model.export.opset}: ORT raised {type(e).__name__}: {e}") from e
    for name, g in zip(gir.outputs, got):
        _same(np.asarray(g), want[name], f"{op!r} at opset {model.export.opset} {model.spellings}: ORT vs torch")
    return "ok"


SPELLINGS = (("canonical", 0), ("random", 1), ("random", 2), ("random", 3))


def check_direct_on(op, *inputs, arrays=None, opsets=(13, 18, 21), spellings=SPELLINGS) -> str:
    """``check_direct`` of ``op`` on ``(shape, dtype)`` inputs (random values unless ``arrays`` are
    given) at each of ``opsets``, canonically and with drawn spellings: "unsupported" if ORT lacks a
    kernel for any of those models, else "ok"."""
    from nnfuzz.materialize.values import random_array

    rng = np.random.default_rng(0)
    arrays = arrays if arrays is not None else [random_array(AbsTensor(*t), rng) for t in inputs]
    outcomes = {check_direct(op, arrays, opset=o, seed=s, spelling=sp) for o in opsets for sp, s in spellings}
    return "unsupported" if "unsupported" in outcomes else "ok"


def _same(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f" or str(want.dtype) == "bfloat16":
        # the half types round every intermediate: bfloat16 (8 significant bits) by 0.4 % each time
        tol = {"bfloat16": 4e-2, "float16": 1e-2}.get(str(want.dtype), 1e-3)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)
