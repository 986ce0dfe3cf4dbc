"""Dynamic shapes (``fuzz.dynamic``, docs/dynamic-shapes.md): a share of the graphs get symbolic input dims
and a family of shapes (nnfuzz/generate/dynamic.py); the model is built once with symbolic dims
(nnfuzz/materialize/dynamic.py), compiled once, run at every shape, and each shape's outputs are judged
against torch eager at that shape. The compiles the system counted (torch.compile's recompilations
included) are recorded. Turned on beside ``oracle=reference``, which tests the models left static and
those whose form for the system could not be made shape-independent (the static test of shape 0).
"""
from __future__ import annotations

import dataclasses
import random
import time
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, Skip, Tested
from nnfuzz.triage.static_check import RECOMPILE, static_check, static_term
from nnfuzz.verdict import Outcome, Stage, Symptom, Verdict

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced

FORM_FORMAT = {"tf": "gir"}  # a dynamic form -> the model format it is sent in, where they differ
NOT_LOCALIZED = "not localized: the campaign's time bound came first"


def dynamic_share(value, backend_cls, backend: str) -> float:
    """``fuzz.dynamic`` as a share: auto -> the system's ``Backend.dynamic_share`` where it takes a dynamic
    form, else 0."""
    if value == "auto":
        return float(backend_cls.dynamic_share) if backend_cls.dynamic_forms else 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"fuzz.dynamic={value!r} must be auto or the share of tests that are dynamic, in [0, 1]")
    if value > 0 and not backend_cls.dynamic_forms:
        raise ConfigError(f"fuzz.dynamic={value}: {backend} takes no dynamic model (Backend.dynamic_forms is "
                          "empty); set fuzz.dynamic=0 (or auto)")
    return float(value)


LIFT_DRAWS = 6  # draws of the symbolic dims for a system that cannot shape some broadcasts


