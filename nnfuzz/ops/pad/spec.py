"""Padding in torch F.pad order: ``pads`` = (last_begin, last_end, second_last_begin, ...), two
entries per padded axis, starting from the last axis. Padded dim = dim + begin + end.

Constant, reflect and replicate export as one ONNX Pad with constant pads (the torch lowering module
registers a static export for F.pad); circular exports as Slice/Concat.
"""
from nnfuzz.abstract.accuracy import EXACT
from nnfuzz.abstract.dtype import DTYPE_ALL, DTYPE_NUMERIC
from nnfuzz.abstract.op import AbsOpBase, ranks
from nnfuzz.abstract.tensor import AbsTensor


class PadOp(AbsOpBase, abstract=True):
    accuracy = EXACT
    family = "pad"
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    attr_kinds = {"pads": "pad"}
    inp_ranks = out_ranks = [ranks(1)]  # each instance: viable_ranks(number of padded axes)

    def __init__(self, *pads):
        self.pads = list(pads)
        self.inp_ranks = self.out_ranks = [self.viable_ranks(len(pads) // 2)]

    @staticmethod
    def viable_ranks(k):
        """Input ranks that can take ``k`` padded axes."""
        return ranks(k)

    def padded(self, x):
        """(dim, begin, end) per padded axis."""
        return [(x.shape[-1 - k], self.pads[2 * k], self.pads[2 * k + 1]) for k in range(len(self.pads) // 2)]

    def type_transfer(self, inputs):
        (x,) = inputs
        shape = list(x.shape)
        for k, (d, b, e) in enumerate(self.padded(x)):
            shape[-1 - k] = d + b + e
        return [AbsTensor(shape, self.out_dtypes_for(inputs)[0])]


class ConstantPad(PadOp):
    """Fill with ``value``; negative pads crop. Any rank >= number of padded axes.

    torch crops before it pads, so a crop on one side may not exceed the dim by itself."""
    num_var_param = [2, 4, 6, 8, 10]
    attr_choices = {"value": (0.0, 1.0)}

    def __init__(self, *pads, value):
        super().__init__(*pads)
        self.value = value

    def requires(self, inputs):
        (x,) = inputs
        return [p for d, b, e in self.padded(x) for p in (d + b + e >= 1, d + b >= 0, d + e >= 0)]


class BorderPad(PadOp, abstract=True):
    """Modes that copy values from the input: torch pads only the last 1-3 axes, and a tensor padded
    on k axes must have rank k+1 (no batch) or k+2. Pads are non-negative. Bool is not padded."""
    in_dtypes = [(d,) for d in DTYPE_NUMERIC]
    out_dtypes = [(d,) for d in DTYPE_NUMERIC]
    num_var_param = [2, 4, 6]
    inp_ranks = out_ranks = [ranks(2)]

    @staticmethod
    def viable_ranks(k):
        return (k + 1, k + 2)


class ReflectPad(BorderPad):
    """Mirror without repeating the edge: each pad < dim."""

    def requires(self, inputs):
        (x,) = inputs
        return [p for d, b, e in self.padded(x) for p in (b >= 0, e >= 0, b < d, e < d)]


class ReplicatePad(BorderPad):
    """Repeat the edge value (ONNX mode "edge")."""

    def requires(self, inputs):
        return [p >= 0 for p in self.pads]


class CircularPad(BorderPad):
    """Wrap around: each pad <= dim. Exports as Slice/Concat, not Pad.

    Only the batched form (rank k+2): the TorchScript exporter corrupts the heap and aborts the
    process on an unbatched (rank k+1) circular pad.
    """
    in_dtypes = [(d,) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]
    inp_ranks = out_ranks = [ranks(3)]

    @staticmethod
    def viable_ranks(k):
        return (k + 2,)

    def requires(self, inputs):
        (x,) = inputs
        return [p for d, b, e in self.padded(x) for p in (b >= 0, e >= 0, b <= d, e <= d)]
