"""Dedup signatures and `nnfuzz dedup` on bug stores built from meta.json/err.log files."""
import json

import pytest

from nnfuzz.cli import main
from nnfuzz.triage.dedup import index_store, normalize, signature
from nnfuzz.triage.deduper import Deduper

ORT_FUSION = ("Fail: [ONNXRuntimeError] : 1 : FAIL : Exception during initialization: "
              "/onnxruntime_src/onnxruntime/core/optimizer/relu_clip_fusion.cc:83 virtual "
              "onnxruntime::common::Status onnxruntime::FuseReluClip::Apply() Clip node '{node}' has "
              "{k} inputs at 0x{addr}")


def crash(summary, system="ort-cpu", stage="compile", **kw):
    return {"system": system, "version": "1", "version_id": "x", "symptom": "crash", "stage": stage,
            "summary": summary, **kw}


def store(tmp_path, metas, logs=None):
    for k, meta in enumerate(metas):
        d = tmp_path / f"{k:04d}"
        d.mkdir()
        (d / "meta.json").write_text(json.dumps(meta))
        if logs and logs[k]:
            (d / "err.log").write_text(logs[k])
    return tmp_path


def test_messages_that_differ_in_numbers_names_and_paths_share_a_signature():
    a = crash(ORT_FUSION.format(node="/Clip_3", k=3, addr="7f3a9c"))
    b = crash(ORT_FUSION.format(node="/layer/Clip_17", k=2, addr="55d0e1").replace(
        "/onnxruntime_src/", "/home/build/ort/"))
    assert signature(a) == signature(b)
    assert "onnxruntime::FuseReluClip::Apply relu_clip_fusion.cc: Clip node <name> has <n> inputs at <addr>" in signature(a)


def test_genuinely_different_errors_get_different_signatures():
    base = crash(ORT_FUSION.format(node="c", k=3, addr="1"))
    other_msg = crash("Fail: [ONNXRuntimeError] : 1 : FAIL : Type Error: Type (tensor(int8)) of output arg is invalid")
    other_type = crash("RuntimeException: " + ORT_FUSION.split(": ", 1)[1].format(node="c", k=3, addr="1"))
    other_stage = crash(base["summary"], stage="execute")
    other_system = crash(base["summary"], system="tvm-cpu")
    sigs = {signature(m) for m in (base, other_msg, other_type, other_stage, other_system)}
    assert len(sigs) == 5


ORT_QDQ = ("Fail: [ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running {op} node. "
           "Name:'{op}_1' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/quantization/"
           "quantize_linear.cc:88 void onnxruntime::PrepareForQDQ(const TensorShape&, const Tensor&, const Tensor*, "
           "int64_t, int64_t, int64_t&, int64_t&, int64_t&) {check} was false. {why}")


def test_an_ort_check_signs_by_its_function_and_condition_not_by_the_op_whose_kernel_called_it():
    # kept 0105: QuantizeLinear and DequantizeLinear fail the same check of one helper, and were two signatures
    def sig(op, check="quant_block_size == 0", why="block_size must be 0 for per-tensor quantization."):
        m = ORT_QDQ.format(op=op, check=check, why=why)
        return signature(crash(m, stage="execute"), m)

    assert sig("QuantizeLinear") == sig("DequantizeLinear")
    assert sig("DequantizeLinear").endswith("onnxruntime::PrepareForQDQ quantize_linear.cc: quant_block_size == <n> "
                                            "was false. block_size must be <n> for per-tensor quantization.")
    assert sig("DequantizeLinear") != sig("DequantizeLinear", check="block_size > 0", why="block_size must be positive")
    # a templated kernel: ORT prints its template arguments after the argument list
    t = ("Status Message: /o/qlinearconv.cc:93 static std::vector<float> onnxruntime::QLinearConv<ActType>::"
         "ComputeOutputScale(onnxruntime::OpKernelContext*, int64_t) [with ActType = unsigned char; int64_t = long int] "
         "IsValidQuantParam(W_scale, M) was false. QLinearConv : filter scale shape invalid")
    assert signature(crash(t, stage="execute"), t).endswith(
        "onnxruntime::QLinearConv<ActType>::ComputeOutputScale qlinearconv.cc: IsValidQuantParam(W_scale, M) was false. "
        "QLinearConv : filter scale shape invalid")


