"""The value search's last call, kept on disk in a producer process, so that a native crash inside it
(a SIGSEGV in torch's backward: issue 30's producer deaths) can be replayed without the campaign.

A producer sets ``path`` to a file of its slot. Every ``ValueSearch.run`` first writes its graph,
config, starting values and seed there (a few kB: a pickle of the sub-graph being repaired), and the
producer removes the file when it starts its next model, so a file present when the producer dies
belongs to the model it died making. The campaign moves it into the store
(``<fuzz.out>/producer_deaths/``) and logs the command that replays it::

    python -m nnfuzz.materialize.search_record <fuzz.out>/producer_deaths/<file>.search.pkl

which runs that same search in a process of its own, with faulthandler on, and prints its graph first
(a crash then shows the op whose backward it is in).
"""
from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Optional

SUFFIX = ".search.pkl"
REPLAY = "python -m nnfuzz.materialize.search_record"
DEATHS = "producer_deaths"   # the store's folder of them

path: Optional[Path] = None   # set in a producer: where its value searches are recorded


def write(gir, cfg, weights, inputs, seed: int, kw: dict) -> None:
    """Record a search about to run (nothing where ``path`` is unset: outside producers)."""
    if path is None:
        return
    with open(path, "wb") as f:
        pickle.dump({"gir": gir, "cfg": cfg, "weights": weights, "inputs": inputs, "seed": seed, "kw": kw}, f,
                    protocol=pickle.HIGHEST_PROTOCOL)


def forget() -> None:
    """A new model: the last one's search record no longer says anything."""
    if path is not None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def keep(file: Path, store: Path) -> dict:
    """Move a dead producer's search record (``file``, in the producers' folder, which goes with the
    campaign) into ``store``'s ``producer_deaths/``: the death record's ``search`` and ``replay``."""
    import shutil

    dest = store / DEATHS / file.name
    try:
        dest.parent.mkdir(exist_ok=True)
        shutil.move(file, dest)
    except OSError as e:
        return {"search": f"{file} (not kept: {e})", "replay": None}
    return {"search": str(dest), "replay": f"{REPLAY} {dest}"}


def replay(file: Path):
    """Run the recorded search again (its time budget lifted, so the steps are the same however long
    they take here) and return its SearchResult."""
    import dataclasses

    from nnfuzz.materialize.search import ValueSearch

    try:
        with open(file, "rb") as f:
            r = pickle.load(f)
        gir, cfg = r["gir"], r["cfg"]
    except (OSError, EOFError, pickle.UnpicklingError, KeyError, TypeError, AttributeError) as e:
        raise SystemExit(f"{file} is not a value search's record ({type(e).__name__}: {e}): it is written by "
                         f"a producer and moved into <fuzz.out>/{DEATHS}/ when the producer dies")
    cfg = dataclasses.replace(cfg, time_ms=max(cfg.time_ms, 600_000.0))
    print(gir.pretty(), flush=True)
    return ValueSearch(gir, cfg).run(r["weights"], r["inputs"], r["seed"], **r["kw"])


def main(argv=None) -> int:
    import faulthandler

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].endswith(SUFFIX):
        print(f"usage: {REPLAY} FILE{SUFFIX} (a producer death's record, from <fuzz.out>/producer_deaths/)",
              file=sys.stderr)
        return 2
    faulthandler.enable(all_threads=True)
    res = replay(Path(args[0]))
    print(f"the search ended: ok={res.ok} steps={res.steps} restarts={res.restarts} draws={res.draws}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