@dataclasses.dataclass(frozen=True)
class DynamicShapes(Oracle):
    name = "dynamic"
    selectable = False
    share: float = 0.0
    forms: Tuple[str, ...] = ()          # the system's dynamic forms (Backend.dynamic_forms_for its options)
    primary: Optional[Oracle] = None     # oracle=reference: the static tests, and meta.json's expected side
    broadcast: bool = True               # Backend.symbolic_broadcast: False keeps a shapeless broadcast static

    @classmethod
    def enabled(cls, cfg, primary: Oracle) -> Optional[Oracle]:
        from nnfuzz.oracles.reference import backend_class_of

        bc = backend_class_of(cfg)
        share = dynamic_share(cfg.dynamic, bc, cfg.backend)
        if share and type(primary).name != "reference":
            if cfg.dynamic != "auto":
                raise ConfigError(f"fuzz.dynamic={cfg.dynamic} judges every shape against the system's reference: it "
                                  f"goes with oracle=reference (here: {primary.describe(cfg.backend)}); set fuzz.dynamic=0")
            return None
        return cls(share=share, forms=bc.dynamic_forms_for(cfg.backend_options), primary=primary,
                   broadcast=bc.symbolic_broadcast) if share else None

    def record(self) -> Dict:
        return {"kind": self.name, "share": self.share, "forms": list(self.forms)}

    def lift(self, gir, seed: int, policy):
        """With probability ``share`` (drawn from the seed), ``gir`` with a family of shapes (or None when
        its rules leave no input dim free)."""
        import numpy as np

        from nnfuzz.generate.dynamic import lift, shapeless_broadcasts

        if np.random.default_rng([seed & 0xFFFFFFFF, 27]).random() >= self.share:
            return None
        if self.broadcast:
            return lift(gir, policy.max_elems, random.Random(seed * 27 + 1))
        # the system cannot shape a symbol broadcast against a constant > 1 or another symbol (Backend.
        # symbolic_broadcast): other draws of the symbolic dims, the first without one (4 in 10 graphs have
        # one at the first draw; 6 draws bring 84% of the graphs that lift back)
        for k in range(LIFT_DRAWS):
            lifted = lift(gir, policy.max_elems, random.Random(seed * 27 + 1 + k))
            if lifted is None or not shapeless_broadcasts(lifted):
                return lifted
        return None

    def prepare(self, p: "Produced", model, plan) -> bool:
        """Takes ``p`` when it has a family of shapes; its model bytes become the dynamic forms built."""
        if p.family is None:
            return False
        if "onnx" in self.forms and p.dynamic_onnx is not None:
            p.model_bytes = p.dynamic_onnx  # (at shape 0's inputs it is also shape 0's static test)
        if any(f in self.forms and p.dynamic_forms.get(f) == "dynamic" for f in ("gir", "tf", "relax")):
            import json

            p.gir_text = json.dumps({**json.loads(p.gir_text), "family": p.family}, indent=1)
        return True

    def runs_dynamic(self, p: "Produced", fmt: str) -> bool:
        """Whether ``p`` in format ``fmt`` is tested at every shape (else: the static test of shape 0)."""
        return p.family is not None and any(FORM_FORMAT.get(f, f) == fmt and p.dynamic_forms.get(f) == "dynamic"
                                            for f in self.forms)

    def skip(self, p: "Produced") -> Optional[Skip]:
        return self.primary.skip(p)

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        """Compile once, run every shape; the first shape judged a failure gives the verdict."""
        from nnfuzz.fuzz.context import run_bytes
        from nnfuzz.triage.dynamic_local import settle_shapes
        from nnfuzz.triage.localize import Localization

        fmt = lane.sandbox.format_for(p)
        if not self.runs_dynamic(p, fmt):
            return self.primary.test(ctx, lane, p, reference)
        # each shape its run's time: a later shape may also compile again (torch.compile's guards), which
        # counts as execute (inductor-cpu: a recompile past 10 s at shape 1 on a loaded machine was a timeout)
        with ctx.clock.patience(len(p.shapes)):
            res = run_bytes(ctx, lane.sandbox, p.payload(fmt), [s.input for s in p.shapes])
        if res is None:
            return Tested(None)
        expected, theirs = None, None
        if res.status == "ok" and lane.expected_sandbox is not None:  # the system's reference (TF eager)
            with ctx.clock.patience(len(p.shapes)):
                expected, why, side, theirs = _expected_shapes(ctx, lane, p)
            if why == "cut":
                return Tested(None, res)
            if why is not None:
                return Tested(why, res, side, reference=p.reference, expected_result=theirs)

        def localize(k, outputs):  # at shape k, never as shape 0's static test; noise there is no failure
            if ctx.left() <= 0:
                return Localization(None, "undecided", NOT_LOCALIZED)
            return _localize_at(ctx, lane.sandbox, p, fmt, k, outputs)
        judged, k, shown, loc = settle_shapes(res, p.shapes, ctx.info.engine, ctx.tolerances,
                                              lambda k: _twins_at(ctx, p, k), localize, expected)
        if k is None and judged.verdict.outcome is Outcome.PASS and res.unguarded is not None:
            k, shown = res.unguarded["shape"], dataclasses.replace(res, outputs=res.shapes[res.unguarded["shape"]])
            judged = dataclasses.replace(judged, verdict=Verdict.bug(Symptom.inconsistency, Stage.execute,
                                                                     res.unguarded["why"]))
        # oracle.pkl: every shape with what it was compared with (the expected side's outputs where another
        # system ran), for the replay
        every = [{"input": s.input, "output": s.output if expected is None else expected[j]} for j, s in enumerate(p.shapes)]
        ref = dataclasses.replace(judged.reference, shapes=every)
        other = expected[k] if expected is not None and k is not None else None
        static = None
        if judged.verdict.is_bug and reference is None and ctx.left() > 0 and not _unguarded(shown, judged.verdict):
            static = _static_at(ctx, lane, p, fmt, k, judged.reference, other)
        return Tested(judged.verdict, shown, "actual", other, ref, judged.twin, shape=k, failed=static,
                      expected_result=theirs, localization=loc)

    def account(self, counters, p: "Produced", t: Tested) -> None:
        if _static_test(t):
            return self.primary.account(counters, p, t)
        count_dynamic(counters, t)
        if t.localization is not None and t.localization.noise and not t.verdict.is_bug:
            counters.noise += 1  # a disagreement within every op's accuracy budget

    def expected_record(self, ctx: "RunContext") -> Dict:
        return self.primary.expected_record(ctx)

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        """Also meta.json's ``dynamic`` (dims, assignments, the shape of the verdict, compiles); the static test
        of shape 0 (no form the system takes is dynamic) is the primary oracle's, as it judged it."""
        if _static_test(t):
            return self.primary.meta_fields(ctx, p, t)
        out = super().meta_fields(ctx, p, t)
        if t.shape is None:
            return out
        res = t.result
        out["dynamic"] = {**p.family, "shape": t.shape, "compiles": res.compiles,
                          "shapes_run": shapes_run(t),
                          "forms": dict(p.dynamic_forms), "static": t.failed}
        if _unguarded(res, t.verdict):
            out["dynamic"]["unguarded"] = res.unguarded
        return out

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        """"recompile" for a recompilation no guard asks for (backends/inductor_guards.py); "dynamic" for an
        inconsistency that only the dynamic form shows (the static model of that shape,
        inferred as often, passes: static_check), "again" for one its static model shows too, on a repeated
        inference only; each followed by its root cause's op where each node's own error found one
        ("dynamic | Add"); otherwise the usual terms."""
        from nnfuzz.triage.dedup import NODE_METHODS, root_op

        dyn = meta.dynamic
        if isinstance(dyn, dict) and dyn.get("unguarded"):
            return RECOMPILE
        term = static_term(dyn.get("static")) if isinstance(dyn, dict) else None
        if term is None:
            return None
        root = meta.root_cause
        return f"{term} | {root_op(root)}" if root and root.get("method") in NODE_METHODS else term

    def localizes(self, p: "Produced") -> bool:
        return True  # a dynamic test localizes its own inconsistency, at its shape (Tested.localization)

    # (reducible: as any oracle's; a dynamic bug is reduced with its shape family, triage/dynamic_reduction.py)


