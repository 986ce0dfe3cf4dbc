"""Source ``onnx-node``: the ONNX backend node tests, collected in code from the installed ``onnx`` (the
wheel ships no data folders). Each case's model is kept as onnx wrote it; multi-node cases (the
``_expanded`` function bodies) take their operator from the single-node case they expand. A case is
migrated when the ONNX reference evaluator reproduces its expected outputs within the tolerances."""
from __future__ import annotations

import functools
import re
import warnings
from typing import Dict, Iterator, List, Tuple

import numpy as np

from nnfuzz.migrate.record import Dropped, MigratedTest, attribute_json, nnfuzz_dtype, tensors_of

EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


@functools.lru_cache(maxsize=1)
def collect() -> Tuple:
    """Every node test case of the installed onnx (collected once per process: onnx keeps them in a
    module-level list, and a second collection returns the same list). Many cases draw their inputs from
    numpy's global generator, seeded here so that two runs migrate the same values."""
    from onnx.backend.test.case.node import collect_testcases

    state = np.random.get_state()
    np.random.seed(0)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # the generators' own overflow warnings (their cases are meant so)
            return tuple(collect_testcases(None))
    finally:
        np.random.set_state(state)


@functools.lru_cache(maxsize=1)
def _singles() -> Dict:
    """The node of each single-node case, by case name (the operator of the cases that expand it)."""
    return {c.name: c.model.graph.node[0] for c in collect() if len(c.model.graph.node) == 1}


def cases(ops=None, multi_node: bool = True) -> List:
    """The cases to migrate: all, or those whose operator is in ``ops``; without the multi-node ones
    when ``multi_node`` is false."""
    singles = _singles()
    out = []
    for c in collect():
        op = operator_of(c, singles)
        if (ops is None or op in ops) and (multi_node or len(c.model.graph.node) == 1):
            out.append(c)
    return out


def operator_of(case, singles: Dict) -> str:
    """The case's operator: its node's op type, or for an expanded case the op type of the case it expands."""
    nodes = case.model.graph.node
    if len(nodes) == 1:
        return _qualified(nodes[0])
    base = singles.get(EXPANDED.sub("", case.name))
    return _qualified(base) if base is not None else "+".join(sorted({_qualified(n) for n in nodes}))


def _qualified(node) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def migrate_case(case, tolerances) -> Iterator[MigratedTest]:
    """The case's migrated tests (one per data set), or Dropped with the reason."""
    import onnx

    singles = _singles()
    model = case.model
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise Dropped("checker-rejects", str(e).splitlines()[0][:200]) from None
    g = model.graph
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    base = singles.get(EXPANDED.sub("", case.name), g.node[0])
    op = operator_of(case, singles)
    if len(g.node) > 1:
        op += "/expanded"   # another conversion path in the compiler: another signature
    attrs = {a.name: attribute_json(onnx.helper.get_attribute_value(a)) for a in base.attribute}
    for k, (ins, outs) in enumerate(case.data_sets):
        inputs = tensors_of([i.name for i in g.input], [_array(v, "input") for v in ins])
        outputs = tensors_of([o.name for o in g.output], [_array(v, "output") for v in outs])
        for n, a in {**inputs, **outputs}.items():
            nnfuzz_dtype(a, f"tensor {n}")
        _check_reproduces(model, inputs, outputs, tolerances)
        name = case.name if len(case.data_sets) == 1 else f"{case.name}#{k}"
        yield MigratedTest("onnx-node", name, op, attrs, model.SerializeToString(), inputs, outputs, opset,
                           nodes=len(g.node), library={"name": "onnx", "version": onnx.__version__})


def _array(v, what: str) -> np.ndarray:
    from onnx import TensorProto, numpy_helper

    if isinstance(v, TensorProto):
        v = numpy_helper.to_array(v)
    if isinstance(v, (np.ndarray, np.generic)):
        return np.asarray(v)
    raise Dropped("non-tensor-io", f"an {what} is a {type(v).__name__} (sequences and optionals are not tested)")


RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}


def _random_node(model, inputs) -> str:
    """The first node whose outputs are a random draw (a random op, or Dropout in training mode with a
    nonzero ratio), or "": its recorded outputs are one draw that no system is bound to repeat."""
    for n in model.graph.node:
        if n.op_type in RANDOM_OPS:
            return n.op_type
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            training = inputs.get(n.input[2])
            ratio = inputs.get(n.input[1]) if n.input[1] else None
            if training is not None and bool(np.asarray(training)) and (ratio is None or float(np.asarray(ratio)) > 0):
                return "Dropout (training mode)"
    return ""


def _check_reproduces(model, inputs, outputs, tolerances) -> None:
    """Dropped unless the ONNX reference evaluator gives ``outputs`` (NaN/Inf at the same places,
    the finite values within ``tolerances``) and they are not a random draw."""
    random_node = _random_node(model, inputs)
    if random_node:
        raise Dropped("nondeterministic", f"{random_node}'s outputs are a random draw")
    try:
        got = evaluate(model, inputs)
    except Exception as e:  # noqa: BLE001 - whatever the evaluator raises makes the case unverifiable: counted
        raise Dropped("reference-error", f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
    problem = disagreement(outputs, dict(zip(outputs, got)), tolerances)
    if problem:
        raise Dropped("reference-disagrees", problem)
    # a random op this module does not name can still match the recorded outputs under one seed
    again = evaluate(model, inputs, seed=1)
    if disagreement(dict(zip(outputs, got)), dict(zip(outputs, again)), {}):
        raise Dropped("nondeterministic", "the reference's outputs change with the random seed")


def evaluate(model, inputs, seed: int = 0) -> list:
    """The ONNX reference evaluator's outputs, numpy's global generator seeded for the run (its random ops
    draw from it: the same verdict on every migration) and restored after."""
    from onnx.reference import ReferenceEvaluator

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return ReferenceEvaluator(model).run(None, dict(inputs))
    finally:
        np.random.set_state(state)


def disagreement(expected: Dict[str, np.ndarray], got: Dict[str, np.ndarray], tolerances) -> str:
    """"" when ``got`` reproduces ``expected`` (same shapes and dtypes, NaN/Inf at the same places, the
    rest within the project's tolerances, as verdict.compare judges), else what differs."""
    from nnfuzz.verdict import compare

    finite_e, finite_g = {}, {}
    for name, want in expected.items():
        have = np.asarray(got.get(name))
        if have.shape != want.shape or have.dtype != want.dtype:
            return f"{name}: {have.dtype}{list(have.shape)} != expected {want.dtype}{list(want.shape)}"
        if want.dtype.kind in "fc":
            odd_w, odd_g = ~np.isfinite(want), ~np.isfinite(have)
            same_odd = np.array_equal(np.where(odd_w, want, 0), np.where(odd_g, have, 0), equal_nan=True)
            if not (np.array_equal(odd_w, odd_g) and same_odd):
                return f"{name}: NaN/Inf at other places than expected"
            want, have = np.where(odd_w, 0, want).astype(want.dtype), np.where(odd_g, 0, have).astype(have.dtype)
        finite_e[name], finite_g[name] = want, have
    v = compare(finite_e, finite_g, tolerances)
    return v.summary if v.is_bug else ""
