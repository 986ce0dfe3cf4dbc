"""Reproducer for inductor-cpu 2.13.0+cpu (bugs/kept/0086, written by hand: nnfuzz's script exports the
model with a torch.export Dim per symbol, which this model's broadcast specializes).

torch.compile(dynamic=True) of `x + y + torch.zeros(3)` with x's dim 1 marked unbacked (x and y both
[10, 3]) fails at the first call: inductor's generated `call` asserts `u0 == s94`, a runtime assert of the
unbacked size against y's size symbol, which the broadcast with the constant specialized to 3 and which the
code never defines: "NameError: name 's94' is not defined". The model nnfuzz found (a Min whose input has
unbacked dims, beside an inference BatchNorm of another input, whose running statistics are linspace
constants of its channel count) replays with `nnfuzz repro bugs/kept/0086`.
Exit code 1: the bug shows; 0: not reproduced.
"""
import torch


def short(x, y):
    return x + y + torch.zeros(3)


def attempt(fn, shapes, unbacked, dynamic=True, dtype=torch.float32):
    torch._dynamo.reset()
    args = [torch.randn(s, dtype=dtype) for s in shapes]  # fresh tensors: a mark stays on its tensor
    for k, axis in unbacked:
        torch._dynamo.decorators.mark_unbacked(args[k], axis)
    try:
        torch.compile(fn, backend="inductor", fullgraph=True, dynamic=dynamic)(*args)
        return "runs"
    except Exception as e:  # the fault: a NameError out of the generated code
        return f"{type(e).__name__}: {e}".splitlines()[0][:160]


with torch.no_grad():
    results = {
        "short form, x dim 1 unbacked": attempt(short, [(10, 3), (10, 3)], [(0, 1)]),
        # what works instead
        "short form, dynamic=False (y static)": attempt(short, [(10, 3), (10, 3)], [(0, 1)], dynamic=False),
        "short form, nothing unbacked": attempt(short, [(10, 3), (10, 3)], []),
    }
for what, got in results.items():
    print(f"{what}: {got}")
if any(r.startswith("NameError") for r in results.values()):
    print("reproduced: the generated code names a size symbol it never defines")
    raise SystemExit(1)
print("not reproduced")
