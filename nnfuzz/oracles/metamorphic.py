"""``oracle=metamorphic``: the same system on a semantically equivalent rewrite of the model (the rewrites:
nnfuzz/materialize/onnx/rewrite/; judged by triage/judging.py's judge_rewrite; docs/oracles.md). No
reference is needed: the original model's outputs on the system are the expected ones."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, Skip, Tested, no_second_choice

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced

NOT_LOCALIZED = "not localized: this oracle has no reference to localize against"


@dataclasses.dataclass(frozen=True)
class Metamorphic(Oracle):
    name = "metamorphic"
    rewrites: Tuple[str, ...] = ()   # the rewrite kinds drawn from (empty: all)

    @classmethod
    def configure(cls, cfg) -> Oracle:
        from nnfuzz.oracles.reference import backend_class_of

        no_second_choice(cls.name, cfg)
        formats = backend_class_of(cfg).formats
        if "onnx" not in formats:
            raise ConfigError(f"oracle=metamorphic rewrites ONNX models; {cfg.backend} takes {list(formats)}: use an "
                              f"ONNX backend (ort-cpu, tvm-cpu, openvino-cpu, ...)")
        return cls(rewrites=tuple(cfg.rewrites))

    def start(self, sandbox, cfg) -> Oracle:
        """``metamorphic.rewrites`` unset: the kinds the system reads (probed; nnfuzz/oracles/rewrite_probe.py)."""
        if self.rewrites:
            return self
        from nnfuzz.oracles.rewrite_probe import probe_rewrites

        return dataclasses.replace(self, rewrites=tuple(probe_rewrites(sandbox, cfg)))

    def record(self) -> Dict:
        return {"kind": self.name, "rewrites": list(self.rewrites)}

    def describe(self, backend: str) -> str:
        return f"{backend} vs {backend} on a rewrite of the model (metamorphic)"

    def prepare(self, p: "Produced", model, plan) -> bool:
        """The rewritten twin of ``p``'s model (none when no rewrite applies: the test is then skipped)."""
        from nnfuzz.materialize.onnx.rewrite.graphs import NotApplicable
        from nnfuzz.materialize.onnx.rewrite.drawing import rewrite_model
        from nnfuzz.materialize.onnx.rewrite.registry import RewriteContext

        if model.onnx is None:
            return True
        ctx = RewriteContext(model.gir, model.weights, model.export, defined=p.reference.output is not None)
        try:
            proto, record = rewrite_model(model.onnx, p.seed, ctx, list(self.rewrites) or None)
        except NotApplicable as e:
            p.rec["rewrite"] = {"none": str(e)}
            return True
        p.rewrite_bytes, p.rewrite = proto.SerializeToString(), record
        p.rec["rewrite"] = [s["kind"] for s in record["steps"]]
        return True

    def skip(self, p: "Produced") -> Optional[Skip]:
        # values the search left undefined are tested: the system is compared with itself
        return Skip("no_rewrite", {"verdict": "no-rewrite"}) if p.rewrite_bytes is None else None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        """Run the model and its rewrite on the lane's sandbox; the original's outputs are the expected ones."""
        from nnfuzz.fuzz.context import run_bytes, run_on, timed_twins
        from nnfuzz.materialize.model import ReferenceData
        from nnfuzz.triage.judging import judge_rewrite
        from nnfuzz.verdict import Symptom

        res = run_on(ctx, lane.sandbox, p)
        if res is None:
            return Tested(None)
        again = None
        if res.status == "ok":  # a failing original is judged alone
            again = run_bytes(ctx, lane.sandbox, p.rewrite_bytes, p.reference.input)
            if again is None:
                return Tested(None, res)
        aliases = p.rewrite.get("aliases", {})
        verdict, failed = judge_rewrite(res, again, ctx.info.engine, ctx.tolerances, aliases)
        expected_outputs = res.outputs if res.status == "ok" else None
        ref = ReferenceData(p.reference.input, expected_outputs)
        if verdict.symptom is Symptom.inconsistency and p.reference.output is not None:
            twins, _ = timed_twins(ctx, p)  # defined values: the float64 twin tells rounding noise from a bug
            if twins.output_f64 is not None:
                ref = ReferenceData(p.reference.input, expected_outputs, twins.output_f64, twins.output_f64_jitter)
                verdict, failed = judge_rewrite(res, again, ctx.info.engine, ctx.tolerances, aliases,
                                                twins.output_f64, twins.output_f64_jitter)
        shown = again if failed in ("rewrite", "pair") or (failed is None and res.status == "ok") else res
        return Tested(verdict, shown, "actual", expected_outputs, ref, failed=failed)

    def expected_record(self, ctx: "RunContext") -> Dict:
        return {**ctx.under_test(), "model": "model_rewrite.onnx"}

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        """Also meta.json's ``rewrite`` (the record, with which model failed); not localized."""
        from nnfuzz.verdict import Symptom

        out = super().meta_fields(ctx, p, t)
        if p.rewrite is not None:
            out["rewrite"] = {**p.rewrite, "failed": t.failed}
            if t.verdict.symptom is Symptom.inconsistency:
                out["localization_note"] = NOT_LOCALIZED
        return out

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        from nnfuzz.materialize.onnx.rewrite.registry import kinds_of

        return None if meta.rewrite is None else f"rewrite {'+'.join(kinds_of(meta.rewrite))}"

    def localizes(self, p: "Produced") -> bool:
        return p.rewrite is None

    def reducible(self, p: "Produced") -> bool:
        return False  # reduction rebuilds from the graph: the rewrite would not survive it
