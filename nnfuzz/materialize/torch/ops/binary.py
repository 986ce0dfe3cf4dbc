import torch

from nnfuzz.abstract.ops import binary as B
from nnfuzz.materialize.torch.lowering import lower_each

lower_each({
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
})
