"""Value-range rules of the resizes (see nnfuzz/abstract/ranges.py): nearest picks input elements and
linear takes convex combinations (clamped taps, weights in [0, 1] summing to 1); cubic may
overshoot: no rule."""
from nnfuzz.abstract.ranges import subset, value_range
from nnfuzz.ops.resize import spec as RS

value_range(RS.ResizeNearest, RS.ResizeLinear, RS.ResizeNearestOnnx, RS.ResizeLinearOnnx, RS.ResizeLinearScale)(subset)
