"""Element-wise unary math and activations: the output has the input's shape and dtype."""
from nnfuzz.abstract.dtype import DTYPE_FLOATS
from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor


class UnaryOp(AbsOpBase, abstract=True):
    in_dtypes = [(d,) for d in DTYPE_FLOATS]
    out_dtypes = [(d,) for d in DTYPE_FLOATS]

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, self.out_dtypes_for(inputs)[0])]


class Relu(UnaryOp):
    pass


class Sigmoid(UnaryOp):
    pass


class Log(UnaryOp):
    """Vulnerable domain: x <= 0."""


class LeakyRelu(UnaryOp):
    attr_choices = {"negative_slope": (0.01, 0.1, 0.2, 0.5)}

    def __init__(self, *, negative_slope):
        self.negative_slope = negative_slope
