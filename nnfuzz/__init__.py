"""nnfuzz: a fuzzer for deep-learning compilers.

``import nnfuzz`` imports no framework; torch, ONNX, TVM and TensorFlow load only where used.
"""
__version__ = "0.1.0"
