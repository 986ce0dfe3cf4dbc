"""The resize ops: rules, torch eager, both ONNX paths, checker and ORT (check_op) on drawn and
edge attributes; and hand-computed cases of the ONNX-mode ops (worked out from the ONNX Resize
spec, not from any framework) on the numpy reference, the torch lowering, and the direct ONNX
lowering run by onnx's ReferenceEvaluator and by ONNX Runtime."""
import numpy as np
import pytest
from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.materialize.onnx.builder import OnnxGraph
from nnfuzz.materialize.onnx.lowering import onnx_lowering_for
from nnfuzz.materialize.torch.lowering import run_op
from nnfuzz.materialize.values import to_numpy, to_torch
from nnfuzz.ops.resize import spec as R
from nnfuzz.reference import eval_op

f32 = DType.float32


def check(op, shape, dt, run_ort=True):
    """check_op on one input."""
    return check_op(op, [(shape, dt)], run_ort=run_ort)


SAMPLES = [
    (R.ResizeNearest(8, 10), [2, 3, 4, 5]),
    (R.ResizeLinear(7, align_corners=False), [2, 3, 4]),
    (R.ResizeCubic(7, 3, align_corners=True), [1, 2, 4, 5]),
    (R.ResizeNearestOnnx(2, 9, coord="half_pixel", nearest_mode="round_prefer_ceil"), [1, 2, 4, 3]),
    (R.ResizeLinearOnnx(5, 1, 3, coord="asymmetric"), [1, 1, 3, 2, 2]),
    (R.ResizeCubicOnnx(3, 7, coord="asymmetric", cubic_coeff_a=-0.5, exclude_outside=True), [1, 2, 4, 5]),
    (R.ResizeLinearScale(scale=0.75, coord="half_pixel_symmetric"), [1, 2, 4, 5]),
]
_ids = [type(op).__name__ for op, _ in SAMPLES]


@pytest.mark.parametrize("op, shape", SAMPLES, ids=_ids)
def test_every_dtype_builds_and_exports(op, shape):
    for (dt,) in op.in_dtypes:
        check(op, shape, dt, run_ort=False)


@pytest.mark.parametrize("op, shape", SAMPLES, ids=_ids)
def test_float32_runs_on_ort_like_torch(op, shape):
    assert check(op, shape, f32) == "ort"


@pytest.mark.parametrize("op, shape", [
    (R.ResizeNearest(9), [1, 2, 3]),  # 9 = 3 x 3
    (R.ResizeNearest(6, 3, 4), [1, 1, 3, 3, 2]),
    (R.ResizeLinear(5, 1, align_corners=True), [2, 1, 3, 4]),
    (R.ResizeLinear(1, align_corners=True), [1, 1, 3]),
    (R.ResizeLinear(3, 2, 4, align_corners=False), [1, 2, 2, 3, 1]),
    (R.ResizeLinear(3, 5, 2, align_corners=True), [1, 1, 4, 1, 3]),
    (R.ResizeCubic(1, 6, align_corners=False), [1, 1, 5, 2]),
    (R.ResizeCubic(5, 5, align_corners=True), [1, 1, 1, 1]),
    (R.ResizeNearestOnnx(1, 2, coord="pytorch_half_pixel", nearest_mode="ceil"), [1, 1, 8, 2]),
    (R.ResizeNearestOnnx(3, coord="align_corners", nearest_mode="round_prefer_floor"), [1, 2, 6]),
    (R.ResizeLinearOnnx(1, 4, coord="pytorch_half_pixel"), [1, 1, 3, 2]),
])
def test_attribute_values(op, shape):
    assert check(op, shape, f32) == "ort"
    check(op, shape, DType.float16, run_ort=False)


