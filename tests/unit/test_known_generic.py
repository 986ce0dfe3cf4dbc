"""A kept folder whose signature names no root cause never makes a new bug known (issue 26, item 7: two new
OpenVINO faults were counted as bugs/kept/0034 through its unlocalized signature)."""
from nnfuzz.triage.known import Folder, KnownBugs, generic


def test_signatures_that_name_no_root_cause_are_generic():
    assert generic("openvino-cpu | inconsistency | unlocalized | <var>: <n><path> values differ (int64)")
    assert generic("tf-cpu | crash | execute | ? | killed by SIGABRT | signal 6")
    assert not generic("ort-cpu | inconsistency | Shrink | precision")
    assert not generic("ort-cpu | crash | compile | Fail | ONNXRuntimeError: FAIL : Node (<node>) Op (Expand)")
    assert not generic("tvm-cpu | crash | compile | InternalError | sign | (value >= <n>): cannot make uint")
    # a dynamic form's inconsistency localized to no node (bugs/kept/0104, OpenVINO's PRelu of a Ceil), and one
    # localized to its op
    assert generic("openvino-cpu | inconsistency | dynamic | values")
    assert generic("openvino-cpu | inconsistency | again | values")
    assert not generic("openvino-cpu | inconsistency | dynamic | Tile | values")


def test_a_generic_kept_signature_matches_nothing():
    sig = "openvino-cpu | inconsistency | unlocalized | <var>: <n><path> values differ (int64)"
    known = KnownBugs(folders=(Folder("bugs/kept/0034", "openvino-cpu", sig),
                               Folder("bugs/kept/0000", "ort-cpu", "ort-cpu | inconsistency | Shrink | precision")))
    assert known.folder_signatures() == {"ort-cpu | inconsistency | Shrink | precision": "bugs/kept/0000"}


def test_a_kept_bug_in_a_qdq_op_does_not_steer_the_qdq_writer_off():
    """bugs/kept/0091 (OpenVINO: Concat -> QuantizeLinear -> DequantizeLinear -> QuantizeLinear) localizes to a
    QuantizeLinear of float32. As a trigger it left QuantizeLinear's every row out, and both 30-minute
    openvino-cpu campaigns drew no QDQ graph; the QDQ writer places Q and DQ itself. A known-bugs entry naming
    a quantized type still steers it."""
    from nnfuzz.generate.opset import select_ops
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.generate.steer import steer
    from nnfuzz.triage.known import load_known

    kept = load_known()
    assert any(f.path.endswith("0091") and any(op == "QuantizeLinear" for op, _ in f.triggers) for f in kept.folders)
    triggers = kept.triggers("openvino-cpu")
    assert not [t for t in triggers if t["op"] in ("QuantizeLinear", "DequantizeLinear") and t["dtypes"] is not None]
    assert {t["dtype"] for t in triggers if t["op"] == "QuantizeLinear"} == {"int16", "uint16"}
    policy = GenPolicy()
    ops, rows, _, _ = steer(triggers, select_ops(policy), {}, None, policy)
    assert {"QuantizeLinear", "DequantizeLinear"} <= {c.name for c in ops}
