"""Each node's own error (triage/local_error.py): measured on the system's own inputs, in ulps of the
output dtype, against the op's accuracy budget; one fault gives one root cause however it grows."""
import numpy as np
import pytest
from graphs import chain

from nnfuzz.abstract import OP_REGISTRY, DType
from nnfuzz.abstract.accuracy import EXACT, Accuracy, accumulated, ulp
from nnfuzz.abstract.op import load_builtin_ops
from nnfuzz.reference import evaluate
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.local_error import node_errors, scan
from nnfuzz.triage.meta import BugMeta

load_builtin_ops()
R = OP_REGISTRY
RNG = np.random.default_rng(7)


def one(op, ins, got, dtype, widened=()):
    return node_errors(op, 0, ins, {"y": got}, {"y": DType.parse(dtype)}, widened)[0]


def shrink_f32(x, lambd, bias):
    """ORT 1.32's float64 Shrink: the arithmetic done in float32 (bugs/kept/0000)."""
    v = x.astype(np.float32)
    return np.where(v > lambd, v - np.float32(bias), np.where(v < -lambd, v + np.float32(bias), 0)).astype(np.float64)


def test_ulp_is_the_gap_between_neighbours_in_each_dtype():
    for dt, np_dt in (("float16", np.float16), ("float32", np.float32), ("float64", np.float64)):
        x = np.array([1.0, 3.0, 1e-3, 1000.0])
        assert np.array_equal(ulp(x, dt), np.spacing(x.astype(np_dt)).astype(np.float64)), dt
    assert ulp(np.array([1.0]), "bfloat16")[0] == 2.0 ** -7
    assert ulp(np.array([0.0]), "float32")[0] == np.float32(np.finfo(np.float32).smallest_subnormal)


def test_a_float64_op_computed_in_float32_is_a_precision_fault_far_beyond_its_budget():
    op = R["Shrink"](lambd=0.5, bias=1.0)
    x = RNG.normal(size=(6, 7)) * 3
    e = one(op, [x], shrink_f32(x, 0.5, 1.0), "float64")
    assert e.kind == "precision" and e.ulps > 1e6 and e.budget <= 4, e  # Shrink is x -+ bias: correctly rounded
    right = one(op, [x], np.where(x > 0.5, x - 1.0, np.where(x < -0.5, x + 1.0, 0.0)), "float64")
    assert right.kind is None and right.ulps == 0.0


def test_a_wrong_value_is_values_and_exact_ops_allow_nothing():
    x = RNG.normal(size=(5,)).astype(np.float32)
    assert one(R["Relu"](), [x], np.maximum(x, 0) + np.float32(0.5) * (x > 0), "float32").kind == "values"
    assert one(R["Relu"](), [x], np.maximum(x, 0) * np.float32(1 + 2 ** -20), "float32").kind == "precision"
    assert R["Relu"].accuracy is EXACT
    assert one(R["Exp"](), [x], np.exp(x) * 1.5, "float32").kind == "values"
    i = RNG.integers(-5, 5, size=(4,)).astype(np.int32)
    e = one(R["Abs"](), [i], np.abs(i) + (i == i.min()), "int32")
    assert e.kind == "values" and e.ulps >= 1


def test_shape_dtype_missing_and_non_finite_are_told_apart():
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    assert one(R["Tanh"](), [x], np.tanh(x).reshape(3, 2), "float32").kind == "shape"
    assert one(R["Tanh"](), [x], np.tanh(x).astype(np.float64), "float32").kind == "dtype"
    assert node_errors(R["Tanh"](), 0, [x], {"y": None}, {"y": DType.float32})[0].kind == "missing"
    bad = np.tanh(x)
    bad[0, 0] = np.nan
    assert one(R["Tanh"](), [x], bad, "float32").kind == "non-finite"


