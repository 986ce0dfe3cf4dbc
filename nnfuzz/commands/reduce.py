"""`nnfuzz reduce bugs/0042/`: shrink a saved bug while its signature holds: delete nodes
(triage/reduce.py), then shrink shapes and attributes by re-solving the constraints (triage/shrink.py).

The original files move to ``bugs/0042/original/``; the reduced model (model.onnx or model.gir, and
model/ for TF systems), gir.json, oracle.pkl and meta.json (with ``reduced``: nodes before/after, trials, seconds) take their place, and the result is
re-checked the way ``nnfuzz repro`` does. A bug whose signature no smaller graph keeps is left
untouched. Exit codes: 0 reduced (or nothing to remove), 1 the signature could not be checked or was
lost on re-check (bug untouched), 2 bad arguments or a malformed bug folder.
"""
from __future__ import annotations

import contextlib

import json
import shutil
import sys
import time
from pathlib import Path

FILES = ("model.onnx", "model.gir", "gir.json", "oracle.pkl", "meta.json", "err.log")


def run(cfg, positional, overrides) -> int:
    from omegaconf import OmegaConf

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.bugstore import load_bug

    paths = [a for a in positional if not a.startswith("--")]
    if len(paths) != 1 or len(paths) != len(positional):
        print(f"usage: nnfuzz reduce <bug folder> [reduce_s=120]; got {positional}", file=sys.stderr)
        return 2
    budget = cfg.reduce_s
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0:
        from nnfuzz.errors import ConfigError

        raise ConfigError(f"reduce_s={budget!r} must be a number of seconds > 0, e.g. reduce_s=60")
    bug = load_bug(Path(paths[0]))
    if bug.gir_text is None:
        print(f"nnfuzz reduce: {bug.path} has no gir.json; only nnfuzz's own bug folders can be reduced",
              file=sys.stderr)
        return 2
    if (bug.path / "original").exists():
        print(f"nnfuzz reduce: {bug.path} is already reduced (its original is in original/)", file=sys.stderr)
        return 0
    tolerances = {k: tuple(v) for k, v in OmegaConf.to_container(cfg.fuzz.tolerances).items()}
    system = str(bug.meta["system"])
    with Sandbox(system, bug.meta.get("backend_options") or {}, test_timeout=float(cfg.fuzz.test_timeout),
                 memory_limit_mb=int(cfg.fuzz.memory_limit_mb)) as sandbox:
        sandbox.start()
        result = reduce_bug(bug, sandbox, tolerances, int(bug.meta.get("opset", 17)), float(budget))
    print(json.dumps(result))
    return 0 if result["status"] in ("reduced", "minimal") else 1


