"""What torch.compile (inductor) is known to refuse, and PyTorch's issue template: the knowledge of the
inductor backends (nnfuzz/backends/inductor.py). Their standalone scripts are triage/script_torch.py's."""
from __future__ import annotations

from nnfuzz.backends.known import Known

KNOWN = (
    Known(r'"\w+_cuda" not implemented for \'\w+\'',
          note="torch has no CUDA kernel for this op x dtype (AT_DISPATCH's words): integer addmm/baddbmm "
          "(cuBLAS has no integer GEMM), a torch limitation inductor falls back to"),
    Known(r"GuardOnDataDependentSymNode|Could not (extract specialized integer from|guard on) data-dependent expression",
          note="a dynamic model (docs/dynamic-shapes.md) whose sizes are unbacked (mark_unbacked): a lowering or "
          "decomposition that needs a size concretely is refused, in torch's words, as torch documents for "
          "unbacked symbols; backend.options.dynamic=backed compiles such models"),
    Known(r"RuntimeError: (?:Eq|Ne|Le|Lt|Ge|Gt)\(.*\bu\d+\b",
          note="a dynamic model whose sizes are unbacked: torch decided a size relation it could not prove (a "
          "broadcast of a size computed from an unbacked one, e.g. a Slice's length, taken as equal to it) and "
          "checks it at run time, as torch documents for unbacked symbols; the check fails at a shape where "
          "the relation is false (inductor-cpu campaign 27: Eq(((Max(0, -Min(3, u0) + Min(7, u0)) + 88)//89), "
          "u0)); backend.options.dynamic=backed compiles such models"),
)

# A kernel that fails to compile in inductor's compile workers reaches the campaign as "SubprocException: An
# exception occurred in a subprocess:" whatever went wrong (H100 campaign: Triton's "atomic_add does not
# support uint8" came signed only so): the subprocess's own first exception is the message
ERROR_CHECKS = (r"An exception occurred in a subprocess:\n(?:.*\n)*?(?P<where>[A-Za-z_][\w.]*(?:Error|Exception)): ",)


def issue(f: dict, script: str) -> str:
    """PyTorch's: describe the bug with the code inline, error logs, versions."""
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
