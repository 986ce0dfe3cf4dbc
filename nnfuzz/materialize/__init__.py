"""GraphIR -> framework models (torch module, ONNX file) and the data they run on."""
