"""What TVM (Relax) is known to refuse, how its errors name the failing op and the innermost check, how
a standalone script runs an ONNX model on it, and its tracker's issue template: the knowledge of the tvm
backends (nnfuzz/backends/tvm.py), kept apart so that reading it imports no TVM."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"operators are not supported for frontend ONNX", note="Relax ONNX frontend lacks the op"),
    Known(r"only applies to float", note="Relax power/float-only intrinsics on integer inputs"),
    Known(r"Unsupported (data|element) ?type|unsupported dtype|Cannot convert .*bfloat16",
          note="dtype not supported by the frontend or codegen"),
    Known(r"Data type \S+ not supported for \w+ op", note="dtype not supported by a Relax op"),
    Known(r"(group_norm|layer_norm|instance_norm): only support float32 and float16", dtype="float64",
          note="Relax's nn.group_norm / layer_norm / instance_norm legalize float32 and float16 only"),
    Known(r"Unsupported input dtype: \w+", op="TopK",
          note="TVM's contrib sort/topk runtime kernel lacks the dtype (int16)"),
    Known(r"TopK k must be a constant|TopK sorted must be 1 for Relax frontend|"
          r"GroupNormalization currently only supports stash_type=1|for size is currently unsupported|"
          r"Dynamic Split not yet supported|Only constant axes currently supported|"
          r"Slice with dynamic parameters does not support ShapeExpr input|Unsupported coordinate_transformation_mode",
          note="the Relax ONNX frontend refuses, in its own words, an attribute or input form it does not "
          "implement: TopK with a computed k or sorted=0, GroupNormalization with float64 statistics, Resize "
          "with computed sizes or an opset-19 coordinate mode (half_pixel_symmetric), Split with computed "
          "split sizes, a reduction with computed axes, Slice of a shape with computed bounds"),
    Known(r"Unsupported output datatype attribute for operation|zero_point param datatype should be one of"
          r"|blocked quantization is not supported yet",
          note="the Relax ONNX frontend's QuantizeLinear/DequantizeLinear take int8, uint8, int16 and uint16 "
          "only (not int4, uint4 or a float8 zero point) and no block_size (docs/quantization.md)"),
    # a dim may be an expression with spaces (a Slice's length of s0); but TVM's length of a whole-axis Slice,
    # min(INT64_MAX, s0), is s0 for every int64 s0, and its refusal to broadcast that against s0 is TVM's fault
    # (a tvm-cpu soak: Min(x, Flip(x)) does not compile), not this limitation
    Known(r"Cannot broadcast symbolic dimensions? (?!.*\(9223372036854775807\), s\d+\))"
          r".+? (?:and .+? - both are symbolic but structurally different|with non-1 constant)",
          note="a dynamic model (docs/dynamic-shapes.md): the Relax ONNX frontend broadcasts a dim_param dim only "
          "with a dim of the same name or 1; ONNX lets it meet another name or a constant (equal at run time)"),
    Known(r"Squeeze axis \d+ has a symbolic extent that cannot be proven to be 1",
          note="a dynamic model: the Relax ONNX frontend squeezes only an axis it knows to be 1 when it imports; "
          "ONNX lets a dim computed from a dim_param be 1 at run time (a MaxPool's output width, a tvm-cpu soak)"),
)

ERROR_OPS = (r"Error converting operator (\w+)",                         # its ONNX frontend
             r"operators are not supported for frontend ONNX: (\w+)",
             # LegalizeOps: the TOPI function that the failing Relax op legalizes to (Python frames of the
             # traceback), e.g. "sign" for R.sign and "negative" for the R.negative of the frontend's Shrink,
             # whose one check "cannot make uint from negative value" is otherwise the same
             r"relax/transform/legalize_ops/\w+\.py\", line \d+, in [\s\S]*?"
             r"tvm/topi/(?:\w+/)*\w+\.py\", line \d+, in (\w+)",
             # a Relax op's type inference, in a pass after import ("Concat expects all input tensors to have
             # the same dtype": a BatchNormalization's float32 for its bfloat16, tvm-cpu campaign 27's 0022)
             r"^\w*Error: ([A-Z]\w+) expects ")
# a Relax-native model's function called with a value of another type than its parameter's (a value the
# graph names: ``param=v2``), checked by the VM at run time
ERROR_NODES = (r"ErrorContext\(fn=\w+, loc=param\[\d+\], param=(\w+),",)
ERROR_CHECKS = (r"Check failed: (?P<where>.*?)(?: is false)?:(?=\s)",   # ``Check failed: (cond) is false:``
                # CUDA code TVM generated that NVRTC refuses: the compiler's first error, not the wrapper's
                # "NVRTC compilation failed:" (an H100 tvm-gpu campaign: float16 Round as CUDA's undefined
                # hnearbyint)
                r"NVRTC compilation failed:\n(?:.*\n)*?\S+\(\d+\): (?P<where>error): ")


def repro_onnx(device: str):
    """The script's run of MODEL on ``device`` ("cpu": llvm, "gpu": cuda)."""
    needs, compile_, run = ("apache-tvm (0.27, Relax)", '''
import tvm
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
model = onnx.load_model_from_string(MODEL)
dev = {device}
ex = tvm.compile(from_onnx(model, keep_params_in_input=False), target={target!r})
vm = relax.VirtualMachine(ex, dev)
''', '''
out = vm["main"](*[tvm.runtime.tensor(INPUTS[i.name], dev) for i in model.graph.input])
out = [out] if isinstance(out, tvm.runtime.Tensor) else list(out)
OUTPUTS = {o.name: t.numpy() for o, t in zip(model.graph.output, out)}
''')
    compile_ = compile_.replace("{device}", "tvm.cuda()" if device == "gpu" else "tvm.cpu()")
    return needs, compile_.replace("{target!r}", repr("cuda" if device == "gpu" else "llvm")), run


def issue(f: dict, script: str) -> str:
    """TVM's: a "[Bug]" title, expected and actual behaviour, environment, steps to reproduce, triage
    labels."""
    op = f" in {f['op']}" if f["op"] else ""
    return f"""# [Bug] [Relax][Frontend][ONNX] {f['what'].split(':')[0]}{op}

### Expected behavior

{f['expected']}

### Actual behavior

{f['what']}

```
{f['log']}
```

### Environment

TVM {f['version']} ({f['version_id']}), Python {f['python']}, {f['os']}, target {'cuda' if f['backend'].endswith('gpu') else 'llvm'}.

### Steps to reproduce

The model has {f['nodes']} node(s) ({f['ops']}), ONNX opset {f['opset']}:

```python
{script}
```

### Triage

* needs-triage
* frontend:onnx
"""
