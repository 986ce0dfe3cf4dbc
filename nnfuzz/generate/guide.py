"""Coverage-guided op choice (``mgen.guide=coverage``, docs/guidance.md): HirGen's coverage criteria
(operator x dtype, operator x shape-bin, operator edges) kept as a campaign's state, and the weights
that bias each insertion toward what that state has not covered yet.

Why weights and not a search: a draw is still a draw from the same op pools with the same seeded RNG,
only reweighted, so nothing is ever excluded (every factor is at least ``FLOOR`` times a fully new
choice's, and a known bug's trigger at least ``MIN_FACTOR``), and the same seed with the same state gives
the same graph. The coverage keys are the ones ``nnfuzz stats`` counts (nnfuzz/stats/coverage.py:
``dtype_key``, ``shape_bin``, ``edge_keys``), computed from the finished graph, so what guidance aims at is
exactly what the stats measure.

Where the generator consults it: the op draw (``Guide.factor``: an op with an uncovered dtype row, few
shape bins seen or uncovered edges weighs more), the dtype row of a forward insertion and of the
graph's first placeholder (``row_factor``: uncovered rows first), and the existing tensor a forward
insertion consumes (``edge_factor``: a producer whose edge into the op is uncovered first). Backward
insertions draw their dtype row inside the op (``deduct_inp_ranks_and_dtype``) and are not biased.

Bug-aware guidance: a trigger (op, input dtypes or None for every row, attribute bin as recorded) of a
known bug multiplies its rows' factor by ``BUG_FACTOR`` (the attribute bin is recorded and shown; the
down-weight acts on op x dtype, the level the generator chooses before solving attributes).
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Dict, Iterable, List, Optional

FLOOR = 0.1        # factor of a fully covered choice (a fully uncovered one has 1)
BUG_FACTOR = 0.1   # factor on a known bug's trigger row
MIN_FACTOR = 0.01  # no choice's factor goes below this (several triggers on one row)
PATIENCE = 10      # draws per dtype row after which an op's novelty decays a step
KINDS = ("op_dtype", "op_shape", "edges")
STATE_VERSION = 2  # 2: op x shape-bin keys as (op, bin_hash), at most MAX_BINS per op; 1 (read): (op, ranks, attrs)
# shape bins kept per op: the factor's shape term, 0.2 / (1 + bins), is under 0.001 past it, while an op's bins
# grew without end (1,500 keys a minute at 1.3 KB each in an ort-cpu soak: 76 MiB per process at minute 40)
MAX_BINS = 256


def graph_coverage(gir) -> Dict[str, Counter]:
    """What one GraphIR covers: per kind, a Counter of its coverage keys (as ``nnfuzz stats`` counts them;
    an op x shape-bin key as (op, ``bin_hash``))."""
    from nnfuzz.stats.corpus import from_gir
    from nnfuzz.stats.coverage import dtype_key, edge_keys, shape_bin

    g = from_gir(gir)
    return {"op_dtype": Counter(dtype_key(n) for n in g.nodes),
            "op_shape": Counter(compact_bin(shape_bin(n)) for n in g.nodes),
            "edges": Counter(edge_keys(g))}


def compact_bin(key: tuple) -> tuple:
    """(op, ``bin_hash`` of the rest) for an ``nnfuzz stats`` shape-bin key (op, ranks, attribute bins)."""
    return key[0], bin_hash(key[1:])


def bin_hash(rest: tuple) -> int:
    """A 63-bit hash of a shape bin's ranks and attribute bins, the same in every process (``hash`` of a
    str is salted per process; producers and the campaign exchange these keys)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(repr(rest).encode(), digest_size=8).digest(), "little") >> 1


