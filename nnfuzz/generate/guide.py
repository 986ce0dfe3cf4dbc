"""Coverage-guided op choice (``mgen.guide=coverage``, docs/guidance.md): HirGen's coverage criteria
(operator x dtype, operator x shape-bin, operator edges) kept as a campaign's state, and the weights
that bias each insertion toward what that state has not covered yet.

Why weights and not a search: a draw is still a draw from the same op pools with the same seeded RNG,
only reweighted, so nothing is ever excluded (every factor is at least ``FLOOR`` times a fully new
choice's, and a known bug's trigger at least ``MIN_FACTOR``), and the same seed with the same state gives
the same graph. The coverage keys are the ones ``nnfuzz stats`` counts (nnfuzz/stats/metrics.py:
``dtype_key``, ``shape_bin``, ``pairs``), computed from the finished graph, so what guidance aims at is
exactly what the stats measure.

Where the generator consults it: the op draw (``op_factor``: an op with an uncovered dtype row, few
shape bins seen or uncovered edges weighs more), the dtype row of a forward insertion and of the
graph's first placeholder (``row_factor``: uncovered rows first), and the existing tensor a forward
insertion consumes (``edge_factor``: a producer whose edge into the op is uncovered first). Backward
insertions draw their dtype row inside the op (``deduct_inp_ranks_and_dtype``) and are not biased.

Bug-aware guidance: a trigger (op, input dtypes or None for every row, attribute bin as recorded) of a
known bug multiplies its rows' factor by ``BUG_FACTOR`` (the attribute bin is recorded and shown; the
down-weight acts on op x dtype, the level the generator chooses before solving attributes).
"""
from __future__ import annotations

from collections import Counter
from itertools import accumulate
from typing import Dict, Iterable, List, Optional

FLOOR = 0.1        # factor of a fully covered choice (a fully uncovered one has 1)
BUG_FACTOR = 0.1   # factor on a known bug's trigger row
MIN_FACTOR = 0.01  # no choice's factor goes below this (several triggers on one row)
PATIENCE = 10      # draws per dtype row after which an op's novelty decays a step
KINDS = ("op_dtype", "op_shape", "edges")
STATE_VERSION = 1


def graph_coverage(gir) -> Dict[str, Counter]:
    """What one GraphIR covers: per kind, a Counter of its coverage keys (as ``nnfuzz stats`` counts them)."""
    from nnfuzz.stats.corpus import from_gir
    from nnfuzz.stats.metrics import dtype_key, pairs, shape_bin

    g = from_gir(gir)
    return {"op_dtype": Counter(dtype_key(n) for n in g.nodes),
            "op_shape": Counter(shape_bin(n) for n in g.nodes),
            "edges": Counter((g.nodes[i].op, g.nodes[j].op) for i, j in g.edges)}


