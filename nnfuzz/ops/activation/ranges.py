"""Value-range rules of the activations (see nnfuzz/abstract/ranges.py)."""
from __future__ import annotations

import numpy as np

from nnfuzz.abstract.ranges import monotone, value_range
from nnfuzz.ops.activation import spec as A

value_range(A.HardSigmoidAlphaBeta)(monotone(lambda op, x: np.clip(op.alpha * x + op.beta, 0, 1), 0.0, 1.0))
# non-decreasing for alpha >= 0 (every choice), and never below 0
value_range(A.ThresholdedRelu)(monotone(lambda op, x: np.where(x > op.alpha, x, 0.0), 0.0))