class GuideState:
    """Coverage counts per kind, the graphs they came from, and known bugs' triggers. ``op_versions``
    and ``trigger_version`` grow on every change that can move a weight, so a Guide recomputes an op's
    factor only then (``version`` grows on any change)."""

    def __init__(self):
        self.counts: Dict[str, Counter] = {k: Counter() for k in KINDS}
        self.graphs = 0
        self.triggers: List[dict] = []   # {"bug", "op", "dtypes" (list or None), "bin", "signature", "from"}
        self.version = 0
        self.trigger_version = 0         # grows when a trigger is added or replaced
        self._per_op: Dict[str, Dict[str, set]] = {}  # op -> {"rows", "bins", "in", "out"}: covered sets
        self.op_versions: Dict[str, int] = {}  # op -> changes of its covered sets (Guide recomputes only those)

    def add(self, covered: Dict[str, Counter], graphs: int = 1) -> Dict[str, list]:
        """Count what a graph covered; returns the keys that were new (to pass on to other producers). An
        op's shape bins past MAX_BINS are not kept."""
        new = {k: [] for k in KINDS}
        for kind in KINDS:
            counts = self.counts[kind]
            for key, n in covered.get(kind, {}).items():
                if key not in counts:
                    if kind == "op_shape" and len(self.covered(key[0])["bins"]) >= MAX_BINS:
                        continue
                    key = tuple(sys.intern(k) if isinstance(k, str) else k for k in key)  # (unpickled: a copy each)
                    new[kind].append(key)
                    self._index(kind, key)
                counts[key] += n
        self.graphs += graphs
        if any(new.values()):
            self.version += 1
        return new

    def mark(self, new: Dict[str, Iterable]) -> None:
        """Mark keys covered elsewhere (another producer's graphs) without counting graphs."""
        self.add({k: Counter({key: 1 for key in new.get(k, ()) if key not in self.counts[k]}) for k in KINDS}, 0)

    def add_trigger(self, trigger: dict) -> bool:
        """Record a known bug's trigger; False if that bug's trigger was already known."""
        old = [t for t in self.triggers if t["bug"] == trigger["bug"]]
        if old and old[0] == trigger:
            return False
        self.triggers = [t for t in self.triggers if t["bug"] != trigger["bug"]] + [dict(trigger)]
        self.version += 1
        self.trigger_version += 1
        return True

    def _index(self, kind: str, key: tuple) -> None:
        if kind == "edges":
            self._op(key[1])["in"].add(key[0])
            self._op(key[0])["out"].add(key[1])
        else:
            self._op(key[0])["rows" if kind == "op_dtype" else "bins"].add(key[1])

    def _op(self, op: str) -> Dict[str, set]:
        self.op_versions[op] = self.op_versions.get(op, 0) + 1
        hit = self._per_op.get(op)
        if hit is None:
            hit = self._per_op[op] = {"rows": set(), "bins": set(), "in": set(), "out": set()}
        return hit

    def covered(self, op: str) -> Dict[str, set]:
        return self._per_op.get(op) or {"rows": set(), "bins": set(), "in": set(), "out": set()}

    def sizes(self) -> Dict[str, int]:
        """How many distinct keys of each kind are covered, and how many graphs counted."""
        return {**{k: len(self.counts[k]) for k in KINDS}, "graphs": self.graphs}

    # ---- JSON (guide_state.json; the campaign side is nnfuzz/fuzz/guidestate.py) ----------------
    def to_json(self) -> dict:
        """The state as one JSON object; its rows in the order the keys were first covered."""
        return {"version": STATE_VERSION, "graphs": self.graphs,
                **{k: [[*_listed(key), n] for key, n in self.counts[k].items()] for k in KINDS},
                "triggers": self.triggers}

    def write_json(self, f) -> None:
        """Write ``to_json()``'s object to the text file ``f`` a row at a time. Built whole (tens of
        thousands of small lists, a sort key each) every minute, it opened pymalloc arenas that other
        threads' objects then kept: 5 MiB of an ort-cpu campaign process's growth in 8 minutes (memray)."""
        f.write(f'{{"version": {STATE_VERSION}, "graphs": {self.graphs}')
        for k in KINDS:
            f.write(f', "{k}": [')
            for i, (key, n) in enumerate(self.counts[k].items()):
                f.write((", " if i else "") + json.dumps([*_listed(key), n]))
            f.write("]")
        f.write(f', "triggers": {json.dumps(self.triggers)}}}')

    @classmethod
    def from_json(cls, data) -> "GuideState":
        """Raises ValueError (the caller names the file) on anything but what ``to_json`` writes (or wrote in
        version 1, whose op x shape-bin keys are compacted here)."""
        if not isinstance(data, dict) or data.get("version") not in (1, STATE_VERSION):
            raise ValueError(f"expected an object with \"version\": 1 or {STATE_VERSION}, got "
                             f"{(data.get('version') if isinstance(data, dict) else type(data).__name__)!r}")
        s, version = cls(), data["version"]
        width = {"op_dtype": 2, "op_shape": 3 if version == 1 else 2, "edges": 2}
        for kind in KINDS:
            rows = data.get(kind)
            if not isinstance(rows, list):
                raise ValueError(f"{kind!r} must be a list of [key..., count] rows, got {type(rows).__name__}")
            got = Counter()
            for row in rows:
                if not isinstance(row, list) or len(row) != width[kind] + 1 or not isinstance(row[-1], int) \
                        or not isinstance(row[0], str) or row[-1] < 1 \
                        or (kind == "op_shape" and version > 1 and not isinstance(row[1], int)):
                    raise ValueError(f"{kind!r} row {row!r} is malformed (want {width[kind]} key parts and a count >= 1)")
                key = _tupled(row[:-1])
                got[compact_bin(key) if kind == "op_shape" and version == 1 else key] += row[-1]
            s.add({kind: got}, 0)
        if not isinstance(data.get("graphs"), int) or not isinstance(data.get("triggers"), list):
            raise ValueError("\"graphs\" must be an integer and \"triggers\" a list")
        for t in data["triggers"]:
            if not isinstance(t, dict) or not isinstance(t.get("op"), str) or "bug" not in t:
                raise ValueError(f"trigger {t!r} is malformed (want an object with \"bug\" and \"op\")")
            s.add_trigger(t)
        s.graphs = data["graphs"]
        return s