def _unguarded(res, verdict) -> bool:
    """Whether ``verdict`` is the recompilation no guard asks for that ``res`` ran into (not a wrong value)."""
    return res is not None and res.unguarded is not None and verdict is not None and verdict.summary == res.unguarded["why"]


def _static_test(t: Tested) -> bool:
    """Whether ``t`` is the static test of shape 0 (run by the primary oracle: no dynamic form to run)."""
    res = t.result
    return res is None or res.compiles is None and t.shape is None and res.shapes is None


def shapes_run(t: Tested) -> int:
    """The shapes a dynamic test ran: all of them, or up to the one it failed at."""
    return len(t.result.shapes) if t.result.shapes is not None else (t.shape or 0) + 1


def count_dynamic(counters, t: Tested) -> None:
    """(Under the campaign's lock.) A dynamic test's tests, shapes run and compiles (Counters)."""
    counters.dynamic += 1
    counters.dynamic_runs += shapes_run(t)
    counters.dynamic_compiles += t.result.compiles if t.result.compiles is not None else 1


def _expected_shapes(ctx: "RunContext", lane, p: "Produced"):
    """The expected side's outputs at every shape (its sandbox runs the same model, every shape), as
    reference.expected_outputs gives one shape's: (outputs per shape (None at a shape with NaN/Inf:
    undefined), None, "actual", its RunResult) or (None, a verdict or "cut", the side, its RunResult)."""
    from nnfuzz.fuzz.context import run_bytes
    from nnfuzz.materialize.values import all_finite
    from nnfuzz.oracles.reference import expected_failed

    sb = lane.expected_sandbox
    res = run_bytes(ctx, sb, p.payload(sb.format_for(p)), [s.input for s in p.shapes])
    failed = expected_failed(ctx, res)
    if failed is not None:
        return failed
    return [outs if all_finite(outs) else None for outs in res.shapes], None, "actual", res


def _static_at(ctx: "RunContext", lane, p: "Produced", fmt: str, k: int, ref, want=None) -> Optional[str]:
    """static_check of the static model of shape ``k`` against the same reference (``want``: the expected
    side's outputs at shape ``k``, else torch eager's)."""
    from nnfuzz.fuzz.context import run_bytes
    from nnfuzz.triage.judging import judge_run

    want = p.shapes[k].output if want is None else want
    return static_check(lambda b, xs: run_bytes(ctx, lane.sandbox, b, xs), _static_payload(p, fmt, k), p.shapes[k].input,
                        k, lambda r: judge_run(r, want, ctx.info.engine, ctx.tolerances, ref).verdict)


def _localize_at(ctx: "RunContext", sandbox, p: "Produced", fmt: str, k: int, original):
    """The Localization of an inconsistency at shape ``k``: the graph with every value exposed, in its dynamic
    form, compiled once and run at shapes 0..k (triage/dynamic_local.py), within the campaign's time."""
    from nnfuzz.fuzz import local
    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.triage.dynamic_local import localize_at, sandbox_shapes

    t0 = time.perf_counter()
    try:
        return localize_at(GraphIR.loads(p.gir_text), ShapeFamily.from_json(p.family), k, p.weights,
                           [s.input for s in p.shapes], sandbox_shapes(sandbox, ctx.run_timeout, lambda: ctx.left() > 0),
                           fmt, ctx.tolerances, p.export, original, local.widened(ctx))
    finally:
        ctx.add_seconds("triage", time.perf_counter() - t0)


def _static_payload(p: "Produced", fmt: str, k: int) -> bytes:
    """The static model of shape ``k`` of ``p``'s family in ``fmt``: the dynamic ONNX model with that shape's
    dims written in, or that shape's graph (GraphIR.at) with the weights."""
    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.materialize.dynamic import static_model

    gir = dataclasses.replace(GraphIR.loads(p.gir_text), family=ShapeFamily.from_json(p.family)).at(k)
    return static_model(gir, fmt, p.model_bytes, p.weights, p.seed)


def _twins_at(ctx: "RunContext", p: "Produced", k: int):
    """Shape ``k``'s ReferenceData with the float64 twins (rebuilt from the graph), seconds as export."""
    import dataclasses as dc

    from nnfuzz.gir import GraphIR, ShapeFamily
    from nnfuzz.materialize.model import build_model
    from nnfuzz.triage.judging import model_twins

    t0 = time.perf_counter()
    try:
        gir = dc.replace(GraphIR.loads(p.gir_text), family=ShapeFamily.from_json(p.family))
        model = build_model(gir.at(k), p.seed, export=False, values=(p.weights, p.shapes[k].input))
        return model_twins(model)
    finally:
        ctx.add_seconds("export", time.perf_counter() - t0)
