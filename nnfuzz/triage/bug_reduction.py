"""The reduction driver: shrink a saved bug in place while its signature holds (``nnfuzz reduce``, and
the background reducer of a campaign, fuzz/reducer.py).

Nodes are deleted first (triage/node_deletion.py), then shapes and attributes shrunk by re-solving the
constraints (triage/shrink.py); each candidate is judged on the one verdict path (triage/judging.py).
The original files move to ``original/``; the reduced model (model.onnx or model.gir, and model/ for
TF systems), gir.json, oracle.pkl and meta.json (with ``reduced``) take their place, re-checked the way
``nnfuzz repro`` does. A bug whose signature no smaller graph keeps is left untouched. A dynamic model's
bug keeps its shape family: nodes only, every candidate dynamic and run at every shape
(triage/dynamic_reduction.py).
"""
from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path

FILES = ("model.onnx", "model.gir", "gir.json", "oracle.pkl", "meta.json", "err.log")


def reduce_bug(bug, sandbox, tolerances, budget_s: float, lock=None, expected=None) -> dict:
    """Reduce ``bug`` in place with ``sandbox`` running its system; returns a summary dict. ``lock`` (a
    threading.Lock) is held while the folder is swapped for its reduced copy. ``expected``: a started
    sandbox of the system the bug's outputs were compared with (``expected_side(bug)``; TF eager for an
    xla-cpu gradient bug), for the bugs that need one."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.bugstore import bug_weights
    from nnfuzz.triage.repro import recorded_signature
    from nnfuzz.triage.node_deletion import Candidate, reduce_graph
    from nnfuzz.triage.shrink import shrink, total_elements

    t0 = time.monotonic()
    if bug.meta.rewrite is not None or bug.meta.invalid is not None:
        which = "a metamorphic pair (model_rewrite.onnx)" if bug.meta.rewrite is not None else "an invalid model"
        return {"bug": str(bug.path), "status": "not-reduced",
                "note": f"reduction rebuilds the model from its graph and compares with torch eager; this folder holds {which}"}
    dynamic = bug.meta.dynamic is not None
    if dynamic and (not bug.oracle.get("shapes") or (bug.meta.oracle or {}).get("kind") == "static"):
        why = "oracle.pkl holds no shapes" if not bug.oracle.get("shapes") else \
            "an oracle=static bug compares two forms of the system; reduction compares with torch eager"
        return {"bug": str(bug.path), "status": "not-reduced", "note": f"a dynamic model's bug: {why}"}
    gir = GraphIR.loads(bug.gir_text)
    weights = bug_weights(bug)
    if weights is None:
        return {"bug": str(bug.path), "status": "not-reduced", "note": "model.onnx lacks some weight initializers"}
    other = expected_side(bug)
    if other is not None and bug.meta.grad is None:
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"reduction compares with torch eager, but this inconsistency was found against {other[0]}"}
    if other is not None and expected is None:
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"this inconsistency was found against {other[0]}: reducing it needs a sandbox of {other[0]}"}
    want = recorded_signature(bug)
    if dynamic:  # the shape family kept: every candidate dynamic, run at every shape (triage/dynamic_reduction.py)
        from nnfuzz.triage.dynamic_reduction import ShapesChecker, deleter, start_of

        start = start_of(bug, gir, weights)
        check, delete = ShapesChecker(sandbox, bug.meta, tolerances), deleter(start)
    else:
        start = Candidate(gir, weights, dict(bug.oracle["input"]))
        check, delete = Checker(sandbox, bug.meta, tolerances, expected if other is not None else None), None
    if check.signature(start) != want:
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"the bug does not show its signature now ({check.last})"}

    trials = 0

    def holds(c):
        nonlocal trials
        trials += 1
        return check.signature(c) == want

    best, _ = reduce_graph(start, holds, budget_s, delete)
    if time.monotonic() - t0 < budget_s and not dynamic:  # then shapes and attributes (only ever smaller)
        best = shrink(best, holds) or best
    seconds = round(time.monotonic() - t0, 2)
    if best.gir.n_nodes == gir.n_nodes and best.gir.dumps() == gir.dumps():
        return {"bug": str(bug.path), "status": "minimal", "nodes": gir.n_nodes, "trials": trials, "seconds": seconds}
    if check.signature(best) != want:  # re-checked the way repro does (and rebuilds check.model)
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"the reduced graph lost the signature on re-check ({check.last})"}
    _write_reduced(bug, best, check, gir.n_nodes, trials, seconds, want, lock, gir.family is not None)
    return {"bug": str(bug.path), "status": "reduced", "nodes_before": gir.n_nodes, "nodes_after": best.gir.n_nodes,
            "elements_before": total_elements(start), "elements_after": total_elements(best),
            "trials": trials, "seconds": seconds}


def expected_side(bug):
    """(system, options) of the system whose outputs each candidate of ``bug`` is compared with, when it is
    not torch eager (an inconsistency of the system under test found against another: meta.json
    ``oracle.expected``); None: torch eager's, or no comparison (a crash, a bug of the expected side)."""
    o = bug.meta.oracle or {}
    theirs = o.get("expected") or {}
    if bug.meta.symptom != "inconsistency" or o.get("side", "actual") != "actual" or \
            theirs.get("system", "torch-eager") == "torch-eager":
        return None
    return theirs["system"], dict(theirs.get("options") or {})


