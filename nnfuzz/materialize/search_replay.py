"""Replays a value search a producer recorded before it died (materialize/search_record.py), in this process,
with faulthandler on: its graph is printed first, so a native crash shows the op whose backward it is in.

    python -m nnfuzz.materialize.search_replay <fuzz.out>/producer_deaths/<file>.search.pkl
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

from nnfuzz.materialize.search_record import DEATHS, REPLAY, SUFFIX


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
