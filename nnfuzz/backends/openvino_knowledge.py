"""What OpenVINO is known to refuse, how its errors name the failing op and the innermost check, how a
standalone script runs a model on it, and its tracker's issue template: ``OpenVinoBackend``'s knowledge
(nnfuzz/backends/openvino.py), kept apart so that reading it imports no OpenVINO."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"No conversion rule found for operations", note="OpenVINO's ONNX frontend lacks the op"),
    Known(r"Unsupported input type [a-z]+\d*", note="OpenVINO's ONNX frontend does not take this dtype "
          "for the op"),
    Known(r"this type of coordinate transformation mode is not supported|Unsupported padding mode",
          note="OpenVINO's ONNX frontend lacks a newer attribute value: Resize-18's half_pixel_symmetric, Pad-19's wrap"),
    Known(r"openvino-cpu does not compute in float64", dtype="float64",
          note="the CPU plugin has no float64 kernels (it computes float64 in float32)"),
    Known(r"Doesn't support dynamic (?:shapes for|weights shape)|doesn't support \w+ operation with dynamic rank"
          r"|(?:First|Channel) dimension of input data must be static"
          r"|Unsupported operation of type: GroupNormalization",
          note="a dynamic model (docs/dynamic-shapes.md): the CPU plugin refuses a symbolic dim for this op in its "
          "own words (ConvTranspose's weights and output_shape, Conv's weights, Squeeze of a dynamic rank, "
          "GlobalLpPool's N and C, GroupNormalization, which the CPU plugin has no dynamic kernel for)"),
    Known(r"cannot be divided by block_size|must be divisible by the block size"
          r"|DequantizeLinear cannot operate with dynamic shapes of input X",
          note="blocked quantization (opset 21 block_size): OpenVINO's ONNX frontend takes only blocks that divide "
          "the axis, and a DequantizeLinear input whose shape it knows when converting (not a QLinearMatMul's "
          "output); the spec allows a shorter last block"),
)

# the op: its unconverted-ops log, a core node being validated, an ONNX frontend node
ERROR_OPS = (r"(?m)^-- (\w+)-\d+ with a message:",
             r"(?m)While validating node '(?:opset\d+|\w+)::(\w+) ",
             r"(?m)While validating ONNX node '<Node\((\w+)\)")
# the ONNX node the frontend was converting: ``While validating ONNX node '<Node(Pad): Pad_9>'``
ERROR_NODES = (r"While validating ONNX node '<Node\(\w+\): ([^'>\s]+)>'",)
# ``Check 'cond' failed at file:line:``, ``Exception from file:line:``
ERROR_CHECKS = (r"Check '(?P<where>.*?)' failed at (?P<file>[\w./-]+?):\d+:",
                r"Exception from (?P<file>[\w./-]+?):\d+:")
ERROR_NOISE = (r"While validating (?:ONNX )?node .*", r"Summary:.*", r"-- Conversion is failed for.*",
               r"FrontEnd API failed with .*", r"Model wasn't fully converted.*")
# the unconverted-ops log lists each failed op's message under its heading, then a summary
ERROR_BLOCKS = (ERROR_OPS[0], r"(?m)^Summary:")

REPRO_ONNX = ("openvino", '''
import openvino as ov
core = ov.Core()
# as nnfuzz ran it: float32 inference precision (left alone, the CPU plugin may compute in bfloat16)
compiled = core.compile_model(core.read_model(model=MODEL), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
''', '''
result = compiled({k: v for k, v in INPUTS.items() if any(k in p.get_names() for p in compiled.inputs)})
OUTPUTS = {name: result[compiled.output(name)] for name in [o.name for o in onnx.load_model_from_string(MODEL).graph.output]}
# a bfloat16 output comes back as its raw bits in a float16 array: read them as bfloat16
OUTPUTS = {k: v.view(np.uint16).view(ml_dtypes.bfloat16) if compiled.output(k).get_element_type() == ov.Type.bf16 else v
           for k, v in OUTPUTS.items()}
''')


def issue(f: dict, script: str) -> str:
    """OpenVINO's: version, OS, device, framework, model, description, step-by-step reproduction, log
    output."""
    return f"""### OpenVINO Version

{f['version']} ({f['version_id']})

### Operating System

{f['os']}

### Device used for inference

CPU

### Framework

ONNX

### Model used

A generated {f['nodes']}-node ONNX model ({f['ops']}), opset {f['opset']}, built in the script below.

### Issue description

OpenVINO gives {f['what']}

{f['expected']}

### Step-by-step reproduction

```python
{script}
```

### Relevant log output

```
{f['log']}
```

### Issue submission checklist

- [x] I'm reporting an issue. It's not a question.
- [x] I checked the problem with the documentation, FAQ, open issues, Stack Overflow, etc., and have not found a solution.
- [x] There is reproducer code and related data files such as images, videos, models, etc.
"""
