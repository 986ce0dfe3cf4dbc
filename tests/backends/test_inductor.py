"""inductor-cpu, the real system: generated models agree with torch eager; many models in one process
(dynamo's recompile limit); options, versions; a compile failure is staged "compile"; the sandbox.

Compiles are the cost here (seconds each on a small machine): one backend object for the module, tiny
graphs, and as few compiles as the checks need. The compiled models run in a contained worker
(tests/contained.py), which holds that one backend: a native crash of compiled code fails one test, not
the run.
"""
import functools
from pathlib import Path

import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture
from single_op import COMMON_OPS, safe_model

torch = pytest.importorskip("torch")

from nnfuzz.backends import get_backend  # noqa: E402
from nnfuzz.backends.known import classify  # noqa: E402
from nnfuzz.errors import ConfigError  # noqa: E402
from nnfuzz.fuzz.sandbox import Sandbox  # noqa: E402
from nnfuzz.gir import GraphIR  # noqa: E402
from nnfuzz.materialize.model import build_model  # noqa: E402
from nnfuzz.materialize.portable import pack  # noqa: E402
from nnfuzz.verdict import Outcome, Stage, Symptom, compare, judge  # noqa: E402

OPS = COMMON_OPS

# Max(Sign(x), x) on int16: torch 2.13's C++ codegen calls max_propagate_nan(int, short) and g++ rejects it
# (a real inductor bug the fuzzer found; a graph of it from the fuzzer, shrunk by hand)
SIGN_MAX_INT16 = """{"version": 1, "vars": {"i0": {"shape": [2], "dtype": "int16"},
 "v0": {"shape": [2], "dtype": "int16"}, "v1": {"shape": [2], "dtype": "int16"}}, "inputs": ["i0"], "weights": [],
 "insts": [{"op": {"op": "Sign", "module": "nnfuzz.abstract.ops.elementwise", "args": [], "kwargs": {}},
            "inputs": ["i0"], "outputs": ["v0"]},
           {"op": {"op": "Max", "module": "nnfuzz.abstract.ops.binary", "args": [], "kwargs": {}},
            "inputs": ["v0", "i0"], "outputs": ["v1"]}],
 "outputs": ["v1"]}"""


def make_model(seed, include=OPS, dtypes=("float32",), max_nodes=4):
    return safe_model(seed, include, dtypes, max_nodes, max_elems=256, export=False)


def payload(model) -> bytes:
    return pack(model.gir.dumps(), model.weights)


@functools.cache
def worker_backend():
    """The contained worker's one backend, with dynamo's recompile limit at 1: any second model compiled
    without ``torch._dynamo.reset()`` would then fail with FailOnRecompileLimitHit (at the default of 8 a
    campaign hit it on its 9th model: every model is a new GraphModule, but they share GraphModule.forward's
    code). The worker is this module's alone, so the limit is left set."""
    torch._dynamo.config.recompile_limit = 1
    return get_backend("inductor-cpu")


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.slow
def test_generated_float32_models_pass(contained, seed):
    contained(generated_float32_model_passes, seed)


def generated_float32_model_passes(seed):
    ind = worker_backend()
    model = make_model(seed)
    compiled = ind.compile(payload(model))
    v = compare(model.oracle.output, ind.run(compiled, model.oracle.input))
    assert v.outcome is Outcome.PASS, v.detail


@pytest.mark.slow
def test_bfloat16_model_passes(contained):
    contained(bfloat16_model_passes)


def bfloat16_model_passes():
    ind = worker_backend()
    model = make_model(1, include=["Add", "Mul", "Relu", "Sub"], dtypes=["bfloat16"], max_nodes=3)
    out = ind.run(ind.compile(payload(model)), model.oracle.input)
    assert all(str(a.dtype) == "bfloat16" for a in out.values())
    v = compare(model.oracle.output, out)
    assert v.outcome is Outcome.PASS, v.detail


def test_bad_options_name_the_value_and_choices():
    with pytest.raises(ConfigError, match=r"backend\.options\.mode='fast'.*'reduce-overhead'"):
        get_backend("inductor-cpu", mode="fast")
    with pytest.raises(ConfigError, match=r"backend\.options\.cache_dir=3 "):
        get_backend("inductor-cpu", cache_dir=3)
    get_backend("inductor-cpu", mode="max-autotune-no-cudagraphs")  # valid; compiles nothing


def test_version():
    ind = get_backend("inductor-cpu")  # compiles nothing
    assert ind.version == torch.__version__
    assert ind.version_id == torch.version.git_version and len(ind.version_id) == 40


def test_gpu_variant_says_to_use_the_cpu_one():
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present")
    from nnfuzz.backends.base import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="inductor-cpu"):
        get_backend("inductor-gpu")


def test_cache_dir_option_sets_inductors_cache_directory(tmp_path, monkeypatch):
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", cache_dir())  # restored after the test
    get_backend("inductor-cpu", cache_dir=str(tmp_path / "inductor"))
    assert cache_dir() == str(tmp_path / "inductor")