def _listed(key):
    return [list(x) if isinstance(x, tuple) else x for x in key]


def _tupled(x):
    return tuple(_tupled(v) for v in x) if isinstance(x, list) else x


class Guide:
    """The weights a generator draws with, from a GuideState over an op set. A producer keeps one for its
    life; a generator without one draws unguided.

    A draw is a draw from the pool's own weights, accepted with the drawn op's factor (at most 1):
    the accepted op follows weight x factor exactly, and only the drawn candidates' factors are computed
    (each cached until its op's coverage, its decay step or the triggers change), so the coverage a graph
    adds costs nothing until an op it touched is drawn again."""

    MAX_TRIES = 64  # rejections before a draw falls back to one cumulative sum over the whole pool
    REBOUND = 256   # draws between two computations of the factors' bound (``_bound``)

    def __init__(self, state: Optional[GuideState] = None):
        self.state = state or GuideState()
        self._factor: Dict[type, tuple] = {}     # op -> (stamp, factor): see ``factor``
        self._bound_at: Optional[list] = None    # [ops, trigger version, draws left, bound]: see ``_bound``
        self._draws: Counter = Counter()         # op -> times this guide drew it (PATIENCE)
        self._rows: Dict[type, List[tuple]] = {}  # op -> its usable rows' keys
        self._row_keys: Dict[type, Dict[tuple, tuple]] = {}

    def factor(self, cls, n_ops: int, rows_of) -> float:
        """``cls``'s factor: FLOOR + (1 - FLOOR) x novelty, times its rows' mean bug factor. Novelty:
        0.6 if some usable dtype row is uncovered, + 0.2 x 1/(1 + shape bins seen), + 0.2 x the share of
        edges into and out of it (among ``n_ops`` ops) not covered; novelty is divided by 1 + k after
        this guide drew the op k x PATIENCE times per row (a row the generator cannot reach, or an op that
        rarely fits, must not keep pulling: drawn often, the weights return to mgen.op_weights, and the
        cost of guidance with them). ``rows_of(cls)``: its usable row indices."""
        st = self.state
        rows = self._rows.get(cls)
        if rows is None:
            rows = self._rows[cls] = [self.row_key(cls, k) for k in rows_of(cls)]
        step = self._draws[cls] // (PATIENCE * max(1, len(rows)))
        stamp = (st.op_versions.get(cls.name, 0), step, st.trigger_version, n_ops)
        hit = self._factor.get(cls)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        cov = st.covered(cls.name)
        dt = 0.6 if any(r not in cov["rows"] for r in rows) else 0.0
        sh = 0.2 / (1 + len(cov["bins"]))
        ed = 0.2 * max(0.0, 1 - (len(cov["in"]) + len(cov["out"])) / (2 * max(1, n_ops)))
        bug = sum(self.bug_factor(cls.name, r) for r in rows) / len(rows) if rows and st.triggers else 1.0
        f = max(MIN_FACTOR, (FLOOR + (1 - FLOOR) * (dt + sh + ed) / (1 + step)) * bug)
        self._factor[cls] = (stamp, f)
        return f

    def op_factors(self, ops: List[type], rows_of) -> Dict[type, float]:
        """Every op's factor (``factor``), as a table."""
        return {cls: self.factor(cls, len(ops), rows_of) for cls in ops}

    def draw(self, rng, pool, ops: List[type], rows_of):
        """An op class from ``pool`` (ops, weights, cumulative weights), by weight x factor."""
        n = len(ops)
        cands, weights, cum = pool
        bound = self._bound(ops, rows_of)
        for _ in range(self.MAX_TRIES):
            cls = rng.choices(cands, cum_weights=cum)[0]
            if rng.random() * bound < self.factor(cls, n, rows_of):
                break
        else:  # every candidate drawn had a small factor: one exact draw over the pool
            cls = rng.choices(cands, weights=[w * self.factor(c, n, rows_of) for c, w in zip(cands, weights)])[0]
        self._draws[cls] += 1
        return cls

    def _bound(self, ops: List[type], rows_of) -> float:
        """An upper bound of every op's factor. Coverage only grows and decay steps only rise, so a
        factor never grows but when a trigger is replaced: a bound stays valid until then, and is
        tightened every REBOUND draws (a loose one only costs rejected candidates)."""
        hit = self._bound_at
        if hit is None or (hit[0] is not ops and hit[0] != ops) or hit[1] != self.state.trigger_version or hit[2] <= 0:
            bound = max(self.factor(c, len(ops), rows_of) for c in ops)
            hit = self._bound_at = [ops, self.state.trigger_version, self.REBOUND, bound]
        hit[2] -= 1
        return hit[3]

    def row_key(self, cls, k: int) -> tuple:
        """The op x dtype key part of ``cls``'s dtype row ``k`` (its input dtypes' names)."""
        keys = self._row_keys.setdefault(cls, {})
        row = cls.in_dtypes[k]
        hit = keys.get(row)
        if hit is None:
            hit = keys[row] = tuple(d.value for d in row)
        return hit

    def row_factor(self, op_name: str, in_row: tuple) -> float:
        """An input dtype row's factor: 1 if uncovered, else FLOOR; times its bug factor."""
        key = tuple(d.value for d in in_row)
        base = FLOOR if key in self.state.covered(op_name)["rows"] else 1.0
        return max(MIN_FACTOR, base * self.bug_factor(op_name, key))

    def bug_factor(self, op_name: str, dtypes: tuple) -> float:
        f = 1.0
        for t in self.state.triggers:
            if t["op"] == op_name and (t.get("dtypes") is None or tuple(t["dtypes"]) == dtypes):
                f *= BUG_FACTOR
        return max(MIN_FACTOR, f)

    def edge_factor(self, producer: Optional[str], consumer: str) -> float:
        """1 if the edge producer -> consumer is uncovered, else FLOOR (a placeholder: no edge, FLOOR)."""
        if producer is None or producer in self.state.covered(consumer)["in"]:
            return FLOOR
        return 1.0
