"""``oracle=static``: a dynamic model compiled once against the static model of each of its shapes compiled
alone and inferred as often as the dynamic compile was at that shape (triage/static_check.py), on the same
system (docs/dynamic-shapes.md). A difference is the dynamic path's fault even where no
reference is trusted: the static compile's outputs are the expected ones (the torch reference's float64
twins at that shape tell rounding noise, as for ``oracle=optlevel``). Every model that can be dynamic is
made dynamic; the others are not tested (counted as ``not_dynamic``).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Skip, Tested, no_second_choice
from nnfuzz.oracles.dynamic import DynamicShapes, _static_payload, _twins_at, count_dynamic
from nnfuzz.triage.static_check import inferred_as_dynamic

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


@dataclasses.dataclass(frozen=True)
class StaticShapes(DynamicShapes):
    name = "static"
    selectable = True

    @classmethod
    def configure(cls, cfg) -> "StaticShapes":
        from nnfuzz.oracles.reference import backend_class_of

        no_second_choice(cls.name, cfg)
        forms = backend_class_of(cfg).dynamic_forms_for(cfg.backend_options)
        if not forms:
            raise ConfigError(f"oracle=static compares a dynamic compile with static ones; {cfg.backend} takes no "
                              "dynamic model (Backend.dynamic_forms): use ort-cpu, tvm-cpu, openvino-cpu or inductor-cpu")
        return cls(share=1.0, forms=forms, primary=None)

    def record(self) -> Dict:
        return {"kind": self.name, "forms": list(self.forms)}

    def describe(self, backend: str) -> str:
        return f"{backend} dynamic vs {backend} static at each shape (static)"

    def prepare(self, p: "Produced", model, plan) -> bool:
        super().prepare(p, model, plan)
        return True

    def skip(self, p: "Produced") -> Optional[Skip]:
        if p.values_undefined:
            return Skip("undefined_values", {"verdict": "undefined-values"})
        if not any(p.dynamic_forms.get(f) == "dynamic" for f in self.forms) or p.family is None:
            return Skip("not_dynamic", {"verdict": "not-dynamic", "dynamic": dict(p.dynamic_forms)})
        return None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        """The dynamic run (every shape, one compile), then each shape's static model: a failure of either
        at a shape, or the dynamic outputs against the static ones, gives the verdict (the first shape)."""
        from nnfuzz.fuzz.context import run_bytes
        from nnfuzz.triage.judging import judge_run

        fmt = lane.sandbox.format_for(p)
        dyn = run_bytes(ctx, lane.sandbox, p.payload(fmt), [s.input for s in p.shapes])
        if dyn is None:
            return Tested(None)
        engine, tol = ctx.info.engine, ctx.tolerances
        every = [{"input": s.input, "output": s.output} for s in p.shapes]

        def static_at(k):  # the static model of shape k, inferred k + 1 times as the dynamic one was
            return inferred_as_dynamic(lambda b, xs: run_bytes(ctx, lane.sandbox, b, xs), _static_payload(p, fmt, k),
                                       p.shapes[k].input, k)
        if dyn.status != "ok":  # the dynamic form failed at shape j: does the static model of j?
            j = dyn.shape or 0
            static = static_at(j)
            if static is None:
                return Tested(None, dyn)
            judged = judge_run(dyn, None, engine, tol, p.shapes[j])
            return Tested(judged.verdict, dyn, "actual", None, dataclasses.replace(p.shapes[j], shapes=every),
                          shape=j, failed="dynamic" if static.status == "ok" else "both")
        judged = None
        for k, ref in enumerate(p.shapes):
            static = static_at(k)
            if static is None:
                return Tested(None, dyn)
            if static.status != "ok":  # the static compile of shape k fails where the dynamic one ran
                judged = judge_run(static, None, engine, tol, ref)
                return Tested(judged.verdict, static, "actual", None, dataclasses.replace(ref, shapes=every),
                              shape=k, failed="static")
            one = dataclasses.replace(dyn, outputs=dyn.shapes[k])
            judged = judge_run(one, static.outputs, engine, tol, ref, lambda k=k: _twins_at(ctx, p, k))
            if judged.verdict.is_bug:
                return Tested(judged.verdict, one, "actual", static.outputs,
                              dataclasses.replace(judged.reference, shapes=every), judged.twin, shape=k,
                              failed="dynamic", expected_result=static)
        return Tested(judged.verdict, dyn, "actual", reference=p.shapes[0])

    def account(self, counters, p: "Produced", t: Tested) -> None:
        count_dynamic(counters, t)

    def expected_record(self, ctx: "RunContext") -> Dict:
        return {**ctx.under_test(), "model": "static at the failing shape"}

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        out = super().meta_fields(ctx, p, t)
        if "dynamic" in out:
            out["dynamic"]["static"] = None
            out["dynamic"]["failed"] = t.failed  # which form failed: "dynamic" | "static" | "both"
        return out

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        dyn = meta.dynamic
        return "dynamic vs static" if isinstance(dyn, dict) and dyn.get("failed") == "dynamic" else None
