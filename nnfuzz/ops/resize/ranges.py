"""Value-range rules of the resizes (see nnfuzz/abstract/ranges.py); cubic may overshoot: no rule."""
from nnfuzz.abstract.ranges import subset, value_range
from nnfuzz.ops.resize import spec as RS

value_range(RS.ResizeNearest, RS.ResizeLinear)(subset)
