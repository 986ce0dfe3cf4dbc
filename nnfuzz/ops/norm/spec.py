"""Normalisations; each keeps the input's shape and dtype.

BatchNorm:    x[N, C, *S] (inference mode), per-channel weight[C] and bias[C] inputs; the running
              mean/variance are fixed constants made by the lowering.
LayerNorm:    normalise over the last ``k`` dims; with ``affine`` it takes weight and bias of the
              shape of those ``k`` dims.
InstanceNorm: x[N, C, *S] normalised per (sample, channel) over S; weight[C], bias[C].
              torch refuses a single spatial element.
GroupNorm:    x[N, C, *S], C split into ``groups`` groups normalised separately; weight[C], bias[C].
              torch refuses (N * C / groups) * prod(S) == 1.
"""
from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract import arith
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.op import AbsOpBase, MAX_RANK, ranks
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError

NORM_DTYPES = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
# ONNX InstanceNormalization (GroupNorm exports through it at opset 17) takes no bfloat16
INSTANCE_NORM_DTYPES = (DType.float16, DType.float32, DType.float64)
EPS_CHOICES = (2.0 ** -16, 2.0 ** -10, 0.125)  # exact in float32, like every float attribute ONNX stores



class ChannelNormBase(AbsOpBase, abstract=True):
    """x[N, C, *S] with per-channel weight[C] and bias[C]."""
    accuracy = Accuracy(64, 2.0, "spatial")  # ORT's float32 InstanceNorm: 28 ulps near zero (docs/accuracy.md)
    family = "norm"

    in_dtypes = [(d, d, d) for d in NORM_DTYPES]
    out_dtypes = [(d,) for d in NORM_DTYPES]
    inp_ranks = [ranks(2, MAX_RANK), (1,), (1,)]
    out_ranks = [ranks(2, MAX_RANK)]
    attr_choices = {"eps": EPS_CHOICES}

    def requires(self, inputs):
        x, w, b = inputs
        return [w.shape[0] == x.shape[1], b.shape[0] == x.shape[1]]

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        row = self._pick_in_row([o.dtype for o in outputs], rng)
        r = outputs[0].ndims
        if r not in self.inp_ranks[0]:
            raise ConstraintError(f"{self.name} cannot produce rank {r}")
        return [(r, row[0]), (1, row[1]), (1, row[2])]


class BatchNorm(ChannelNormBase):
    accuracy = Accuracy(8)
    def __init__(self, *, eps):
        self.eps = eps


class InstanceNorm(ChannelNormBase):
    in_dtypes = [(d, d, d) for d in INSTANCE_NORM_DTYPES]
    out_dtypes = [(d,) for d in INSTANCE_NORM_DTYPES]
    inp_ranks = [ranks(3, MAX_RANK), (1,), (1,)]
    out_ranks = [ranks(3, MAX_RANK)]

    def __init__(self, *, eps):
        self.eps = eps

    def requires(self, inputs):
        x = inputs[0]
        return super().requires(inputs) + [arith.prod(x.shape[2:]) >= 2]


class GroupNorm(ChannelNormBase):
    accuracy = Accuracy(16, 2.0, "largest")
    in_dtypes = [(d, d, d) for d in INSTANCE_NORM_DTYPES]
    out_dtypes = [(d,) for d in INSTANCE_NORM_DTYPES]

    def __init__(self, groups, *, eps):
        self.groups = groups
        self.eps = eps

    def requires(self, inputs):
        x = inputs[0]
        n, c = x.shape[:2]
        groups_ok = arith.divisible(c, self.groups)
        if groups_ok is False:
            return [False]
        per_group = arith.fdiv(n * c, self.groups)  # torch's own check, batch size included
        return super().requires(inputs) + [groups_ok, per_group * arith.prod(x.shape[2:]) >= 2]


class LayerNorm(AbsOpBase):
    accuracy = Accuracy(16, 2.0, "largest")
    family = "norm"
    in_dtypes = [(d,) for d in NORM_DTYPES]  # per instance: one more column per affine parameter
    out_dtypes = [(d,) for d in NORM_DTYPES]
    attr_choices = {"k": (1, 2, 3), "affine": (True, False), "eps": EPS_CHOICES}

    def __init__(self, *, k, affine, eps):
        self.k = k
        self.affine = affine
        self.eps = eps
        n_params = 2 if affine else 0
        self.inp_ranks = [ranks(k, MAX_RANK)] + [(k,)] * n_params
        self.out_ranks = [ranks(k, MAX_RANK)]
        self.in_dtypes = [(d,) * (1 + n_params) for d in NORM_DTYPES]

    def requires(self, inputs):
        x, *params = inputs
        normalized = x.shape[x.ndims - self.k:]
        return [p.same_shape_as(AbsTensor(normalized)) for p in params]

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, self.out_dtypes_for(inputs)[0])]

    def deduct_inp_ranks_and_dtype(self, outputs, rng=None):
        row = self._pick_in_row([o.dtype for o in outputs], rng)
        r = outputs[0].ndims
        if r < self.k:
            raise ConstraintError(f"LayerNorm over the last {self.k} dims cannot produce rank {r}")
        return [(r, row[0])] + [(self.k, dt) for dt in row[1:]]
