"""A kept folder whose signature names no root cause never makes a new bug known (issue 26, item 7: two new
OpenVINO faults were counted as bugs/kept/0034 through its unlocalized signature)."""
from nnfuzz.triage.known import Folder, KnownBugs, generic


def test_signatures_that_name_no_root_cause_are_generic():
    assert generic("openvino-cpu | inconsistency | unlocalized | <var>: <n><path> values differ (int64)")
    assert generic("tf-cpu | crash | execute | ? | killed by SIGABRT | signal 6")
    assert not generic("ort-cpu | inconsistency | Shrink | precision")
    assert not generic("ort-cpu | crash | compile | Fail | ONNXRuntimeError: FAIL : Node (<node>) Op (Expand)")
    assert not generic("tvm-cpu | crash | compile | InternalError | sign | (value >= <n>): cannot make uint")


def test_a_generic_kept_signature_matches_nothing():
    sig = "openvino-cpu | inconsistency | unlocalized | <var>: <n><path> values differ (int64)"
    known = KnownBugs(folders=(Folder("bugs/kept/0034", "openvino-cpu", sig),
                               Folder("bugs/kept/0000", "ort-cpu", "ort-cpu | inconsistency | Shrink | precision")))
    assert known.folder_signatures() == {"ort-cpu | inconsistency | Shrink | precision": "bugs/kept/0000"}
