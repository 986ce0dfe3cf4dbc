import random

import pytest
from oputil import check_op, solve_concrete

from nnfuzz.abstract.dtype import DType
from nnfuzz.ops.norm import spec as N
from nnfuzz.abstract.tensor import AbsTensor


def run(op, shapes, dt):
    # ORT cannot be fed bfloat16 numpy arrays (it has a bf16 LayerNormalization kernel, so the session
    # opens and feeding fails); for bf16 rows check torch, export, checker and shape inference only.
    check_op(op, [AbsTensor(s, dt) for s in shapes], run_ort=dt is not DType.bfloat16)


def rows(cls):
    return [row[0] for row in cls.in_dtypes]


@pytest.mark.parametrize("dt", rows(N.BatchNorm), ids=str)
@pytest.mark.parametrize("x", [[3, 4], [2, 4, 3], [2, 4, 3, 3], [1, 4, 2, 3, 2]], ids=str)
def test_batch_norm(x, dt):
    run(N.BatchNorm(eps=1e-5), [x, [4], [4]], dt)


@pytest.mark.parametrize("dt", rows(N.BatchNormTraining), ids=str)
@pytest.mark.parametrize("x", [[3, 4], [2, 4, 3], [2, 4, 3, 3]], ids=str)
def test_batch_norm_training(x, dt):
    run(N.BatchNormTraining(eps=1e-5, momentum=0.125), [x, [4], [4]], dt)


def test_batch_norm_training_updates_the_running_statistics_as_torch_does():
    """Three outputs: y (batch statistics), and BatchNorm's running mean and variance moved toward the
    batch's mean and unbiased variance by ``momentum`` (what torch's module does to its buffers)."""
    import numpy as np
    import torch

    from nnfuzz.reference.registry import eval_for

    x = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float64)
    w, b = np.array([1.0, 2.0, 0.5]), np.array([0.0, 1.0, -1.0])
    bn = torch.nn.BatchNorm1d(3, eps=1e-3, momentum=0.5, dtype=torch.float64).train()
    with torch.no_grad():
        bn.weight.copy_(torch.from_numpy(w)), bn.bias.copy_(torch.from_numpy(b))
        bn.running_mean.copy_(torch.linspace(-0.5, 0.5, 3, dtype=torch.float64))
        bn.running_var.copy_(torch.linspace(0.5, 2.0, 3, dtype=torch.float64))
        y = bn(torch.from_numpy(x))
    got = eval_for(N.BatchNormTraining)(N.BatchNormTraining(eps=1e-3, momentum=0.5), x, w, b)
    for a, want in zip(got, (y, bn.running_mean, bn.running_var)):
        np.testing.assert_allclose(a, want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dt", rows(N.InstanceNorm), ids=str)
@pytest.mark.parametrize("x", [[2, 4, 3], [2, 4, 3, 3], [1, 4, 1, 1, 2]], ids=str)
def test_instance_norm(x, dt):
    run(N.InstanceNorm(eps=1e-3), [x, [4], [4]], dt)


@pytest.mark.parametrize("dt", rows(N.GroupNorm), ids=str)
@pytest.mark.parametrize("groups,x", [(2, [3, 4]), (4, [2, 4, 3]), (1, [2, 4, 3, 3]), (2, [1, 4, 2, 1, 2])], ids=str)
def test_group_norm(groups, x, dt):
    run(N.GroupNorm(groups, eps=1e-5), [x, [4], [4]], dt)


@pytest.mark.parametrize("dt", rows(N.LayerNorm), ids=str)
@pytest.mark.parametrize("k,affine,x", [
    (1, True, [5]), (1, False, [2, 4, 3]), (2, True, [2, 4, 3]), (3, False, [2, 4, 3]),
    (3, True, [1, 2, 3, 2, 2]), (2, False, [1, 2, 3, 2, 2]),
], ids=str)
def test_layer_norm(k, affine, x, dt):
    params = [x[len(x) - k:]] * 2 if affine else []
    run(N.LayerNorm(k=k, affine=affine, eps=0.1), [x] + params, dt)


@pytest.mark.parametrize("rank", [2, 3, 4, 5])
def test_symbolic(rank):
    f32 = DType.float32
    op, xs = solve_concrete(N.BatchNorm, [rank, 1, 1], [f32] * 3, kwargs={"eps": 1e-5})
    run(op, [x.shape for x in xs], f32)
    op, xs = solve_concrete(N.GroupNorm, [rank, 1, 1], [f32] * 3, kwargs={"eps": 1e-5},
                            extra=lambda op, xs: [op.groups >= 2])
    assert xs[0].shape[1] % op.groups == 0
    run(op, [x.shape for x in xs], f32)
    if rank >= 3:
        op, xs = solve_concrete(N.InstanceNorm, [rank, 1, 1], [f32] * 3, kwargs={"eps": 1e-5})
        run(op, [x.shape for x in xs], f32)
    for k in (1, 2, 3):
        if k <= rank:
            kw = {"k": k, "affine": True, "eps": 1e-5}
            op, xs = solve_concrete(N.LayerNorm, [rank, k, k], [f32] * 3, kwargs=kw)
            run(op, [x.shape for x in xs], f32)


def test_invalid():
    f32 = DType.float32
    x, c4 = AbsTensor([2, 4, 3], f32), AbsTensor([4], f32)
    assert False in N.GroupNorm(3, eps=1e-5).checked_requires([x, c4, c4])  # 3 does not divide 4
    assert False in N.GroupNorm(0, eps=1e-5).checked_requires([x, c4, c4])
    assert False in N.BatchNorm(eps=1e-5).checked_requires([x, AbsTensor([3], f32), c4])
    one = AbsTensor([2, 4, 1, 1], f32)
    assert False in N.InstanceNorm(eps=1e-5).checked_requires([one, c4, c4])  # one spatial element
    assert False in N.GroupNorm(4, eps=1e-5).checked_requires([AbsTensor([1, 4], f32), c4, c4])  # torch refuses
    ln = N.LayerNorm(k=2, affine=True, eps=1e-5)
    assert False in ln.checked_requires([x, AbsTensor([4, 4], f32), AbsTensor([4, 3], f32)])


def test_deduct():
    rng = random.Random(0)
    out = [AbsTensor([2, 3, 4, 5], DType.float16)]
    for op in (N.BatchNorm(eps=1e-5), N.InstanceNorm(eps=1e-5), N.GroupNorm(1, eps=1e-5)):
        assert op.checked_deduct(out, rng) == [(4, DType.float16), (1, DType.float16), (1, DType.float16)]
    assert N.LayerNorm(k=2, affine=True, eps=1e-5).checked_deduct(out, rng) == [
        (4, DType.float16), (2, DType.float16), (2, DType.float16)]
    assert N.LayerNorm(k=3, affine=False, eps=1e-5).checked_deduct(out, rng) == [(4, DType.float16)]
