"""Which operator to try next: weighted draws from the op pools that can consume or produce a tensor.

The pools are computed from each op class's tables once per (op set, tensor kinds) and shared by the
generators of a process."""
from __future__ import annotations

from typing import Dict, List

from nnfuzz.abstract.op import AbsOpBase
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.generate.opset import allowed_rows

# (ops, weights, dtypes, what) -> the (ops, weights) that fit: shared by generators in a process
_POOL_CACHE: Dict[tuple, tuple] = {}


class OpPools:
    """GraphGenerator's op drawing (uses its ops, op_weights, rng, vars, allowed and row_limits)."""

    def _draw_op(self, pool=None):
        """Draw an op class by weight from ``pool`` (default: all), its choices and a skeleton."""
        ops, weights = pool if pool is not None else (self.ops, self.op_weights)
        if not ops:
            return None, None, 0, None
        cls = self.rng.choices(ops, weights=weights)[0]
        kw = {k: self.rng.choice(list(cls.attr_choices[k])) for k in cls._kw_params}
        n_var = self.rng.choice(cls.num_var_param) if cls.num_var_param else 0
        try:
            skel = cls(*([1] * len(cls.sym_param_names(n_var))), **kw)
        except ConstraintError:
            return cls, kw, n_var, None
        return cls, kw, n_var, skel

    def _pool(self, key, fits):
        """The (ops, weights) that ``fits`` admits, cached under ``key``."""
        key = (self._ops_key, key)
        hit = _POOL_CACHE.get(key)
        if hit is None and fits is None:
            hit = _POOL_CACHE[key] = {c: self._takes(c) for c in self.ops}
        elif hit is None:
            pairs = [(c, w) for c, w in zip(self.ops, self.op_weights) if fits(c)]
            hit = _POOL_CACHE[key] = ([c for c, _ in pairs], [w for _, w in pairs])
            if len(_POOL_CACHE) > 20000:
                _POOL_CACHE.clear()
        return hit

    def _consumers_pool(self):
        """Ops whose class tables say they can take some existing tensor as some input."""
        kinds = frozenset((t.dtype, t.ndims) for t in self.vars.values())
        takes = self._pool(("takes",), None)

        def fits(cls) -> bool:
            return takes[cls] is None or not takes[cls].isdisjoint(kinds)

        return self._pool(("in", kinds), fits)

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
        return allowed_rows(op, self.allowed, self.row_limits.get(op.name))


def _instance_tables(cls) -> bool:
    """True when ``cls`` (or a base) sets its rank/dtype tables per instance in ``__init__``."""
    for klass in cls.__mro__:
        if klass is AbsOpBase:
            return False
        code = getattr(klass.__dict__.get("__init__"), "__code__", None)
        if code is not None and {"inp_ranks", "in_dtypes", "inp_dtypes"} & set(code.co_names):
            return True
    return False
