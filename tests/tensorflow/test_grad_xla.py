"""oracle=grad on XLA (xla-cpu against tf-cpu, TF eager): the tape's gradients inside the compiled function
agree with eager's, and with torch eager's on the same graph (backends/tf_grad.py)."""
import numpy as np
import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("tensorflow")

OPS = ["Add", "Mul", "Sub", "Tanh", "Sigmoid", "Exp", "MatMul", "Relu", "Abs", "ReduceSum", "Transpose", "Softmax",
       "BatchNormTraining", "Floor", "Max"]


def test_real_graphs_pass_forward_and_backward_on_xla_cpu(tmp_path):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy

    cc = CampaignConfig(backend="xla-cpu", backend_options={}, out=tmp_path / "bugs", ui="plain", executor="inprocess",
                        time_s=120.0, probe=False, reduce=False, oracle="grad", max_tests=4,
                        policy=GenPolicy(max_nodes=5, dtypes=["float32"], include=OPS, seed=7))
    counters = run_campaign(cc)
    assert counters.tests == 4 and counters.verdicts["pass"] == 4 and counters.bugs_saved == 0, counters


def test_xla_and_tf_eager_gradients_match_torch_eager_on_one_graph():
    from graphs import chain

    from nnfuzz.backends.tf import TfEagerBackend, XlaCpuBackend
    from nnfuzz.materialize.portable import pack
    from nnfuzz.materialize.torch.grad import eager
    from nnfuzz.ops.elementwise.spec import Sigmoid, Tanh
    from nnfuzz.verdict import compare

    gir = chain(Tanh(), Sigmoid(), shape=(3, 4))
    x = {"x": np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)}
    spec, upstream, expected = eager(gir, {}, x, seed=5)
    payload = pack(gir.dumps(), {}, None, spec.to_json())
    for backend in (TfEagerBackend(), XlaCpuBackend()):
        got = backend.run(backend.compile(payload), {**x, **upstream})
        assert set(got) == {"v1", "grad:x"} and not compare(expected, got).is_bug, backend.name
