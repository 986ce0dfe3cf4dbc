"""Selection and value-mapping ops: Where (broadcasting select), Clip, Cast."""
from nnfuzz.abstract.accuracy import EXACT, ROUNDED
from nnfuzz.abstract.dtype import DTYPE_ALL, DTYPE_FLOATS, DTYPE_SIGNED_INTS, DType
from nnfuzz.abstract.kink import Kink
from nnfuzz.abstract.op import RANK_ALL, AbsOpBase
from nnfuzz.ops.binary.spec import broadcast_requires, broadcast_shape
from nnfuzz.abstract.tensor import AbsTensor


class Where(AbsOpBase):
    """out = cond ? x : y, all three broadcast together (numpy rules); x and y share the dtype."""
    accuracy = EXACT
    family = "select"

    inp_ranks = [RANK_ALL, RANK_ALL, RANK_ALL]
    out_ranks = [RANK_ALL]
    in_dtypes = [(DType.bool, d, d) for d in DTYPE_ALL]
    out_dtypes = [(d,) for d in DTYPE_ALL]

    def requires(self, inputs):
        return broadcast_requires(*(t.shape for t in inputs))

    def type_transfer(self, inputs):
        return [AbsTensor(broadcast_shape(*(t.shape for t in inputs)), self.out_dtypes_for(inputs)[0])]


class Clip(AbsOpBase):
    """min(max(x, min), max); shape and dtype kept. Bounds are integral so they also suit integer
    tensors; min == max (both 0) is allowed. uint8 is left out: the exporter casts a negative bound
    to uint8 (wrapping), which torch does not."""
    qdq = "compute"
    accuracy = EXACT
    family = "select"

    _DTYPES = DTYPE_FLOATS + DTYPE_SIGNED_INTS
    in_dtypes = [(d,) for d in _DTYPES]
    out_dtypes = [(d,) for d in _DTYPES]
    attr_choices = {"min": (-6.0, -1.0, 0.0), "max": (0.0, 1.0, 6.0)}
    kinks = {0: Kink(attrs=("min", "max"))}

    def __init__(self, *, min, max):
        self.min = min
        self.max = max

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, x.dtype)]


class Cast(AbsOpBase):
    """Convert to dtype ``to``. An instance accepts every other dtype (from ``to`` itself, Cast would
    be an identity that the exporter drops). Float-to-int of NaN, inf or out-of-range values is
    undefined in C and may differ between frameworks."""
    accuracy = ROUNDED
    family = "select"

    in_dtypes = [(s,) for s in DTYPE_ALL for d in DTYPE_ALL if s is not d]
    out_dtypes = [(d,) for s in DTYPE_ALL for d in DTYPE_ALL if s is not d]
    attr_choices = {"to": DTYPE_ALL}

    def __init__(self, *, to):
        self.to = to
        self.in_dtypes = [(s,) for s in DTYPE_ALL if s is not to]
        self.out_dtypes = [(to,)] * len(self.in_dtypes)

    def type_transfer(self, inputs):
        (x,) = inputs
        return [AbsTensor(x.shape, self.to)]
