"""Handing a made model from a producer process to the campaign, safe against the producer dying at any
instant (fuzz/producers.py).

The model is pickled to a file of the producers' folder and renamed into place; only then is its file's
name put on the queue. That message is a few dozen bytes, which the queue's feeder thread writes to the
pipe in one write, and a pipe write under PIPE_BUF is atomic: a dead producer leaves either the whole
name or nothing. A queue that carried the model itself would write it in pieces, and a producer killed
between two of them (a native crash in its main thread, or the SIGKILL the forked producers get when
the first one dies) would leave half a message there; the campaign's next ``get`` would then wait
forever for the rest, since the campaign holds the pipe's write end too and no end of file ever comes.
A model file whose name was never sent (its producer died in between) is removed with its generation
of producers (``clear``).
"""
from __future__ import annotations

import os
import pickle
from pathlib import Path

SUFFIX = ".model"


def hand_over(p, folder: Path) -> str:
    """Write ``p`` (a Produced with its index) whole into ``folder``; the name to put on the queue."""
    name = f"{p.index}-{os.getpid()}{SUFFIX}"
    part = folder / f"{name}.part"
    with open(part, "wb") as f:
        pickle.dump(p, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(part, folder / name)
    return name


def take(folder: Path, name: str):
    """The model named by a queue message, its file removed."""
    path = folder / name
    with open(path, "rb") as f:
        p = pickle.load(f)
    path.unlink(missing_ok=True)  # (a restart's ``clear`` may have removed it while it was read)
    return p


def clear(folder: Path) -> None:
    """Remove the model files of a generation of producers that is gone (sent or not, none is read now)."""
    for path in folder.iterdir():
        if path.name.endswith((SUFFIX, f"{SUFFIX}.part")):
            path.unlink(missing_ok=True)