@pytest.mark.slow
def test_each_sandbox_worker_compiles_into_its_own_directory_removed_with_it():
    """A worker killed mid-compile (a timeout) left a truncated kernel .so in inductor's shared cache, and the
    test's retry on a fresh worker loaded it ("ImportError: ... file too short"): a false crash. With
    cache_dir null, each worker's kernels go to its own scratch directory, gone when the worker goes, and
    its replacement compiles into a fresh one."""
    import os
    import signal

    model = make_model(2)
    with Sandbox("inductor-cpu", test_timeout=300) as sb:
        assert sb.run_model(model, model.oracle.input).status == "ok"
        first = sb._worker.scratch
        assert any((Path(first) / "inductor").rglob("*.so")), "the kernels were not compiled into the scratch"
        os.kill(sb._worker.pid, signal.SIGKILL)  # as a timeout kills it
        r = sb.run_model(model, model.oracle.input)  # on a fresh worker
        assert r.status == "ok", (r.error, r.detail)
        second = sb._worker.scratch
        assert second != first and not Path(first).exists() and any((Path(second) / "inductor").rglob("*.so"))
    assert not Path(second).exists()


@pytest.mark.slow
def test_a_fresh_workers_own_directory_starts_from_the_first_warm_up(tmp_path, monkeypatch):
    """The first worker leaves its cache as it was right after its warm-up in NNFUZZ_CACHE/inductor-warm; the
    next worker's own directory starts as a copy (its warm-up's C++ kernel is there before it compiles)."""
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    with Sandbox("inductor-cpu", test_timeout=300) as first:
        first.start()
    (seed,) = (tmp_path / "cache" / "inductor-warm").iterdir()
    kernels = {p.name for p in seed.rglob("*.so")}
    assert kernels
    with Sandbox("inductor-cpu", test_timeout=300) as second:
        second.start()
        own = Path(second._worker.scratch) / "inductor"
        assert kernels <= {p.name for p in own.rglob("*.so")}
    assert not list(seed.parent.glob(seed.name + ".*"))  # no copy left beside it


@pytest.mark.slow
def test_sandbox_runs_a_model_and_stages_a_compile_failure():
    """In the sandbox: a model runs ("ok"); a graph inductor cannot compile fails in the "compile" stage
    (the warm-up call compiles) and is judged a bug, not unsupported."""
    model = make_model(2)
    with Sandbox("inductor-cpu", test_timeout=300) as sb:
        assert sb.info["name"] == "inductor-cpu" and sb.info["version"] == torch.__version__
        assert sb.format == "gir"
        r = sb.run_model(model, model.oracle.input)
        assert r.status == "ok", (r.error, r.detail)
        assert judge(r, model.oracle.output, "inductor").outcome is Outcome.PASS
        assert r.seconds["compile"] > r.seconds["execute"]

        bad = build_model(GraphIR.loads(SIGN_MAX_INT16), 0, export=False,
                          values=({}, {"i0": np.array([-3, 5], np.int16)}))
        r = sb.run_model(bad, bad.oracle.input)
    v = judge(r, bad.oracle.output, "inductor")
    if r.status == "ok":  # fixed in this torch
        assert v.outcome is Outcome.PASS
    else:
        assert (r.status, r.stage) == ("error", "compile"), (r.error, r.detail)
        assert classify("inductor", f"{r.error}\n{r.detail}") is None
        assert (v.outcome, v.symptom, v.stage) == (Outcome.BUG, Symptom.crash, Stage.compile)


@pytest.mark.parametrize("op", ["GatherElements", "ScatterElements", "ScatterND", "ResizeLinearOnnx"])
@pytest.mark.slow
def test_lowerings_with_computed_indices_compile(contained, op):
    contained(lowering_with_computed_indices_compiles, op)


def lowering_with_computed_indices_compiles(op):
    """Indices and resize taps are numpy computed from static shapes: traced by dynamo, they became
    data-dependent torch ops inductor refused, a false crash on every such model (seen in GPU campaigns,
    where half the saved bugs were these). They are constants of the compiled graph now."""
    ind = worker_backend()
    model = safe_model(0, [op], ("float32",), 2, max_elems=256, export=False)
    assert {i.op.name for i in model.gir.insts} == {op}
    out = ind.run(ind.compile(payload(model)), model.oracle.input)
    v = compare(model.oracle.output, out)
    assert v.outcome is Outcome.PASS, v.detail


WARM_UP_CHECK = """
import sys
from nnfuzz.backends.inductor import InductorCpuBackend
InductorCpuBackend(cache_dir=sys.argv[1]).warm_up()
from torch._inductor.fx_passes import joint_graph
print("lazy_init", joint_graph.lazy_init.cache_info().currsize)
"""


@pytest.mark.slow
def test_warm_up_does_the_one_off_pattern_setup_even_when_inductors_cache_is_warm(tmp_path):
    """A campaign's first inductor model timed out at compile (a false alarm, saved as a bug): with a warm
    FX graph cache the warm-up compile was a cache hit, skipped the graph passes, and left their one-off
    pattern registration (joint_graph.lazy_init, 10-40 s on a loaded machine) to the first real model."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(2):  # the first fills the cache, the second starts warm
        r = subprocess.run([sys.executable, "-c", WARM_UP_CHECK, str(tmp_path / "cache")], capture_output=True,
                           text=True, timeout=600, env=env)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "lazy_init 1" in r.stdout, r.stdout