class Checker:
    """Runs a candidate on the system and gives its signature (None: no bug, or not buildable), on the
    one verdict path: judge -> float64 twins -> localize -> signature. ``expected``: the expected side's
    sandbox, for a gradient bug found against another system (triage/grad_reduction.py)."""

    def __init__(self, sandbox, meta, tolerances, expected=None):
        self.sandbox, self.meta, self.tol, self.expected = sandbox, meta, tolerances, expected
        self.export = meta.export_spec()  # candidates are written as the bug's model was (kept nodes keep their spellings)
        self.last = ""
        self.model = None      # the last candidate's Model, verdict and BugMeta (when a bug)
        self.verdict = None
        self.bug_meta = None
        self.spec = None       # oracle=grad: the last candidate's GradSpec

    def signature(self, c):
        from nnfuzz.errors import InternalError, NNFuzzError
        from nnfuzz.materialize.model import build_model
        from nnfuzz.triage.judging import bug_signature, judge_run, local_judges, model_twins, replay_meta, settle_locally
        from nnfuzz.triage.repro import outputs_on, widened_of

        if self.meta.grad is not None:  # oracle=grad: each candidate differentiated, run forward and backward
            from nnfuzz.triage.grad_reduction import grad_signature

            return grad_signature(self, c)
        try:
            model = build_model(c.gir, 0, export=self.export, values=(c.weights, c.inputs))
        except InternalError:
            raise
        except NNFuzzError as e:  # a candidate the exporter or the checks refuse: not this bug
            self.last = f"not buildable: {type(e).__name__}: {e}"
            return None
        res = self.sandbox.run_model(model, c.inputs, fmt=self.meta.format)  # as the bug was sent
        judged = judge_run(res, model.oracle.output, self.sandbox.backend_info.engine, self.tol, model.oracle,
                           twins=lambda: model_twins(model))

        run, widened = outputs_on(self.sandbox, self.meta.format), widened_of(self.sandbox.backend_info.name)
        judged, loc = settle_locally(judged, res.outputs, model.oracle.output,  # each node's own error, as the campaign judged it
                                     *local_judges(c.gir, c.weights, c.inputs, run, self.tol, self.export, res.outputs, widened))
        self.last, self.model, self.verdict = judged.verdict.label, model, judged.verdict
        if not judged.verdict.is_bug:
            return None
        self.bug_meta = replay_meta(self.meta, judged, res, (lambda: loc.to_meta()) if loc is not None else None)
        if (self.meta.root_cause or {}).get("method") in ("prefix", "signal", "dropped") and judged.verdict.label == "crash":
            # the crash was charged to a node before the op its error names, or localized by its signal alone:
            # find that node in this candidate again (the recorded one may be gone, and the crash another bug's:
            # a reduction kept a Resize crash with no OneHot left, signed by the OneHot the original's prefix
            # found). A candidate without the op that failed shows the node's fault as an inconsistency,
            # localized as any: the same signature (dedup.node_fault), so the reduction may go on to it
            self.bug_meta = self.bug_meta.replace(root_cause=self._crash_root(c, model, judged.verdict, run, widened))
        return bug_signature(self.bug_meta, judged.verdict)

    def oracle_record(self) -> dict:
        """oracle.pkl of the last candidate checked."""
        return self.model.oracle.to_dict()

    def gir_text(self, c, with_family: bool = False) -> str:
        """gir.json of candidate ``c``."""
        return c.gir.dumps()

    def payload(self, c, model) -> bytes:
        """Candidate ``c``'s model file as the bug's folder holds it (``model``: its built Model)."""
        from nnfuzz.materialize.portable import model_payload, pack

        if self.spec is not None:  # a gradient test's payload
            return pack(c.gir.dumps(), c.weights, None, self.spec.to_json())
        return model_payload(c.gir, c.weights, model.onnx, self.meta.format)

    def _crash_root(self, c, model, verdict, run, widened):
        from nnfuzz.materialize.portable import model_payload
        from nnfuzz.triage.crash_prefix import crash_root_of
        from nnfuzz.triage.judging import err_log
        from nnfuzz.triage.repro import results_on

        payload = model_payload(c.gir, c.weights, model.onnx, self.meta.format) if self.meta.format == "onnx" else None
        return crash_root_of(self.bug_meta, err_log(verdict), c.gir.dumps(), c.weights, c.inputs, payload, run, widened,
                             results_on(self.sandbox, self.meta.format))


