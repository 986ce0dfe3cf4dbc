"""Which operator to try next: weighted draws from the op pools that can consume or produce a tensor.

The pools, and each op class's dtype rows usable under a policy, are computed from the class tables
once per (op set, tensor kinds) and shared by the generators of a process: they are pure functions of
their keys, so what was generated before never changes what a seed gives."""
from __future__ import annotations

from itertools import accumulate
from typing import Dict, List

from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.generate.opset import allowed_rows

# (op set id, what) -> the (ops, weights, cumulative weights) that fit: shared by generators in a process
_POOL_CACHE: Dict[tuple, tuple] = {}
# (ops, weights, dtypes, row limits) -> a small id naming that op set in the keys of _POOL_CACHE
_OP_SET_IDS: Dict[tuple, int] = {}
# (op class, allowed dtypes, row limit) -> (class in_dtypes, class out_dtypes, row indices)
_ROWS_CACHE: Dict[tuple, tuple] = {}
_INSTANCE_TABLES: Dict[type, bool] = {}


class OpPools:
    """GraphGenerator's op drawing (uses its ops, op_weights, rng, vars, allowed, row_limits and guide)."""

    def _init_pools(self) -> None:
        """Name this generator's op set (its pools are cached under that name) and freeze its row limits."""
        self._limits = {k: frozenset(v) for k, v in self.row_limits.items()}
        key = (tuple(self.ops), tuple(self.op_weights), self.allowed, tuple(sorted(self._limits.items())))
        self._ops_key = _OP_SET_IDS.setdefault(key, len(_OP_SET_IDS))
        self._all_pool = (self.ops, self.op_weights, list(accumulate(self.op_weights)))

    def _draw_op(self, pool=None):
        """Draw an op class by weight from ``pool`` (default: all), its choices and a skeleton."""
        ops, _, cum = pool if pool is not None else self._all_pool
        if not ops:
            return None, None, 0, None
        if self.guide is None:
            cls = self.rng.choices(ops, cum_weights=cum)[0]
        else:  # coverage guidance (generate/guide.py): each op's weight times its factor
            cls = self.guide.draw(self.rng, pool if pool is not None else self._all_pool, self.ops, self._rows)
        kw = {k: self.rng.choice(_seq(cls.attr_choices[k])) for k in cls._kw_params}
        n_var = self.rng.choice(cls.num_var_param) if cls.num_var_param else 0
        try:
            skel = cls(*([1] * len(cls.sym_param_names(n_var))), **kw)
        except ConstraintError:
            return cls, kw, n_var, None
        return cls, kw, n_var, skel

    def _pool(self, key, fits):
        """The (ops, weights, cumulative weights) that ``fits`` admits, cached under ``key``."""
        key = (self._ops_key, key)
        hit = _POOL_CACHE.get(key)
        if hit is None:
            hit = _POOL_CACHE[key] = self._sub_pool([fits(c) for c in self.ops])
        return hit

    def _sub_pool(self, keep) -> tuple:
        if len(_POOL_CACHE) > 20000:
            _POOL_CACHE.clear()
        pairs = [(c, w) for c, w, k in zip(self.ops, self.op_weights, keep) if k]
        weights = [w for _, w in pairs]
        return [c for c, _ in pairs], weights, list(accumulate(weights))

    def _consumers_pool(self):
        """Ops whose class tables say they can take some existing tensor as some input."""
        kinds = self._kinds()
        key = (self._ops_key, "in", kinds)
        hit = _POOL_CACHE.get(key)
        if hit is None:  # the ops taking any of these kinds: a union of per-kind bit masks
            always, masks = self._kind_masks()
            mask = always
            for k in kinds:
                mask |= masks.get(k, 0)
            mkey = (self._ops_key, "mask", mask)
            hit = _POOL_CACHE.get(mkey)
            if hit is None:
                hit = _POOL_CACHE[mkey] = self._sub_pool([mask >> i & 1 for i in range(len(self.ops))])
            _POOL_CACHE[key] = hit
        return hit

    def _kind_masks(self):
        """(ops accepting any tensor, {(dtype, rank): ops accepting it}) as bit masks over self.ops."""
        key = (self._ops_key, "masks")
        hit = _POOL_CACHE.get(key)
        if hit is None:
            always, masks = 0, {}
            for i, c in enumerate(self.ops):
                takes = self._takes(c)
                if takes is None:
                    always |= 1 << i
                else:
                    for k in takes:
                        masks[k] = masks.get(k, 0) | 1 << i
            hit = _POOL_CACHE[key] = (always, masks)
        return hit

    def _takes(self, cls):
        """The (dtype, rank) pairs ``cls``'s class tables accept on some input (None: per instance)."""
        if _instance_tables(cls):
            return None
        rows = [cls.in_dtypes[k] for k in self._rows(cls)]
        return frozenset((row[i], rk) for row in rows for i, viable in enumerate(cls.inp_ranks)
                         if i < len(row) for rk in viable)

    def _producers_pool(self, t: AbsTensor):
        """Single-output ops whose class tables say they can produce a tensor like ``t``."""
        def fits(cls) -> bool:
            return len(cls.out_ranks) == 1 and t.ndims in cls.out_ranks[0] and any(
                cls.out_dtypes[k] == (t.dtype,) for k in self._rows(cls))

        return self._pool(("out", t.dtype, t.ndims), fits)

    def _rows(self, op) -> List[int]:
        """Indices of ``op``'s dtype rows usable here (its class's, cached, unless the instance set its own)."""
        cls = op if isinstance(op, type) else type(op)
        limit = self._limits.get(cls.name)
        if cls is not op and ("in_dtypes" in op.__dict__ or "out_dtypes" in op.__dict__):
            return allowed_rows(op, self.allowed, limit)
        key = (cls, self.allowed, limit)
        hit = _ROWS_CACHE.get(key)
        if hit is None or hit[0] is not cls.in_dtypes or hit[1] is not cls.out_dtypes:
            hit = _ROWS_CACHE[key] = (cls.in_dtypes, cls.out_dtypes, allowed_rows(cls, self.allowed, limit))
        return hit[2]


def _seq(choices):
    """``choices`` as a sequence ``rng.choice`` draws from as it would from ``list(choices)``."""
    return choices if isinstance(choices, (list, tuple, range)) else list(choices)


def _instance_tables(cls) -> bool:
    """True when ``cls`` (or a base) sets its rank/dtype tables per instance in ``__init__``."""
    hit = _INSTANCE_TABLES.get(cls)
    if hit is None:
        hit = _INSTANCE_TABLES[cls] = _sets_tables_in_init(cls)
    return hit


def _sets_tables_in_init(cls) -> bool:
    for klass in cls.__mro__:
        if klass is AbsOpBase:
            return False
        code = getattr(klass.__dict__.get("__init__"), "__code__", None)
        if code is not None and {"inp_ranks", "in_dtypes", "inp_dtypes"} & set(code.co_names):
            return True
    return False
