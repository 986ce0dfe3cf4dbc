"""PyTorch materialization: lowerings registry and GraphIR -> torch.nn.Module."""
