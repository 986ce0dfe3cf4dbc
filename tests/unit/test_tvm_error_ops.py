"""TVM's failing op in a crash signature (nnfuzz/backends/tvm_knowledge.py ERROR_OPS, read by
nnfuzz/triage/rootcause.py): a check that fails while LegalizeOps lowers a Relax op names that op's TOPI
function, so that one check message shared by two root causes gives two signatures (issue 26: TVM 0.27's
"cannot make uint from negative value" is raised both by the uint8 Sign of the ONNX frontend's R.sign and by
the R.negative its uint8 Shrink makes, kept as bugs/kept/0008)."""
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.rootcause import root_cause

SITE = "/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/tvm"
SUMMARY = "InternalError: Check failed: (value >= 0) is false: cannot make uint from negative value -1"
# the frames of the err.logs that one-node uint8 Sign and Shrink models gave on tvm-cpu (TVM 0.27.0.post1)
HEAD = f"""{SUMMARY}

Traceback (most recent call last):
  File "/work/main/nnfuzz/backends/tvm.py", line 79, in build
    return self._tvm.compile(mod, target=target, relax_pipeline=relax_pipeline(self.pipeline, target))
  File "{SITE}/relax/vm_build.py", line 270, in build
    mod = relax_pipeline(mod)
  File "<unknown>", line 0, in TVMFFIPyCallManager::ForwardPyErrorToFFI()
  File "{SITE}/relax/transform/legalize_ops/common.py", line 110, in <lambda>
    return lambda bb, call: bb.call_te(te_func, *call.args, primfunc_name_hint=primfunc_name)
  File "{SITE}/relax/block_builder.py", line 364, in call_te
    tir_func, call_args, output_ty = gen_call_tir_inputs(func, *args, **kwargs)
  File "{SITE}/relax/utils.py", line 344, in gen_call_tir_inputs
    te_out = func(*te_args, **te_kwargs)
"""
SIGN = HEAD + f"""  File "{SITE}/topi/math.py", line 363, in sign
    return cpp.sign(x)
  File "<unknown>", line 0, in tvm::te::compute(tvm::ffi::Array<tvm::PrimExpr, void>)
  File "/project/include/tvm/ir/prim/op.h", line 575, in tvm::PrimExpr tvm::prim::MakeConstScalar(tvm::PrimType, ValueType, tvm::Span) [with ValueType = int]
tvm.error.InternalError: Check failed: (value >= 0) is false: cannot make uint from negative value -1
"""
SHRINK = HEAD + f"""  File "{SITE}/te/tag.py", line 58, in tagged_fdecl
    return fdecl(*args, **kwargs)
  File "{SITE}/topi/math.py", line 70, in negative
    return te.compute(x.shape, lambda *i: -x(*i))
  File "{SITE}/te/operation.py", line 131, in compute
    body = fcompute(*[v.var for v in dim_var])
  File "{SITE}/topi/math.py", line 70, in <lambda>
    return te.compute(x.shape, lambda *i: -x(*i))
  File "{SITE}/ir/_overload_prim_expr.py", line 145, in __neg__
    neg_one = const(-1, self.expr_ty().dtype)
  File "/project/include/tvm/ir/prim/op.h", line 575, in tvm::PrimExpr tvm::prim::MakeConstScalar(tvm::PrimType, ValueType, tvm::Span) [with ValueType = tvm::ffi::BigInt]
tvm.error.InternalError: Check failed: (value >= 0) is false: cannot make uint from negative value -1

--- worker output ---
[23:26:45] /project/src/relax/ir/block_builder.cc:67: Warning: BlockBuilder destroyed with remaining blocks!
"""


def crash(log):
    return signature({"system": "tvm-cpu", "symptom": "crash", "stage": "compile", "summary": SUMMARY}, log)


def test_a_legalization_failure_names_the_relax_ops_topi_function():
    # TOPI's ``sign`` is ONNX's Sign (rootcause.canonical_op); ``negative`` is no ONNX op's name and stays
    assert root_cause(SUMMARY, SIGN, "tvm-cpu") == ("Sign", "(value >= 0): cannot make uint from negative value -1")
    assert root_cause(SUMMARY, SHRINK, "tvm-cpu")[0] == "negative"


def test_one_check_raised_by_two_ops_gives_two_signatures():
    sign, shrink = crash(SIGN), crash(SHRINK)
    assert sign != shrink
    assert "| Sign |" in sign and "| negative |" in shrink, (sign, shrink)
    # the same op again, at other line numbers and paths: one signature
    moved = SIGN.replace("line 363", "line 371").replace(SITE, "/usr/lib/python3/dist-packages/tvm")
    assert crash(moved) == sign


def test_a_topi_function_with_a_rank_is_the_onnx_op():
    """TOPI's resize2d and the frontend's Resize are one op: a fault reached through either gives one
    signature (issue 26, item 7: TVM's align_corners divide-by-zero was split between them)."""
    topi = SIGN.replace("legalize_ops/common.py", "legalize_ops/image.py").replace("in sign", "in resize2d")
    assert root_cause(SUMMARY, topi, "tvm-cpu")[0] == "Resize"
    reduced = SIGN.replace("--- worker output ---", "[reduced from 9 to 1 nodes]\n--- worker output ---")
    assert crash(reduced) == crash(SIGN)  # reduction's note is not part of the system's message


def test_the_frontends_own_op_name_comes_first():
    """A conversion error (the frontend prints "Error converting operator X") names the ONNX op, not a TOPI
    function the converter called; frames outside LegalizeOps name nothing."""
    convert = (f"ValueError: bad\n\nTraceback (most recent call last):\n  File \"{SITE}/topi/image/resize.py\", "
               f"line 456, in resize1d\nValueError: bad\n--- worker output ---\nError converting operator Resize, "
               f"with inputs: [x]\n")
    assert root_cause("ValueError: bad", convert, "tvm-cpu")[0] == "Resize"
    assert root_cause(SUMMARY, SIGN.replace("legalize_ops/common.py", "transform/other.py"), "tvm-cpu")[0] == ""