def test_correct_float32_kernels_stay_within_their_budgets():
    x = RNG.normal(size=(64,)).astype(np.float32)
    for name, f in (("Exp", np.exp), ("Tanh", np.tanh), ("Sin", np.sin), ("Sqrt", lambda v: np.sqrt(np.abs(v)))):
        arg = np.abs(x) if name == "Sqrt" else x
        e = one(R[name](), [arg], f(arg).astype(np.float32), "float32")
        assert e.kind is None, (name, e)


def test_reductions_are_allowed_an_ulp_per_accumulated_term():
    x = RNG.normal(size=(8, 512)).astype(np.float32)
    op = R["ReduceSum"](axis=1, keepdims=False)
    naive = np.zeros(8, np.float32)
    for k in range(512):  # a left-to-right float32 sum: rounding at every step, as a simple kernel does
        naive = (naive + x[:, k]).astype(np.float32)
    e = one(op, [x], naive, "float32")
    acc = R["ReduceSum"].accuracy
    assert e.kind is None and e.budget == acc.ulps + acc.per_term * 512 and acc.per_term >= 1, e
    assert accumulated("inner", [(3, 17), (17, 5)], [(3, 5)]) == 17
    # a convolution: channels x window, read either way round (Conv's O x C/g or ConvTranspose's C x O/g)
    assert accumulated("kernel", [(1, 4, 8, 8), (6, 2, 3, 3)], [(1, 6, 6, 6)]) == 54


def test_a_documented_wider_precision_allows_either_side_of_a_rounding_boundary():
    """OpenVINO computes float16 in float32: a Ceil just above an integer in float32 may read as the
    integer once rounded to float16; judged with half an ulp of slack on its input, it is no fault."""
    x = np.array([2.0, 3.0, -1.0], np.float16)
    got = np.array([3.0, 4.0, -1.0], np.float16)  # ceil of 2.0000001, 3.0000001 (float32), -1.0
    assert one(R["Ceil"](), [x], got, "float16").kind == "values"
    assert one(R["Ceil"](), [x], got, "float16", widened=("float16",)).kind is None
    assert one(R["Ceil"](), [x], got + np.float16(1), "float16", widened=("float16",)).kind == "values"


def test_an_error_grown_downstream_is_charged_to_its_source_once():
    """Shrink (float32 inside) then Exp and Mul-by-itself: the end outputs are far off, yet each later node
    is exact on the values it was given; the root cause is the Shrink, named in the signature."""
    gir = chain(R["Shrink"](lambd=0.5, bias=1.0), R["Exp"](), R["Square"](), shape=(5, 4), dtype=DType.float64)
    x = RNG.normal(size=(5, 4)) * 4
    got = {"v0": shrink_f32(x, 0.5, 1.0)}
    got["v1"] = np.exp(got["v0"])
    got["v2"] = got["v1"] ** 2
    found = scan(gir, {}, {"x": x}, got)
    assert found.root is not None and found.root.index == 0 and found.root.kind == "precision", found
    meta = BugMeta(system="ort-cpu", symptom="inconsistency", root_cause=found.root.to_meta())
    assert signature(meta) == "ort-cpu | inconsistency | Shrink | precision"


def test_a_graph_whose_every_node_is_within_budget_has_no_root_cause():
    gir = chain(R["Tanh"](), R["Exp"](), R["Sin"](), shape=(5, 4))
    x = RNG.normal(size=(5, 4)).astype(np.float32)
    vals = evaluate(gir, {}, {"x": x})  # each node correctly rounded from its own float32 input
    found = scan(gir, {}, {"x": x}, {v: vals[v] for v in ("v0", "v1", "v2")})
    assert found.root is None and found.judged == 3 and not found.skipped


def test_every_builtin_op_declares_its_budget():
    lenient = Accuracy(16, 1.0, "largest")  # the default of an op that declares none
    undeclared = sorted(n for n, c in R.items() if c.accuracy == lenient and c.__module__.startswith("nnfuzz.ops"))
    assert not undeclared, undeclared


@pytest.mark.parametrize("name", ["MatMul", "Conv2d", "ReduceMean", "Softmax", "LayerNorm"])
def test_accumulating_ops_scale_their_budget(name):
    assert R[name].accuracy.accumulates and R[name].accuracy.per_term > 0


