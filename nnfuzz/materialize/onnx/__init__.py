"""torch.nn.Module -> ONNX model, and the checks every exported model must pass."""
