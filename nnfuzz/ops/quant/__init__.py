"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer kernels
(MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv). See docs/quantization.md."""
