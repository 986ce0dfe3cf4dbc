"""Insertions checked in plain Python: binned guesses of attributes and shapes, and the concrete
re-check every insertion passes before it enters the graph."""
from __future__ import annotations

from typing import List, Optional

from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import ConstraintError
from nnfuzz.generate import binning


class ConcreteChecks:
    """GraphGenerator's guesses and concrete checks (uses its vars, rng and policy)."""

    def _try_concrete(self, cls, vals, kw, slots, shapes, target):
        return self._check_concrete(cls, vals, kw, slots, shapes, target)[0]

    def _check_concrete(self, cls, vals, kw, slots, shapes, target):
        """``((op, inputs, outputs), "")`` if the concrete insertion is valid, else ``(None, reason)``."""
        inputs = [self.vars[s] if isinstance(s, str) else AbsTensor(shape, s[1]) for s, shape in zip(slots, shapes)]
        for t in inputs:
            if any(d < 1 for d in t.shape):
                return None, "an input dim < 1"
            if t.nelement() > self.policy.max_elems:
                return None, "elems"
        try:
            op = cls(*vals, **kw)
            if op.checked_requires(inputs):  # requires first: type_transfer may divide by a bad attribute
                return None, "requires fails"
            outs = op.checked_type_transfer(inputs, validated=True)
        except ConstraintError:
            return None, "the constructor refused them"
        for c in self._output_constraints(outs, target, symbolic=False):
            if c is False:
                return None, "elems" if any(o.nelement() > self.policy.max_elems for o in outs) \
                    and all(d >= 1 for o in outs for d in o.shape) else "an output is invalid"
        return (op, inputs, outs), ""

    def _output_constraints(self, outs: List[AbsTensor], target: Optional[str], symbolic: bool) -> list:
        cons = []
        for o in outs:
            if o.ndims > self.policy.max_rank:
                return [False]
            cons += [d >= 1 for d in o.shape]
            if symbolic:
                cons += [d <= self.policy.max_elems for d in o.shape]
            else:
                cons.append(o.nelement() <= self.policy.max_elems)
        if target is not None:
            t = self.vars[target]
            cons += outs[0].same_shape_as(t)
            if outs[0].dtype != t.dtype:
                cons.append(False)
        return cons

    def _placeholder_rank(self, skel, i: int, anchor_rank: int) -> int:
        viable = [r for r in skel.inp_ranks[i] if r <= self.policy.max_rank] or list(skel.inp_ranks[i])
        if skel.same_inp_dims or (anchor_rank in viable and self.rng.random() < 0.5):
            return anchor_rank if anchor_rank in viable else self.rng.choice(viable)
        return self.rng.choice(viable)

    def _guess_attr(self, kind: str, index_bound: int) -> int:
        b = binning.pick_bin(kind, self.rng, index_bound)
        return binning.sample(b, self.rng) if b is not None else self.rng.randint(-2, 8)

    def _guess_shape(self, rank: int, refs: List[AbsTensor]) -> List[int]:
        """A binned guess for a new placeholder: often a reference tensor's shape (or its suffix),
        otherwise each dim copied from an aligned reference dim, 1, or a binned size."""
        whole = [t.shape[t.ndims - rank:] for t in refs if t.ndims >= rank]
        if whole and self.rng.random() < 0.5:
            return [int(d) for d in self.rng.choice(whole)]
        shape = []
        for d in range(rank):
            r = self.rng.random()
            aligned = [t.shape[t.ndims - rank + d] for t in refs if t.ndims - rank + d >= 0]
            if aligned and r < 0.6:
                shape.append(int(self.rng.choice(aligned)))
            elif r < 0.75:
                shape.append(1)
            else:
                shape.append(binning.sample(self.rng.choice(binning.SIZE_BINS[:5]), self.rng))
        return shape
