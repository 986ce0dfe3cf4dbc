"""A TVM crash on a wrong dtype is charged to the node that gives it (triage/crash_prefix.py), so one fault is
one signature whichever consumer fails on it. TVM's Relax batch_norm returns float32 for a float16 or bfloat16
input (bugs/kept/0026, an inconsistency where the value is an output); tvm-cpu campaign 27 also saved it as
a Concat's type-inference error after import (0022: ``Concat expects all input tensors to have the same
dtype``) and, in a Relax-native model, as the VM's check of a function's parameter (0035: ``param=v2``)."""
from pathlib import Path

import numpy as np
import pytest

from nnfuzz.triage.rootcause import failing_node, failing_op

CASES = Path(__file__).parents[1] / "cases"


def test_tvms_errors_name_the_op_or_the_value():
    assert failing_op((CASES / "cpu-errors" / "tvm-concat-dtype.log").read_text(), "tvm-cpu") == "Concat"
    assert failing_node((CASES / "tvm-relax-param-dtype" / "err.log").read_text(), "tvm-cpu") == "v2"


@pytest.mark.slow
def test_a_relax_models_parameter_check_is_charged_to_the_batchnorm_that_feeds_it():
    pytest.importorskip("tvm")
    from nnfuzz.backends import backend_class
    from nnfuzz.materialize.portable import model_payload
    from nnfuzz.triage.bugstore import bug_weights, load_bug
    from nnfuzz.triage.crash_prefix import crash_root_of
    from nnfuzz.triage.dedup import signature

    bug = load_bug(CASES / "tvm-relax-param-dtype")
    tvm_cpu = backend_class("tvm-cpu")()

    def run(model, inputs):  # the prefix as the campaign sends it: a Relax payload, compiled and run here
        compiled = tvm_cpu.compile(model_payload(model.gir, model.weights, None, "relax"))
        return tvm_cpu.run(compiled, {k: np.asarray(v) for k, v in inputs.items()})
    err = (bug.path / "err.log").read_text()
    root = crash_root_of(bug.meta, err, bug.gir_text, bug_weights(bug), bug.oracle["input"], bug.model_bytes, run)
    assert root is not None and (root["system_op"], root["kind"], root["var"]) == ("BatchNormalization", "dtype", "v2"), root
    assert signature(bug.meta.replace(root_cause=root), err) == "tvm-cpu | inconsistency | BatchNormalization | dtype"
