"""The value search's last call, kept on disk in a producer process, so that a native crash inside it
(a SIGSEGV in torch's backward: issue 30's producer deaths) can be replayed without the campaign.

A producer sets ``path`` to a file of its slot. Every ``ValueSearch.run`` that goes past its first check
(values already safe need no search) writes its graph, config, starting values and seed there (a few kB:
a pickle of the sub-graph being repaired; 0.4 ms), and the
producer removes the file when it starts its next model, so a file present when the producer dies
belongs to the model it died making. The campaign moves it into the store
(``<fuzz.out>/producer_deaths/``) and logs the command that replays it::

    python -m nnfuzz.materialize.search_replay <fuzz.out>/producer_deaths/<file>.search.pkl

(materialize/search_replay.py).
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Optional

SUFFIX = ".search.pkl"
REPLAY = "python -m nnfuzz.materialize.search_replay"
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