def test_a_crash_charged_to_an_earlier_node_is_signed_by_that_node():
    """Whichever consumer fails on the node's wrong shape, at whichever stage, and whether the test's outputs
    show it instead: one fault, signed as that node's (bugs/kept/0011's reduce: an inconsistency, and crashes
    of the Slice, Pad and Conv after it)."""
    root = {"op": "ResizeNearestOnnx", "dtype": "float32", "kind": "shape", "index": 0, "method": "prefix",
            "named": "HardSigmoid"}
    metas = [BugMeta(system="openvino-cpu", symptom="crash", stage=stage, summary=f"RuntimeError: {op} failed",
                     root_cause={**root, "named": op}) for op, stage in (("HardSigmoid", "compile"), ("Pad", "execute"))]
    shown = BugMeta(system="openvino-cpu", symptom="inconsistency", summary="v3: shape [1] != reference [2]",
                    root_cause={**root, "method": "local-error"})
    assert signature(metas[0]) == signature(metas[1]) == signature(shown) \
        == "openvino-cpu | inconsistency | ResizeNearestOnnx | shape"
    # another node's fault, or another kind of it, stays apart
    assert signature(metas[0].replace(root_cause={**root, "op": "Tanh"})) != signature(shown)
    assert signature(metas[0].replace(root_cause={**root, "kind": "values"})) != signature(shown)


def test_a_crash_prefix_prefers_a_wrong_shape_to_wrong_values():
    """A consumer fails on a shape: of two faulty nodes before it, the one whose shape is wrong is charged
    (ovdj 0051: a float32 Add 1.25 ulps off came before the reduce whose rank a Conv then failed on); without
    a wrong shape, the first node at fault is."""
    gir = chain(R["Tanh"](), R["Exp"](), shape=(5, 4))
    x = RNG.normal(size=(5, 4)).astype(np.float32)
    vals = evaluate(gir, {}, {"x": x})
    got = {"v0": vals["v0"] * np.float32(1.01), "v1": vals["v1"][:1]}  # Tanh off in values, Exp in shape
    assert scan(gir, {}, {"x": x}, got).root.op == "Tanh"
    prefer = ("shape", "dtype", "missing")
    assert (scan(gir, {}, {"x": x}, got, prefer=prefer).root.op, scan(gir, {}, {"x": x}, got, prefer=prefer).root.kind) \
        == ("Exp", "shape")
    got["v1"] = vals["v1"]
    assert scan(gir, {}, {"x": x}, got, prefer=prefer).root.op == "Tanh"


def test_a_widened_tie_may_break_either_way():
    """Two float16 values equal once rounded may differ in the float32 the system computed them in: an
    ArgMax of a tie may pick either, which moving both inputs the same way never shows."""
    op = R["ArgMax"](axis=1, keepdims=False)
    x = np.array([[1.0, 1.0, 0.5], [2.0, 3.0, 3.0]], np.float16)
    picked = np.array([1, 2], np.int64)  # the later of each tie
    assert one(op, [x], picked, "int64").kind == "values"
    assert one(op, [x], picked, "int64", widened=("float16",)).kind is None
    assert one(op, [x], np.array([2, 0], np.int64), "int64", widened=("float16",)).kind == "values"


def test_a_widened_comparison_may_go_either_way_in_every_element_at_once():
    """ORT compares float16 x with its float32 Tanh(x), unrounded: x >= t is False wherever t rounds down to x.
    Each element needs x down and t up, which drawn directions reached only now and then: an ort-cpu
    campaign's folder was judged off by the one element they missed."""
    op = R["GreaterEqual"]()
    x = np.full(64, 0.5, np.float16)
    t = x.copy()  # Tanh's output rounded to float16 (0.5 + 0.3 ulp in float32)
    got = np.zeros(64, bool)
    assert one(op, [x, t], got, "bool").kind == "values"
    assert one(op, [x, t], got, "bool", widened=("float16",)).kind is None


