"""Validity is 100%: generated graphs build, run in torch eager, export, pass the checker, and run on ORT,
by both ONNX paths (written directly at drawn opsets and spellings; torch's exporter at opset 17).

ORT runs each model with its graph optimizations off: validity is the model's, and ORT's optimizer is a
system under test (its LayerNormFusion once broke a valid bfloat16 model here; campaigns find such bugs).
ORT lacking a kernel for an op x dtype is UNSUPPORTED: counted and listed, not a failure. Values come from
the value search, as in campaigns: a model whose values it cannot bring into every op's domain (an integer
Mod by zero, say) has no defined reference and is not run, as campaigns do not run it either.
"""
import collections

import pytest

from nnfuzz.backends.known import classify
from nnfuzz.generate import GenPolicy
from nnfuzz.generate.opset import select_ops, usable_with
from nnfuzz.generate.symbolic import GraphGenerator
from nnfuzz.materialize.model import build_model
from nnfuzz.materialize.onnx.spec import ExportSpec
from nnfuzz.materialize.search import SearchConfig

ort = pytest.importorskip("onnxruntime")
ort.set_default_logger_severity(3)

N_GRAPHS = 200


def _missing_kernel(msg: str) -> bool:
    """ORT's own 'unsupported' (no kernel) or a limit of its Python API (bfloat16 I/O), as recorded in
    the known-limitations table the campaign uses."""
    return classify("ort", msg) is not None


@pytest.mark.parametrize("spec", [ExportSpec(opset=None), ExportSpec(via="torch", opset=17)], ids=["direct", "torch"])
def test_200_graphs_of_10_nodes_are_all_valid(spec):
    policy = GenPolicy(max_nodes=10)
    ops = select_ops(policy, usable=usable_with({"torch"}, spec.via))
    opsets = collections.Counter()
    undefined = 0
    unsupported = collections.Counter()
    ran = 0
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    for seed in range(N_GRAPHS):
        gir = GraphGenerator(GenPolicy(max_nodes=10, seed=seed), ops).generate()
        assert gir.n_nodes >= 8, f"seed {seed}: only {gir.n_nodes} nodes"
        # torch eager (checked per op), ONNX, full checker, strict shape inference
        model = build_model(gir, seed, export=spec.for_model(seed), search=SearchConfig())
        opsets[model.export.opset] += 1
        if model.oracle.output is None:
            undefined += 1
            continue
        try:
            sess = ort.InferenceSession(model.onnx.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception as e:
            assert _missing_kernel(str(e)), f"seed {seed}: ORT rejected a valid model: {e}\n{gir.pretty()}"
            unsupported[str(e).split(" node ")[0][-60:]] += 1
            continue
        try:
            outs = sess.run(list(gir.outputs), model.oracle.input)
        except Exception as e:
            assert _missing_kernel(str(e)), f"seed {seed}: ORT failed on a valid model: {e}\n{gir.pretty()}"
            unsupported[str(e)[:60]] += 1
            continue
        for name, got in zip(gir.outputs, outs):
            want = gir.vars[name]
            assert list(got.shape) == want.shape, f"seed {seed}: {name} ORT shape {got.shape} vs {want}"
        ran += 1
    print(f"\nran on ORT: {ran}/{N_GRAPHS}; opsets {sorted(opsets.items())}; "
          f"undefined reference: {undefined}; unsupported (missing ORT kernels): {sum(unsupported.values())}")
    for k, v in unsupported.most_common():
        print(f"  {v:3d}  {k}")
    assert ran >= (N_GRAPHS - undefined) // 2, "most defined graphs must run on ORT; a default dtype mix this hostile is a bug"
    assert undefined <= N_GRAPHS // 4, "the value search left too many graphs without a defined reference"
