"""Integer ops with ONNX semantics: bitwise logic and shifts, integer Div, Mod and Pow (see spec.py)."""