def test_a_widened_topk_may_order_its_ties_any_way():
    """ORT's float16 TopK on a float32 chain orders values equal once rounded by their float32 digits: an
    ort-cpu campaign's row of seven 1.0s came back [4, 0, 5], where the drawn moves reach [0, 4, 5]'s
    reorderings only one in 128 times. Any index that picks the value the exact one picks is right."""
    op = R["TopK"](-1, 3, largest=True)
    x = np.array([[1, -1, -1, -1, 1, 1, 1, 1, 1, -1, 1]], np.float16)
    values, exact = np.array([[1, 1, 1]], np.float16), np.array([[0, 4, 5]], np.int64)
    declared = {"v": DType.float16, "i": DType.int64}

    def indices(got, widened=("float16",)):
        return node_errors(op, 0, [x], {"v": values, "i": np.array([got], np.int64)}, declared, widened)[1]
    assert indices([4, 0, 5]).kind is None and indices([10, 8, 7]).kind is None
    assert indices([4, 0, 5], widened=()).kind == "values"  # rounded or not, the spec's order: lower index first
    assert indices([4, 0, 1]).kind == "values" and indices([4, 0, 11]).kind == "values"  # a -1, an index past the end
    assert node_errors(op, 0, [x], {"v": values, "i": exact}, declared, ())[1].kind is None
    given = node_errors(op, 0, [x], {"v": values, "i": np.array([[4, 0, 5]], np.int64)}, declared, ("float16",), None, [True])
    assert given[1].kind == "values"  # a graph input's values are exact: its ties keep the spec's order (kept 0092)


def test_a_widened_argmax_may_pick_any_of_its_ties():
    """An ort-cpu campaign's float16 ArgMax of a Softmax computed in float32 (diag folder 0037) picked one of
    a row's equal float16 values by its float32 digits, which the drawn moves of the band reach rarely: as
    TopK, any index that picks the value the exact one picks is right, with or without keepdims."""
    x = np.array([[0.25, 0.5, 0.5, 0.5, 0.5, 0.125], [0.5, 0.25, 0.5, 0.5, 0.5, 0.5]], np.float16)
    for keepdims in (False, True):
        op = R["ArgMax"](axis=1, keepdims=keepdims)

        def index(got, widened=("float16",), op=op, keepdims=keepdims):
            got = np.array(got, np.int64).reshape((2, 1) if keepdims else (2,))
            return one(op, [x], got, "int64", widened=widened).kind
        assert index([4, 5]) is None and index([1, 0]) is None
        assert index([4, 5], widened=()) == "values"  # rounded or not, the spec's order: the first maximum
        assert index([0, 1]) == "values" and index([6, 0]) == "values"  # a smaller value; past the end
    low, later = R["ArgMin"](axis=0, keepdims=False), np.array([0, 1, 1, 1, 1, 0], np.int64)  # the later of ties
    assert one(low, [x], later, "int64", widened=("float16",)).kind is None
    assert one(low, [x], later, "int64").kind == "values"


def test_a_dynamic_quantize_linear_scale_rounded_once_more_is_within_budget():
    """An openvino-cpu campaign (folders 0039, 0084, 0103) blamed DynamicQuantizeLinear's y_scale, 1 ulp
    off, for faults of other ops: the spec's division, rounded once more, is within the op's budget (an ulp
    at the inputs' scale, as for every rounding op); a scale 1 % off is not."""
    from nnfuzz.reference.registry import eval_op

    op = R["DynamicQuantizeLinear"]()
    x = np.array([-1.3, 0.2, 2.9, 0.7], np.float32)
    y, scale, zp = eval_op(op, x)
    declared = {"y": DType.uint8, "s": DType.float32, "z": DType.uint8}

    def scale_error(s):
        return node_errors(op, 0, [x], {"y": y, "s": np.float32(s), "z": zp}, declared)[1]
    assert scale_error(scale).kind is None
    assert scale_error(np.nextafter(scale, np.float32(1))).kind is None
    assert scale_error(scale * np.float32(1.01)).kind is not None
