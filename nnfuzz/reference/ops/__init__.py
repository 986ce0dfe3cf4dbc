"""The numpy evals of the built-in operators, one module per family (as in nnfuzz/abstract/ops/)."""
import importlib

FAMILIES = ("elementwise", "binary", "reduce", "layout", "combine", "select", "pad", "pool", "conv", "linear",
            "norm", "resize", "tfonly")

for _name in FAMILIES:
    try:
        importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as e:  # a family not written yet: its ops have no eval (tests say which)
        if e.name != f"{__name__}.{_name}":
            raise
