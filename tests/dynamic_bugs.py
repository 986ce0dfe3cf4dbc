"""Dynamic bug folders built in a test, as a campaign saves them (oracles/dynamic.py, docs/dynamic-shapes.md):
a generated graph lifted to a shape family, its models and every shape's torch-eager reference, the
dynamic model (``dim_param`` ONNX, or the GraphIR payload with the family for inductor) and meta.json's
``dynamic`` record."""
import dataclasses
import json
import random

import numpy as np

from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.generate.dynamic import lift
from nnfuzz.materialize.dynamic import build_dynamic
from nnfuzz.triage.bugstore import BugStore
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import compare

OPS = ("Relu", "Add", "Sigmoid")


def dynamic_build(seed: int = 1, ops=OPS, max_nodes: int = 3, having=None):
    """(the lifted graph, its DynamicBuild, its seed) of the first seed from ``seed`` whose graph has a dynamic
    ONNX and torch form (and op ``having``)."""
    policy = GenPolicy(max_nodes=max_nodes, dtypes=["float32"], include=list(ops))
    for s in range(seed, seed + 40):
        fam = lift(generate_graph(policy, seed=s), policy.max_elems, random.Random(s))
        if fam is None or having is not None and having not in fam.op_names():
            continue
        built = build_dynamic(fam, s)
        if built.family is not None and built.onnx is not None and built.forms["gir"] == "dynamic":
            return fam, built, s
    raise AssertionError(f"no dynamic graph among seeds {seed}..{seed + 39}")


def dynamic_bug(tmp_path, *, off_at=None, fmt: str = "onnx", system: str = "ort-cpu", seed: int = 1, ops=OPS,
                static: str = "passes", max_nodes: int = 3, having=None):
    """A dynamic bug folder whose recorded reference at shape ``off_at`` is off by one (so a correct system
    disagrees there, and only there), or exact (``off_at=None``, the failing shape recorded as the last)."""
    from nnfuzz.materialize.portable import pack

    gir, built, s = dynamic_build(seed, ops, max_nodes, having)
    shapes = [{"input": dict(r.input), "output": dict(r.output)} for r in built.shapes]
    k = len(shapes) - 1 if off_at is None else off_at
    if off_at is not None:
        shapes[k]["output"] = {n: v + 1 for n, v in shapes[k]["output"].items()}
    oracle = {"input": shapes[k]["input"], "output": shapes[k]["output"], "output_f64": None,
              "output_f64_jitter": None, "shapes": shapes}
    summary = compare(shapes[k]["output"], built.shapes[k].output).summary if off_at is not None else "test bug"
    fam = built.family
    dyn = {"dims": fam.dims, "assignments": fam.assignments, "shape": k, "compiles": 1, "shapes_run": k + 1,
           "forms": dict(built.forms), "static": static}
    meta = BugMeta(system=system, version="x", symptom="inconsistency", version_id="x", stage="verify",
                   summary=summary, seed=s, format=fmt, dynamic=dyn)
    gir_text = dataclasses.replace(built.model.gir, family=None).dumps()
    if fmt == "onnx":
        model_bytes = built.onnx.SerializeToString()
    else:
        model_bytes = pack(json.dumps({**json.loads(gir_text), "family": fam.to_json()}), built.model.weights)
    return BugStore(tmp_path / "bugs").save(model_bytes=model_bytes, gir_text=gir_text, oracle=oracle, meta=meta,
                                            err_log="test")


def sizes_of(bug_path) -> list:
    """The family's assignments recorded in a bug folder's meta.json."""
    return json.loads((bug_path / "meta.json").read_text())["dynamic"]["assignments"]


__all__ = ["dynamic_build", "dynamic_bug", "sizes_of", "np"]