@pytest.mark.parametrize("cls, n_var, kwargs", [
    (R.ResizeNearest, 1, {}),
    (R.ResizeNearest, 3, {}),
    (R.ResizeLinear, 2, {"align_corners": True}),
    (R.ResizeLinear, 3, {"align_corners": False}),
    (R.ResizeCubic, 2, {"align_corners": False}),
    (R.ResizeNearestOnnx, 2, {"coord": "asymmetric", "nearest_mode": "round_prefer_ceil"}),
    (R.ResizeLinearOnnx, 1, {"coord": "asymmetric"}),
    (R.ResizeCubicOnnx, 2, {"coord": "half_pixel", "cubic_coeff_a": -0.5, "exclude_outside": True}),
    (R.ResizeLinearScale, 0, {"scale": 1.75, "coord": "half_pixel_symmetric"}),
])
def test_solved(cls, n_var, kwargs):
    for seed in range(2):
        rank = n_var + 2 if n_var else 4
        op, (x,) = solve_concrete(cls, [rank], [f32], n_var=n_var, kwargs=kwargs, seed=seed)
        assert check(op, x.shape, x.dtype) == "ort"


def test_rank_follows_size_count():
    assert R.ResizeNearest(2).inp_ranks == [(3,)]
    assert R.ResizeLinear(2, 2, 2, align_corners=False).out_ranks == [(5,)]
    assert R.ResizeCubic.num_var_param == [2] and R.ResizeCubicOnnx.num_var_param == [2]


def test_invalid_attributes_rejected():
    x = [AbsTensor([1, 2, 3, 4], f32)]
    assert False in R.ResizeNearest(0, 3).checked_requires(x)
    assert False in R.ResizeCubic(3, -1, align_corners=False).checked_requires(x)


def test_scale_resize_rules():
    op = R.ResizeLinearScale(scale=1.25, coord="half_pixel")
    assert op.checked_type_transfer([AbsTensor([1, 2, 8, 7], f32)])[0].shape == [1, 2, 10, 8]  # floor(8.75)
    assert False in op.checked_requires([AbsTensor([1, 2, 3, 8], f32)])  # floor(3.75) == 3: ruled out


def test_onnx_nearest_takes_only_exact_ratios():
    near = lambda *size: R.ResizeNearestOnnx(*size, coord="half_pixel", nearest_mode="floor")  # noqa: E731
    x = [AbsTensor([1, 1, 12], f32)]
    assert False not in near(24).checked_requires(x) + near(6).checked_requires(x) + near(3).checked_requires(x)
    assert False in near(4).checked_requires(x)  # 12 / 4 = 3: 1/3 is inexact in float32
    assert False in near(18).checked_requires(x)  # 18 / 12 = 1.5


# (op, input, expected): worked out from the spec's source-coordinate formulas (see spec.py)
HAND = [
    # asymmetric, 2 -> 4: sources 0, .5, 1, 1.5
    (R.ResizeNearestOnnx(4, coord="asymmetric", nearest_mode="round_prefer_ceil"), [1, 2], [1, 2, 2, 2]),
    (R.ResizeNearestOnnx(4, coord="asymmetric", nearest_mode="round_prefer_floor"), [1, 2], [1, 1, 2, 2]),
    (R.ResizeNearestOnnx(4, coord="asymmetric", nearest_mode="ceil"), [1, 2], [1, 2, 2, 2]),
    # half_pixel, 4 -> 2: sources (i + .5) * 2 - .5 = .5, 2.5: ties
    (R.ResizeNearestOnnx(2, coord="half_pixel", nearest_mode="round_prefer_floor"), [1, 2, 3, 4], [1, 3]),
    (R.ResizeNearestOnnx(2, coord="half_pixel", nearest_mode="round_prefer_ceil"), [1, 2, 3, 4], [2, 4]),
    # align_corners, 3 -> 6: sources i * 2 / 5 = 0, .4, .8, 1.2, 1.6, 2
    (R.ResizeNearestOnnx(6, coord="align_corners", nearest_mode="round_prefer_floor"), [1, 2, 3],
     [1, 1, 2, 2, 3, 3]),
    # 4 -> 1: pytorch_half_pixel's source is 0, half_pixel's 1.5
    (R.ResizeNearestOnnx(1, coord="pytorch_half_pixel", nearest_mode="round_prefer_ceil"), [1, 2, 3, 4], [1]),
    (R.ResizeNearestOnnx(1, coord="half_pixel", nearest_mode="round_prefer_ceil"), [1, 2, 3, 4], [3]),
    # linear, asymmetric 2 -> 4: sources 0, .5, 1, 1.5 (clamped to 1)
    (R.ResizeLinearOnnx(4, coord="asymmetric"), [1, 2], [1, 1.5, 2, 2]),
    (R.ResizeLinearOnnx(1, coord="pytorch_half_pixel"), [1, 3], [1]),
    # by scale 0.75, 5 -> floor(3.75) = 3 (input i holds i): sources (i + .5) / .75 - .5; i / .75; and
    # half_pixel_symmetric's offset 5/2 * (1 - 3 / 3.75) = .5 added to the half_pixel sources
    (R.ResizeLinearScale(scale=0.75, coord="half_pixel"), [0, 1, 2, 3, 4], [1 / 6, 1.5, 17 / 6]),
    (R.ResizeLinearScale(scale=0.75, coord="asymmetric"), [0, 1, 2, 3, 4], [0, 4 / 3, 8 / 3]),
    (R.ResizeLinearScale(scale=0.75, coord="half_pixel_symmetric"), [0, 1, 2, 3, 4], [2 / 3, 2, 10 / 3]),
]


