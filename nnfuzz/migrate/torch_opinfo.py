"""Source ``torch-opinfo``: the sample inputs of PyTorch's OpInfo database
(``torch.testing._internal.common_methods_invocations.op_db``, which needs the ``expecttest`` package).

Each sample of each op becomes a one-op module: the sample's tensors (input, args, kwargs, nested in
lists) are the model's inputs, everything else is a constant of the call. Torch eager gives the expected
outputs (run twice: a sample whose two runs differ, a random op, is dropped); torch's TorchScript
exporter (materialize/onnx/export.py, as nnfuzz uses it) writes the model; an op it cannot export is
dropped. The ONNX reference evaluator then runs the exported model: where it disagrees with eager the
exporter, not the compiler, would be tested, so the sample is dropped too."""
from __future__ import annotations

import contextlib
import functools
import itertools
import os
import sys
import warnings
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

from nnfuzz.materialize.values import to_numpy
from nnfuzz.migrate.record import Dropped, MigratedTest, attribute_json, nnfuzz_dtype

DEFAULT_DTYPES = ("float32", "int64", "bool")
UNINITIALIZED = ("empty", "new_empty")   # ops whose values are whatever memory held: nothing to expect


def op_db() -> List:
    """PyTorch's OpInfo entries (importing them needs ``expecttest``: `pip install expecttest`)."""
    try:
        from torch.testing._internal.common_methods_invocations import op_db as db
    except ImportError as e:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"source=torch-opinfo needs PyTorch's OpInfo database, which imports a missing package "
                          f"({e}); install it with `pip install expecttest` (the `migrate` extra: `pip install -e '.[migrate]'`)") from None
    return list(db)


def op_name(info) -> str:
    """The OpInfo's name, with its variant: "nn.functional.conv2d", "max.reduction_no_dim"."""
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def entry_by_name(name: str):
    """The OpInfo entry called ``name`` (op_name), as the migration worker finds it (isolate.py)."""
    return _by_name()[name]


@functools.lru_cache(maxsize=1)
def _by_name() -> dict:
    return {op_name(i): i for i in op_db()}


def entries(ops=None) -> List:
    return [i for i in op_db() if ops is None or op_name(i) in ops or i.name in ops]


def samples(info, dtypes: Sequence[str], max_per_op: int) -> Iterator[Tuple[str, int, object]]:
    """Up to ``max_per_op`` (dtype, k, SampleInput) of ``info``, taking the dtypes it supports on CPU in
    turn; a sample generator that raises yields Dropped("sample-error") in its place."""
    import torch

    supported = info.supported_dtypes("cpu")
    gens = []
    for name in dtypes:
        dt = getattr(torch, name)
        if dt in supported:
            gens.append((name, _safe_samples(info, dt, max_per_op)))
    taken = 0
    for group in itertools.zip_longest(*[g for _, g in gens]):
        for (name, _), item in zip(gens, group):
            if item is None or taken >= max_per_op:
                continue
            taken += 1
            yield (name,) + item


def _safe_samples(info, dtype, limit: int):
    """The op's sample generator, seeded before each sample as OpInfo's own iterator seeds it outside a
    test (the same inputs every run). ``info.sample_inputs`` would also crawl the call stack for a test
    case on every call, which costs more than the migration itself."""
    from torch.testing._internal.common_utils import SEED, set_rng_seed

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            set_rng_seed(SEED)
            gen = iter(info.sample_inputs_func(info, "cpu", dtype, False))
            for k in range(limit):
                set_rng_seed(SEED)
                s = next(gen, None)
                if s is None:
                    return
                yield k, s
    except Exception as e:  # noqa: BLE001 - the library's own sample generator failing: counted, not fatal
        yield -1, Dropped("sample-error", f"{type(e).__name__}: {str(e)[:160]}")


