"""Torch lowerings of the indexing ops; their constant indices come from ``spec.py`` (on the input's
device). They run on any dtype the twin and the surrogates give them (int64, float64)."""
import torch

from nnfuzz.materialize.onnx.export import no_torch_export
from nnfuzz.materialize.torch.lowering import lowers
from nnfuzz.ops.indexing import spec as I


def _const(arr, like):
    return torch.from_numpy(arr).to(like.device)


def _dims(x):
    """x's dims as ints (traced for export, torch gives tensors)."""
    return [int(d) for d in x.shape]


def _with_dim(shape, axis, n):
    return [n if i == axis else int(d) for i, d in enumerate(shape)]


@lowers(I.TopK)
def _topk(op, x):
    """A stable sort, cut to k: equal entries keep their order (ONNX's rule; torch.topk has none). The
    TorchScript exporter cannot write a stable sort: traced for export, it is torch.topk, which the
    exporter writes as ONNX TopK, whose rule that is (bfloat16 in float32: the exporter's opset 17 TopK has
    no bfloat16, and the comparison and the values are exact in float32)."""
    if torch.jit.is_tracing():
        if x.dtype == torch.bfloat16:
            v, i = torch.topk(x.float(), op.k, dim=op.axis, largest=op.largest, sorted=True)
            return v.to(torch.bfloat16), i
        return torch.topk(x, op.k, dim=op.axis, largest=op.largest, sorted=True)
    v, i = torch.sort(x, dim=op.axis, descending=op.largest, stable=True)
    return v.narrow(op.axis, 0, op.k), i.narrow(op.axis, 0, op.k)


@lowers(I.GatherElements)
def _gather_elements(op, x):
    shape = _with_dim(x.shape, op.axis, op.n)
    return torch.gather(x, op.axis, _const(I.gather_indices(shape, _dims(x)[op.axis], op.pick), x))


_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


no_torch_export(I.ScatterElements, "torch 2.13's TorchScript exporter writes scatter_reduce (reduction mul/max/"
                "min) inside If branches whose merged output shape ONNX shape inference gets wrong")


@lowers(I.ScatterElements)
def _scatter_elements(op, data, upd):
    idx = _const(I.scatter_element_indices(op, _dims(data), _dims(upd)), data)
    if op.reduction == "none":
        return torch.scatter(data, op.axis, idx, upd)
    if op.reduction == "add":
        return torch.scatter_add(data, op.axis, idx, upd)
    return torch.scatter_reduce(data, op.axis, idx, upd, _REDUCE[op.reduction], include_self=True)


_COMBINE = {"none": lambda old, new: new, "add": torch.add, "mul": torch.mul, "max": torch.maximum,
            "min": torch.minimum}


@lowers(I.ScatterND)
def _scatter_nd(op, data, upd):
    """The index tuples are distinct, so each target combines with exactly one update slice."""
    pos = _const(I.nd_positions(_dims(data)[:op.k], _dims(upd)[0], op.pick), data)
    at = tuple(pos[:, j] for j in range(op.k))
    out = data.clone()
    out[at] = _COMBINE[op.reduction](data[at], upd)
    return out


@lowers(I.OneHot)
def _one_hot(op, x):
    """Compared with each position 0..depth-1 after ONNX's wrap of negative indices, so every index
    value is defined (out of range: a row of values[0])."""
    v = x.long()
    v = torch.where(v < 0, v + op.depth, v)
    hit = v.unsqueeze(-1) == torch.arange(op.depth, device=x.device)
    on = torch.tensor([op.values[1]], dtype=op.dtype.torch(), device=x.device)  # 1-d: the torch exporter
    # gives a 0-d constant the default float dtype in where(), so a float64 OneHot came out float32
    off = torch.tensor([op.values[0]], dtype=op.dtype.torch(), device=x.device)
    return torch.movedim(torch.where(hit, on, off), x.dim(), op.axis)  # the new last dim (>= 0: the exporter)


@lowers(I.Range)
def _range(op, x):
    n = _dims(x)[op.axis]
    steps = torch.arange(n, dtype=torch.float64 if op.dtype.is_float else torch.int64, device=x.device)
    return (op.start + op.delta * steps).to(op.dtype.torch())  # exact: small ints and binary fractions


@lowers(I.ReverseSequence)
def _reverse_sequence(op, x):
    """A gather along the time axis: position t of batch b reads lens[b] - 1 - t below lens[b]."""
    t_ax, b_ax = op.time_axis, op.batch_axis
    time, batch = _dims(x)[t_ax], _dims(x)[b_ax]
    lens = _const(I.sequence_lens(batch, time, op.pick), x)
    t = torch.arange(time, device=x.device)
    src = torch.where(t[None, :] < lens[:, None], lens[:, None] - 1 - t[None, :], t[None, :])  # [batch, time]
    if t_ax < b_ax:
        src = src.T
    src = src.reshape(list(src.shape) + [1] * (x.ndim - 2)).expand(_dims(x))
    return torch.gather(x, t_ax, src)
