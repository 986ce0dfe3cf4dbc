"""Value-search aids of the activations: a leak through their flat regions."""
from nnfuzz.materialize.torch.proxy import proxy_gradient
from nnfuzz.ops.activation import spec as A

proxy_gradient(A.PRelu, A.HardSigmoidAlphaBeta, A.ThresholdedRelu, A.Shrink, slope=0.1)
