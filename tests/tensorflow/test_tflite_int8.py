"""tflite-cpu under backend.options.quantize=int8 with the real converter and LiteRT: single-op graphs converted
to full-integer models run integer kernels and agree with the quantized numpy reference within the allowed step;
a graph the converter cannot convert is UNSUPPORTED in its own words; and the oracle sees a real fault (the int8
TRANSPOSE_CONV ignores its filter's zero point). Conversions run in a contained worker (tests/contained.py)."""
import functools

import numpy as np
import pytest
from contained import contained  # noqa: F401 - the fixture

pytest.importorskip("tensorflow")
pytest.importorskip("ai_edge_litert")

from nnfuzz.backends import get_backend  # noqa: E402
from nnfuzz.errors import ConstraintError  # noqa: E402
from nnfuzz.generate import GenPolicy, generate_graph  # noqa: E402
from nnfuzz.materialize.model import build_model  # noqa: E402
from nnfuzz.materialize.portable import pack  # noqa: E402
from nnfuzz.materialize.search import SearchConfig  # noqa: E402
from nnfuzz.oracles.int8_steps import OPS, W, compare_steps, quantized_inputs, scope_problems, split_record  # noqa: E402

# op -> (the integer kernel its model must run, whether input 1 is a weight: a constant the converter quantizes)
OPS_KERNELS = {"Conv2d": ("CONV_2D", True), "Linear": ("FULLY_CONNECTED", True), "MatMul": ("BATCH_MATMUL", True),
               "Add": ("ADD", False), "Relu": ("RELU", False), "AvgPool2d": ("AVERAGE_POOL_2D", False),
               "Concat": ("CONCATENATION", False)}


@functools.cache
def _int8():
    """Made before this worker runs any TF op (the TF backends pin TF's thread pools)."""
    return get_backend("tflite-cpu", quantize="int8")


def _graphs(name, weighted, seeds):
    """(seed, gir, model) of one-node float32 graphs of ``name`` with a defined, non-constant output (a constant
    output calibrates to a degenerate scale, 7.8e-9, a case of its own), input 1 a weight when ``weighted``."""
    for seed in seeds:
        try:
            gir = generate_graph(GenPolicy(seed=seed, max_nodes=1, include=[name], dtypes=["float32"]))
        except ConstraintError:
            continue
        (inst,) = gir.insts
        if weighted and not (inst.inputs[0] in gir.inputs and inst.inputs[1] in gir.weights):
            continue
        model = build_model(gir, seed, export=False, search=SearchConfig())
        if model.oracle.output is None or any(np.ptp(v) == 0 for v in model.oracle.output.values()):
            continue
        yield seed, gir, model


def int8_agrees(name):
    kernel, weighted = OPS_KERNELS[name]
    compared, outside = [], []
    for seed, gir, model in _graphs(name, weighted, range(120)):
        if len(compared) >= 2:
            break
        be = _int8()
        got, record = split_record(be.run(be.compile(pack(gir.dumps(), model.weights)), model.oracle.input))
        if scope_problems(record):
            outside.append((seed, scope_problems(record)))
            continue
        ops = set(record[OPS].tolist())
        assert kernel in ops and "DEQUANTIZE" not in ops, f"{name} seed {seed}: kernels {ops}, not the int8 {kernel}"
        held = [w for w in gir.weights if W + w in record]
        assert held == list(gir.weights), f"{name} seed {seed}: weights {gir.weights}, matched in the model {held}"
        v = compare_steps(gir, model.weights, record, quantized_inputs(record, gir, model.oracle.input), got)
        assert v.label == "pass", f"{name} seed {seed}: {v.summary}"
        compared.append(seed)
    assert compared, f"no {name} graph in scope and compared (outside: {outside[:3]})"
    return compared


@pytest.mark.slow
@pytest.mark.parametrize("name", list(OPS_KERNELS))
def test_int8_kernels_agree_with_the_quantized_reference(contained, name):
    assert contained(int8_agrees, name)


def refused(name):
    from nnfuzz.fuzz.sandbox import result_of
    from nnfuzz.fuzz.worker import run_backend
    from nnfuzz.verdict import judge

    seed, gir, model = next(_graphs(name, False, range(40)))
    res = result_of(run_backend(_int8(), pack(gir.dumps(), model.weights), model.oracle.input), {})
    v = judge(res, None, "tflite")
    return v.label, v.summary


@pytest.mark.slow
def test_an_op_the_converter_cannot_convert_is_unsupported_in_its_words(contained):
    label, summary = contained(refused, "Tan")  # TFLite has no builtin Tan (float or int8)
    assert label == "unsupported" and "'tf.Tan' op is neither a custom op nor a flex op" in summary, summary


