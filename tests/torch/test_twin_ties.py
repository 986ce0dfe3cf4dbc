"""Near ties in the jittered twin runs (materialize/torch/module.py run_float64, ties.py): a rounding run
flips a tie only as far as the op's inputs moved, and ops that jump at a threshold have tie rules."""
import numpy as np

from nnfuzz.abstract import AbsTensor, DType
from nnfuzz.gir import GraphIR, Inst
from nnfuzz.materialize.model import add_twins, build_model
from nnfuzz.ops.activation import spec as A
from nnfuzz.ops.binary import spec as B
from nnfuzz.ops.elementwise import spec as E

F16 = DType.float16


def _graph(insts, inputs, outputs):
    g = GraphIR()
    for name, shape in inputs.items():
        g.vars[name] = AbsTensor(list(shape), F16)
    g.inputs = list(inputs)
    for op, ins, out in insts:
        g.vars[out] = op.checked_type_transfer([g.vars[v] for v in ins])[0]
        g.insts.append(Inst(op, ins, [out]))
    g.outputs = outputs
    return g.check()


def test_a_tie_of_computed_values_shows_in_the_rounding_runs_beside_steps_of_inputs():
    """ORT once computed (ceil(x) @ w + |b|) >= |b| as False where the reference had True, with x = [-0.98,
    -0.0045, -0.86]: the sum is exactly |b| (ceil(x) = -0), and ORT rounded the two sides apart. The rounding-
    level runs must show that comparison flip. They did not: they shifted each ceil past its jump (up past 0 or
    down past -1), though x is a graph input, exact in every system, so the two sides were never near (here
    |ceil(x)| makes either jump raise the sum, so only the tie itself can give False)."""
    g = _graph([(E.Ceil(), ["x0"], "c0"), (E.Ceil(), ["x1"], "c1"), (E.Abs(), ["c0"], "p0"), (E.Abs(), ["c1"], "p1"),
                (B.Mul(), ["p0", "w"], "m0"), (B.Mul(), ["p1", "w"], "m1"), (B.Add(), ["m0", "m1"], "m"), (E.Abs(), ["b"], "a"),
                (B.Add(), ["m", "a"], "s"), (B.GreaterEqual(), ["s", "a"], "ge")],
               {"x0": (1,), "x1": (1,), "w": (1,), "b": (1,)}, ["ge"])
    values = {"x0": np.array([-0.0045], np.float16), "x1": np.array([-0.98], np.float16),
              "w": np.array([0.43], np.float16), "b": np.array([2.039], np.float16)}
    model = add_twins(build_model(g, 0, export=False, values=({}, values)))
    twin, (coarse, rounding) = model.oracle.output_f64["ge"], model.oracle.output_f64_jitter["ge"]
    assert twin.all()
    assert not rounding.all(), "no rounding run flipped the exact tie s == |b|"


def test_a_threshold_step_has_a_tie_rule():
    """Shrink(lambd=0.5, bias=1) jumps from 0 to -0.5 at 0.5: a computed value 3 float16 ulps above it (0.5015)
    may take either side on another system, as a Ceil near an integer does, which the envelope must hold; a
    value far from it must not move. (The 2-ulp rounding runs alone do not cross the jump from 3 ulps.)"""
    g = _graph([(E.Abs(), ["x"], "a"), (A.Shrink(lambd=0.5, bias=1.0), ["a"], "y")], {"x": (2,)}, ["y"])
    x = np.array([0.5 + 3 * 2.0 ** -11, 3.0], np.float16)
    model = add_twins(build_model(g, 0, export=False, values=({}, {"x": x})))
    twin, (coarse, rounding) = model.oracle.output_f64["y"], model.oracle.output_f64_jitter["y"]
    assert abs(twin[0] + 0.4985) < 1e-3 and abs(rounding[0]) < 0.01, (twin, rounding)  # the other side of the jump
    assert abs(rounding[1] - twin[1]) < 0.01 and abs(coarse[1] - twin[1]) < 0.1
