"""Binary ops TF has and the core set lacks (``dialect = "tf"``): they are offered only to TF systems
(xla-cpu, tflite-cpu, tf-cpu), whose own kernels for them are what we want to fuzz. Broadcasting as in
``binary``; floats only.
"""
from nnfuzz.abstract.accuracy import Accuracy, ROUNDED
from nnfuzz.abstract.domain import NONZERO
from nnfuzz.abstract.dtype import DTYPE_FLOATS
from nnfuzz.abstract.kink import Kink
from nnfuzz.ops.binary.spec import BinaryOp, _rows


class TFBinaryOp(BinaryOp, abstract=True):
    family = "tfonly"  # not BinaryOp's "binary": mgen.include/exclude name this family on its own
    dialect = "tf"
    in_dtypes, out_dtypes = _rows(DTYPE_FLOATS)


class SquaredDifference(TFBinaryOp):
    """(x - y) ** 2 (tf.math.squared_difference, TFLite SQUARED_DIFFERENCE)."""
    accuracy = Accuracy(2)


class FloorMod(TFBinaryOp):
    """Floor modulo: the result has the sign of y (tf.math.floormod, TFLite FLOOR_MOD, torch.remainder,
    np.mod). Floats only for the same reason as Div."""
    accuracy = Accuracy(300)  # as Fmod
    domains = {1: NONZERO}
    kinks = {0: Kink(ratio_with=1)}  # as Fmod's, with d/dy = -floor(x / y)


class DivNoNan(TFBinaryOp):
    """x / y, and 0 where y == 0 (tf.math.divide_no_nan). A tiny non-zero y still gives huge values:
    the value search's non-finite fallback deals with those, so no domain."""
    accuracy = ROUNDED
