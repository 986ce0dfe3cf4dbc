"""A log listing several failed ops (OpenVINO's unconverted-ops report) is signed by the op that comes first
in the model, not the first listed (triage/rootcause.py _earliest_block)."""
from pathlib import Path

from nnfuzz.triage.dedup import normalize
from nnfuzz.triage.rootcause import failing_node, root_cause

LOG = Path(__file__).parents[1] / "cases" / "cpu-errors" / "openvino-two-failed-ops.log"


def test_the_op_first_in_the_model_signs_a_log_of_several_failed_conversions():
    """bugs/kept/0088's QLinearConv (node 4) fails to convert, and so does the DepthToSpace after it (node 5),
    listed first: an openvino-cpu campaign signed four folders of 0088 by the DepthToSpace or a ConvInteger."""
    log = LOG.read_text()
    op, message = root_cause(log.splitlines()[0], log)
    assert op == "QLinearConv" and message.startswith("scale_dim.compatible(x_dim_at_axis) dequantize_linear.cpp:")
    assert failing_node(log) == "QLinearConv_4"


def test_a_shape_in_a_message_is_one_token_whatever_its_rank_and_brackets():
    a = normalize("Shapes [2,3,4] and [2,3,4] are not consistent")
    assert a == normalize("Shapes {1,2} and {1,2} are not consistent") == "Shapes <shape> and <shape> are not consistent"
    assert normalize("[?,3..8] vs []") == "<shape> vs <shape>"


def test_the_qdq_writers_variable_names_are_variables():
    """ort-cpu campaign 27 signed one unlocalized QDQ fault twice, as `v9_dq: ...` and `v5_dq: ...`."""
    a = normalize("v9_dq: 1/4 values off")
    assert a == normalize("v5_dq: 1/4 values off") and a.startswith("<var>: ")
