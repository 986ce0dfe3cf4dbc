"""Symbolic-int helpers that accept Python ints and z3 terms alike.

Operator code writes constraints with ordinary operators (``self.kh >= 1``); the few things
Python operators cannot express on z3 terms (floor division, min/max, if-then-else, boolean
connectives) live here. Every helper folds to a plain Python value when its inputs are concrete,
so the same ``type_transfer`` computes symbolic shapes during generation and concrete shapes after.
"""
from __future__ import annotations

from typing import Iterable, Sequence, Union

import z3

SymInt = Union[int, z3.ArithRef]
SymBool = Union[bool, z3.BoolRef]


def is_sym(x) -> bool:
    return isinstance(x, z3.ExprRef)


def If(cond: SymBool, a: SymInt, b: SymInt) -> SymInt:
    if isinstance(cond, bool):
        return a if cond else b
    return z3.If(cond, a, b)


def And(*conds: SymBool) -> SymBool:
    rest = []
    for c in _flatten(conds):
        if isinstance(c, bool):
            if not c:
                return False
        else:
            rest.append(c)
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else z3.And(*rest)


def Or(*conds: SymBool) -> SymBool:
    rest = []
    for c in _flatten(conds):
        if isinstance(c, bool):
            if c:
                return True
        else:
            rest.append(c)
    if not rest:
        return False
    return rest[0] if len(rest) == 1 else z3.Or(*rest)


def Not(cond: SymBool) -> SymBool:
    return (not cond) if isinstance(cond, bool) else z3.Not(cond)


def Implies(a: SymBool, b: SymBool) -> SymBool:
    return Or(Not(a), b)


def fdiv(a: SymInt, b: SymInt) -> SymInt:
    """Floor division (z3's integer division agrees with Python's for positive divisors)."""
    if is_sym(a) or is_sym(b):
        return a / b
    return a // b


def cdiv(a: SymInt, b: SymInt) -> SymInt:
    """Ceiling division for positive divisors."""
    return fdiv(a + b - 1, b)


def divisible(n: SymInt, d: SymInt) -> SymBool:
    """``d >= 1`` and ``n`` is a multiple of ``d``; a concrete ``d < 1`` gives False, not ZeroDivisionError."""
    if not is_sym(d) and d < 1:
        return False
    return And(d >= 1, n % d == 0)


def divisor(d: SymInt) -> SymInt:
    """``d`` for use as a divisor in type_transfer: a concrete ``d < 1`` (which requires rejects) becomes 1."""
    return d if is_sym(d) or d >= 1 else 1


def smax(*xs: SymInt) -> SymInt:
    out = xs[0]
    for x in xs[1:]:
        out = If(out >= x, out, x)
    return out


def smin(*xs: SymInt) -> SymInt:
    out = xs[0]
    for x in xs[1:]:
        out = If(out <= x, out, x)
    return out


def prod(xs: Iterable[SymInt]) -> SymInt:
    out: SymInt = 1
    for x in xs:
        out = out * x
    return out


def select(xs: Sequence[SymInt], idx: SymInt) -> SymInt:
    """``xs[idx]`` where ``idx`` may be symbolic (callers constrain it to range).

    A concrete index out of range gives 0, a value that fails every dimension rule, so ``requires``
    reports False for the bad index instead of raising.
    """
    if not is_sym(idx):
        return xs[idx] if 0 <= idx < len(xs) else 0
    out = xs[-1]
    for i in range(len(xs) - 2, -1, -1):
        out = If(idx == i, xs[i], out)
    return out


def distinct(xs: Sequence[SymInt]) -> SymBool:
    if all(not is_sym(x) for x in xs):
        return len(set(xs)) == len(xs)
    return z3.Distinct(*xs) if len(xs) > 1 else True


def simplify(x):
    return z3.simplify(x) if is_sym(x) else x


def _flatten(conds):
    for c in conds:
        if isinstance(c, (list, tuple)):
            yield from _flatten(c)
        else:
            yield c
