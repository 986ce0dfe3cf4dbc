"""tflite-cpu under ``backend.options.quantize=int8``: the TF function converted to a full-integer model
(post-training quantization calibrated on the test's own inputs) and run on int8 inputs, returning its int8
outputs and the record the int8 oracle rebuilds the model's arithmetic from (oracles/int8_steps.py,
docs/quantization.md "TFLite full-integer models")."""
from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Tuple

import numpy as np

from nnfuzz.oracles.int8_steps import OPS, Q, SCOPE, W, dequantize, quantize


def convert(tf, module, gir, inputs: Dict[str, np.ndarray]) -> bytes:
    """The full-integer flatbuffer: ``optimizations=[DEFAULT]``, the representative dataset the test's inputs
    (one sample: calibration then spans exactly the values the test runs, so its outputs use the whole int8
    range), builtin int8 kernels only, int8 inputs and outputs (the oracle quantizes the inputs itself and
    reads the outputs' integers: no DEQUANTIZE rounding between the kernel and the comparison)."""
    concrete = module.__call__.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], module)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    sample = [np.asarray(inputs[i], np.float32) for i in gir.inputs]
    converter.representative_dataset = lambda: iter([sample])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return converter.convert()


def run(interp, gir, weights: Dict[str, np.ndarray], inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Run the converted model (``interp``, tensors not yet allocated) on ``inputs`` quantized with its input
    tensors' parameters: its int8 outputs by graph name, plus the record. A model the converter left float
    at an input or output (it quantized no kernel there) is not run: its record says why."""
    runner = interp.get_signature_runner()
    details = {**runner.get_input_details(), **runner.get_output_details()}
    names = {**{name: name for name in gir.inputs}, **{name: f"output_{k}" for k, name in enumerate(gir.outputs)}}
    ops = [o for o in interp._get_ops_details() if o["op_name"] != "DELEGATE"]
    result = {OPS: np.array(sorted({o["op_name"] for o in ops}))}
    floats = [f"{name} ({np.dtype(details[theirs]['dtype']).name})" for name, theirs in names.items()
              if details[theirs]["dtype"] is not np.int8 or details[theirs]["quantization"][0] == 0]
    if floats:
        result[SCOPE] = np.array([f"the converter kept {', '.join(floats)} unquantized: no full-integer model"])
        return result
    record = {Q + name: np.array(details[theirs]["quantization"], np.float64) for name, theirs in names.items()}
    feed = {name: quantize(inputs[name], *record[Q + name]).astype(np.int8) for name in gir.inputs}
    got = runner(**feed)
    result.update({name: np.asarray(got[names[name]]) for name in gir.outputs})
    result.update(record)
    held, problems = _read_model(interp, ops, weights, [tuple(v) for v in record.values()])
    result.update({W + w: v for w, v in held.items()})
    if problems:
        result[SCOPE] = np.array(problems)
    return result


# Kernels whose output is one of their inputs' values (padding, a bound): a quantized constant they read on
# their output's grid (an attribute the converter quantized: Clip's bounds, a pooling's pad value) gives the
# output the value the reference quantizes that attribute to.
SELECTING = ("PAD", "PADV2", "MAXIMUM", "MINIMUM")


def _read_model(interp, ops, weights, graph_params: List[Tuple[float, float]]):
    """({weight: its value as the model holds it, dequantized, in the graph's layout}, the reasons the model
    is outside what the int8 oracle judges): a tensor an op writes with quantization parameters that are no
    graph input's or output's (a requantized intermediate the graph has no value for), or a quantized
    constant that is none of the graph's weights, not all zeros, and not an attribute on a selecting
    kernel's output grid."""
    written = {int(t) for o in ops for t in o["outputs"]}
    inputs = {d["index"] for d in interp.get_input_details()}
    params = {}
    for t in interp.get_tensor_details():
        qp = t["quantization_parameters"]
        params[t["index"]] = (np.asarray(qp["scales"], np.float64), np.asarray(qp["zero_points"], np.int64),
                              int(qp["quantized_dimension"]))
    floats = {w: np.asarray(v, np.float32) for w, v in weights.items() if np.asarray(v).dtype.kind == "f"}
    held, problems = {}, []
    for t in interp.get_tensor_details():
        scales, zps, axis = params[t["index"]]
        if scales.size == 0 or t["index"] in inputs:
            continue
        if t["index"] in written:
            if scales.size != 1 or (float(scales[0]), float(zps[0])) not in graph_params:
                problems.append(f"{t['name']!r} ({_writer(ops, t['index'])}) is requantized (scale {scales.tolist()}, "
                                f"zero point {zps.tolist()}): no graph value has these parameters")
            continue
        try:
            values = np.asarray(interp.get_tensor(t["index"]))
        except ValueError:
            continue  # a scratch tensor (no data before the model runs)
        match = _match(values, scales, zps, axis, floats)
        if match is None:
            if dequantize(values, scales, zps, axis).any() and not _on_selected_grid(ops, t["index"], params):
                problems.append(f"quantized constant {t['name']!r} {list(values.shape)} is none of the graph's weights")
            continue
        w, value = match
        if w in held and not np.array_equal(held[w], value):
            problems.append(f"weight {w} is held at two quantizations")
        held[w] = value
    problems += [f"weight {w} is held both quantized and as the float constant {t['name']!r}"
                 for t in interp.get_tensor_details() if t["index"] not in written and t["index"] not in inputs
                 and np.dtype(t["dtype"]) == np.float32 and params[t["index"]][0].size == 0
                 for w in held if _same_floats(interp, t, floats[w])]
    return held, problems


def _same_floats(interp, t, f: np.ndarray) -> bool:
    """Whether float constant ``t`` holds weight ``f``'s values, in any layout (the same sorted values: a
    conservative test, which may take an unrelated constant of the same values for the weight)."""
    if int(np.prod(t["shape"])) != f.size:
        return False
    try:
        values = np.asarray(interp.get_tensor(t["index"]))
    except ValueError:
        return False
    return np.array_equal(np.sort(values.ravel()), np.sort(f.ravel()))


def _on_selected_grid(ops, index: int, params) -> bool:
    """Whether every kernel reading tensor ``index`` is a selecting one whose output has its parameters."""
    readers = [o for o in ops if index in o["inputs"]]
    scales, zps, _ = params[index]
    return bool(readers) and all(
        o["op_name"] in SELECTING and all(np.array_equal(params[int(out)][0], scales)
                                          and np.array_equal(params[int(out)][1], zps) for out in o["outputs"])
        for o in readers)


def _writer(ops, index: int) -> str:
    return next((o["op_name"] for o in ops if index in o["outputs"]), "?")


def _match(values, scales, zps, axis: int, floats: Dict[str, np.ndarray]) -> Optional[Tuple[str, np.ndarray]]:
    """(weight, its dequantized value in the graph's layout) when ``values`` are one of ``floats`` quantized
    with these parameters (within a step, for ties), in some order of its axes; None when none is."""
    bits = values.dtype.itemsize * 8
    best = None
    for w, f in floats.items():
        if f.size != values.size:
            continue
        for perm in itertools.permutations(range(f.ndim)):
            moved = f.transpose(perm)
            if [d for d in moved.shape if d != 1] != [d for d in values.shape if d != 1]:
                continue
            want = _quantize_along(moved.reshape(values.shape), scales, zps, axis, bits)
            off = np.abs(want - values.astype(np.float64))
            if off.max(initial=0.0) <= 1 and (best is None or off.sum() < best[0]):
                back = dequantize(values, scales, zps, axis).reshape(moved.shape).transpose(np.argsort(perm))
                best = (off.sum(), w, back)
    return None if best is None else best[1:]


def _quantize_along(x, scales, zps, axis: int, bits: int) -> np.ndarray:
    if scales.size == 1:
        return quantize(x, scales[0], zps[0], bits)
    if x.ndim == 0 or x.shape[axis] != scales.size:
        return np.full(x.shape, np.inf)
    shape = [1] * x.ndim
    shape[axis] = scales.size
    return quantize(x, scales.reshape(shape), zps.reshape(shape), bits)
