"""Check one concrete operator end to end: rules, torch eager, both ONNX paths (torch's exporter where it
can write the op, and the direct lowering with drawn spellings), the full checker, and the outputs on ORT
(or onnx's ReferenceEvaluator where ORT lacks a kernel). Used by the per-family operator tests."""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.backends.known import classify
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.onnx.direct import build_onnx
from nnfuzz.materialize.onnx.export import check_onnx, export_onnx, torch_exports
from nnfuzz.materialize.onnx.spec import FIRST_OPSET, ExportSpec, newest_opset
from nnfuzz.materialize.torch.lowering import run_op
from nnfuzz.materialize.values import random_array, to_numpy, to_torch


def check_op(op, inputs, *, seed: int = 0, run_ort: bool = True) -> str:
    """Check ``op`` on ``inputs`` (AbsTensors or (shape, dtype) pairs) end to end; raise, naming the op, on
    any disagreement. Returns which runtime checked the ONNX models' outputs: "ort", or "reference" where
    ORT has no kernel (onnx's ReferenceEvaluator, with the corrections of onnx_reference_fixes, stands in)."""
    import torch

    inputs = [t if isinstance(t, AbsTensor) else AbsTensor(*t) for t in inputs]
    assert op.is_concrete(), f"{op!r} has symbolic attributes"
    outs = op.checked_type_transfer(inputs)
    unsat = [p for p in op.checked_requires(inputs) if p is not True]
    assert not unsat, f"{op!r} requires fails on {inputs}"
    rng = np.random.default_rng(seed)
    arrays = [random_array(t, rng) for t in inputs]
    xs = [to_torch(a, t.dtype) for a, t in zip(arrays, inputs)]

    class One(torch.nn.Module):
        def forward(self, *args):
            return tuple(run_op(op, *args))

    got = One()(*xs)
    assert len(got) == len(outs), f"{op!r}: torch gave {len(got)} outputs, type_transfer {len(outs)}"
    for i, (g, w) in enumerate(zip(got, outs)):
        assert list(g.shape) == list(w.shape), f"{op!r} out {i}: torch shape {list(g.shape)} vs {w.shape}"
        assert DType.parse(g.dtype) == w.dtype, f"{op!r} out {i}: torch dtype {g.dtype} vs {w.dtype}"
    in_names = [f"i{k}" for k in range(len(xs))]
    out_names = [f"o{k}" for k in range(len(outs))]
    models = {}
    if torch_exports(type(op)):
        models["torch exporter"] = export_onnx(One(), xs, in_names, out_names)
    gir = GraphIR(vars={**dict(zip(in_names, inputs)), **dict(zip(out_names, outs))}, inputs=in_names,
                  insts=[Inst(op, in_names, out_names)], outputs=out_names).check()
    models["direct"], _, _ = build_onnx(gir, {}, ExportSpec(opset=18, opsets=(FIRST_OPSET, newest_opset()), seed=seed))
    ref = [to_numpy(g) for g in got]
    ran = set()
    for path, model in models.items():
        check_onnx(model, outs, out_names, where=f"{op!r} ({path})")
        if not run_ort:
            continue
        feed = dict(zip(in_names, arrays))
        res, by = _run_onnx(model, out_names, feed)
        ran.add(by)
        for i, (r, e, w) in enumerate(zip(res, ref, outs)):
            assert list(r.shape) == list(w.shape), f"{op!r} out {i} ({path}): {by} shape {list(r.shape)} vs {w.shape}"
            if w.dtype.is_float and w.dtype in (DType.float32, DType.float64) and np.isfinite(e).all():
                np.testing.assert_allclose(r, e, rtol=1e-3, atol=1e-3, err_msg=f"{op!r} out {i} ({path}, {by})")
    return "ort" if ran == {"ort"} else "reference" if ran else "not run"


def _run_onnx(model, out_names, feed):
    """(outputs, "ort") from ORT, or (outputs, "reference") from onnx's ReferenceEvaluator where ORT says
    it has no kernel or its Python API cannot feed the dtype (as in campaigns, backends/known.py)."""
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    from onnx_reference_fixes import REFERENCE_FIXES

    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        wanted = {i.name for i in sess.get_inputs()}
        return sess.run(out_names, {n: a for n, a in feed.items() if n in wanted}), "ort"
    except Exception as e:
        if classify("ort", str(e)) is None:
            raise
    return ReferenceEvaluator(model, new_ops=REFERENCE_FIXES).run(out_names, feed), "reference"


def check(op, *inputs) -> str:
    """``check_op`` on ``(shape, dtype)`` inputs given as arguments (returns "ort" or "reference")."""
    return check_op(op, list(inputs))


def has_false(op, *inputs) -> bool:
    """requires holds a False predicate on ``(shape, dtype)`` inputs (type_transfer still runs)."""
    xs = [AbsTensor(s, dt) for s, dt in inputs]
    op.checked_type_transfer(xs)
    return False in op.checked_requires(xs)


def solve_concrete(op_cls, in_ranks, in_dtypes, *, n_var: int = 0, kwargs=None, max_dim: int = 16,
                   extra=None, seed: int = 0):
    """Build ``op_cls`` symbolically over symbolic inputs, solve its rules with z3, return
    ``(concrete_op, concrete_inputs)``. Fails the test if the rules are unsatisfiable.

    ``extra(op, inputs) -> [predicates]`` may pin values (e.g. ``lambda op, xs: [op.stride == 2]``).
    """
    import random

    import z3

    kwargs = dict(kwargs or {})
    names = op_cls.sym_param_names(n_var)
    syms = [z3.Int(f"a_{n}") for n in names]
    op = op_cls(*syms, **kwargs)
    xs = [AbsTensor([z3.Int(f"x{i}_{d}") for d in range(r)], dt) for i, (r, dt) in enumerate(zip(in_ranks, in_dtypes))]
    outs = op.checked_type_transfer(xs)
    s = z3.Solver()
    s.set("random_seed", seed)
    s.add(*op.checked_requires(xs))
    for t in xs + outs:
        for d in t.shape:
            s.add(d >= 1, d <= max_dim)
    if extra is not None:
        s.add(*extra(op, xs))
    rnd = random.Random(seed)
    prefs = [v == rnd.randint(1, 4) for v in syms]  # nudge away from z3's favourite zeros
    if s.check(*prefs) != z3.sat:
        assert s.check() == z3.sat, f"{op_cls.__name__}: requires unsatisfiable for ranks {in_ranks}"
    m = s.model()

    def val(e):
        return m.eval(e, model_completion=True).as_long()

    cop = op_cls(*[val(v) for v in syms], **kwargs)
    cxs = [AbsTensor([val(d) for d in t.shape], t.dtype) for t in xs]
    return cop, cxs