def test_native_backtrace_frames_split_otherwise_equal_messages():
    m = crash("TVMError: Check failed: (x) is false")
    log_a = "TVMError: Check failed\n  0: tvm::relax::FuseOps(int)\n  1: tvm::transform::Pass::operator()\n"
    log_b = "TVMError: Check failed\n  0: tvm::tir::Simplify(int)\n  1: tvm::transform::Pass::operator()\n"
    assert signature(m, log_a) != signature(m, log_b)
    assert signature(m, log_a) == signature(m, log_a.replace("(int)", "(long, 0x7f)"))  # arguments do not count


def test_inconsistencies_group_by_op_and_nature_of_the_divergence_not_dtype():
    def inc(op, dtype, summary="v3: 5/140 values off", errors=None):
        return {"system": "ort-cpu", "symptom": "inconsistency", "stage": "verify", "summary": summary,
                "errors": errors or {}, "first_divergent_node": {"index": 2, "op": op, "var": "v2", "dtype": dtype}}
    assert signature(inc("Softmax(axis=1)", "float32")) == signature(inc("Softmax(axis=0)", "float32", "v9: 1/3 off"))
    # one bug seen in several dtypes is one signature (an axes bug once split six ways, one per dtype)
    assert signature(inc("ReduceL1(axes=[1])", "float32")) == signature(inc("ReduceL1(axes=[0])", "int64"))
    assert signature(inc("Softmax(axis=1)", "float32")) != signature(inc("LogSoftmax(axis=1)", "float32"))
    natures = {signature(inc("Softmax(axis=1)", "float32", s, e)) for s, e in [
        ("v3: 5/140 values off", None), ("v3: shape [2] != reference [3]", None),
        ("v3: dtype int32 != reference int64", None), ("output v3 missing", None),
        ("v3: 1/4 values off", {"v3": {"max_abs": 0.0, "nonfinite_mismatch": 1}})]}
    assert len(natures) == 5, natures
    unlocalized = {"system": "ort-cpu", "symptom": "inconsistency", "summary": "v7: 2/10 values off (max abs 0.3)"}
    assert "unlocalized" in signature(unlocalized)
    assert signature(unlocalized) == signature({**unlocalized, "summary": "v2: 9/99 values off (max abs 1.5e-3)"})


OV_HEAD = ("RuntimeError: Exception from src/inference/src/cpp/core.cpp:105:\n"
           "Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151:\n"
           "FrontEnd API failed with OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed log:\n")
OV_RESIZE_MODE = OV_HEAD + (
    "-- Resize-23 with a message:\nCheck '(false)' failed at src/frontends/onnx/frontend/src/op/resize.cpp:91:\n"
    "While validating ONNX node '<Node(Resize): Resize_5>':\nhalf_pixel_symmetric - this type of coordinate "
    "transformation mode is not supported.\n\nSummary:\n-- Conversion is failed for: Resize-23\n")
OV_RESIZE_AXES = OV_HEAD + (
    "-- Resize-28 with a message:\nWhile validating ONNX node '<Node(Resize): Resize_2>': Check 'std::all_of(axes."
    "cbegin(), axes.cend(), ov::cmp::Less<size_t>(rank))' failed at src/core/shape_inference/include/interpolate_"
    "shape_inference.hpp:57:\nWhile validating node 'opset11::Interpolate Interpolate_1514900 (opset4::SoftPlus "
    "Softplus_0[0]:f32[1,1,1]) -> (f32[1,1,1])':\nAll axes values should less than input rank: 3\n")
OV_PAD = OV_HEAD + ("-- Pad-26 with a message:\nWhile validating ONNX node '<Node(Pad): Pad_2>': Exception from "
                    "src/frontends/onnx/frontend/src/op/pad.cpp:32:\nUnsupported padding mode: [wrap]\n")


