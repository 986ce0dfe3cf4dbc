"""Production of the models a campaign tests: generate a graph for a seed and build its model (torch
reference, ONNX export, checks), in the campaign's process or in producer processes."""
from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Dict, Optional

from nnfuzz.errors import ConstraintError, NNFuzzError

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.plan import CampaignPlan


@dataclasses.dataclass
class Produced:
    """A model ready to test (or why there is none), made in this process or in a producer process."""
    seed: int
    rec: Dict
    gen_s: float = 0.0
    build_s: float = 0.0
    error: Optional[tuple] = None        # ("no-graph" | "nnfuzz-error", message)
    gir_text: Optional[str] = None
    model_bytes: Optional[bytes] = None
    reference: object = None             # materialize.model.ReferenceData: the inputs and reference outputs
    weights: Dict = dataclasses.field(default_factory=dict)  # the model's weights (to rebuild it)
    search: Optional[Dict] = None        # the value search's summary
    timings: Dict = dataclasses.field(default_factory=dict)
    model: object = None                 # the Model when made in this process (not sent between processes)
    export: object = None                # the ExportSpec the ONNX model was written with (None: no ONNX)
    spellings: Dict = dataclasses.field(default_factory=dict)  # drawn per node: {var: {key: choice}}
    values_undefined: bool = False       # the values break an op's domain (SearchResult.values_undefined)
    covered: Optional[Dict] = None       # what the graph covered (generate/guide.py), under mgen.guide=coverage
    oracle_name: Optional[str] = None    # the oracle that took the test when it was made (None: the campaign's)
    rewrite_bytes: Optional[bytes] = None  # oracle=metamorphic: the rewritten ONNX model
    rewrite: Optional[Dict] = None       # its record (meta.json ``rewrite``: seed, steps, aliases)
    invalid: Optional[Dict] = None       # mgen.invalid: the rule the model breaks (meta.json ``invalid``)
    # a dynamic graph (fuzz.dynamic, docs/dynamic-shapes.md): its family (ShapeFamily JSON), each kept
    # shape's ReferenceData (shape 0's is ``reference``), the dynamic ONNX model, and per form
    # ("onnx" | "gir" | "tf" | "relax") "dynamic" or why that form stays static
    family: Optional[Dict] = None
    shapes: Optional[list] = None
    dynamic_onnx: Optional[bytes] = None
    dynamic_forms: Dict = dataclasses.field(default_factory=dict)
    index: Optional[int] = None          # the campaign's model number (producers: which slot made it, fuzz/producers.py)
    grad: Optional[Dict] = None          # oracle=grad: what is differentiated (GradSpec.to_json(), in the payload)

    def __getstate__(self):
        return {**self.__dict__, "model": None}

    def payload(self, fmt: str) -> bytes:
        """The model in ``fmt``: the ONNX bytes, or the GraphIR payload (``relax``: with the seed as the
        Relax layout seed)."""
        if fmt == "onnx":
            return self.model_bytes
        from nnfuzz.materialize.portable import pack

        return pack(self.gir_text, self.weights, self.seed if fmt == "relax" else None, self.grad)

    def relax_lowerable(self) -> bool:
        """Whether every op of the graph has a Relax lowering (a migrated test has no graph: False)."""
        from nnfuzz.materialize.relax.lowering import relax_lowerable

        return self.gir_text is not None and relax_lowerable(self.rec.get("ops") or [])

    def twins(self):
        """(ReferenceData with the float64 twins, why they are missing or ""): computed on a copy of the
        model (rebuilt from the graph and values when made in another process); this record is unchanged."""
        from nnfuzz.gir import GraphIR
        from nnfuzz.materialize.model import build_model
        from nnfuzz.triage.judging import model_twins

        if self.gir_text is None:
            return self.reference, "a migrated test has no graph to compute float64 twins from"
        if self.model is None:
            model = build_model(GraphIR.loads(self.gir_text), self.seed, export=False,
                                values=(self.weights, self.reference.input))
        else:
            model = dataclasses.replace(self.model, oracle=dataclasses.replace(self.model.oracle))
        return model_twins(model)


def _dynamic(p: Produced, gir, seed: int, plan, start, spec):
    """Build a dynamic graph's models into ``p`` (nnfuzz/materialize/dynamic.py); shape 0's Model."""
    from nnfuzz.materialize.dynamic import build_dynamic

    forms = {f for o in plan.oracles for f in getattr(o, "forms", ())}  # ("tf": runs TF here; "relax": TVM)
    built = build_dynamic(gir, seed, search=plan.search, start=start, export=spec if plan.onnx else False,
                          tf="tf" in forms, relax="relax" in forms)
    p.dynamic_forms = dict(built.forms)
    if built.family is not None:
        p.family, p.shapes = built.family.to_json(), list(built.shapes)
        p.dynamic_onnx = built.onnx.SerializeToString() if built.onnx is not None else None
    p.rec["dynamic"] = {"shapes": len(built.shapes) if built.family is not None else 1,
                        **{f: w for f, w in built.forms.items()}}
    return built.model