def _cubic_hand():
    """a = -0.5, half_pixel, 4 -> 2: sources .5 and 2.5 (t = .5), Keys weights at distances 1.5, .5,
    .5, 1.5: [-1/16, 9/16, 9/16, -1/16]; taps [-1, 0, 1, 2] and [1, 2, 3, 4] read [1, 1, 2, 4] and
    [2, 4, 8, 8] at the edges; excluding the outside tap rescales the other three by 16/17."""
    x = np.array([1, 2, 4, 8], np.float32).reshape(1, 1, 1, 4)
    edge = R.ResizeCubicOnnx(1, 2, coord="half_pixel", cubic_coeff_a=-0.5, exclude_outside=False)
    excl = R.ResizeCubicOnnx(1, 2, coord="half_pixel", cubic_coeff_a=-0.5, exclude_outside=True)
    return [(edge, x, [[[[1.375, 6.125]]]]), (excl, x, [[[[1.4375 * 16 / 17, 6.625 * 16 / 17]]]])]


def _onnx_direct(op, x):
    """The op's direct ONNX lowering (canonical spelling) as a one-node model."""
    from onnx import helper

    g = OnnxGraph(19)
    dt = DType.parse(x.dtype)
    g.declare("x", dt, x.shape)
    (y,) = op.checked_type_transfer([AbsTensor(list(x.shape), dt)])
    g.declare("y", y.dtype, y.shape)
    g.bind(onnx_lowering_for(type(op))(op, g, "x"), ["y"], 0, repr(op))
    graph = helper.make_graph(g.nodes, "t", [g.value_info("x")], [g.value_info("y")], initializer=g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("op, x, want", [(op, np.array(x, np.float32).reshape(1, 1, -1), np.array(w, np.float32).reshape(1, 1, -1))
                                         for op, x, w in HAND] + [(o, x, np.array(w, np.float32)) for o, x, w in _cubic_hand()],
                         ids=lambda v: repr(v) if isinstance(v, AbsOpBase) else "")
def test_hand_computed_onnx_modes(op, x, want):
    from onnx.reference import ReferenceEvaluator
    import onnxruntime as ort

    (ref,) = eval_op(op, x)
    np.testing.assert_allclose(ref, want, rtol=1e-6, err_msg="numpy reference")
    (t,) = run_op(op, to_torch(x, f32))
    np.testing.assert_allclose(to_numpy(t), want, rtol=1e-6, err_msg="torch lowering")
    model = _onnx_direct(op, x)
    np.testing.assert_allclose(ReferenceEvaluator(model).run(None, {"x": x})[0], want, rtol=1e-6, err_msg="onnx reference")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-6, err_msg="onnxruntime")
