"""GraphIR -> TVM Relax module directly (no ONNX importer): the ``relax`` model format of tvm-cpu/tvm-gpu."""
