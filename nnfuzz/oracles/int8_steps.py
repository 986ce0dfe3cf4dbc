"""The int8 oracle's arithmetic (numpy only): TFLite's quantize and dequantize, the record a quantized
tflite-cpu run returns beside its outputs, and the comparison in output quantization steps
(docs/quantization.md, "TFLite full-integer models").

A run under ``backend.options.quantize=int8`` (backends/tflite_int8.py) returns the model's int8 outputs
under the graph's output names and, under names starting with ``RECORD``, what the reference needs:
``int8:q:<var>`` = [scale, zero_point] of each graph input and output, ``int8:w:<var>`` = a weight as the
converted model holds it (dequantized, in the graph's layout), ``int8:scope`` = why the model is outside
what this comparison can judge (none: it can), ``int8:ops`` = the model's kernels.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

RECORD = "int8:"
Q, W, SCOPE, OPS = RECORD + "q:", RECORD + "w:", RECORD + "scope", RECORD + "ops"

# How many output steps a correct int8 kernel may be from Q_out(op(DQ(Q(x)))): TFLite's integer kernels
# rescale with a 31-bit fixed-point multiplier and round once (MultiplyByQuantizedMultiplier), or round
# half away from zero where the reference rounds half to even; average pooling rounds its integer mean
# half away from zero; LUT kernels (Logistic, Tanh) hold float results rounded once; float kernels that
# the converter left between a DEQUANTIZE and a QUANTIZE round in float32. Each is within one step.
STEPS = 1


def quantize(x: np.ndarray, scale: float, zero_point: int, bits: int = 8) -> np.ndarray:
    """TFLite's QUANTIZE (reference_ops::AffineQuantize): round(x / scale) half away from zero, plus the zero
    point, saturated to the signed type; computed in float64 (TFLite's float32 division differs only within
    rounding of a half step, which the step allowance covers)."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    v = np.asarray(x, np.float64) / np.asarray(scale, np.float64)
    return np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5) + np.asarray(zero_point, np.float64), lo, hi)


def dequantize(q: np.ndarray, scale, zero_point, axis: int = 0) -> np.ndarray:
    """TFLite's DEQUANTIZE: float32(scale * (q - zero_point)), the product taken in double; per channel along
    ``axis`` when ``scale`` has several entries."""
    q = np.asarray(q, np.float64)
    s, z = np.asarray(scale, np.float64), np.asarray(zero_point, np.float64)
    if s.size > 1:
        shape = [1] * q.ndim
        shape[axis] = s.size
        s, z = s.reshape(shape), z.reshape(shape)
    return (s * (q - z)).astype(np.float32)


def split_record(outputs: Dict[str, np.ndarray]) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """(the model's outputs, the record) of a quantized run's answer."""
    return ({k: v for k, v in outputs.items() if not k.startswith(RECORD)},
            {k: v for k, v in outputs.items() if k.startswith(RECORD)})


def scope_problems(record: Dict[str, np.ndarray]) -> List[str]:
    a = record.get(SCOPE)
    return [] if a is None else [str(s) for s in np.atleast_1d(a)]


def quantized_inputs(record, gir, inputs: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """Each graph input as the int8 model receives it (quantized with its input tensor's parameters)."""
    out = {}
    for name in gir.inputs:
        scale, zp = record[Q + name]
        out[name] = quantize(inputs[name], scale, zp).astype(np.int8)
    return out


def reference_steps(gir, weights: Dict[str, np.ndarray], record, q_inputs: Dict[str, np.ndarray]):
    """Per graph output, (low, high, at): the range of Q_out(op(x)) over x = DQ(q_inputs) and its float32
    neighbours one ulp below and above (a value at a jump or a half step goes either way), and its value at
    DQ(q_inputs), evaluated by nnfuzz's numpy reference with the weights as the model holds them."""
    from nnfuzz.reference.registry import evaluate

    held = {w: (np.asarray(record[W + w], np.float32) if W + w in record else np.asarray(v))
            for w, v in weights.items()}
    deq = {n: dequantize(q, *record[Q + n]) for n, q in q_inputs.items()}
    runs = []
    for direction in (0.0, np.inf, -np.inf):
        xs = deq if direction == 0.0 else {n: np.nextafter(x, np.float32(direction)) for n, x in deq.items()}
        env = evaluate(gir, held, xs)
        runs.append({o: quantize(env[o], *record[Q + o]) for o in gir.outputs})
    return {o: (np.minimum.reduce([r[o] for r in runs]), np.maximum.reduce([r[o] for r in runs]), runs[0][o])
            for o in gir.outputs}


def off_steps(got: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """How many steps each int8 output is outside [low, high] (0 inside; NaN where the reference is NaN: the
    dequantized inputs left the op's domain, undefined, never counted as off)."""
    g = np.asarray(got, np.float64)
    return np.maximum(np.maximum(low - g, g - high), 0.0)


def compare_steps(gir, weights, record, q_inputs, got: Dict[str, np.ndarray], steps: int = STEPS):
    """The verdict of a quantized run's int8 outputs ``got`` against the quantized reference, ``steps``
    allowed; each output's figures (max steps off, values off) in ``errors``."""
    return judge_steps(gir, weights, record, q_inputs, got, steps)[0]


def judge_steps(gir, weights, record, q_inputs, got: Dict[str, np.ndarray], steps: int = STEPS):
    """(``compare_steps``'s verdict, the expected int8 outputs: the reference at the dequantized inputs)."""
    from nnfuzz.verdict import Stage, Symptom, Verdict

    errors, problems = {}, []
    ref = reference_steps(gir, weights, record, q_inputs)
    expected = {o: ref[o][2].astype(np.int8) for o in gir.outputs}
    for name in gir.outputs:
        low, high, _ = ref[name]
        g = got.get(name)
        if g is None or g.shape != low.shape:
            problems.append(f"{name}: shape {None if g is None else list(g.shape)} != reference {list(low.shape)}")
            continue
        off = off_steps(g, low, high)
        errors[name] = {"max_steps": float(off.max(initial=0.0)), "off": int((off > steps).sum()),
                        "scale": float(record[Q + name][0]), "zero_point": int(record[Q + name][1])}
        if (off > steps).any():
            k = int(np.argmax(off))
            problems.append(f"{name}: {errors[name]['off']}/{off.size} int8 values more than {steps} step(s) from "
                            f"the quantized reference (max {off.max():.0f} steps: {int(g.ravel()[k])} where the "
                            f"reference gives {int(low.ravel()[k])}..{int(high.ravel()[k])}; scale "
                            f"{errors[name]['scale']:.6g}, zero point {errors[name]['zero_point']})")
    if problems:
        return Verdict.bug(Symptom.inconsistency, Stage.verify, problems[0], "\n".join(problems), errors), expected
    return Verdict.passed(errors), expected