def test_crashes_are_told_apart_by_the_innermost_check_and_failing_op():
    """Every OpenVINO compile failure starts with the same line; the signature reads what is inside."""
    def crash(log):
        return signature({"system": "openvino-cpu", "symptom": "crash", "stage": "compile",
                          "summary": log.splitlines()[0]}, log)
    sigs = [crash(x) for x in (OV_RESIZE_MODE, OV_RESIZE_AXES, OV_PAD)]
    assert len(set(sigs)) == 3, sigs
    assert "| Resize |" in sigs[0] and "resize.cpp: half_pixel_symmetric" in sigs[0]
    assert "interpolate_shape_inference.hpp: All axes values should less than input rank" in sigs[1]
    assert "| Pad |" in sigs[2] and "Unsupported padding mode" in sigs[2]
    # the same failure in another node, at another opset, with other numbers: one signature
    again = OV_RESIZE_AXES.replace("Resize-28", "Resize-20").replace("Resize_2", "Resize_9").replace("rank: 3", "rank: 5")
    assert crash(again) == sigs[1]
    ort = ("[ONNXRuntimeError] : 1 : FAIL : Node (Mul_3) Op (Mul) [ShapeInferenceError] Incompatible dimensions")
    s = signature({"system": "ort-cpu", "symptom": "crash", "stage": "compile", "summary": ort}, ort)
    assert "| Mul |" in s and "ShapeInferenceError: Incompatible dimensions" in s, s


def test_normalize_keeps_words():
    assert normalize("Node 'conv_3' at /a/b.cc:12 failed 3 times (0xdeadbeef)") == \
        "Node <name> at <path> failed <n> times (<addr>)"
    # a rank inside a name is a number too: TVM's Resize2D and Resize3D checks are one template
    assert normalize("Resize2D expects a 2-dim shape") == normalize("Resize3D expects a 3-dim shape")
    assert normalize("conv1d") == "conv<n>d" and normalize("Add2") == "Add2"


def test_qdq_pair_names_of_values_and_temps_are_one_variable():
    # kept 0100 in an hour of ort-cpu: the QuantizeLinear the QDQ writer pairs with a value (v6_q) or with a
    # temp (_resh15_q, _slic10_q; a second pair: v6_q2) named in the message split one fault 3 ways; in a
    # later half hour, a node ORT's Gemm pass made split it again
    msg = ("InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. Type Error: Type "
           "'tensor(int32)' of input parameter ({zp}) of operator (QuantizeLinear) in node ({node}) is invalid.")
    sigs = {signature({"system": "ort-cpu", "symptom": "crash", "stage": "compile", "summary": m}, m)
            for m in (msg.format(zp="_zero18", node="v6_q"), msg.format(zp="_zp1", node="_resh15_q"),
                      msg.format(zp="_zp2", node="_slic10_q"), msg.format(zp="_zp3", node="v6_q2"),
                      msg.format(zp="_zp1", node="gemm_input_reshape_arg_q"))}  # a node an ORT pass made
    assert len(sigs) == 1, sigs
    # words with a digit and an underscore are not names: a C type stays itself
    assert normalize("int8_t and uint8_t") == "int8_t and uint8_t"


def test_index_store_groups_and_the_deduper_continues_it(tmp_path):
    s1 = ORT_FUSION.format(node="a", k=1, addr="1")
    s2 = ORT_FUSION.format(node="b", k=2, addr="2")
    root = store(tmp_path, [crash(s1), crash("TypeError: bad"), crash(s2)])
    (root / "0003").mkdir()
    (root / "0003" / "meta.json").write_text("{not json")
    idx = index_store(root)
    assert idx["bugs"] == 3 and idx["unique"] == 2
    assert [r["status"] for r in idx["rows"]] == ["unique", "unique", "duplicate of 0000"]
    assert idx["unreadable"][0]["id"] == "0003"
    d = Deduper(root)
    assert d.unique == 2
    sig, dup = d.check(crash(ORT_FUSION.format(node="zz", k=9, addr="9")), "")
    assert dup == "0000"
    sig, dup = d.check(crash("ValueError: new"), "")
    assert dup is None


