"""Resuming a campaign in the same ``fuzz.out``: the seeds it already tested are never tested again.

The store's ``campaign_state.json`` (written by the campaign process alone, atomically, every few
seconds and at the end) records the seeds tested so far as merged ``[first, last + 1)`` ranges, and the
seed the last campaign started from. A campaign into that store tests, in increasing order, the seeds
from its start that no range holds (``seed_at``): from the last campaign's start when ``mgen.seed`` is
not given (it simply goes on), from ``mgen.seed`` otherwise. Bug numbers continue on their own (the
store numbers a new folder after the highest one: triage/bugstore.py). The generator's coverage state
lives in a file of its own. A campaign killed outright (SIGKILL) may test again the seeds of its last
few seconds.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

from nnfuzz.errors import ConfigError

STATE_FILE = "campaign_state.json"
VERSION = 1

Ranges = Tuple[Tuple[int, int], ...]


def merge(ranges: Iterable[Tuple[int, int]]) -> Ranges:
    """Sorted, merged ``[lo, hi)`` ranges (touching ones joined)."""
    out: List[List[int]] = []
    for lo, hi in sorted((int(a), int(b)) for a, b in ranges if int(b) > int(a)):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def ranges_of(seeds: Iterable[int]) -> Ranges:
    return merge((s, s + 1) for s in seeds)


def seed_at(start: int, tested: Ranges, i: int) -> int:
    """The ``i``-th seed (from 0) at or after ``start`` that no range of ``tested`` holds."""
    s, left = int(start), int(i)
    for lo, hi in tested:
        if hi <= s:
            continue
        if lo > s:
            if left < lo - s:
                return s + left
            left -= lo - s
        s = max(s, hi)
    return s + left


def read_state(out: Path) -> Optional[dict]:
    """The store's state, or None when it has none. A file that cannot be read is a ConfigError that
    names it and the fix; nothing is changed."""
    path = Path(out) / STATE_FILE
    if not path.exists():
        return None
    fix = (f"fix it, or move it aside to start the seeds over (the bug folders in {out} are not touched; "
           "the numbering goes on from them)")
    try:
        state = json.loads(path.read_text())
        if not isinstance(state, dict) or state.get("version") != VERSION:
            raise ValueError(f"expected an object with version {VERSION}")
        tested = merge(tuple(r) for r in state["tested_seeds"])
        start = int(state["start_seed"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{path} is not a readable campaign state ({type(e).__name__}: {e}); {fix}") from None
    return {**state, "tested_seeds": tested, "start_seed": start}


def with_tested_seeds(cc):
    """``cc`` with ``tested_seeds`` read from its store (and, with ``mgen.seed`` unset and a state there,
    the last campaign's start seed). Done once: a config that has them is returned as it is."""
    import dataclasses

    if cc.tested_seeds is not None:
        return cc
    state = read_state(cc.out) if cc.source is None else None
    if state is None:
        return dataclasses.replace(cc, tested_seeds=())
    policy = cc.policy if cc.policy.seed is not None else dataclasses.replace(cc.policy, seed=state["start_seed"])
    return dataclasses.replace(cc, tested_seeds=state["tested_seeds"], policy=policy)


def write_state(out: Path, start_seed: int, tested: Ranges, done: Ranges, campaigns: int) -> None:
    """Record ``done`` (the ranges of seeds this campaign tested) with the earlier ``tested`` ones, atomically."""
    from nnfuzz.triage.folder import atomic_write_text

    state = {"version": VERSION, "start_seed": int(start_seed), "campaigns": int(campaigns),
             "tested_seeds": [list(r) for r in merge(tuple(tested) + tuple(done))]}
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write_text(Path(out) / STATE_FILE, json.dumps(state) + "\n")
