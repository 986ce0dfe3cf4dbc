"""What ONNX Runtime is known to refuse, how its errors name the failing op, how a standalone script
runs a model on it, and its tracker's issue template (the bug report form): ``OrtBackend``'s knowledge
(nnfuzz/backends/ort.py), kept apart from the backend so that reading it imports no onnxruntime."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"NOT_IMPLEMENTED : Could not find an implementation for", note="no CPU kernel for this op x dtype"),
    Known(r"NOT_IMPLEMENTED : Failed to find kernel for", note="no CPU kernel for this op at this opset"),
    Known(r"Provider type for \S+ node with name .* is not set", note="no kernel for this op x dtype in "
          "any provider of the session (CUDA, then the CPU fallback): how ORT's memcpy transformer says it "
          "(transformer_memcpy.cc) in an ort-gpu session, where ort-cpu says 'Could not find an implementation'"),
    Known(r"is not a registered function/op", note="ORT does not implement this op (e.g. ai.onnx.preview ones)"),
    Known(r"Dilation not supported for AutoPadType::SAME", note="ORT's Conv refuses auto_pad SAME_* with dilations "
          "(the ONNX spec allows it)"),
    Known(r"data type is not supported with Scatter(ND|Elements) opset \d+ when reduction is",
          note="no CPU kernel for this scatter reduction x dtype (float16 add/mul, ScatterND float16 max/min)"),
    Known(r"element_type \d+ not implemented for ScatterND operator", op="ScatterND",
          note="the CUDA ScatterND kernel does a reduction (add/mul/max/min) for a fixed list of element types "
          "only (float types), though registered for all (ScatterNDImplReduction's type switch, "
          "onnxruntime/core/providers/cuda/tensor/scatter_nd_impl.cu); seen with uint8, int8, int16, int32, int64, double"),
    Known(r"Numpy_type \d+ can't be converted to MLDataType", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot feed or fetch this numpy dtype"),
    Known(r"Unexpected input data type.*tensor\(bfloat16\)", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot feed bfloat16"),
    Known(r"No corresponding Numpy type for Tensor Type\. bfloat16", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot return bfloat16 outputs"),
)

ERROR_OPS = (r"\bNode \([^)]*\) Op \((\w+)\)",)          # ``Node (Mul_3) Op (Mul)``
# a fusion removed the node that gives a value and left a node reading it: kept 0001 (a Softplus), 0019 (a Pad
# folded into a Conv's weight) and the LayerNorm fusion (a Div) all say only this, with the value's name
ERROR_DROPPED = (r"Invalid model\. Node input '([^']+)' is not a graph input, initializer, or output of a previous node",)
ERROR_CHECKS = (r"\[(?P<where>\w+Error|\w+Exception)\]",   # the bracketed error class: ``[ONNXRuntimeError]``
                # an ORT_ENFORCE or ORT_THROW: ``/.../quantize_linear.cc:88 void onnxruntime::PrepareForQDQ(const
                # TensorShape&, ...) quant_block_size == 0 was false.``: the function that checks (with its file),
                # not its argument list, nor the op whose kernel called it: QuantizeLinear and DequantizeLinear fail
                # the same check of one helper (kept 0105 was signed once per op)
                r"(?P<file>/[\w/.+-]+\.(?:cc|cpp|cu|h)):\d+ (?:[^\n(]*? )?(?P<where>[\w:~<>]+)"
                r"\((?:[^()\n]|\([^()\n]*\))*\)(?: const)?(?: \[with [^\]\n]*\])?")

REPRO_ONNX = ("onnxruntime", '''
import onnxruntime as ort
sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
''', '''
feed = {i.name: INPUTS[i.name] for i in sess.get_inputs()}
OUTPUTS = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
''')


def issue(f: dict, script: str) -> str:
    """ONNX Runtime's bug report form: description, reproduction, platform, OS, installation, version,
    API, architecture, execution provider."""
    return f"""### Describe the issue

ONNX Runtime {f['version']} gives {f['what']}

The model has {f['nodes']} node(s) ({f['ops']}), ONNX opset {f['opset']}; it passes the ONNX checker with
full_check. {f['expected']}

### To reproduce

```python
{script}
```

### Urgency

Not urgent: found by a fuzzer (nnfuzz) on a generated model.

### Platform

Linux

### OS Version

{f['os']}

### ONNX Runtime Installation

Released Package

### ONNX Runtime Version or Commit ID

{f['version']} ({f['version_id']})

### ONNX Runtime API

Python

### Architecture

{f['arch']}

### Execution Provider

{'CUDA' if f['backend'].endswith('gpu') else 'Default CPU'}
"""


# ORT's session runs a float16 node that has no float16 kernel in float32 (its InsertCastTransformer
# puts Casts around it) and removes the Casts between two such nodes, so a float16 tensor is rounded only
# where a consumer needs float16: two consumers may read it at two precisions (issue 26 item 7, ort-cpu
# 0015; a Sin whose outputs round to a float16 tie feeds an ArgMax that reads them unrounded).
FLOAT16_IN_FLOAT32 = ("the session computes float16 nodes without a float16 kernel in float32 (InsertCastTransformer) "
                      "and drops the Casts between them, rounding only where a consumer needs float16")