def test_dedup_command_writes_index_and_readme(tmp_path, capsys):
    (tmp_path / "bugs").mkdir()
    root = store(tmp_path / "bugs", [crash("TypeError: x"), crash("TypeError: x")])
    assert main(["dedup", "--json", str(root)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out == {"bugs": 2, "unique": 1, "unreadable": 0, "index": str(root / "index.json"),
                   "readme": str(root / "README.md")}
    index = json.loads((root / "index.json").read_text())
    assert index["groups"][0]["folders"] == ["0000", "0001"]
    readme = (root / "README.md").read_text()
    assert "| 0001 | duplicate of 0000 |" in readme and "2 bug folders, 1 distinct signatures" in readme


@pytest.mark.parametrize("args", [["dedup"], ["dedup", "/no/such/folder"], ["dedup", "a", "b"]])
def test_dedup_command_rejects_bad_arguments(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "nnfuzz dedup" in err or "usage: nnfuzz dedup" in err


def test_dedup_of_a_folder_without_bugs_is_an_error(tmp_path, capsys):
    assert main(["dedup", str(tmp_path)]) == 2
    assert "no bug folders" in capsys.readouterr().err


def test_compiler_value_names_do_not_split_a_signature():
    a = crash("TypeError: Binary operators must have the same datatype. However, R.subtract(R.const(1, 'float32'), lv7)")
    b = crash("TypeError: Binary operators must have the same datatype. However, R.subtract(R.const(2, 'float32'), lv22)")
    first = crash("TypeError: Binary operators must have the same datatype. However, R.subtract(R.const(2, 'float32'), lv)")
    assert signature(a, "") == signature(b, "") == signature(first, "")  # Relax's first binding is plain lv
    assert normalize("%12 = fadd %x.1, %y") == "<var> = fadd <var>, <var>"
    # TVM's FuseTIR names the TOPI buffer of whichever op it fused first (a tvm-cpu soak: kept 0098 as 3 more)
    fuse = "Inconsistent buffers {} and A mapped to the same relax var: lv1"
    assert len({normalize(fuse.format(b)) for b in ("T_divide", "T_add", "T_dynamic_strided_slice_with_axes")}) == 1


def test_tvm_crash_signature_reads_the_op_from_the_worker_output_and_the_message_template():
    """TVM prints "Error converting operator X" on the worker's stderr; the exception's first sentence is
    the template (the rest prints the Relax expression and dtypes)."""
    def crash(dtypes, op, warning):
        summary = (f"TypeError: Binary operators must have the same datatype for both operands.  However, "
                   f"R.power(lv1, lv18) uses datatype T.{dtypes[0]} on the LHS, and datatype T.{dtypes[1]} on the RHS.")
        log = (f"{summary}\n\nTraceback (most recent call last):\n  File \"x.py\", line 1, in f\n{summary}\n"
               f"--- worker output ---\n[22:59:28] /project/src/x.cc:12: Warning: {warning}\n"
               f"Error converting operator {op}, with inputs: [lv1, R.bitwise_xor(lv16, lv17)]\n")
        return signature({"system": "tvm-cpu", "symptom": "crash", "stage": "compile", "summary": summary}, log)
    a = crash(("int64", "uint8"), "Pow", "Unknown pragma pragma_scope")
    assert a == "tvm-cpu | crash | compile | TypeError | Pow | Binary operators must have the same datatype for both operands"
    assert crash(("int32", "int8"), "Pow", "BlockBuilder destroyed with remaining blocks!") == a
    assert crash(("float16", "float32"), "ThresholdedRelu", "x") != a


OV_SCAN = ("RuntimeError: Exception from src/inference/src/cpp/core.cpp:105:\n"
           "Check 'false' failed at src/frontends/common_translators/src/unconverted_ops_report.cpp:151:\n"
           "FrontEnd API failed with OpConversionFailure:\nModel wasn't fully converted. Failed operations detailed log:\n"
           "-- Scan-27 with a message:\nWhile validating ONNX node '<Node(Scan): {t}_FinalState, {t}_OutputAccum>': "
           "Check 'node_inputs.size() >= in_offset' failed at src/frontends/onnx/frontend/src/op/scan.cpp:36:\n"
           "FrontEnd API failed with OpConversionFailure:\n{t}_FinalState, {t}_OutputAccum Number of Scan node "
           "inputs (5) is less than required (7)\n")


def test_onnx_node_test_names_do_not_split_a_root_cause():
    """ONNX's node tests name an expanded function's edges "<Op>_<test>_expanded_function_<x>", and
    OpenVINO prints them (and its CPU plugin any IR name after "Operation name:"): one signature per
    root cause, not per migrated test (12 OpenVINO signatures of two Scan checks before)."""
    def ov(text):
        return signature(crash(text.splitlines()[0], system="openvino-cpu"), text)

    a = ov(OV_SCAN.format(t="LinearAttention_test_linear_attention_gated_delta_expanded_function"))
    b = ov(OV_SCAN.format(t="LinearAttention_test_linear_attention_fp16_expanded_function"))
    assert a == b and "| Scan |" in a and "linear_attention" not in a, a
    dyn = ("RuntimeError: Exception from src/inference/src/cpp/core.cpp:117:\nCheck '!shape.rank().is_dynamic()' "
           "failed at src/plugins/intel_cpu/src/node.cpp:108:\nUnexpected: CPU plug-in doesn't support ReduceSum "
           "operation with dynamic rank. Operation name: {n}\n")
    assert ov(dyn.format(n="ReduceLogSum_test_reduce_log_sum_asc_axes_expanded_function_ReduceSum")) \
        == ov(dyn.format(n="y")) == ov(dyn.format(n="ReduceSum_0"))
    # still told apart: another check, another op
    assert ov(OV_SCAN.format(t="X_test_a").replace("node_inputs.size() >= in_offset", "body_outputs.size() > 0")) != a
    assert ov(dyn.format(n="y").replace("ReduceSum", "Unsqueeze")) != ov(dyn.format(n="y"))


def test_a_shape_fault_of_a_reduce_op_is_the_familys():
    """OpenVINO ignores the axes attribute of every Reduce op below opset 18 (kept bugs 0011, 0014): one
    shape fault, one signature, whichever reduce op drew it; a values fault stays the op's own."""
    from nnfuzz.triage.meta import BugMeta

    def sig(op, kind, symptom="inconsistency"):
        root = {"op": op, "system_op": op, "kind": kind, "method": "local-error" if symptom == "inconsistency" else "prefix"}
        return signature(BugMeta(system="openvino-cpu", symptom=symptom, stage="compile", root_cause=root))

    assert sig("ReduceL1", "shape") == sig("ReduceLogSumExp", "shape") == "openvino-cpu | inconsistency | Reduce* | shape"
    assert sig("ReduceL1", "shape", "crash") == sig("ReduceSum", "shape", "crash")
    assert sig("ReduceL1", "values") != sig("ReduceLogSumExp", "values")
    assert sig("ArgMax", "dtype") == sig("ArgMin", "dtype") != sig("Reduce", "dtype")


def test_the_node_an_openvino_error_names_is_read_from_its_first_failed_op():
    """OpenVINO names the ONNX node it failed to convert (tests/cases/openvino-one-fault): the crash prefix
    starts there, not at the first node of that op (the Pad case's graph has an earlier Pad that is right),
    and of two failed ops listed, the first is the one the signature reads."""
    from pathlib import Path

    from nnfuzz.triage.rootcause import failing_node, failing_op

    cases = Path(__file__).parents[1] / "cases" / "openvino-one-fault"
    pad = (cases / "reduce-then-pad" / "err.log").read_text()
    conv = (cases / "reduce-then-conv" / "err.log").read_text()
    assert (failing_op(pad), failing_node(pad, "openvino-cpu")) == ("Pad", "Pad_9")
    assert (failing_op(conv), failing_node(conv, "openvino-cpu")) == ("Conv", "Conv_54")  # not QuantizeLinear_56
    assert failing_node("Fail: [ONNXRuntimeError] : 1 : FAIL : Node (Expand_4) Op (Expand)", "ort-cpu") == ""


def test_the_types_in_orts_dump_of_a_rejected_node_do_not_sign_it():
    # kept 0079 in half an hour of ort-cpu: ORT's QDQ fusion gives QLinearAveragePool a dilations attribute,
    # and its dump of the node names each value's type: uint8 and int8 graphs were signed as two faults
    dump = ('InvalidGraph: [ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. In Node, ("AveragePool_12", '
            'QLinearAveragePool, "com.microsoft", -1) : ("v0_q": tensor({t}),"_scale15": tensor(float),"_zp6": '
            'tensor({t}),) -> ("v3_q": tensor({t}),) , Error Unrecognized attribute: dilations for operator {op}')
    sig = {t: signature({"system": "ort-cpu", "symptom": "crash", "stage": "compile", "summary": m}, m)
           for t, m in (("uint8", dump.format(t="uint8", op="QLinearAveragePool")),
                        ("int8", dump.format(t="int8", op="QLinearAveragePool")))}
    assert sig["uint8"] == sig["int8"] and "QLinearAveragePool, <name>, -<n>) : <values> , Error" in sig["int8"]
    # the rest of the message still tells faults apart
    assert normalize(dump.format(t="int8", op="A")) != normalize(dump.format(t="int8", op="B"))
