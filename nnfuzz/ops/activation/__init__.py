"""ONNX activations the elementwise family lacks: PRelu with a tensor slope, HardSigmoid with alpha/beta, ThresholdedRelu, Shrink (see spec.py)."""
