"""Every tensor a torch lowering makes lives on its input's device.

inductor-gpu runs the graph on CUDA inputs; a lowering that made a constant on the CPU (Gather's
indices, BatchNorm's running statistics) was a device mismatch there, saved as the crash "RuntimeError
when making fake tensor call" (32 of 186 bug folders of two inductor-gpu campaigns on an H100). Without a
GPU the graph runs here on the "meta" device while a torch function mode records the device of every
tensor made: none may be a CPU tensor of rank > 0 (0-d CPU tensors are scalars, allowed beside CUDA ones).
"""
import pytest
from single_op import safe_model

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402

from nnfuzz.materialize.torch.module import GraphModule  # noqa: E402
from nnfuzz.materialize.values import to_torch  # noqa: E402


class _Devices(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.cpu = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor) and t.device.type == "cpu" and t.dim() > 0:
                self.cpu.append(getattr(func, "__name__", str(func)))
        return out


@pytest.mark.parametrize("op", ["Gather", "BatchNorm", "GatherElements", "ScatterElements", "ResizeLinearOnnx"])
def test_lowering_constants_follow_the_input_device(op):
    model = safe_model(0, [op], ("float32",), 2, max_elems=256, export=False)
    assert op in {i.op.name for i in model.gir.insts}
    module = GraphModule(model.gir, model.weights).eval().to("meta")
    xs = [to_torch(model.oracle.input[i], model.gir.vars[i].dtype).to("meta") for i in model.gir.inputs]
    seen = _Devices()
    with torch.no_grad(), seen:
        try:
            module(*xs)
        except RuntimeError as e:  # eager torch refuses some mixes itself (batch_norm)
            assert not seen.cpu, (seen.cpu, e)
            raise
    assert seen.cpu == [], f"{op}'s lowering made CPU tensors beside meta inputs: {seen.cpu}"
