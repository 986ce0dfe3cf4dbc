from nnfuzz.materialize.onnx.lowering import onnx_each, onnx_lowers
from nnfuzz.ops.elementwise import spec as E

onnx_each({
    E.Relu: "Relu",
    E.Sigmoid: "Sigmoid",
    E.Tanh: "Tanh",
})


@onnx_lowers(E.LeakyRelu)
def _leaky_relu(op, g, x):
    return g.op("LeakyRelu", x, alpha=float(op.negative_slope))