def _write_reduced(bug, best, check: Checker, before, trials, seconds, want, lock=None, family=False) -> None:
    """Original files into original/, the reduced ones in their place (the folder is rebuilt beside
    it and swapped in, so an interruption leaves either the old or the new folder). meta.json and
    err.log describe the reduced graph's run (``check``'s last one). ``family``: gir.json holds the
    graph's shape family (a dynamic bug's, as its gir.json had it)."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.bugstore import MODEL_FILES
    from nnfuzz.triage.folder import dump_oracle, write_bytes, write_folder_atomic
    from nnfuzz.triage.judging import err_log
    from nnfuzz.triage.meta import write_meta
    from nnfuzz.triage.node_deletion import Candidate
    from nnfuzz.triage.rootcause import reduced_note
    from nnfuzz.triage.shrink import total_elements

    original, model, v = GraphIR.loads(bug.gir_text), check.model, check.verdict
    meta = check.bug_meta.replace(nodes=best.gir.n_nodes, ops=best.gir.op_names(), signature=want, reduced={
        "nodes_before": before, "nodes_after": best.gir.n_nodes, "trials": trials,
        "elements_before": total_elements(Candidate(original, {}, {})),
        "elements_after": total_elements(best), "seconds": seconds})
    if meta.export is not None and model.export is not None:  # the spellings of the nodes the reduced graph kept
        meta = meta.replace(export=model.export.record(model.spellings))
    old = {name: (bug.path / name).read_bytes() for name in FILES if (bug.path / name).is_file()}
    note = f"{reduced_note(before, best.gir.n_nodes)}\n".encode()
    writers = {
        MODEL_FILES[bug.format]: write_bytes(check.payload(best, model)),
        "gir.json": write_bytes(check.gir_text(best, family).encode()),
        "oracle.pkl": write_bytes(dump_oracle(check.oracle_record())),
        "meta.json": write_meta(meta),
        "err.log": write_bytes(err_log(v).encode() + note),
        **{f"original/{name}": _write_into_subfolder(data) for name, data in old.items()},
    }
    if (bug.path / "model").is_dir():  # a TF system's SavedModel: the reduced one, and the original kept
        from nnfuzz.materialize.tensorflow.module import saved_model_writer

        writers["model"] = saved_model_writer(best.gir.dumps(), best.weights)
        writers["original/model"] = lambda path: shutil.copytree(bug.path / "model", path)
    tmp_dest = bug.path.parent / f".{bug.path.name}.reduced"
    shutil.rmtree(tmp_dest, ignore_errors=True)
    write_folder_atomic(tmp_dest, writers)
    aside = bug.path.parent / f".{bug.path.name}.before-reduce"
    with lock or contextlib.nullcontext():  # while the number is free, no one else may take it
        bug.path.rename(aside)
        tmp_dest.rename(bug.path)
    shutil.rmtree(aside)


def _write_into_subfolder(data: bytes):
    def write(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    return write
