"""The int8 oracle: what ``oracle=reference`` means for tflite-cpu under ``backend.options.quantize=int8``
(docs/quantization.md, "TFLite full-integer models").

The system converts the single-op float32 graph to a full-integer model calibrated on the test's inputs and
runs it on them quantized with its input tensors' parameters (backends/tflite_int8.py). Its int8 outputs are
compared, in output quantization steps, with Q_out(op(DQ(q_in))): nnfuzz's numpy reference of the op on
the dequantized inputs, with each weight as the model holds it, quantized with the output tensor's
parameters (oracles/int8_steps.py). A model whose kernels requantize a tensor the graph has no value for is
outside what this can judge: UNSUPPORTED, saying which tensor.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, Skip, Tested, no_second_choice

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


class Int8(Oracle):
    name = "int8"
    selectable = False  # chosen by the backend's options (Backend.oracle_for), under oracle=reference

    @classmethod
    def configure(cls, cfg) -> Oracle:
        no_second_choice("reference", cfg)
        options = " ".join(f"backend.options.{k}={v}" for k, v in sorted((cfg.backend_options or {}).items()))
        if cfg.policy.max_nodes != 1:
            raise ConfigError(f"{cfg.backend} with {options} judges single-op graphs (each quantized tensor a "
                              f"graph value): set mgen.max_nodes=1 (it is {cfg.policy.max_nodes})")
        if list(cfg.policy.dtypes) != ["float32"]:
            raise ConfigError(f"{cfg.backend} with {options} quantizes float32 graphs: set mgen.dtypes=[float32] "
                              f"(it is {list(cfg.policy.dtypes)})")
        return cls()

    def describe(self, backend: str) -> str:
        return f"{backend} (full-integer) vs the numpy reference quantized alike, in output steps (int8)"

    def skip(self, p: "Produced") -> Optional[Skip]:
        if p.values_undefined:  # undefined behaviour: whatever the system does is right
            return Skip.undefined_values(p)
        return None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        from nnfuzz.fuzz.context import run_on
        from nnfuzz.materialize.model import ReferenceData
        from nnfuzz.verdict import judge

        res = run_on(ctx, lane.sandbox, p)
        if res is None:
            return Tested(None)
        if res.status != "ok":
            return Tested(judge(res, None, ctx.info.engine, ctx.tolerances), res, reference=p.reference)
        verdict, expected = judge_int8(p.gir_text, p.weights, p.reference.input, res.outputs)
        # a saved bug's oracle.pkl holds the expected int8 outputs (undefined where the model is out of scope)
        return Tested(verdict, res, reference=ReferenceData(p.reference.input, expected))

    def localizes(self, p: "Produced") -> bool:
        return False  # one op: the verdict names it

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        """"int8 | <its op>" for a full-integer test's inconsistency: the graph is one op (``configure``), and its
        summary's numbers made a signature per folder (a 2-minute ConvTranspose1d campaign saved TRANSPOSE_CONV's
        ignored filter zero point as 3 "unlocalized" bugs)."""
        o = meta.oracle
        if not isinstance(o, dict) or o.get("kind") != cls.name or not meta.ops:
            return None
        return f"{cls.name} | {meta.ops[0]}"

    def reducible(self, p: "Produced") -> bool:
        return False

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        from nnfuzz.oracles.int8_steps import OPS, Q, split_record

        fields = super().meta_fields(ctx, p, t)
        fields["oracle"]["expected"] = {"system": "numpy reference, quantized as the model (int8)"}
        outputs = getattr(t.result, "outputs", None) or {}
        record = split_record(outputs)[1]
        fields["oracle"]["int8"] = {
            "params": {k[len(Q):]: [float(v[0]), int(v[1])] for k, v in record.items() if k.startswith(Q)},
            "kernels": [str(o) for o in record.get(OPS, [])]}
        return fields


def judge_int8(gir_text: str, weights: Dict, inputs: Dict, outputs: Dict):
    """(The verdict of a quantized run's answer ``outputs`` (int8 outputs and record) for the graph of
    ``gir_text`` with ``weights``, run on ``inputs`` (a campaign's test, or a bug folder's replay), the expected
    int8 outputs or None where the model is outside the oracle's scope)."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.oracles.int8_steps import judge_steps, quantized_inputs, scope_problems, split_record
    from nnfuzz.verdict import Verdict

    got, record = split_record(outputs)
    problems = scope_problems(record)
    if problems:
        return Verdict.unsupported(f"outside the int8 oracle's scope: {problems[0]}", "\n".join(problems)), None
    gir = GraphIR.loads(gir_text)
    return judge_steps(gir, weights, record, quantized_inputs(record, gir, inputs), got)
