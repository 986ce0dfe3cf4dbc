"""TF lowerings of the element-wise unary ops: TF kernels where TF has the op, the torch formula
(``torch.nn.functional``'s definition) written out in TF ops otherwise."""
import math

from nnfuzz.ops.elementwise import spec as E
from nnfuzz.materialize.tensorflow.lazy import tf
from nnfuzz.materialize.tensorflow.lowering import tf_lower_each, tf_lowers

tf_lower_each({
    E.Relu: "nn.relu",
    E.Relu6: "nn.relu6",
    E.Sigmoid: "math.sigmoid",
    E.Tanh: "math.tanh",
    E.Softplus: "math.softplus",
    E.Selu: "nn.selu",  # torch's alpha and scale
    E.Silu: "nn.silu",
    E.Softsign: "math.softsign",
    E.LogSigmoid: "math.log_sigmoid",
    E.Exp: "math.exp",
    E.Log: "math.log",
    E.Log1p: "math.log1p",
    E.Sqrt: "math.sqrt",
    E.Rsqrt: "math.rsqrt",
    E.Reciprocal: "math.reciprocal",
    E.Erf: "math.erf",
    E.Square: "math.square",
    E.Sin: "math.sin",
    E.Cos: "math.cos",
    E.Tan: "math.tan",
    E.Asin: "math.asin",
    E.Acos: "math.acos",
    E.Atan: "math.atan",
    E.Neg: "math.negative",
    E.Floor: "math.floor",
    E.Ceil: "math.ceil",
    E.Round: "math.round",  # half to even, as torch.round
    E.IsNan: "math.is_nan",
    E.IsInf: "math.is_inf",
})


def _const(value, x):
    return tf.constant(value, x.dtype)


tf_lower_each({
    E.HardSigmoid: lambda x: tf.nn.relu6(x + _const(3.0, x)) / _const(6.0, x),  # not Keras' 0.2 * x + 0.5
    E.HardSwish: lambda x: x * tf.nn.relu6(x + _const(3.0, x)) / _const(6.0, x),
    E.Mish: lambda x: x * tf.math.tanh(tf.math.softplus(x)),
    E.Tanhshrink: lambda x: x - tf.math.tanh(x),
    E.Log2: lambda x: tf.math.log(x) / _const(math.log(2.0), x),
    # TF has no uint8 Abs or Sign kernel: |x| is x, sign(x) is x > 0
    E.Abs: lambda x: tf.identity(x) if x.dtype == tf.uint8 else tf.math.abs(x),
    E.Sign: lambda x: tf.cast(x > 0, x.dtype) if x.dtype == tf.uint8 else tf.math.sign(x),
})


@tf_lowers(E.Gelu)
def _gelu(op, x):
    return tf.nn.gelu(x, approximate=op.approximate == "tanh")


@tf_lowers(E.Elu)
def _elu(op, x):
    return tf.where(x > 0, x, _const(op.alpha, x) * tf.math.expm1(tf.minimum(x, _const(0.0, x))))


@tf_lowers(E.Celu)
def _celu(op, x):
    alpha = _const(op.alpha, x)
    return tf.nn.relu(x) + tf.minimum(_const(0.0, x), alpha * tf.math.expm1(x / alpha))


@tf_lowers(E.LeakyRelu)
def _leaky_relu(op, x):
    return tf.nn.leaky_relu(x, alpha=op.negative_slope)


@tf_lowers(E.Hardshrink)
def _hardshrink(op, x):
    return tf.where(tf.math.abs(x) > _const(op.lambd, x), x, tf.zeros_like(x))


@tf_lowers(E.Softshrink)
def _softshrink(op, x):
    lambd = _const(op.lambd, x)
    return tf.where(x > lambd, x - lambd, tf.where(x < -lambd, x + lambd, tf.zeros_like(x)))
