"""``oracle=grad``: the system's forward outputs and gradients must match torch eager's, or for a system
whose backend names another reference (xla-cpu: tf-cpu, TF eager) that system's (docs/oracles.md).

Each test differentiates the graph's differentiable outputs, with an upstream gradient drawn from the
test's seed, with respect to its float inputs and weights (materialize/torch/grad.py says what is cut, and
the gradient tolerances). The system compiles and runs the forward and the backward (a backend with
``gradients = True``: backends/torch_grad.py for torch.compile, backends/tf_grad.py for XLA); the forward outputs are judged first,
as the reference oracle judges them (float64 twins, then each node's own error); when they match, the
gradients are judged against eager's with their float64 twins. A disagreement there is a fault in the
backward graph: meta.json's ``grad.failed`` is ``backward`` and the signature says so
(``inductor-cpu | inconsistency | backward | values``). A crash or hang is the part's the run was in (the
backend reports entering each: ``Backend.entering``), and one in the backward is signed so too
(``inductor-cpu | crash | execute | backward | RuntimeError | ...``).
"""
from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, Skip, Tested, no_second_choice

if TYPE_CHECKING:
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced


@dataclasses.dataclass(frozen=True)
class Grad(Oracle):
    name = "grad"
    kinks = True  # a value near a kink would take the other one-sided derivative on another system
    dialects = ("training",)  # training-mode ops (BatchNormTraining): their backward and running statistics
    # a test compiles a forward and a backward graph (the backward's kernels as many as the forward's, or
    # more): measured 7-10 s for a one-op graph's first compile on a loaded machine, where the forward's is ~1 s
    timeout_scale = 3.0

    @classmethod
    def configure(cls, cfg) -> Oracle:
        from nnfuzz.backends.registry import backend_class, known_backends
        from nnfuzz.oracles.reference import backend_class_of

        no_second_choice(cls.name, cfg)
        under = backend_class_of(cfg)
        if not under.gradients or (under.reference and not backend_class(under.reference).gradients):
            able = [n for n in known_backends() if backend_class(n).gradients]
            raise ConfigError(f"oracle=grad: {cfg.backend} does not run gradient tests; backends that do: {able}")
        return cls(under.reference)  # the TF systems' gradients against TF eager's (tf-cpu), the others' torch eager's

    def describe(self, backend: str) -> str:
        return f"{backend} vs {self.expected_system or 'torch eager'}, forward and backward (grad)"

    def prepare(self, p: "Produced", model, plan) -> bool:
        """The gradient test of ``p``: its GradSpec (``p.grad``), the upstream gradients among the inputs
        and eager's gradients among the expected outputs; none when no gradient is defined."""
        from nnfuzz.materialize.model import ReferenceData
        from nnfuzz.materialize.torch.grad import eager
        from nnfuzz.materialize.torch.kinks import cancelled_kink
        from nnfuzz.materialize.values import all_finite

        if p.gir_text is None or p.values_undefined or p.reference.output is None:
            return True  # skipped as undefined
        try:
            spec, upstream, expected = eager(model.gir, model.weights, p.reference.input, p.seed)
        except RuntimeError as e:  # torch has no derivative for an op at this dtype: no gradient to test
            p.rec["grad"] = {"none": f"torch eager's backward fails: {type(e).__name__}: {str(e).strip()[:200]}"}
            return True
        if spec is None:
            p.rec["grad"] = {"none": "no output depends on a float input or weight through differentiable ops"}
            return True
        if not all_finite(expected):
            p.rec["grad"] = {"none": "a gradient is not finite in torch eager (undefined)"}
            return True
        why = cancelled_kink(model.gir, model.weights, p.reference.input)
        if why is not None:  # no value search can move it: max(v) - v is 0 at the maximum whatever v is
            p.rec["grad"] = {"none": why}
            return True
        p.grad = spec.to_json()
        p.reference = ReferenceData({**p.reference.input, **upstream}, expected)
        p.rec["grad"] = {"outputs": len(spec.outputs), "wrt": len(spec.wrt)}
        return True

    def skip(self, p: "Produced") -> Optional[Skip]:
        if p.values_undefined or p.reference.output is None:
            return Skip.undefined_values(p)
        if p.grad is None:
            return Skip("no_gradient", {"verdict": "no-gradient", "why": (p.rec.get("grad") or {}).get("none")})
        return None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        from nnfuzz.fuzz import local
        from nnfuzz.fuzz.context import run_on
        from nnfuzz.materialize.model import ReferenceData
        from nnfuzz.oracles.reference import expected_outputs
        from nnfuzz.triage.grad_judging import grad_twins, judge_grad
        from nnfuzz.verdict import Verdict

        res = run_on(ctx, lane.sandbox, p)
        if res is None:
            return Tested(None)
        ref, other = reference_of(p, reference), None
        if res.status == "ok" and lane.expected_sandbox is not None:  # TF eager's outputs and gradients
            other, why, side, theirs = expected_outputs(ctx, lane, p)
            if why == "cut":
                return Tested(None, res)
            if why is not None:  # the expected side failed: in its part, as repro signs it from that run
                part = theirs.part if theirs is not None and why.is_bug else None
                return Tested(why, res, side, reference=ref, expected_result=theirs, failed=part)
            if other is None:  # NaN/Inf on the expected side: undefined, nothing to compare
                return Tested(Verdict.passed(), res, reference=ref, expected_result=theirs)
            ref = ReferenceData(ref.input, other, ref.output_f64, ref.output_f64_jitter)

        def settle(judged, actual, expected):
            return local.settle(ctx, lane.sandbox, p, judged, actual, expected)

        def twins():
            t0 = time.perf_counter()
            try:
                return grad_twins(p.gir_text, p.weights, ref, p.grad, p.seed)
            finally:
                ctx.add_seconds("export", time.perf_counter() - t0)

        judged, failed, loc, checked = judge_grad(res, ref, ctx.info.engine, ctx.tolerances, twins, settle)
        return Tested(judged.verdict, res, "actual", other, judged.reference, judged.twin, failed=failed,
                      localization=loc, checked=checked)

    def account(self, counters, p: "Produced", t: Tested) -> None:
        if t.localization is not None and t.localization.noise:
            counters.noise += 1
        counters.checked += t.checked

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        """Also meta.json's ``grad``: what was differentiated and which part failed."""
        from nnfuzz.triage.grad_judging import grad_record

        return {**super().meta_fields(ctx, p, t), "grad": grad_record(p.grad, t.failed)}

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        return "backward" if (meta.grad or {}).get("failed") == "backward" else None

    @classmethod
    def crash_term(cls, meta) -> Optional[str]:
        """"backward" for a crash or hang in the backward graph's compile or run: a root cause apart from a
        forward crash with the same message. A forward crash is signed as the forward-only oracles sign it,
        so that one fault found by both is one signature."""
        return cls.signature_term(meta)


def reference_of(p: "Produced", reference=None):
    return reference if reference is not None else p.reference
