"""Symbolic-int helpers that accept Python ints and z3 terms alike.

Operator code writes rules with ordinary operators (``self.kh >= 1``, ``(h - k) // s``, ``n % d``);
the few things Python operators cannot express on z3 terms (min/max, if-then-else, boolean
connectives) live here. Every helper folds to a plain Python value when its inputs are concrete,
so the same ``type_transfer`` computes symbolic shapes during generation and concrete shapes after.

``//`` and ``%`` on a symbolic int follow z3's (SMT-LIB) integer division: ``a == b * (a // b) + a % b``
with ``0 <= a % b < abs(b)``, so the remainder is never negative. On plain Python ints the same
expressions keep Python's floor semantics (the remainder takes the divisor's sign). The two agree
whenever the divisor is positive, whatever the dividend's sign; they differ only for a negative
divisor: z3 gives ``7 // -2 == -3`` and ``7 % -2 == 1`` where Python gives ``-4`` and ``-1``. So an
operator that divides requires a positive divisor (``self.stride >= 1``); a division by zero is
unconstrained in z3 and a ZeroDivisionError in Python. docs/operator-api.md has the table.

Symbolic ints come in two kinds: z3 terms (the Z3 fallback) and nnfuzz.abstract.symint terms (what
the generator's propagation solver poses first); every helper here accepts either, never a mix.
"""
from __future__ import annotations

from typing import Iterable, Sequence, Union

import z3

from nnfuzz.abstract import symint
from nnfuzz.abstract.symint import Pred, Term

SymInt = Union[int, z3.ArithRef, Term]
SymBool = Union[bool, z3.BoolRef, Pred]


def is_sym(x) -> bool:
    return isinstance(x, (z3.ExprRef, Term))  # a Pred is a z3.BoolRef


def If(cond: SymBool, a: SymInt, b: SymInt) -> SymInt:
    if isinstance(cond, bool):
        return a if cond else b
    if isinstance(cond, Pred):
        return symint.ite(cond, a, b)
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
    if len(rest) == 1:
        return rest[0]
    return symint.conj(rest) if isinstance(rest[0], Pred) else z3.And(*rest)


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
    if len(rest) == 1:
        return rest[0]
    return symint.disj(rest) if isinstance(rest[0], Pred) else z3.Or(*rest)


def Not(cond: SymBool) -> SymBool:
    if isinstance(cond, bool):
        return not cond
    return symint.negate(cond) if isinstance(cond, Pred) else z3.Not(cond)


def Implies(a: SymBool, b: SymBool) -> SymBool:
    return Or(Not(a), b)


def _int_operands(a, b, op: str) -> None:
    for x in (a, b):
        if is_sym(x) and not z3.is_int(x) or not is_sym(x) and not isinstance(x, int):
            raise TypeError(
                f"`{op}` on symbolic ints needs integer operands, got {x!r} ({type(x).__name__}"
                f"{', sort ' + str(x.sort()) if is_sym(x) else ''}); convert with int(...) or z3.ToInt(...)"
            )


def _sym_floordiv(a, b):
    """``a // b`` for a z3 int term: SMT-LIB ``div`` (floor for b > 0, ceiling for b < 0; remainder >= 0)."""
    _int_operands(a, b, "//")
    return a / b  # z3's ``/`` on Int terms is SMT-LIB div


def _sym_rfloordiv(b, a):
    _int_operands(a, b, "//")
    return a / b


# Symbolic ints are plain z3 terms, so ``//`` is given to z3's arithmetic terms here, once, on import
# of nnfuzz.abstract (z3 defines ``%`` as SMT-LIB mod itself and leaves ``//`` out).
z3.ArithRef.__floordiv__ = _sym_floordiv
z3.ArithRef.__rfloordiv__ = _sym_rfloordiv


def fdiv(a: SymInt, b: SymInt) -> SymInt:
    """``a // b`` (kept for existing operator code: ``//`` works on symbolic ints directly)."""
    if isinstance(a, z3.ExprRef) or isinstance(b, z3.ExprRef):
        return a / b
    return a // b  # ints, or symint terms (whose // is SMT-LIB div)


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
    if any(isinstance(x, Term) for x in xs):
        return And(*[xs[i] != xs[j] for i in range(len(xs)) for j in range(i + 1, len(xs))])
    return z3.Distinct(*xs) if len(xs) > 1 else True


def simplify(x):
    return z3.simplify(x) if isinstance(x, z3.ExprRef) and not isinstance(x, Pred) else x


def _flatten(conds):
    for c in conds:
        if isinstance(c, (list, tuple)):
            yield from _flatten(c)
        else:
            yield c