def transpose_conv_with_an_input_filter():
    """ConvTranspose1d(x, f) with f a graph input: the converter quantizes f asymmetrically (zero point 127 for
    negative values) and the int8 TRANSPOSE_CONV computes as if its zero point were 0 (Conv2d's CONV_2D refuses
    such a filter when it prepares: tensorflow#62171)."""
    from nnfuzz.abstract import AbsTensor, DType
    from nnfuzz.gir import GraphIR, Inst
    from nnfuzz.ops.conv.spec import ConvTranspose1d

    op = ConvTranspose1d(7, 0, 0, 4, 1)  # stride, pad, output pad, dilation, groups: as bugs' gir.json wrote them
    x, f = AbsTensor([2, 1, 1], DType.float32), AbsTensor([1, 4, 1], DType.float32)
    (y,) = op.checked_type_transfer([x, f])
    gir = GraphIR(vars={"x": x, "f": f, "y": y}, inputs=["x", "f"], insts=[Inst(op, ["x", "f"], ["y"])],
                  outputs=["y"]).check()
    inputs = {"x": np.array([[[-0.7621713]], [[-0.45325294]]], np.float32),
              "f": np.array([[[-0.6171872], [-1.1349387], [-0.03911785], [-0.72993565]]], np.float32)}
    got, record = split_record(_int8().run(_int8().compile(pack(gir.dumps(), {})), inputs))
    v = compare_steps(gir, {}, record, quantized_inputs(record, gir, inputs), got)
    return v.label, v.summary, int(record["int8:q:f"][1])


@pytest.mark.slow
def test_the_oracle_sees_transpose_conv_ignore_its_filters_zero_point(contained):
    label, summary, filter_zero_point = contained(transpose_conv_with_an_input_filter)
    assert filter_zero_point != 0
    assert label == "inconsistency" and "8/8 int8 values" in summary, summary


def div_of_small_numerators():
    """w / y with w a weight [1, 8] (int8 steps of 0.025) and y [3, 1]: the int8 DIV gives 127 or -128 where a
    numerator one or two steps from its zero point is divided by y of magnitude 1.7 or 3.3 (the quotient is 0 on
    the output grid); by 0.25 it is right."""
    from nnfuzz.abstract import AbsTensor, DType
    from nnfuzz.gir import GraphIR, Inst
    from nnfuzz.ops.binary.spec import Div

    w, y = AbsTensor([1, 8], DType.float32), AbsTensor([3, 1], DType.float32)
    (q,) = Div().checked_type_transfer([w, y])
    gir = GraphIR(vars={"w": w, "y": y, "q": q}, inputs=["y"], weights=["w"], insts=[Inst(Div(), ["w", "y"], ["q"])],
                  outputs=["q"]).check()
    weights = {"w": np.array([[3.33, -3.05, 0.025, -0.05, 0.125, -0.1, 1.0, 0.05]], np.float32)}
    inputs = {"y": np.array([[1.7359335], [-3.3329923], [0.25]], np.float32)}
    got, record = split_record(_int8().run(_int8().compile(pack(gir.dumps(), weights)), inputs))
    v = compare_steps(gir, weights, record, quantized_inputs(record, gir, inputs), got)
    return v.label, v.summary, record[OPS].tolist(), got["q"].tolist()


@pytest.mark.slow
def test_the_oracle_sees_int8_div_saturate_small_numerators(contained):
    label, summary, kernels, got = contained(div_of_small_numerators)
    assert kernels == ["DIV"] and label == "inconsistency", (label, summary, kernels)
    assert got[0][2] == 127 and got[0][3] == -128, got  # 0.025 / 1.74 and -0.05 / 1.74: 0 on the output grid


@pytest.mark.slow
def test_an_int8_campaign_saves_transpose_conv_faults_that_replay(tmp_path, monkeypatch, capsys):
    import json

    from nnfuzz.cli import main
    from nnfuzz.triage.bugstore import load_bug

    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", "backend=tflite-cpu", "backend.options.quantize=int8", "mgen.max_nodes=1",
                 "mgen.dtypes=[float32]", "mgen.include=[ConvTranspose1d]", "mgen.seed=3", "fuzz.max_tests=4",
                 "time=120s", f"fuzz.out={out}", "ui=plain", "fuzz.producers=0", "fuzz.workers=1",
                 "fuzz.probe=false", "fuzz.test_timeout=60", "fuzz.reduce=false",
                 "fuzz.known_kept=false"]) == 0  # (the fault is kept as bugs/kept/0106: known, it would steer away)
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["nnfuzz_errors"] == 0 and s["tests"] == 4, s
    bugs = [load_bug(p) for p in sorted(out.iterdir()) if p.is_dir() and p.name.isdigit()]
    faults = [b for b in bugs if b.meta.symptom == "inconsistency"]
    assert faults, f"no TRANSPOSE_CONV fault among 4 tests: {s}"
    bug = faults[0]
    assert bug.meta.oracle["kind"] == "int8" and "TRANSPOSE_CONV" in bug.meta.oracle["int8"]["kernels"], bug.meta.oracle
    assert main(["repro", str(bug.path)]) == 0, f"{bug.path} does not reproduce: {bug.meta.summary}"
    assert main(["repro", str(bug.path), "--script"]) == 0
    script = (bug.path / "repro_tflite-cpu.py").read_text()  # the int8 conversion, compared in output steps
    assert "TFLITE_BUILTINS_INT8" in script and "RTOL, ATOL = 0.0, 1.0" in script, script[-1500:]
