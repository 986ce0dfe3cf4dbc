"""``nnfuzz repro BUG --report``: report.md in the issue template of the system's own tracker, with the
standalone script (triage/script.py) inline.

Templates: ONNX Runtime's bug report form (description, reproduction, platform, OS, installation,
version, API, architecture, execution provider), TVM's ("[Bug]" title, expected and actual behaviour,
environment, steps to reproduce, triage labels), OpenVINO's (version, OS, device, framework, model,
description, step-by-step reproduction, log output), TensorFlow's bug form for tf-cpu, xla-cpu and
tflite-cpu (issue type, nightly, source, version, OS, Python, current behaviour, standalone code, log), and
PyTorch's for inductor (describe the bug with the code inline, error logs, versions).
"""
from __future__ import annotations

import platform
from typing import Callable, Dict

import onnx

from nnfuzz.errors import ConfigError
from nnfuzz.triage.bugstore import read_err_log
from nnfuzz.triage.rootcause import root_cause


def _facts(bug, backend: str) -> dict:
    m = bug.meta
    err = read_err_log(bug.path)
    op, inner = root_cause(str(m.summary), err)
    what = (f"an inconsistency: {m.summary}" if m.symptom == "inconsistency" else
            f"a {m.symptom} at {m.stage}: {inner or m.summary}")
    nodes = [n.op_type for n in onnx.load_model_from_string(bug.model_bytes).graph.node if n.op_type != "Constant"] \
        if bug.format == "onnx" else list(m.ops or [])
    ops = ", ".join(dict.fromkeys(nodes)) or "?"
    return {
        "backend": backend, "version": m.version, "version_id": m.version_id, "op": op or _first_divergent(m),
        "what": what, "ops": ops, "nodes": len(nodes), "opset": m.opset, "os": platform.platform(),
        "arch": platform.machine(), "python": platform.python_version(), "summary": str(m.summary),
        "expected": _expected(m, backend, bug.format), "graph": _graph_text(bug), "log": err.split("Traceback (most recent call last)")[0].strip()[:3000]
        or str(m.summary),
    }


def _graph_text(bug) -> str:
    """The model as nnfuzz's GraphIR, printed (what a GraphIR bug's script carries as a SavedModel)."""
    if bug.gir_text is None:
        return ""
    from nnfuzz.gir import GraphIR

    return GraphIR.loads(bug.gir_text).pretty()


def _first_divergent(m) -> str:
    node = m.first_divergent_node or {}
    return str(node.get("op", "")).split("(")[0]


def _expected(m, backend: str, fmt: str) -> str:
    from nnfuzz.backends.registry import backend_class

    if fmt != "onnx":  # a TF / torch model built from the GraphIR: compared with its framework's eager run
        ref = {"tf-cpu": "TF eager, op by op"}.get(backend_class(backend).reference, "torch eager")
        return (f"The outputs match the reference ({ref}) within the tolerances in the script."
                if m.symptom == "inconsistency" else "The model, which runs in eager mode, compiles and runs.")
    if m.symptom == "inconsistency":
        return "The outputs match the reference (torch eager, which the ONNX reference evaluator agrees with) " \
               "within the tolerances in the script."
    return "The valid model (it passes `onnx.checker.check_model(full_check=True)`) compiles and runs."


def _ort(f: dict, script: str) -> str:
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


def _tvm(f: dict, script: str) -> str:
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


def _openvino(f: dict, script: str) -> str:
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


_TF_PART = {"tf": "TF eager", "xla": "XLA (tf.function(jit_compile=True))",
            "tflite": "the TFLite converter / LiteRT interpreter"}


def _tensorflow(f: dict, script: str) -> str:
    from nnfuzz.backends.registry import backend_class

    part = _TF_PART[backend_class(f["backend"]).engine]
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


def _pytorch(f: dict, script: str) -> str:
    device = "CUDA" if f["backend"].endswith("gpu") else "CPU"
    return f"""# torch.compile (inductor, {device}) gives {f['what'].split(':')[0]}{' in ' + f['op'] if f['op'] else ''}

### 🐛 Describe the bug

`torch.compile(backend="inductor", fullgraph=True)` gives {f['what']}

The model has {f['nodes']} op(s) ({f['ops']}); nnfuzz's graph of it:

```
{f['graph']}
```

{f['expected']} The script below loads the model as a `torch.export` program (its ATen graph is printed
in it) and compiles it the same way:

```python
{script}
```

Error logs:

```
{f['log']}
```

### Versions

PyTorch {f['version']} ({f['version_id']}), Python {f['python']}, {f['os']}, {f['arch']}, {device}.

cc: oncall: pt2, module: inductor
"""


TEMPLATES: Dict[str, Callable[[dict, str], str]] = {"ort": _ort, "tvm": _tvm, "openvino": _openvino,
                                                   "tf": _tensorflow, "xla": _tensorflow, "tflite": _tensorflow,
                                                   "inductor": _pytorch}


def write_report(bug, backend: str, script: str) -> str:
    from nnfuzz.backends.registry import backend_class

    engine = backend_class(backend).engine
    if engine not in TEMPLATES:
        raise ConfigError(f"--report has templates for the engines {sorted(TEMPLATES)}; got backend={backend!r}")
    return TEMPLATES[engine](_facts(bug, backend), script.strip())