def _quantized(gir, start, seed: int, plan, dtypes):
    """(the QDQ graph, its start values, its summary) of the float graph ``gir`` (generate/qdq.py),
    calibrated on the values its model starts from (``start``, or the seed's draws), with the element
    types of ``dtypes`` (mgen.dtypes) that ``plan``'s systems take."""
    import numpy as np

    from nnfuzz.generate.qdq import insert_qdq, qdq_types
    from nnfuzz.materialize.model import random_values

    values = start if start is not None else random_values(gir, np.random.default_rng(seed))
    qgir, summary = insert_qdq(gir, seed, values, qdq_types(plan.rows, plan.qdq_opset, plan.qdq_blocked, dtypes))
    return qgir, start, summary if summary["pairs"] else None


def _qdq_opset(spec, cap: int, seed: int):
    """``spec`` at its opset, or one drawn from its range up to ``cap``, where the systems run QDQ graphs; its range
    ends at ``cap`` too, so that a node written later (int16, int4 or blocks at 21) moves it no further."""
    import numpy as np

    lo = min(spec.range[0], cap)
    opset = spec.opset if (spec.opset or cap + 1) <= cap else \
        int(np.random.default_rng([seed & 0xFFFFFFFF, 0x0D2]).integers(lo, cap + 1))
    return dataclasses.replace(spec, opset=opset, opsets=(lo, cap))


def _built(gir, seed: int, plan, start, spec, wide):
    """The model of a static graph, written by ``spec`` (for a QDQ graph, capped at the QDQ opset), or by
    ``wide`` (the export's whole range) where no opset under the cap writes some node (BitShift of int64 came
    at 28): at worst an UNSUPPORTED verdict on a system lacking its newest QuantizeLinear, never an error."""
    from nnfuzz.materialize.model import build_model
    from nnfuzz.materialize.onnx.direct import Unspellable

    try:
        return build_model(gir, seed, search=plan.search, start=start, export=spec if plan.onnx else False)
    except Unspellable:
        if wide is None:
            raise
        return build_model(gir, seed, search=plan.search, start=start, export=wide)


def produce(cc: CampaignConfig, plan: CampaignPlan, seed: int, time_left: float, guide=None) -> Produced:
    """Generate the graph for ``seed`` from ``plan``'s ops and rows (drawing with ``guide``, the coverage
    state's weights, if given), build its model (torch reference, ONNX, checks) and let the plan's
    oracles prepare it: the first that takes it tests it."""
    from nnfuzz.generate.valueaware import generate_for_search

    p = Produced(seed=seed, rec={"seed": seed})
    t0 = time.perf_counter()
    policy = dataclasses.replace(cc.policy, seed=seed,
                                 graph_timeout_s=max(0.05, min(cc.policy.graph_timeout_s, time_left)))
    from nnfuzz.generate.qdq import quantized_draw

    qdq = quantized_draw(policy, plan.quantized, seed, plan.ops)  # a QDQ graph's policy, or None
    try:
        gir, start = generate_for_search(qdq or policy, list(plan.ops), plan.rows, plan.search, guide)  # grown with safe values (search.value_aware)
        if qdq is not None:
            gir, start, summary = _quantized(gir, start, seed, plan, cc.policy.dtype_set)
            if summary is not None:  # (none: nothing in the graph was quantizable)
                p.rec["quantized"] = summary
    except ConstraintError as e:
        p.error = ("no-graph", str(e))
        return p
    except NNFuzzError as e:  # an op definition or generator bug: shown, logged, counted
        p.error = ("nnfuzz-error", f"{type(e).__name__}: {e}")
        return p
    finally:
        p.gen_s = time.perf_counter() - t0
    p.rec.update(nodes=gir.n_nodes, ops=gir.op_names())
    lifted = None if p.rec.get("quantized") else \
        next((g for o in plan.oracles if (g := o.lift(gir, seed, policy)) is not None), None)  # (QDQ graphs: static)
    if guide is not None and policy.guide == "coverage":
        from nnfuzz.generate.guide import graph_coverage

        p.covered = graph_coverage(gir)
    t1 = time.perf_counter()
    try:
        spec = dataclasses.replace(plan.export.for_model(seed),
                                   timeout_s=max(0.05, min(plan.export.timeout_s, time_left)))
        wide = None
        if p.rec.get("quantized") and plan.qdq_opset is not None:
            wide, spec = spec, _qdq_opset(spec, plan.qdq_opset, seed)
        if lifted is None:
            model = _built(gir, seed, plan, start, spec, wide)
        else:
            model = _dynamic(p, lifted, seed, plan, start, spec)
    except NNFuzzError as e:
        p.error = ("nnfuzz-error", f"{type(e).__name__}: {e}")
        return p
    finally:
        p.build_s = time.perf_counter() - t1
    p.gir_text, p.reference = gir.dumps(), model.oracle
    p.model_bytes = model.onnx.SerializeToString() if model.onnx is not None else None
    p.timings, p.model, p.weights, p.search = model.timings, model, model.weights, model.search
    p.export, p.spellings = model.export, model.spellings
    if model.export is not None:
        p.rec["opset"] = model.export.opset
    if model.search is not None:
        p.rec["search"] = {"ok": model.search["ok"], "ms": model.search["time_ms"]}
        p.values_undefined = model.search["values_undefined"]
    t2 = time.perf_counter()
    try:
        p.oracle_name = next((o.name for o in plan.oracles if o.prepare(p, model, plan)), None)
    finally:
        p.build_s += time.perf_counter() - t2
    return p
