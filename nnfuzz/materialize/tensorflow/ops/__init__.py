"""TensorFlow lowerings of nnfuzz's own operators, one module per abstract family."""
import importlib

for _family in ("binary", "combine", "conv", "elementwise", "layout", "linear", "norm", "pad", "pool",
                "reduce", "resize", "select", "tfonly"):
    try:
        importlib.import_module(f"nnfuzz.materialize.tensorflow.ops.{_family}")
    except ModuleNotFoundError as _e:  # a family not written yet
        if _e.name != f"nnfuzz.materialize.tensorflow.ops.{_family}":
            raise

