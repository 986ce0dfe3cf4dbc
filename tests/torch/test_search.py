"""The value search end to end: graphs whose random values are unsafe end with safe ones."""
import numpy as np
import pytest
from testops import SameShapeFloat32

from nnfuzz.abstract import OP_REGISTRY, AbsOpBase, AbsTensor, DType
from nnfuzz.abstract.op import ranks
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.elementwise import spec as E
from nnfuzz.ops.select import spec as S
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import build_model, random_values
from nnfuzz.materialize.search import SearchConfig, search_values
from nnfuzz.materialize.torch.lowering import lowers

FLOATS = [DType.float16, DType.float32, DType.float64]


class Shift(AbsOpBase):
    """y = x - by (a constant the search cannot change: only x can move)."""

    in_dtypes = [(d,) for d in FLOATS]
    out_dtypes = [(d,) for d in FLOATS]
    inp_ranks = [ranks(0)]
    out_ranks = [ranks(0)]
    attr_choices = {"by": (3.0, 5.0)}

    def __init__(self, *, by):
        self.by = by

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, inputs[0].dtype)]


@lowers(Shift)
def _shift(op, x):
    return x - op.by


OP_REGISTRY.pop("Shift")  # built into graphs by hand here; never offered to other tests' generators


def graph(insts, inputs, shapes, weights=()):
    """A GraphIR from (op, input vars, output var) triples; types follow each op's rules."""
    g = GraphIR()
    for name in list(inputs) + list(weights):
        g.vars[name] = AbsTensor(list(shapes[name]), shapes.get(name + ":dtype", DType.float32))
    g.inputs, g.weights = list(inputs), list(weights)
    for op, ins, out in insts:
        (t,) = op.checked_type_transfer([g.vars[v] for v in ins])
        g.vars[out] = t
        g.insts.append(Inst(op, list(ins), [out]))
    used = {v for i in g.insts for v in i.inputs}
    g.outputs = [i.outputs[0] for i in g.insts if i.outputs[0] not in used]
    return g.check()


def log_div_graph(dtype=DType.float32, n=16):
    """log(x - 5) / (y - 3)"""
    return graph([(Shift(by=5.0), ["x"], "a"), (E.Log(), ["a"], "b"), (Shift(by=3.0), ["y"], "c"),
                  (B.Div(), ["b", "c"], "d")], ["x", "y"],
                 {"x": [n], "y": [n], "x:dtype": dtype, "y:dtype": dtype})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_div_starts_unsafe_and_ends_finite(dtype, seed):
    gir = log_div_graph(dtype)
    weights, inputs = random_values(gir, np.random.default_rng(seed))
    assert (inputs["x"].astype(np.float64) < 5).any(), "random inputs should start unsafe"
    plain = build_model(gir, seed, export=False)
    assert plain.oracle.output is None  # without the search: log of a negative, undefined

    res = search_values(gir, weights, inputs, SearchConfig(time_ms=2000), seed)
    assert res.ok and res.finite, res.summary()
    x, y = res.inputs["x"].astype(np.float64), res.inputs["y"].astype(np.float64)
    assert (x > 5).all() and (np.abs(y - 3) > 0).all()

    model = build_model(gir, seed, export=False, search=SearchConfig(time_ms=2000))
    assert model.search["ok"] and model.oracle.output is not None
    out = model.oracle.output["d"].astype(np.float64)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, np.log(x - 5) / (y - 3), rtol=2e-2 if dtype is DType.float16 else 1e-5)


def test_search_moves_through_floor_and_sign_only_with_proxies():
    """log(relu(sign(floor(x) - 2))): floor, sign and relu's flat side have no gradient; the proxies
    give one. With plain gradients the search can only re-draw values, and 32 draws above 3 at once
    do not happen."""
    gir = graph([(E.Floor(), ["x"], "f"), (Shift(by=2.0), ["f"], "s"), (E.Sign(), ["s"], "g"),
                 (E.Relu(), ["g"], "r"), (E.Log(), ["r"], "lg")], ["x"], {"x": [32]})
    weights, inputs = random_values(gir, np.random.default_rng(0))
    cfg = SearchConfig(time_ms=1000)
    res = search_values(gir, weights, inputs, cfg, 0, proxy=True)
    assert res.ok, res.summary()
    assert (np.floor(res.inputs["x"]) > 2).all()
    assert res.restarts == 0  # the gradient alone got there
    plain = search_values(gir, weights, inputs, SearchConfig(time_ms=200), 0, proxy=False)
    assert not plain.ok and plain.steps == 0


