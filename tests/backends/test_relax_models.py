"""Relax-native models (nnfuzz/materialize/relax): each Relax lowering, compiled by TVM on llvm, agrees
with the numpy reference and torch on single-op graphs (one case per dtype category, as the ONNX
lowering tests); a module cut into several functions computes what the flat one does; the tvm-cpu
backend takes the format; and a short campaign with format=relax runs (slow). The lowering comparisons
and the regression of a TVM segfault compile in a contained worker (tests/contained.py): a native crash
of TVM fails one test, not the run."""
import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture
from single_op import single_op_models

from nnfuzz.abstract import OP_REGISTRY, load_builtin_ops
from nnfuzz.abstract.dtype import DType
from nnfuzz.reference import evaluate

tvm = pytest.importorskip("tvm")

from nnfuzz.materialize.relax.build import bind_weights, build_relax, draw_layout  # noqa: E402
from nnfuzz.materialize.relax.lowering import has_relax_lowering  # noqa: E402

load_builtin_ops()
BUILTIN = sorted((c for c in OP_REGISTRY.values() if c.__module__.startswith("nnfuzz.")), key=lambda c: c.name)
LOWERED = [c for c in BUILTIN if has_relax_lowering(c)]
REPRESENTATIVE = {"float": DType.float32, "int": DType.int32, "bool": DType.bool}
GRAPHS_PER_CASE = 1
# TVM's own bugs, which the lowering cannot avoid (strict: a fixed TVM makes the test fail, to be removed)
TVM_BUGS = {("Equal", "bool"): "TVM 0.27 compiles R.equal on bool tensors to an LLVM fcmp on i1, which fails "
                               "module verification (the ONNX importer's Equal crashes the same)"}


def run_relax(gir, weights, inputs, seed=0, pipeline="default"):
    """Build ``gir`` as Relax (layout from ``seed``), compile it for llvm and run it: {output: array}."""
    from tvm import relax

    from nnfuzz.backends.tvm import relax_pipeline

    mod, _ = build_relax(gir, seed)
    target = tvm.target.Target("llvm")
    ex = tvm.compile(bind_weights(mod, weights), target=target, relax_pipeline=relax_pipeline(pipeline, target))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(np.array(inputs[n], order="C")) for n in gir.inputs])
    outs = [out] if isinstance(out, tvm.runtime.Tensor) else list(out)
    return {n: o.numpy() for n, o in zip(gir.outputs, outs)}


def _cases():
    for cls in LOWERED:
        firsts = {row[0] for row in cls.in_dtypes} if cls.in_dtypes and cls.in_dtypes[0] else set()
        for cat, dt in REPRESENTATIVE.items():
            if dt in (firsts or set(REPRESENTATIVE.values())):
                bug = TVM_BUGS.get((cls.name, cat))
                marks = [pytest.mark.xfail(reason=bug, strict=True)] if bug else []
                yield pytest.param(cls, dt, id=f"{cls.name}-{cat}", marks=marks)


def test_most_builtin_ops_have_a_relax_lowering():
    assert len(LOWERED) >= 100, f"only {len(LOWERED)} ops lowered to Relax"


@pytest.mark.parametrize("cls, dtype", list(_cases()))
@pytest.mark.slow
def test_relax_lowering_agrees_with_reference_and_torch(contained, cls, dtype):
    contained(relax_agrees_with_reference_and_torch, cls, dtype)


