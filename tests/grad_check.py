"""A gradient test judged as oracle=grad judges it (triage/grad_judging.py), for one model on one sandbox;
and the model whose start values tie in every MaxPool window (the ranked kinks' regression case)."""
import numpy as np


def tied_maxpool(kinks: bool, seed: int = 3):
    """MaxPool2d(2x2) -> Tanh over [1, 2, 4, 4] from start values all 0.3 (each window ties), built with the
    value search, ``kinks`` as oracle=grad sets it."""
    from graphs import chain

    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.search import SearchConfig
    from nnfuzz.ops.elementwise.spec import Tanh
    from nnfuzz.ops.pool.spec import MaxPool2d

    g = chain(MaxPool2d(2, 2, 2, 2, 0, 0, 1, 1), Tanh(), shape=(1, 2, 4, 4))
    tied = {"x": np.full((1, 2, 4, 4), 0.3, np.float32)}
    return build_model(g, seed, export=False, search=SearchConfig(kinks=kinks, time_ms=3000), start=({}, tied))


def window_gaps(x: np.ndarray) -> np.ndarray:
    """Per 2x2 window of ``x`` [1, 2, 4, 4]: its largest value less the next."""
    w = np.sort(x.astype(np.float64).reshape(2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(8, 4), -1)
    return w[:, -1] - w[:, -2]


def judged_grad(model, sb, seed: int):
    """The oracle's Judged of ``model``'s gradient test (upstream gradients drawn from ``seed``) on ``sb``."""
    from nnfuzz.materialize.model import ReferenceData
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.triage.grad_judging import grad_twins, judge_grad
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    spec, upstream, expected = eager(model.gir, model.weights, model.oracle.input, seed)
    ref = ReferenceData({**model.oracle.input, **upstream}, expected)
    res = sb.run(pack(model.gir.dumps(), model.weights, None, spec.to_json()), ref.input)
    assert res.status == "ok", res.error

    def twins():
        return grad_twins(model.gir.dumps(), model.weights, ref, spec.to_json(), seed)

    return judge_grad(res, ref, sb.backend_info.engine, DEFAULT_TOLERANCES, twins)[0]
