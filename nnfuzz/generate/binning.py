"""Attribute binning: steer each symbolic int into a randomly chosen log-scale bin.

Without it Z3 answers with its favourite small values and every conv has stride 1. Bins for a
"size" are [1,2), [2,4), ..., [32,64), [64, 128]; a "pad" may also be exactly 0 or negative; an
"index" gets a uniformly drawn value below the largest rank involved. A preference is a lower and
an upper bound, with the lower drawn inside the bin so that Z3's habit of answering the lower bound
still spreads values across the bin.
"""
from __future__ import annotations

import random
from typing import Optional, Tuple

SIZE_BINS = [(1, 1), (2, 3), (4, 7), (8, 15), (16, 31), (32, 63), (64, 128)]
PAD_EXTRA = [(0, 0), (-8, -1)]

Bin = Tuple[int, int]
MODEST = 64  # when no bin fits, attributes are first tried within [-MODEST, MODEST]


def pick_bin(kind: str, rng: random.Random, index_bound: int = 5) -> Optional[Bin]:
    if kind == "size":
        return rng.choice(SIZE_BINS)
    if kind == "pad":
        return rng.choice(PAD_EXTRA + SIZE_BINS[:5])
    if kind == "index":
        v = rng.randrange(max(1, index_bound))
        return (v, v)
    return None  # "any": no preference


def sample(b: Bin, rng: random.Random) -> int:
    return rng.randint(b[0], b[1])


def preference(var, b: Bin, rng: random.Random):
    """A z3 predicate steering ``var`` into ``b`` (its lower bound drawn inside the bin)."""
    import z3

    lo = sample(b, rng)
    return z3.And(var >= lo, var <= b[1])