def relax_agrees_with_reference_and_torch(cls, dtype):
    compared = 0
    for gir, model in single_op_models(cls, dtype):
        if compared >= GRAPHS_PER_CASE:
            break
        (inst,) = gir.insts
        want = evaluate(gir, model.weights, model.oracle.input)
        got = run_relax(gir, model.weights, model.oracle.input)
        what = f"{inst.op!r} on {[str(gir.vars[v]) for v in inst.inputs]}"
        for name in gir.outputs:
            assert_same(got[name], want[name], f"{what}: Relax vs numpy, {name}")
            assert_same(got[name], model.oracle.output[name], f"{what}: Relax vs torch, {name}")
        compared += 1
    assert compared, f"no single-op graph of {cls.name} with a {dtype} first input could be built and compared"


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{what}: Relax {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-5, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


MULTI_OPS = ["Add", "Mul", "Relu", "Sigmoid", "Conv2d", "MatMul", "Transpose", "Reshape", "Concat", "Split", "Softmax"]


def _layout_seeds(n_insts, kinds):
    """The first seed per layout kind in ``kinds`` for a graph of ``n_insts`` instructions."""
    found = {}
    for s in range(200):
        found.setdefault(draw_layout(n_insts, s).kind, s)
    return {k: found[k] for k in kinds}


@pytest.mark.slow
def test_a_module_cut_into_functions_computes_what_the_flat_one_does():
    from single_op import safe_model

    model = safe_model(3, include=MULTI_OPS, max_nodes=8, export=False)
    gir = model.gir
    seeds = _layout_seeds(len(gir.insts), ("flat", "outline", "chain"))
    flat = run_relax(gir, model.weights, model.oracle.input, seeds["flat"])
    for kind in ("outline", "chain"):
        mod, layout = build_relax(gir, seeds[kind])
        assert layout.kind == kind and len(mod.functions) == 1 + len(layout.runs) >= 2, mod.script()
        for pipeline in ("default", "default_build"):
            got = run_relax(gir, model.weights, model.oracle.input, seeds[kind], pipeline)
            for name in gir.outputs:
                assert_same(got[name], flat[name], f"{kind} layout, {pipeline} pipeline vs flat, {name}")
                assert_same(got[name], model.oracle.output[name], f"{kind} layout vs torch, {name}")


def test_the_same_seed_builds_the_same_module_and_its_script_reads_back():
    from single_op import safe_model

    model = safe_model(5, include=MULTI_OPS, max_nodes=8, export=False)
    seed = _layout_seeds(len(model.gir.insts), ("chain",))["chain"]
    a, _ = build_relax(model.gir, seed)
    b, _ = build_relax(model.gir, seed)
    tvm.ir.assert_structural_equal(a, b)
    printed, _ = build_relax(model.gir, seed, printable=True)  # (model.py's: long index vectors as shapes)
    tvm.ir.assert_structural_equal(tvm.script.from_source(printed.script()), printed)


@pytest.mark.slow
def test_tvm_cpu_takes_relax_payloads_and_draws_the_format_per_test():
    from single_op import safe_model

    from nnfuzz.backends.base import BackendInfo
    from nnfuzz.backends.tvm import TvmCpuBackend
    from nnfuzz.errors import ConfigError
    from nnfuzz.materialize.portable import model_payload

    # (no Reshape: the ONNX importer rejects some of the exporter's shape operands, a known limitation)
    model = safe_model(7, include=["Add", "Mul", "Relu", "Conv2d", "MatMul", "Concat", "Softmax"], max_nodes=6)
    be = TvmCpuBackend(format="relax")
    for fmt in ("relax", "onnx"):  # whatever the option, both formats are taken
        out = be.run(be.compile(model_payload(model.gir, model.weights, model.onnx, fmt, seed=11)),
                     model.oracle.input)
        for name in model.gir.outputs:
            assert_same(out[name], model.oracle.output[name], f"{fmt} payload on tvm-cpu, {name}")
    assert BackendInfo.of(be).format_for(1) == "relax"
    mix = BackendInfo.of(TvmCpuBackend(format="mix"))
    drawn = [mix.format_for(s) for s in range(40)]
    assert set(drawn) == {"onnx", "relax"} and drawn == [mix.format_for(s) for s in range(40)]
    with pytest.raises(ConfigError, match="format='tflite'"):
        TvmCpuBackend(format="tflite")


@pytest.mark.slow
def test_relax_campaign_on_tvm_cpu(tmp_path, monkeypatch, capsys):
    """30 s on tvm-cpu with every test a Relax module (where its ops are lowered): nnfuzz raises nothing,
    each bug folder holds the relax payload and a model.py that TVMScript reads back, and the first
    three bugs replay (it shares the machine's probe cache, so the time goes to testing)."""
    import json

    from nnfuzz.cli import main
    from nnfuzz.triage.bugstore import load_bug

    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", "backend=tvm-cpu", "backend.options.format=relax", "time=30s", f"fuzz.out={out}",
                 "ui=plain", "fuzz.producers=0", "fuzz.reduce=false"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] > 0 and s["nnfuzz_errors"] == 0, s
    replayed = 0
    for p in sorted(out.iterdir()):
        if not (p.is_dir() and p.name.isdigit()):
            continue
        bug = load_bug(p)
        if bug.format == "relax":
            tvm.script.from_source((p / "model.py").read_text())
        if not bug.meta.flaky and replayed < 3:
            replayed += 1
            assert main(["repro", str(p)]) == 0, f"{p} does not reproduce: {bug.meta.summary}"