def test_integer_inputs_avoid_zero_divisors():
    """x / float(k) with k an int32 input: the search moves the integer through the cast."""
    gir = graph([(S.Cast(to=DType.float32), ["k"], "kf"), (B.Div(), ["x", "kf"], "q")], ["x", "k"],
                {"x": [64], "k": [64], "k:dtype": DType.int32})
    weights, inputs = random_values(gir, np.random.default_rng(3))
    inputs["k"][:8] = 0  # start with zero divisors
    res = search_values(gir, weights, inputs, SearchConfig(time_ms=1000), 3)
    assert res.ok, res.summary()
    assert (res.inputs["k"] != 0).all() and res.inputs["k"].dtype == np.int32


def test_integer_overflow_is_unsafe_and_fixed():
    """int8 x * x overflows for |x| > 11: the search keeps it in range."""
    gir = graph([(B.Mul(), ["k", "k"], "p")], ["k"], {"k": [32], "k:dtype": DType.int8})
    weights, inputs = random_values(gir, np.random.default_rng(0))
    inputs["k"][:4] = 100
    res = search_values(gir, weights, inputs, SearchConfig(time_ms=1000), 0)
    assert res.ok, res.summary()
    k = res.inputs["k"].astype(np.int64)
    assert (np.abs(k * k) <= 127).all()


def test_int64_kept_within_int32_for_systems_that_compute_it_in_32_bits():
    """int64 x * x with |x| = 100000 is 1e10: fine in int64, wrapped by a system that computes int64 in
    int32 (OpenVINO's CPU plugin). With search.int64_bits=32 the search keeps it within int32."""
    gir = graph([(B.Mul(), ["k", "k"], "p")], ["k"], {"k": [16], "k:dtype": DType.int64})
    weights, inputs = random_values(gir, np.random.default_rng(0))
    inputs["k"][:4] = 100_000
    wide = search_values(gir, weights, dict(inputs), SearchConfig(time_ms=1000), 0)
    assert wide.ok and (wide.inputs["k"][:4] == 100_000).all()  # nothing to fix in 64 bits
    narrow = search_values(gir, weights, dict(inputs), SearchConfig(time_ms=1000, int64_bits=32), 0)
    assert narrow.ok, narrow.summary()
    k = narrow.inputs["k"].astype(np.int64)
    assert (np.abs(k * k) <= 2**31 - 1).all()


def test_impossible_graph_ends_undefined_within_budget():
    """log(x - 5) and log(5 - x) at once: nothing is safe; the oracle says undefined."""
    gir = graph([(Shift(by=5.0), ["x"], "a"), (E.Log(), ["a"], "b"), (E.Neg(), ["a"], "n"),
                 (E.Log(), ["n"], "c")], ["x"], {"x": [8]})
    cfg = SearchConfig(time_ms=50)
    model = build_model(gir, 0, export=False, search=cfg)
    assert model.search["ok"] is False and model.oracle.output is None
    assert "Log" in model.search["blocker"]
    assert model.search["time_ms"] < 50 + 250  # the budget holds (one step past it at most)


def test_search_disabled_keeps_plain_values():
    gir = log_div_graph()
    weights, inputs = random_values(gir, np.random.default_rng(0))
    model = build_model(gir, 0, export=False, search=None)
    assert model.search is None
    np.testing.assert_array_equal(model.oracle.input["x"], inputs["x"])


