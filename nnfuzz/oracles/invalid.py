"""Disruptive mode (``mgen.invalid=P``): a fraction P of the models (drawn from each seed) breaks one rule
of one node (materialize/onnx/invalid.py); the system must reject such a model with an error (judged by
triage/judging.py's judge_invalid; docs/oracles.md). Turned on beside the oracle ``oracle=`` names,
which tests the models left valid."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, Tested
from nnfuzz.oracles.metamorphic import NOT_LOCALIZED

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


@dataclasses.dataclass(frozen=True)
class InvalidGraphs(Oracle):
    name = "invalid"
    selectable = False
    rate: float = 0.0
    primary: Optional[Oracle] = None   # the campaign's other oracle: meta.json's ``oracle.expected`` is its

    @classmethod
    def enabled(cls, cfg, primary: Oracle) -> Optional[Oracle]:
        rate = cfg.policy.invalid
        return cls(rate=rate, primary=primary) if rate > 0 else None

    def check(self, sandbox, cfg) -> None:
        """An invalid model is a broken ONNX model: the system under test must take ONNX."""
        if sandbox.format != "onnx":
            raise ConfigError(f"mgen.invalid={self.rate} breaks ONNX models; {cfg.backend} takes {sandbox.format}: "
                              "use an ONNX backend (ort-cpu, tvm-cpu, ...) or mgen.invalid=0")

    def record(self) -> Dict:
        return {"kind": self.name, "rate": self.rate}

    def prepare(self, p: "Produced", model, plan) -> bool:
        """With probability ``rate`` (drawn from the seed), make ``p``'s model break one rule; True when it did."""
        import numpy as np

        from nnfuzz.materialize.onnx.invalid import NoViolation, make_invalid

        if model.onnx is None or np.random.default_rng([p.seed & 0xFFFFFFFF, 52]).random() >= self.rate:
            return False
        try:
            bad, record = make_invalid(model.onnx, p.seed)
        except NoViolation as e:
            p.rec["invalid"] = {"none": str(e)}
            return False
        p.model_bytes, p.invalid = bad.SerializeToString(), record
        p.rec["invalid"] = {"rule": record["rule"], "op": record["op"]}
        return True

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        """Run the invalid model; it must be rejected with an error."""
        import onnx

        from nnfuzz.fuzz.context import run_on
        from nnfuzz.materialize.model import ReferenceData
        from nnfuzz.triage.judging import judge_invalid

        res = run_on(ctx, lane.sandbox, p)
        if res is None:
            return Tested(None)
        declared = onnx.load_model_from_string(p.model_bytes).graph.output
        verdict, outcome = judge_invalid(res, ctx.info.engine, declared, p.invalid)
        return Tested(verdict, res, "actual", None, ReferenceData(p.reference.input, None), invalid_outcome=outcome)

    def account(self, counters, p: "Produced", t: Tested) -> None:
        counters.invalid[f"{p.invalid['rule']}: {t.invalid_outcome}"] += 1

    def expected_record(self, ctx: "RunContext") -> Dict:
        return self.primary.expected_record(ctx)

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        """Also meta.json's ``invalid`` (the rule the model breaks); not localized."""
        from nnfuzz.verdict import Symptom

        out = {**super().meta_fields(ctx, p, t), "invalid": dict(p.invalid)}
        if t.verdict.symptom is Symptom.inconsistency:
            out["localization_note"] = NOT_LOCALIZED
        return out

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        return None if meta.invalid is None else f"invalid {meta.invalid.get('rule')} {meta.invalid.get('op')}"

    def localizes(self, p: "Produced") -> bool:
        return False

    def reducible(self, p: "Produced") -> bool:
        return False  # reduction rebuilds from the graph: the broken rule would not survive it
