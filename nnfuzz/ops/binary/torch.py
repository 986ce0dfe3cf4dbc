import torch

from nnfuzz.ops.binary import spec as B
from nnfuzz.materialize.torch.lowering import lower_each


def f64_scalar_safe(fn):
    """Run ``fn`` on 0-d float64 operands viewed as shape [1] (and the result back as 0-d).

    The TorchScript ONNX exporter treats 0-d tensors as Python scalars in its type promotion and
    casts 0-d float64 operands to float32 (the default dtype), so e.g. Add of two 0-d float64
    tensors exports as Cast->float32 + Add with a float32 output. A [1]-shaped view avoids that and
    broadcasts exactly like the 0-d tensor.
    """
    def run(*xs):
        if not any(x.dim() == 0 and x.dtype == torch.float64 for x in xs):
            return fn(*xs)
        out = fn(*(x.reshape(1) if x.dim() == 0 else x for x in xs))
        return out.reshape(()) if all(x.dim() == 0 for x in xs) else out

    return run


lower_each({cls: f64_scalar_safe(fn) for cls, fn in {
    B.Add: torch.add,
    B.Sub: torch.sub,
    B.Mul: torch.mul,
    B.Div: torch.div,
    B.Pow: torch.pow,
    B.Fmod: torch.fmod,
    B.Max: torch.maximum,
    B.Min: torch.minimum,
    B.Equal: torch.eq,
    B.Greater: torch.gt,
    B.Less: torch.lt,
    B.GreaterEqual: torch.ge,
    B.LessEqual: torch.le,
    B.And: torch.logical_and,
    B.Or: torch.logical_or,
    B.Xor: torch.logical_xor,
    B.Not: torch.logical_not,
}.items()})