def migrate_sample(info, dtype: str, k: int, sample, opset: int, tolerances, timeout_s: float = 30.0) -> MigratedTest:
    """The sample as a migrated test, or Dropped with the reason."""
    import torch
    from torch.utils._pytree import tree_flatten

    if isinstance(sample, Dropped):
        raise sample
    name = op_name(info)
    if info.name.startswith(UNINITIALIZED):
        raise Dropped("nondeterministic", f"{name} returns uninitialized memory")
    leaves, spec = tree_flatten((sample.input, tuple(sample.args), dict(sample.kwargs)))
    slots = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    odd = [leaves[i] for i in slots if leaves[i].layout != torch.strided or leaves[i].is_complex()]
    if odd:
        raise Dropped("dtype-outside-nnfuzz", f"a {odd[0].layout} {odd[0].dtype} input (dense real tensors only)")
    tensors = [leaves[i].detach().clone().contiguous() for i in slots]
    module = _op_module(info.op, leaves, slots, spec)
    expected = _eager(module, tensors)
    in_names = [f"x{i}" for i in range(len(tensors))]
    out_names = [f"y{i}" for i in range(len(expected))]
    inputs = {n: to_numpy(t) for n, t in zip(in_names, tensors)}
    for n, a in {**inputs, **dict(zip(out_names, expected))}.items():
        nnfuzz_dtype(a, f"tensor {n}")
    model = _export(module, tensors, in_names, out_names, opset, timeout_s)
    graph_in = [i.name for i in model.graph.input]
    inputs = {n: inputs[n] for n in graph_in if n in inputs}
    if len(inputs) != len(graph_in) or len(model.graph.output) != len(expected):
        raise Dropped("export-changed-signature", f"inputs {graph_in}, {len(model.graph.output)} outputs "
                      f"for {len(tensors)} tensors in, {len(expected)} out")
    outputs = {o.name: a for o, a in zip(model.graph.output, expected)}
    _check_export(model, inputs, outputs, tolerances)
    attrs = {f"arg{i}": attribute_json(a) for i, a in enumerate(sample.args) if not isinstance(a, torch.Tensor)}
    attrs.update({key: attribute_json(v) for key, v in sample.kwargs.items() if not isinstance(v, torch.Tensor)})
    if not isinstance(sample.input, torch.Tensor):
        attrs["input"] = attribute_json(sample.input)
    return MigratedTest("torch-opinfo", f"{name}[{dtype}]#{k}", name, attrs, model.SerializeToString(), inputs,
                        outputs, opset, nodes=len(model.graph.node),
                        library={"name": "torch", "version": str(torch.__version__)})


def _op_module(fn, leaves, slots, spec):
    """A module whose forward calls ``fn`` as the sample does, its tensors (at ``slots`` of the sample's
    flattened leaves) taken from the module's inputs."""
    import torch
    from torch.utils._pytree import tree_unflatten

    class OpModule(torch.nn.Module):
        def forward(self, *tensors):
            vals = list(leaves)
            for i, t in zip(slots, tensors):
                vals[i] = t
            x, args, kwargs = tree_unflatten(vals, spec)
            return fn(x, *args, **kwargs)

    return OpModule().eval()


def _eager(module, tensors) -> List[np.ndarray]:
    """The outputs of two eager runs on copies of the inputs, the RNG seeded differently for each; Dropped
    if it raises, returns something other than tensors, or the two runs differ (a random op)."""
    import torch
    from torch.utils._pytree import tree_flatten

    runs = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = module(*[t.clone() for t in tensors])
        except Exception as e:  # noqa: BLE001 - the library refusing its own sample makes it invalid: counted
            raise Dropped("eager-error", f"{type(e).__name__}: {str(e)[:160]}") from None
        leaves, _ = tree_flatten(out)
        if not leaves or not all(isinstance(v, torch.Tensor) for v in leaves):
            raise Dropped("non-tensor-output", f"returns {type(out).__name__}")
        if any(v.is_complex() or v.is_sparse or v.layout != torch.strided for v in leaves):
            raise Dropped("dtype-outside-nnfuzz", "a complex or sparse output")
        runs.append([to_numpy(v.detach().contiguous()).copy() for v in leaves])
    if any(not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") for a, b in zip(*runs)):
        raise Dropped("nondeterministic", "two eager runs differ")
    return runs[0]


def _export(module, tensors, in_names, out_names, opset: int, timeout_s: float):
    import onnx

    from nnfuzz.errors import ExportError
    from nnfuzz.materialize.onnx.export import export_onnx

    try:
        with _native_output_quiet():
            model = export_onnx(module, tensors, in_names, out_names, opset=opset, timeout_s=timeout_s)
    except ExportError as e:
        raise Dropped("export-failed", str(e).splitlines()[0][:200]) from None
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise Dropped("checker-rejects", str(e).splitlines()[0][:200]) from None
    return model


@contextlib.contextmanager
def _native_output_quiet():
    """The exporter's C++ side prints the TorchScript graph of every op it refuses (to file descriptor 1);
    the refusal itself comes back as the ExportError counted as "export-failed"."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        with open(os.devnull, "w") as null:
            for fd in saved:
                os.dup2(null.fileno(), fd)
            yield
    finally:
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)


def _check_export(model, inputs, outputs, tolerances) -> Optional[str]:
    """Dropped("export-disagrees") when the ONNX reference evaluator runs the exported model and does not
    reproduce eager's outputs; an evaluator that cannot run it leaves the sample in (it checks nothing)."""
    from nnfuzz.migrate.onnx_node import disagreement, evaluate

    try:
        got = evaluate(model, inputs)
    except Exception:  # noqa: BLE001 - the evaluator lacking an op says nothing about the export
        return None
    problem = disagreement(outputs, dict(zip(outputs, got)), tolerances)
    if problem:
        raise Dropped("export-disagrees", problem)
    return None
