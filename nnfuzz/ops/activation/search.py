"""Value-search aids of the activations: a leak through their flat regions, and tie rules where they jump."""
from nnfuzz.materialize.torch.proxy import proxy_gradient
from nnfuzz.materialize.torch.ties import at_jumps, tie_rule
from nnfuzz.ops.activation import spec as A

proxy_gradient(A.PRelu, A.HardSigmoidAlphaBeta, A.ThresholdedRelu, A.Shrink, slope=0.1)

# 0 up to lambd (alpha), then x - bias (x): a value a rounding away from the threshold takes either side
tie_rule(A.Shrink, A.ThresholdedRelu, with_op=True)(at_jumps)
