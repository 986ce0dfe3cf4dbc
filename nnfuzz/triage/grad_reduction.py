"""Reduction of a gradient test's bug (meta.json ``grad``, oracle=grad): each candidate graph is
differentiated afresh (its outputs and float values change as nodes go: materialize/torch/grad.py ``eager``
with the bug's seed), run forward and backward on the system and judged as the oracle judges it
(oracles/grad.py ``judge_grad``), so a ``backward`` signature holds only while the backward still fails."""
from __future__ import annotations

from nnfuzz.triage.bug_reduction import Checker


class GradChecker(Checker):
    spec = None  # the last candidate's GradSpec

    def signature(self, c):
        from nnfuzz.errors import InternalError, NNFuzzError
        from nnfuzz.materialize.model import ReferenceData, build_model
        from nnfuzz.materialize.torch.grad import UPSTREAM, eager, is_grad
        from nnfuzz.materialize.values import all_finite
        from nnfuzz.oracles.grad import grad_record, grad_twins, judge_grad
        from nnfuzz.triage.judging import bug_signature, local_judges, replay_meta, settle_locally
        from nnfuzz.triage.repro import outputs_on, widened_of

        inputs = {k: v for k, v in c.inputs.items() if not k.startswith(UPSTREAM)}
        seed = self.meta.seed or 0
        try:
            model = build_model(c.gir, 0, export=False, values=(c.weights, inputs))
        except InternalError:
            raise
        except NNFuzzError as e:
            self.last = f"not buildable: {type(e).__name__}: {e}"
            return None
        spec, upstream, expected = (None, {}, {}) if model.oracle.output is None else eager(c.gir, c.weights, inputs, seed)
        if spec is None or not all_finite(expected):
            self.last = "no defined gradient"
            return None
        ref = ReferenceData({**inputs, **upstream}, expected)
        self.spec = spec
        res = self.sandbox.run(self.payload(c, model), ref.input)
        forward = {k: v for k, v in (res.outputs or {}).items() if not is_grad(k)}
        local = local_judges(c.gir, c.weights, inputs, outputs_on(self.sandbox, self.meta.format), self.tol,
                             self.export, forward, widened_of(self.sandbox.backend_info.name))
        judged, failed, loc, _ = judge_grad(
            res, ref, self.sandbox.backend_info.engine, self.tol,
            lambda: grad_twins(c.gir.dumps(), c.weights, ref, spec.to_json(), seed),
            lambda j, a, e: (*settle_locally(j, a, e, *local), False))
        model.oracle = judged.reference  # oracle.pkl of the reduced folder: upstream and gradients included
        self.last, self.model, self.verdict = judged.verdict.label, model, judged.verdict
        if not judged.verdict.is_bug:
            return None
        self.bug_meta = replay_meta(self.meta.replace(grad=grad_record(spec.to_json(), failed)), judged, res,
                                    (lambda: loc.to_meta()) if loc is not None else None)
        return bug_signature(self.bug_meta, judged.verdict)

    def payload(self, c, model) -> bytes:
        from nnfuzz.materialize.portable import pack

        return pack(c.gir.dumps(), c.weights, None, self.spec.to_json())
