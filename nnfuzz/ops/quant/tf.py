"""The quantization ops have no TF lowering: TF's fake-quant ops (``fake_quant_with_min_max_*``) nudge
the range so that zero is exact and take no zero point or per-axis scale of ONNX's kind, and TFLite's
integer kernels come from its converter's own quantization (a representative dataset), not from ops in
the graph. Models holding them are not offered to the TF systems."""
from nnfuzz.materialize.tensorflow.lowering import no_tf_lowering
from nnfuzz.ops.quant import spec as Q

_WHY = "ONNX quantization semantics (zero point, per-axis scale) have no TF op; TFLite quantizes in its converter"
for _cls in (Q.QuantizeLinear, Q.DequantizeLinear, Q.DynamicQuantizeLinear, Q.MatMulInteger, Q.QLinearMatMul,
             Q.ConvInteger, Q.QLinearConv):
    no_tf_lowering(_cls, _WHY)
