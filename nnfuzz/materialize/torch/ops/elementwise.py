import torch
import torch.nn.functional as F

from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.materialize.torch.lowering import lower_each, lowers

lower_each({
    E.Relu: torch.relu,
    E.Sigmoid: torch.sigmoid,
    E.Log: torch.log,
})


@lowers(E.LeakyRelu)
def _leaky_relu(op, x):
    return F.leaky_relu(x, op.negative_slope)