def reduce_bug(bug, sandbox, tolerances, opset: int, budget_s: float, lock=None) -> dict:
    """Reduce ``bug`` in place with ``sandbox`` running its system; returns a summary dict. ``lock`` (a
    threading.Lock) is held while the folder is swapped for its reduced copy."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.dedup import signature
    from nnfuzz.triage.reduce import Candidate, reduce_graph
    from nnfuzz.triage.shrink import shrink, total_elements

    t0 = time.monotonic()
    from nnfuzz.triage.bugstore import bug_weights

    gir = GraphIR.loads(bug.gir_text)
    weights = bug_weights(bug)
    if weights is None:
        return {"bug": str(bug.path), "status": "not-reduced", "note": "model.onnx lacks some weight initializers"}
    expected = (bug.meta.get("oracle") or {}).get("expected", {}).get("system", "torch-eager")
    if bug.meta.get("symptom") == "inconsistency" and expected != "torch-eager":
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"reduction compares with torch eager, but this inconsistency was found against {expected}"}
    err_log = (bug.path / "err.log").read_text(errors="replace") if (bug.path / "err.log").is_file() else ""
    want = bug.meta.get("signature") or signature(bug.meta, err_log)
    start = Candidate(gir, weights, dict(bug.oracle["input"]))
    check = _Checker(sandbox, str(bug.meta["system"]), dict(bug.meta), tolerances, opset)
    if check.signature(start) != want:
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"the bug does not show its signature now ({check.last})"}

    trials = 0

    def holds(c):
        nonlocal trials
        trials += 1
        return check.signature(c) == want

    best, _ = reduce_graph(start, holds, budget_s)
    if time.monotonic() - t0 < budget_s:  # then shapes and attributes (only ever smaller)
        best = shrink(best, holds) or best
    seconds = round(time.monotonic() - t0, 2)
    if best.gir.n_nodes == gir.n_nodes and best.gir.dumps() == gir.dumps():
        return {"bug": str(bug.path), "status": "minimal", "nodes": gir.n_nodes, "trials": trials, "seconds": seconds}
    if check.signature(best) != want:  # re-checked the way repro does (and rebuilds check.model)
        return {"bug": str(bug.path), "status": "not-reduced", "nodes": gir.n_nodes,
                "note": f"the reduced graph lost the signature on re-check ({check.last})"}
    _write_reduced(bug, best, check.model, gir.n_nodes, trials, seconds, want, lock)
    return {"bug": str(bug.path), "status": "reduced", "nodes_before": gir.n_nodes, "nodes_after": best.gir.n_nodes,
            "elements_before": total_elements(start), "elements_after": total_elements(best),
            "trials": trials, "seconds": seconds}


class _Checker:
    """Runs a candidate on the system and gives its signature (None: no bug, or not runnable)."""

    def __init__(self, sandbox, system, meta, tolerances, opset):
        self.sandbox, self.system, self.meta, self.tol, self.opset = sandbox, system, meta, tolerances, opset
        self.last = ""
        self.model = None

    def signature(self, c):
        from nnfuzz.errors import NNFuzzError
        from nnfuzz.materialize.model import add_twins, build_model
        from nnfuzz.verdict import Symptom, judge
        from nnfuzz.triage.dedup import signature
        from nnfuzz.triage.localize import localize

        try:
            model = build_model(c.gir, 0, opset=self.opset, values=(c.weights, c.inputs))
        except NNFuzzError as e:
            self.last = f"not buildable: {e}"
            return None
        res = self.sandbox.run_model(model, c.inputs)
        kind = self.system.split("-")[0]
        verdict = judge(res, model.oracle.output, kind, self.tol)
        if verdict.symptom is Symptom.inconsistency:
            add_twins(model)
            verdict = judge(res, model.oracle.output, kind, self.tol, model.oracle.output_f64,
                            model.oracle.output_f64_jitter)
        self.last, self.model = verdict.label, model
        if not verdict.is_bug:
            return None
        meta = {**self.meta, "symptom": verdict.symptom.value, "stage": verdict.stage.value,
                "summary": verdict.summary, "signal": res.signal}
        if verdict.symptom is Symptom.inconsistency:
            def run(model, inputs):
                r = self.sandbox.run_model(model, inputs)
                return r.outputs if r.status == "ok" else None
            meta.update(localize(c.gir, c.weights, c.inputs, run, self.tol, self.opset).to_meta())
        return signature(meta, f"{verdict.summary}\n\n{verdict.detail}\n")


def _write_reduced(bug, best, model, before, trials, seconds, want, lock=None) -> None:
    """Original files into original/, the reduced ones in their place (the folder is rebuilt beside
    it and swapped in, so an interruption leaves either the old or the new folder)."""
    from nnfuzz.triage.folder import dump_oracle, write_bytes, write_folder_atomic, write_json
    from nnfuzz.triage.reduce import Candidate

    from nnfuzz.gir import GraphIR
    from nnfuzz.triage.shrink import total_elements

    original = GraphIR.loads(bug.gir_text)
    meta = {**bug.meta, "nodes": best.gir.n_nodes, "ops": best.gir.op_names(), "signature": want,
            "reduced": {"nodes_before": before, "nodes_after": best.gir.n_nodes, "trials": trials,
                        "elements_before": total_elements(Candidate(original, {}, {})),
                        "elements_after": total_elements(best), "seconds": seconds}}
    old = {name: (bug.path / name).read_bytes() for name in FILES if (bug.path / name).is_file()}
    note = f"\n[reduced from {before} to {best.gir.n_nodes} nodes]\n".encode()
    from nnfuzz.materialize.portable import model_payload
    from nnfuzz.triage.bugstore import MODEL_FILES

    writers = {
        MODEL_FILES[bug.format]: write_bytes(model_payload(best.gir, best.weights, model.onnx, bug.format)),
        "gir.json": write_bytes(best.gir.dumps().encode()),
        "oracle.pkl": write_bytes(dump_oracle(model.oracle.to_dict())),
        "meta.json": write_json(meta),
        "err.log": write_bytes(old.get("err.log", b"") + note),
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
