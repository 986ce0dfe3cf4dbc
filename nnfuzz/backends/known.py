"""Known limitations of the systems under test, as data (not log greps scattered in code).

Each entry says which engine (``Backend.engine``: "ort" covers ort-cpu and ort-gpu), which op/dtype (None: any), the error pattern, and what it means:
``unsupported`` errors are the system saying it lacks an op or dtype (verdict UNSUPPORTED, never a
bug); ``io`` entries are limits of the Python API used to feed the system (also UNSUPPORTED).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Known:
    engine: str                 # "ort", "tvm", "tf|xla|tflite" (any of them), or "*"
    pattern: str                # regex searched in the error text
    kind: str = "unsupported"   # unsupported | io
    op: Optional[str] = None
    dtype: Optional[str] = None
    note: str = ""


KNOWN = [
    Known("ort", r"NOT_IMPLEMENTED : Could not find an implementation for", note="no CPU kernel for this op x dtype"),
    Known("ort", r"NOT_IMPLEMENTED : Failed to find kernel for", note="no CPU kernel for this op at this opset"),
    Known("ort", r"Provider type for \S+ node with name .* is not set", note="no kernel for this op x dtype in "
          "any provider of the session (CUDA, then the CPU fallback): how ORT's memcpy transformer says it "
          "(transformer_memcpy.cc) in an ort-gpu session, where ort-cpu says 'Could not find an implementation'"),
    Known("ort", r"is not a registered function/op", note="ORT does not implement this op (e.g. ai.onnx.preview ones)"),
    Known("ort", r"Dilation not supported for AutoPadType::SAME", note="ORT's Conv refuses auto_pad SAME_* with dilations "
          "(the ONNX spec allows it)"),
    Known("ort", r"data type is not supported with Scatter(ND|Elements) opset \d+ when reduction is",
          note="no CPU kernel for this scatter reduction x dtype (float16 add/mul, ScatterND float16 max/min)"),
    Known("ort", r"element_type \d+ not implemented for ScatterND operator", op="ScatterND",
          note="the CUDA ScatterND kernel does a reduction (add/mul/max/min) for a fixed list of element types "
          "only (float types), though registered for all (ScatterNDImplReduction's type switch, "
          "onnxruntime/core/providers/cuda/tensor/scatter_nd_impl.cu); seen with uint8, int8, int16, int32, int64, double"),
    Known("ort", r"Numpy_type \d+ can't be converted to MLDataType", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot feed or fetch this numpy dtype"),
    Known("ort", r"Unexpected input data type.*tensor\(bfloat16\)", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot feed bfloat16"),
    Known("ort", r"No corresponding Numpy type for Tensor Type\. bfloat16", kind="io", dtype="bfloat16",
          note="the ORT Python API cannot return bfloat16 outputs"),
    Known("tvm", r"operators are not supported for frontend ONNX", note="Relax ONNX frontend lacks the op"),
    Known("tvm", r"only applies to float", note="Relax power/float-only intrinsics on integer inputs"),
    Known("tvm", r"Unsupported (data|element) ?type|unsupported dtype|Cannot convert .*bfloat16",
          note="dtype not supported by the frontend or codegen"),
    Known("tvm", r"Data type \S+ not supported for \w+ op", note="dtype not supported by a Relax op"),
    Known("tvm", r"(group_norm|layer_norm|instance_norm): only support float32 and float16", dtype="float64",
          note="Relax's nn.group_norm / layer_norm / instance_norm legalize float32 and float16 only"),
    Known("tvm", r"Unsupported input dtype: \w+", op="TopK",
          note="TVM's contrib sort/topk runtime kernel lacks the dtype (int16)"),
    Known("inductor", r'"\w+_cuda" not implemented for \'\w+\'',
          note="torch has no CUDA kernel for this op x dtype (AT_DISPATCH's words): integer addmm/baddbmm "
          "(cuBLAS has no integer GEMM), a torch limitation inductor falls back to"),
    Known("tvm", r"TopK k must be a constant|TopK sorted must be 1 for Relax frontend|"
          r"GroupNormalization currently only supports stash_type=1|for size is currently unsupported|"
          r"Dynamic Split not yet supported|Only constant axes currently supported|"
          r"Slice with dynamic parameters does not support ShapeExpr input|Unsupported coordinate_transformation_mode",
          note="the Relax ONNX frontend refuses, in its own words, an attribute or input form it does not "
          "implement: TopK with a computed k or sorted=0, GroupNormalization with float64 statistics, Resize "
          "with computed sizes or an opset-19 coordinate mode (half_pixel_symmetric), Split with computed "
          "split sizes, a reduction with computed axes, Slice of a shape with computed bounds"),
    Known("openvino", r"No conversion rule found for operations", note="OpenVINO's ONNX frontend lacks the op"),
    Known("openvino", r"Unsupported input type [a-z]+\d*", note="OpenVINO's ONNX frontend does not take this dtype "
          "for the op"),
    Known("openvino", r"this type of coordinate transformation mode is not supported|Unsupported padding mode",
          note="OpenVINO's ONNX frontend lacks a newer attribute value: Resize-18's half_pixel_symmetric, Pad-19's wrap"),
    Known("openvino", r"openvino-cpu does not compute in float64", dtype="float64",
          note="the CPU plugin has no float64 kernels (it computes float64 in float32)"),
    Known("trt", r"trt-gpu does not compute in float64", dtype="float64", note="TensorRT has no float64 type"),
    Known("trt", r"ErrorCode\.UNSUPPORTED_(NODE|GRAPH)\w*",
          note="TensorRT's ONNX parser lacks the op, attribute or dtype"),
    Known("tf|xla|tflite", r"Could not find device for node|No registered '\w+' OpKernel|"
          r"Value for attr '\w+' of \w+ is not in the list of allowed values|"
          r"No OpKernel was registered to support Op", note="TF has no kernel for this op x dtype"),
    Known("tflite", r"op is neither a custom op nor a flex op|failed to legalize operation|"
          r"Some ops are not supported by the native TFLite runtime",
          note="the TFLite converter has no builtin op for this op x dtype (flex ops are not used)"),
]


def classify(engine: str, error_text: str) -> Optional[Known]:
    """The known limitation matching ``error_text`` on ``engine`` (a ``Backend.engine``), or None."""
    for k in KNOWN:
        if (k.engine == "*" or engine in k.engine.split("|")) and re.search(k.pattern, error_text):
            return k
    return None