def test_found_values_are_written_into_the_onnx_model_and_oracle():
    """Weights found by the search are the ONNX initializers; ORT reproduces the oracle."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import numpy_helper

    gir = graph([(E.Log(), ["w"], "lw"), (B.Add(), ["x", "lw"], "o")], ["x"], {"x": [6], "w": [6]}, ["w"])
    model = build_model(gir, 5, search=SearchConfig(time_ms=1000))
    assert (random_values(gir, np.random.default_rng(5))[0]["w"] < 0).any(), "the seed should start unsafe"
    assert model.search["ok"]
    inits = {i.name: numpy_helper.to_array(i) for i in model.onnx.graph.initializer}
    assert any(np.array_equal(a, model.weights["w"]) for a in inits.values())
    assert (model.weights["w"] > 0).all()
    sess = ort.InferenceSession(model.onnx.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"x": model.oracle.input["x"]})
    np.testing.assert_allclose(got, model.oracle.output["o"], rtol=1e-5)


def test_search_config_rejects_bad_values():
    from nnfuzz.errors import ConfigError

    with pytest.raises(ConfigError, match="search.time_ms"):
        SearchConfig.from_dict({"time_ms": -1})
    with pytest.raises(ConfigError, match="unknown search key"):
        SearchConfig.from_dict({"time": 5})
    with pytest.raises(ConfigError, match="search.proxy"):
        SearchConfig.from_dict({"proxy": "yes"})


class Broken(SameShapeFloat32):
    """A user op whose lowering raises: the search names the op instead of a raw torch error."""


@lowers(Broken)
def _broken(op, x):
    raise ValueError("this lowering always fails")


OP_REGISTRY.pop("Broken")


def test_a_lowering_that_raises_during_the_search_is_named():
    from nnfuzz.errors import OpDefinitionError

    gir = graph([(Broken(), ["x"], "y")], ["x"], {"x": [3]})
    with pytest.raises(OpDefinitionError, match=r"Broken.*ValueError: this lowering always fails.*value search"):
        build_model(gir, 0, export=False, search=SearchConfig())


def test_safe_values_are_checked_once_and_returned_as_they_are():
    """Values already safe: one forward pass, no leaves, no steps, no draws; the arrays come back."""
    gir = log_div_graph()
    weights, inputs = random_values(gir, np.random.default_rng(0))
    inputs = {"x": np.abs(inputs["x"]) + 6, "y": np.abs(inputs["y"]) + 4}
    res = search_values(gir, weights, inputs, SearchConfig(), 0)
    assert res.ok and res.finite and res.summary()["passes"] == 1
    assert (res.passes, res.steps, res.draws, res.restarts) == (1, 0, 0, 0)
    assert res.inputs["x"] is inputs["x"] and res.inputs["y"] is inputs["y"]


def test_unsafe_values_are_still_searched_after_the_check():
    gir = log_div_graph()
    weights, inputs = random_values(gir, np.random.default_rng(1))
    res = search_values(gir, weights, inputs, SearchConfig(time_ms=2000), 1)
    assert res.ok and res.passes > 1 and res.steps + res.draws > 0
    assert (res.inputs["x"].astype(np.float64) > 5).all()


def test_no_budget_reports_the_first_draw_as_it_is():
    """time_ms=0 (plain-1): the check's verdict, with the blocker and the undefined-values flag."""
    gir = log_div_graph()
    weights, inputs = random_values(gir, np.random.default_rng(0))
    res = search_values(gir, weights, inputs, SearchConfig(time_ms=0), 0, gradient=False)
    assert not res.ok and res.values_undefined and res.passes == 1
    assert res.blocker.startswith("Log (b)")


def test_max_passes_bounds_the_search_in_forward_passes():
    """log(x - 5) and log(5 - x): never safe; with max_passes the search stops at that many passes."""
    gir = graph([(Shift(by=5.0), ["x"], "a"), (E.Log(), ["a"], "b"), (E.Neg(), ["a"], "n"),
                 (E.Log(), ["n"], "c")], ["x"], {"x": [8]})
    weights, inputs = random_values(gir, np.random.default_rng(0))
    res = search_values(gir, weights, inputs, SearchConfig(time_ms=60_000, max_passes=10), 0)
    assert not res.ok and res.passes == 10