@pytest.mark.parametrize("name", ["GroupNorm", "LayerNorm", "InstanceNorm"])
@pytest.mark.slow
def test_float64_channel_norms_are_a_known_limitation_not_a_bug(name):
    """Regression (campaigns of 2026-11-23): Relax's group/layer/instance norms refuse float64 when legalized;
    that refusal is classified as a known limitation (UNSUPPORTED), so it is never saved as a bug."""
    from nnfuzz.backends.known import classify

    gir, model = next(single_op_models(OP_REGISTRY[name], DType.float64))
    with pytest.raises(Exception) as info:
        run_relax(gir, model.weights, model.oracle.input)
    known = classify("tvm", f"{type(info.value).__name__}: {info.value}")
    assert known is not None and known.kind == "unsupported", str(info.value)[:300]


@pytest.mark.slow
def test_long_index_vectors_compile(contained):
    contained(long_index_vectors_compile)


def long_index_vectors_compile():
    """Regression (campaign bug 0024 of 2026-11-23: a GatherElements of 3648 indices): TVM 0.27 segfaults
    compiling one shape_to_tensor of ~1500 values or more, so RelaxGraph.index cuts a printable vector into
    chunks. Regression too (tvm-cpu campaign 27, folders 0041 and 0-campaign 0024, timeouts past 10 s):
    those chunks' compile grows fast with their length, so what nnfuzz compiles holds a long vector as a
    constant. A 3000-long index vector compiles either way and holds its values; the compiled spelling
    costs under a second of CPU, the printable one stays within fuzz.test_timeout's default of 10 s."""
    import time

    from tvm import relax

    from nnfuzz.materialize.relax.lowering import RelaxGraph

    n = 3000
    for printable, bound in ((False, 1.0), (True, 10.0)):
        bb = relax.BlockBuilder()
        x = relax.Var("x", relax.TensorType(shape=(n,), dtype="int64"))
        with bb.function("main", [x]):
            with bb.dataflow():
                out = bb.emit_output(relax.op.add(x, RelaxGraph(bb, printable).index(range(n))))
            bb.emit_func_output(out)
        assert ("metadata[" not in bb.get().script()) is printable
        target = tvm.target.Target("llvm")
        cpu = time.process_time()  # this process's CPU: the machine's load does not count
        ex = tvm.compile(bb.get(), target=target)
        cpu = time.process_time() - cpu
        assert cpu < bound, f"compiling an index vector of {n} values (printable={printable}) took {cpu:.1f} s of CPU"
        vm = relax.VirtualMachine(ex, tvm.cpu())
        got = vm["main"](tvm.runtime.tensor(np.ones(n, "int64"))).numpy()
        np.testing.assert_array_equal(got, np.arange(n) + 1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int8", "uint8", "bool"])
def test_scalar_constants_print_inline(dtype):
    """Regression (campaign bug 0011 of 2026-11-23: model.py held ``metadata["ir.GenericConst"][0]`` for a
    bfloat16 scalar, so it did not read back): every scalar a lowering makes prints as TVMScript."""
    from tvm import relax

    from nnfuzz.materialize.relax.lowering import RelaxGraph

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape=(2,), dtype=dtype))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.where(relax.op.equal(x, x), x, RelaxGraph(bb).scalar(1, x)))
        bb.emit_func_output(out)
    text = bb.get().script()
    assert "metadata" not in text, text
    tvm.ir.assert_structural_equal(tvm.script.from_source(text), bb.get())


