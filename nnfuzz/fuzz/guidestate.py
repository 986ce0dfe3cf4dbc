"""The campaign's side of coverage guidance (``mgen.guide=coverage``; the weights are generate/guide.py):
merge what each produced graph covered, pass new coverage and known bugs' triggers on to the producer
processes, keep it all in ``guide_state.json`` of the bug store folder (so a campaign resumed into the
same folder continues it), and log coverage and its growth in campaign.jsonl every ``LOG_EVERY`` tests.

Why a file of its own: the bug store's folders and the campaign's numbering state are other records;
a corrupt guide state stops the campaign with a GuideStateError before anything is written, and the
file is left as it was (nothing is lost)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Dict, List, Optional

from nnfuzz.errors import NNFuzzError
from nnfuzz.generate.guide import KINDS, Guide, GuideState

FILE = "guide_state.json"
LOG_EVERY = 100          # tests between two "guide" lines of campaign.jsonl (one more at the end)
# seconds between two writes of the file (and at the end): written every LOG_EVERY tests, the whole state (4.9 MB
# of JSON at minute 27 of an ort-cpu soak, and growing) went to disk every 2 s, a growing share of the
# campaign process's time; a crash loses at most this much coverage, a heuristic's input
SAVE_EVERY_S = 60.0
SMALL_REDUCED = 2        # a reduced graph without a localized node this small names all its nodes as the trigger


class GuideStateError(NNFuzzError):
    """guide_state.json exists but is not a guide state."""


def load_state(out: Path) -> GuideState:
    """The guide state kept in ``out`` (a fresh one if there is none)."""
    path = Path(out) / FILE
    if not path.exists():
        return GuideState()
    try:
        return GuideState.from_json(json.loads(path.read_text()))
    except (ValueError, TypeError, KeyError, OSError) as e:
        raise GuideStateError(
            f"{path} is not a coverage guide state ({type(e).__name__}: {e}); the campaign did not start and "
            f"changed nothing. Move it aside to start coverage afresh (mv {path} {path}.bad), or run with "
            "mgen.guide=none") from None


def save_state(out: Path, state: GuideState) -> None:
    """Write ``state`` atomically (a temp file renamed over the old one)."""
    path = Path(out) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        state.write_json(f)
    os.replace(tmp, path)


def triggers_of(folder: Path, signature: Optional[str], how: str) -> List[dict]:
    """A saved bug's triggers: its localized node (first_divergent_node) if it has one, else, for a graph
    of at most SMALL_REDUCED nodes (reduced), each node; [] when unknown (a crash in a large graph)."""
    from nnfuzz.gir import GraphIR
    from nnfuzz.stats.corpus import from_gir
    from nnfuzz.stats.coverage import shape_bin
    from nnfuzz.triage.meta import read_meta

    gir_file = folder / "gir.json"
    if not gir_file.is_file():
        return []
    meta = read_meta(folder / "meta.json")
    signature = signature or meta.signature
    g = from_gir(GraphIR.loads(gir_file.read_text()))
    loc = meta.first_divergent_node
    if isinstance(loc, dict) and isinstance(loc.get("index"), int) and 0 <= loc["index"] < len(g.nodes):
        nodes = [g.nodes[loc["index"]]]
    elif len(g.nodes) <= SMALL_REDUCED:
        nodes = list(g.nodes)
    else:
        return []
    return [{"bug": folder.name if len(nodes) == 1 else f"{folder.name}:{k}", "op": n.op, "dtypes": list(n.in_dtypes),
             "bin": json.loads(json.dumps(shape_bin(n)[1:])), "signature": signature, "from": how}
            for k, n in enumerate(nodes)]


class CampaignGuide:
    """One per campaign: the state, its file, what producers have not been told yet, and the log."""

    def __init__(self, out: Path, log, enabled: bool, bugs: bool = True):
        self.out, self.log, self.enabled, self.bugs = Path(out), log, enabled, bugs
        self.state = load_state(self.out) if enabled else GuideState()
        self.guide = Guide(self.state)
        self._unsent: Dict[str, list] = {k: [] for k in KINDS}
        self._unsent_triggers: List[dict] = []
        self._logged = (0, self.state.sizes())
        self._reduced_seen = 0
        self._saved_at = time.monotonic()
        self.start = self.state.sizes()

    def merge(self, covered) -> None:
        """Count a produced graph's coverage (made here or by a producer)."""
        if self.enabled and covered is not None:
            for k, keys in self.state.add(covered).items():
                self._unsent[k] += keys

    def updates(self) -> Optional[dict]:
        """What producers have not been told yet (new keys, new triggers), or None; then counted as told."""
        if not any(self._unsent.values()) and not self._unsent_triggers:
            return None
        out = {**self._unsent, "triggers": self._unsent_triggers}
        self._unsent, self._unsent_triggers = {k: [] for k in KINDS}, []
        return out

    def bug_saved(self, folder: Path, signature: Optional[str], how: str = "saved") -> None:
        """A bug with a new signature was saved (``how``: saved) or reduced (``how``: reduced)."""
        if not self.enabled or not self.bugs:
            return
        for t in triggers_of(Path(folder), signature, how):
            if self.state.add_trigger(t):
                self._unsent_triggers.append(t)

    def poll_reducer(self, reducer) -> None:
        """Take the triggers of the bugs the background reducer finished since the last call."""
        if reducer is None or not self.enabled or not self.bugs:
            return
        done = list(reducer.results)
        for r in done[self._reduced_seen:]:
            if r.get("status") == "reduced" and r.get("bug"):
                self.bug_saved(Path(r["bug"]), r.get("signature"), "reduced")
        self._reduced_seen = len(done)

    def tick(self, tests: int, elapsed: float, force: bool = False) -> None:
        """Every LOG_EVERY tests (or ``force``): a campaign.jsonl line; the file saved at most every
        SAVE_EVERY_S seconds (and with ``force``, at the end)."""
        if not self.enabled or (not force and tests - self._logged[0] < LOG_EVERY):
            return
        now = self.state.sizes()
        self.log.write({"guide": {"tests": tests, "elapsed_s": round(elapsed, 1), **now,
                                  "growth": {k: now[k] - self._logged[1][k] for k in now},
                                  "triggers": len(self.state.triggers)}})
        self._logged = (tests, now)
        if force or time.monotonic() - self._saved_at >= SAVE_EVERY_S:
            save_state(self.out, self.state)
            self._saved_at = time.monotonic()

    def summary(self) -> str:
        """One line for the status panel."""
        if not self.enabled:
            return ""
        s = self.state.sizes()
        ops = sorted({t["op"] + "(" + ",".join(t["dtypes"] or ["*"]) + ")" for t in self.state.triggers})
        grown = s["op_dtype"] - self.start["op_dtype"]
        earlier = f" ({grown} new in this campaign)" if grown != s["op_dtype"] else ""
        return (f"{s['op_dtype']} op-dtype pairs tested{earlier}, {s['op_shape']} shape bins, {s['edges']} op-to-op "
                "edges; steered away from (bugs found): " + (", ".join(ops[:4]) + (" ..." if len(ops) > 4 else "")
                                                              if ops else "none"))
