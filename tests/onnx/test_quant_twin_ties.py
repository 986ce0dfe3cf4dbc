"""The float64 twin's tie rules cover DynamicQuantizeLinear's zero point as well as its values
(ops/quant/search.py). The case folder ``tests/cases/ort-dql-zero-point-tie/`` is a false alarm an ort-cpu
1.32.0 campaign (fuzz.dynamic=auto) saved: DynamicQuantizeLinear of a Tanh that reaches -1, whose real zero
point is the tie 127.5 (ORT's Tanh gives -1.0000001: 128; torch's float32 127). Its recorded twin runs,
made before the zero point's tie was nudged, flag 2 of 620 values where the two ties cancelled."""
from pathlib import Path

import numpy as np
import pytest

from nnfuzz.gir import GraphIR
from nnfuzz.materialize.model import add_twins, build_model
from nnfuzz.triage.bugstore import bug_weights, load_bug
from nnfuzz.verdict import DEFAULT_TOLERANCES, compare

CASE = Path(__file__).parents[1] / "cases" / "ort-dql-zero-point-tie"


def test_a_zero_point_at_a_tie_moves_every_value_in_the_twin_runs():
    ort = pytest.importorskip("onnxruntime")
    bug = load_bug(CASE)
    inputs = {k: np.asarray(v) for k, v in bug.oracle["input"].items()}
    session = ort.InferenceSession(bug.model_bytes, providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))
    stored = compare(bug.oracle["output"], got, DEFAULT_TOLERANCES, bug.oracle["output_f64"], bug.oracle["output_f64_jitter"])
    assert stored.is_bug and "v8: 2/620 values differ" in stored.summary, "ORT no longer gives this: the case tests nothing"
    model = add_twins(build_model(GraphIR.loads(bug.gir_text), int(bug.meta.seed), export=False,
                                  values=(bug_weights(bug), inputs)))
    fresh = compare(model.oracle.output, got, DEFAULT_TOLERANCES, model.oracle.output_f64, model.oracle.output_f64_jitter)
    assert not fresh.is_bug, fresh.detail
