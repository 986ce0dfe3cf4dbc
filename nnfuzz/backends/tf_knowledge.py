"""What TensorFlow, XLA and TFLite are known to refuse, and TensorFlow's issue template (its bug form):
the knowledge of the TF backends (nnfuzz/backends/tf.py, tflite.py), kept apart so that reading it
imports no TensorFlow. Their standalone scripts are triage/script_tf.py's."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r"Could not find device for node|No registered '\w+' OpKernel|"
          r"Value for attr '\w+' of \w+ is not in the list of allowed values|"
          r"No OpKernel was registered to support Op", note="TF has no kernel for this op x dtype"),
)

KNOWN_TFLITE = (
    Known(r"op is neither a custom op nor a flex op|failed to legalize operation|"
          r"Some ops are not supported by the native TFLite runtime",
          note="the TFLite converter has no builtin op for this op x dtype (flex ops are not used)"),
)


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
