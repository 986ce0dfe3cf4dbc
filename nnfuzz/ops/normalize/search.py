"""Value-search aids of the normalisations: LpNormalization's norms and MeanVarianceNormalization's
deviation kept away from 0, and its variance from the cancellation of mean(x^2) - mean^2 (float32
would lose the digits the reference keeps)."""
import torch

from nnfuzz.abstract.dtype import DType
from nnfuzz.materialize.torch.losses import above, domain_loss, margin
from nnfuzz.ops.normalize import spec as M

# the variance's least share of mean(x^2): at most ~1.3 digits cancel (a third of a digit in the half
# types, which keep only 3 or 2)
MVN_MIN_SHARE = {DType.float16: 0.5, DType.bfloat16: 0.5}


@domain_loss(M.LpNormalization)
def _lp_norm(op, xs, dts):
    return above(torch.linalg.vector_norm(xs[0].double(), op.p, dim=op.axis), 10 * margin(dts[0]))


@domain_loss(M.MeanVarianceNormalization)
def _mvn(op, xs, dts):
    v = xs[0].double()
    mean = v.mean(op.axes, keepdim=True)
    var = ((v - mean) ** 2).mean(op.axes)
    share = var / ((v * v).mean(op.axes) + 1e-300)
    return above(share, MVN_MIN_SHARE.get(dts[0], 0.05)) + above(var, (10 * margin(dts[0])) ** 2)
