"""ONNX reductions and normalisations the core set lacks: ReduceSumSquare, GlobalLpPool, LpNormalization, MeanVarianceNormalization (see spec.py)."""