class GuideState:
    """Coverage counts per kind, the graphs they came from, and known bugs' triggers. ``version`` grows
    on every change that can move a weight, so a Guide recomputes its per-op factors only then."""

    def __init__(self):
        self.counts: Dict[str, Counter] = {k: Counter() for k in KINDS}
        self.graphs = 0
        self.triggers: List[dict] = []   # {"bug", "op", "dtypes" (list or None), "bin", "signature", "from"}
        self.version = 0
        self._per_op: Dict[str, Dict[str, set]] = {}  # op -> {"rows", "bins", "in", "out"}: covered sets
        self.op_versions: Dict[str, int] = {}  # op -> changes of its covered sets (Guide recomputes only those)

    def add(self, covered: Dict[str, Counter], graphs: int = 1) -> Dict[str, list]:
        """Count what a graph covered; returns the keys that were new (to pass on to other producers)."""
        new = {k: [] for k in KINDS}
        for kind in KINDS:
            counts = self.counts[kind]
            for key, n in covered.get(kind, {}).items():
                if not counts[key]:
                    new[kind].append(key)
                    self._index(kind, key)
                counts[key] += n
        self.graphs += graphs
        if any(new.values()):
            self.version += 1
        return new

    def mark(self, new: Dict[str, Iterable]) -> None:
        """Mark keys covered elsewhere (another producer's graphs) without counting graphs."""
        self.add({k: Counter({key: 1 for key in new.get(k, ()) if not self.counts[k][key]}) for k in KINDS}, 0)

    def add_trigger(self, trigger: dict) -> bool:
        """Record a known bug's trigger; False if that bug's trigger was already known."""
        old = [t for t in self.triggers if t["bug"] == trigger["bug"]]
        if old and old[0] == trigger:
            return False
        self.triggers = [t for t in self.triggers if t["bug"] != trigger["bug"]] + [dict(trigger)]
        self.version += 1
        return True

    def _index(self, kind: str, key: tuple) -> None:
        if kind == "edges":
            self._op(key[1])["in"].add(key[0])
            self._op(key[0])["out"].add(key[1])
        else:
            self._op(key[0])["rows" if kind == "op_dtype" else "bins"].add(key[1:] if kind == "op_shape" else key[1])

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
        return {"version": STATE_VERSION, "graphs": self.graphs,
                **{k: [[*_listed(key), n] for key, n in sorted(self.counts[k].items(), key=repr)] for k in KINDS},
                "triggers": self.triggers}

    @classmethod
    def from_json(cls, data) -> "GuideState":
        """Raises ValueError (the caller names the file) on anything but what ``to_json`` writes."""
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ValueError(f"expected an object with \"version\": {STATE_VERSION}, got "
                             f"{(data.get('version') if isinstance(data, dict) else type(data).__name__)!r}")
        s = cls()
        width = {"op_dtype": 2, "op_shape": 3, "edges": 2}
        for kind in KINDS:
            rows = data.get(kind)
            if not isinstance(rows, list):
                raise ValueError(f"{kind!r} must be a list of [key..., count] rows, got {type(rows).__name__}")
            got = Counter()
            for row in rows:
                if not isinstance(row, list) or len(row) != width[kind] + 1 or not isinstance(row[-1], int) \
                        or not isinstance(row[0], str) or row[-1] < 1:
                    raise ValueError(f"{kind!r} row {row!r} is malformed (want {width[kind]} key parts and a count >= 1)")
                got[_tupled(row[:-1])] = row[-1]
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
    """The weights a generator draws with, from a GuideState over an op set (recomputed when the state
    changes). A producer keeps one for its life; a generator without one draws unguided."""

    def __init__(self, state: Optional[GuideState] = None):
        self.state = state or GuideState()
        self._version = None
        self._ops_key = None   # the op set the factors are for, and the list it was last given as
        self._ops_ref = None
        self._op_factor: Dict[type, float] = {}
        self._seen: Dict[type, int] = {}        # op -> the op version its factor was computed at
        self._triggers_seen = 0
        self._draws: Counter = Counter()         # op -> times this guide drew it (PATIENCE)
        self._dirty = False                      # some op's factor must be recomputed
        self._cum: Dict[int, tuple] = {}         # id(pool) -> (pool, cumulative weights x factors), per version
        self._rows: Dict[type, List[tuple]] = {}  # op -> its usable rows' keys
        self._row_keys: Dict[type, Dict[tuple, tuple]] = {}

    def op_factors(self, ops: List[type], rows_of) -> Dict[type, float]:
        """Each op's factor: FLOOR + (1 - FLOOR) x novelty, times its rows' mean bug factor. Novelty:
        0.6 if some usable dtype row is uncovered, + 0.2 x 1/(1 + shape bins seen), + 0.2 x the share of
        edges into and out of it (among ``len(ops)`` ops) not covered; novelty is divided by 1 + k after
        this guide drew the op k x PATIENCE times per row (a row the generator cannot reach, or an op that
        rarely fits, must not keep pulling: drawn often, the weights return to mgen.op_weights, and the
        cost of guidance with them). ``rows_of(cls)``: its usable row
        indices. Recomputed only for the ops whose coverage changed (or all, when a trigger came)."""
        st = self.state
        if self._version == st.version and self._ops_ref is ops and not self._dirty:
            return self._op_factor
        self._dirty, self._cum = False, {}
        if self._ops_ref is not ops:
            if self._ops_key != tuple(ops):
                self._version = None
            self._ops_ref, self._ops_key = ops, tuple(ops)
        if self._triggers_seen != len(st.triggers) or self._version is None:
            self._op_factor, self._seen = {}, {}
        self._version, self._triggers_seen = st.version, len(st.triggers)
        n = max(1, len(ops))
        for cls in ops:
            v = st.op_versions.get(cls.name, 0)
            if self._seen.get(cls) == v and cls in self._op_factor:
                continue
            self._seen[cls] = v
            cov = st.covered(cls.name)
            rows = self._rows.get(cls)
            if rows is None:
                rows = self._rows[cls] = [self.row_key(cls, k) for k in rows_of(cls)]
            dt = 0.6 if any(r not in cov["rows"] for r in rows) else 0.0
            sh = 0.2 / (1 + len(cov["bins"]))
            ed = 0.2 * max(0.0, 1 - (len(cov["in"]) + len(cov["out"])) / (2 * n))
            decay = 1 / (1 + self._draws[cls] // (PATIENCE * max(1, len(rows))))
            bug = sum(self.bug_factor(cls.name, r) for r in rows) / len(rows) if rows and st.triggers else 1.0
            self._op_factor[cls] = max(MIN_FACTOR, (FLOOR + (1 - FLOOR) * (dt + sh + ed) * decay) * bug)
        return self._op_factor

    def draw(self, rng, pool, ops: List[type], rows_of):
        """An op class from ``pool`` (ops, weights, cumulative weights), by weight x factor."""
        f = self.op_factors(ops, rows_of)
        cum = self._cum.get(id(pool))
        if cum is None or cum[0] is not pool:
            cum = self._cum[id(pool)] = (pool, list(accumulate(w * f[c] for c, w in zip(pool[0], pool[1]))))
        cls = rng.choices(pool[0], cum_weights=cum[1])[0]
        n = self._draws[cls] = self._draws[cls] + 1
        if n % (PATIENCE * max(1, len(self._rows.get(cls, ())))) == 0:  # its novelty decays one step
            self._seen.pop(cls, None)
            self._dirty = True
        return cls

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
