"""TF lowerings of the TF-only ops: TF's own kernels, which are what these ops are there to fuzz. TF has
float16, bfloat16, float32 and float64 kernels for each (XLA compiles them all); the TFLite converter
maps float32 to SQUARED_DIFFERENCE, FLOOR_MOD and EQUAL + DIV + SELECT_V2 (a constant divisor folds
DivNoNan into a MUL by its reciprocal) and rejects the other float types, as for the core binary ops."""
from nnfuzz.ops.tfonly import spec as T
from nnfuzz.materialize.tensorflow.lowering import tf_lower_each

tf_lower_each({
    T.SquaredDifference: "math.squared_difference",
    T.FloorMod: "math.floormod",
    T.DivNoNan: "math.divide_no_nan",
})
