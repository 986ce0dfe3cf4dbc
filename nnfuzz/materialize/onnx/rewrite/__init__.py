"""Semantics-preserving rewrites of ONNX models for the metamorphic oracle (registry.py)."""
