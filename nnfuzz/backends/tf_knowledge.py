"""What TensorFlow, XLA and TFLite are known to refuse, how a standalone script runs a SavedModel on each
(triage/script_tf.py writes the rest), and TensorFlow's issue template (its bug form): the knowledge of
the TF backends (nnfuzz/backends/tf.py, tflite.py), kept apart so that reading it imports no TensorFlow."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"Could not find device for node|No registered '\w+' OpKernel|"
          r"Value for attr '\w+' of \w+ is not in the list of allowed values|"
          r"No OpKernel was registered to support Op", note="TF has no kernel for this op x dtype"),
    # oracle=grad: TF registers no gradient function for some ops (TruncateMod: tf.truncatemod, nnfuzz's
    # Fmod), where torch has one; TF says so, and the gradient test cannot run there
    Known(r"gradient registry has no entry for: \w+", note="TF defines no gradient for this op"),
    # a dilated transposed convolution (nnfuzz's ConvTranspose; also the gradient of a dilated Conv): TF's CPU
    # kernel says it has none
    Known(r"Current CPU implementations do not yet support dilation rates larger than 1",
          note="TF's CPU Conv2DBackpropInput takes no dilation"),
)

# XLA's flag xla_allow_excess_precision (on by default): a float16/bfloat16 value inside a fused computation may
# stay in float32, unrounded (an xla-cpu campaign: MeanVarianceNormalization in bfloat16, then a Cast to float32,
# gave the float32 value, 1 bfloat16 ulp from the rounded one the graph asks for)
XLA_EXCESS_PRECISION = ("XLA keeps float16 and bfloat16 values inside its fused computations in float32 and may skip "
                        "rounding them between ops (xla_allow_excess_precision, on by default)")

KNOWN_TFLITE = (
    Known(r"op is neither a custom op nor a flex op|failed to legalize operation|"
          r"Some ops are not supported by the native TFLite runtime",
          note="the TFLite converter has no builtin op for this op x dtype (flex ops are not used)"),
    # backend.options.quantize=int8 (docs/quantization.md): the converter wrote an int8 version of a kernel the
    # runtime lacks (REVERSE_SEQUENCE), and LiteRT says so when it prepares the model
    Known(r"Type '\w+' is not supported by \w+", note="LiteRT has no kernel for this op x dtype"),
    # quantize=int8: a divisor that quantizes to its zero point (a small value on a wide calibrated range): the
    # integer model divides by zero, and the int8 DIV kernel refuses to (undefined in the integer model)
    Known(r"div\.cc:\d+ data\[i\] != zero_point", note="the int8 DIV kernel refuses a divisor that quantizes to zero"),
)


# The scripts' runs of the SavedModel in ``model_dir``: its signature names the outputs output_0,
# output_1, ... in the order of OUTPUT_NAMES.
REPRO_TF = ("tensorflow", '''
fn = tf.saved_model.load(model_dir).signatures["serving_default"]
out = fn(**{k: tf.constant(v) for k, v in INPUTS.items()})
OUTPUTS = {name: out[f"output_{k}"].numpy() for k, name in enumerate(OUTPUT_NAMES)}
''')
REPRO_XLA = ("tensorflow", '''
fn = tf.saved_model.load(model_dir).signatures["serving_default"]
xla = tf.function(lambda **feed: fn(**feed), jit_compile=True)
out = xla(**{k: tf.constant(v) for k, v in INPUTS.items()})
OUTPUTS = {name: out[f"output_{k}"].numpy() for k, name in enumerate(OUTPUT_NAMES)}
''')
# backend.options.quantize=int8 (backends/tflite_int8.py): the full-integer conversion calibrated on INPUTS, int8
# inputs quantized as TFLite's QUANTIZE does, the int8 outputs compared in output steps (EXPECTED: the numpy
# reference quantized as the model is; ATOL 1: the allowed step)
REPRO_TFLITE_INT8 = ("tensorflow, ai-edge-litert", '''
try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # older TF: the interpreter bundled with it
    Interpreter = tf.lite.Interpreter
converter = tf.lite.TFLiteConverter.from_saved_model(model_dir)
converter.optimizations = [tf.lite.Optimize.DEFAULT]
converter.representative_dataset = lambda: iter([dict(INPUTS)])
converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
converter.inference_input_type = converter.inference_output_type = tf.int8
runner = Interpreter(model_content=converter.convert(), num_threads=1).get_signature_runner()
details = runner.get_input_details()


def quantize(x, scale, zero_point):  # TFLite's QUANTIZE: round half away from zero, saturate
    v = np.asarray(x, np.float64) / scale
    return np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + zero_point, -128, 127).astype(np.int8)


out = runner(**{k: quantize(v, *details[k]["quantization"]) for k, v in INPUTS.items()})
OUTPUTS = {name: np.asarray(out[f"output_{k}"], np.float64) for k, name in enumerate(OUTPUT_NAMES)}
EXPECTED = {k: np.asarray(v, np.float64) for k, v in EXPECTED.items()}  # in output steps, within ATOL = 1
''')
REPRO_TFLITE = ("tensorflow, ai-edge-litert", '''
try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # older TF: the interpreter bundled with it
    Interpreter = tf.lite.Interpreter
converter = tf.lite.TFLiteConverter.from_saved_model(model_dir)
converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
runner = Interpreter(model_content=converter.convert(), num_threads=1).get_signature_runner()
out = runner(**INPUTS)
OUTPUTS = {name: np.asarray(out[f"output_{k}"]) for k, name in enumerate(OUTPUT_NAMES)}
''')

def issue(f: dict, script: str, part: str) -> str:
    """TensorFlow's bug form (issue type, nightly, source, version, OS, Python, current behaviour,
    standalone code, log) for a bug in ``part``: the system in words ("TF eager", "XLA (...)")."""
    return f"""### Issue type

Bug

### Have you reproduced the bug with TensorFlow Nightly?

No

### Source

binary

### TensorFlow version

{f['version']} ({f['version_id']})

### Custom code

Yes

### OS platform and distribution

{f['os']}

### Mobile device

_No response_

### Python version

{f['python']}

### Bazel version

_No response_

### GCC/compiler version

_No response_

### CUDA/cuDNN version

_No response_

### GPU model and memory

{'_No response_' if not f['backend'].endswith('gpu') else 'see the log'}

### Current behavior?

{part} gives {f['what']}

The model has {f['nodes']} op(s) ({f['ops']}), built with TF ops from this graph (the script carries
it as a SavedModel):

```
{f['graph']}
```

{f['expected']}

### Standalone code to reproduce the issue

```python
{script}
```

### Relevant log output

```
{f['log']}
```
"""