@pytest.mark.slow
def test_structurally_equal_runs_share_one_function():
    """TVM's BlockBuilder keeps one copy of structurally equal functions: a chain of identical runs
    (Relu after Relu on one shape) calls that copy, and computes what the flat module does."""
    from single_op import safe_model

    model = safe_model(0, include=["Relu"], max_nodes=4, export=False)
    gir = model.gir
    seeds = _layout_seeds(len(gir.insts), ("flat", "chain"))
    mod, layout = build_relax(gir, seeds["chain"])
    assert layout.kind == "chain" and len(mod.functions) < 1 + len(layout.runs), mod.script()
    flat = run_relax(gir, model.weights, model.oracle.input, seeds["flat"])
    got = run_relax(gir, model.weights, model.oracle.input, seeds["chain"])
    for name in gir.outputs:
        assert_same(got[name], flat[name], f"chain of equal runs vs flat, {name}")


@pytest.mark.slow
def test_unsigned_shrink_lowers(contained):
    contained(unsigned_shrink_lowers)


def unsigned_shrink_lowers():
    """Regression (issue 26, nnfuzz's own false alarm on tvm-cpu): the Relax lowering of a uint8 Shrink built
    a uint8 constant of -lambd ("cannot make uint from negative value"). Unsigned x < -lambd never holds:
    uint8 Shrink with lambd 1 and 2 compiles and agrees with the numpy reference and torch."""
    lambds = set()
    for gir, model in single_op_models(OP_REGISTRY["Shrink"], DType.uint8, seeds=range(12)):
        (inst,) = gir.insts
        if inst.op.lambd < 1 or inst.op.lambd in lambds:
            continue
        lambds.add(inst.op.lambd)
        got = run_relax(gir, model.weights, model.oracle.input)
        for name in gir.outputs:
            assert_same(got[name], evaluate(gir, model.weights, model.oracle.input)[name], f"{inst.op!r}: vs numpy")
            assert_same(got[name], model.oracle.output[name], f"{inst.op!r}: vs torch")
    assert lambds == {1.0, 2.0}, f"uint8 Shrink drawn only with lambd {sorted(lambds)}"


@pytest.mark.slow
def test_half_l2_norm_does_not_overflow(contained):
    contained(half_l2_norm_does_not_overflow)


def half_l2_norm_does_not_overflow():
    """Regression (a tvm-cpu soak's false alarm, folder 0140): the Relax lowering of float16 ReduceL2 summed
    its squares in float16, which overflows past 65504 where the norm (here about 283) does not. It now
    computes in float32, as the ONNX lowering does."""
    from graphs import chain
    from nnfuzz.ops.reduce.spec import ReduceL2

    gir = chain(ReduceL2(1, keepdims=False), shape=(2, 2), dtype=DType.float16)
    x = np.full((2, 2), 200.0, np.float16)  # squares sum to 80000: inf in float16; the norm is 282.8
    (got,) = run_relax(gir, {}, {gir.inputs[0]: x}).values()
    np.testing.assert_allclose(got.astype(np.float64), [282.8, 282.8], rtol=1e-3)
