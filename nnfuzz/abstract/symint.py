"""Light symbolic ints and predicates, built by operator rules during generation without Z3.

``type_transfer`` and ``requires`` run unchanged on these terms: Python's operators (``+ - * // % /``,
unary ``-``, comparisons) and the helpers of nnfuzz.abstract.arith build a small expression tree that
nnfuzz.generate.propagate narrows by interval propagation. Semantics are those arith.py documents for
z3 terms: ``//`` (and ``/``, as on z3 Int terms) is SMT-LIB ``div`` and ``%`` SMT-LIB ``mod`` (the
remainder is never negative); a division by zero has no fixed value (``value`` reports None for it).

``Pred`` subclasses z3.BoolRef only so that code which checks for "a z3 predicate" with isinstance
(AbsOpBase.checked_requires, user operators) accepts it; it owns no z3 AST, so handing one to a z3
function raises, and the generator then poses that operator to Z3 instead (nnfuzz/generate/symbolic.py).
Like z3's ``==``, ``bool(a == b)`` compares the two terms' structure; other predicates refuse ``bool``.
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

import z3

# Int terms: var (args: name), add, sub, mul, neg, div, mod, ite (cond, then, else).
# Predicates: le, lt, eq, ne, and, or (negation is pushed to the leaves on construction).
NEG = {"le": "lt", "lt": "le", "eq": "ne", "ne": "eq", "and": "or", "or": "and"}
CODES = {"add": 0, "sub": 1, "mul": 2, "neg": 3, "div": 4, "mod": 5, "ite": 6, "le": 7, "lt": 8, "eq": 9,
         "ne": 10, "and": 11, "or": 12, "var": 13, "const": 14}


class Arena:
    """Node arrays (opcode, children) that terms register into while the arena is active, so that the
    propagation network of an insertion is built as its rules run, not by a second walk of the terms."""
    __slots__ = ("op", "kids", "consts")

    def __init__(self):
        self.op: list = []
        self.kids: list = []
        self.consts: Dict[int, int] = {}

    def const(self, v: int) -> int:
        i = self.consts.get(v)
        if i is None:
            i = self.consts[v] = len(self.op)
            self.op.append(14)
            self.kids.append((v,))
        return i

    def node(self, x, imported: Dict[int, int]) -> int:
        """``x``'s node; a term built outside this arena is registered anew (``imported``: by id)."""
        if not isinstance(x, (Term, Pred)):
            return self.const(int(x))
        if x.ar is self:
            return x.n
        i = imported.get(id(x))
        if i is None:
            if x.op == "var":
                raise KeyError(f"variable {x.args[0]} is not one of the problem's variables")
            kids = tuple(self.node(a, imported) for a in x.args)
            self.op.append(CODES[x.op])
            self.kids.append(kids)
            i = imported[id(x)] = len(self.op) - 1
        return i


_ARENA: Optional[Arena] = None


class building:
    """``with building() as arena:`` terms built inside register into ``arena``."""

    def __enter__(self) -> Arena:
        global _ARENA
        self.prev, _ARENA = _ARENA, Arena()
        return _ARENA

    def __exit__(self, *exc):
        global _ARENA
        _ARENA = self.prev


class Term:
    """An int-valued expression. ``args`` hold Terms, Preds and plain ints."""
    __slots__ = ("op", "args", "ar", "n")

    def __init__(self, op: str, args: tuple):
        self.op = op
        self.args = args
        ar = self.ar = _ARENA
        if ar is None:
            return
        kids = []
        if op != "var":
            consts = ar.consts
            for x in args:
                if type(x) is int:
                    i = consts.get(x)
                    kids.append(i if i is not None else ar.const(x))
                elif type(x) is Term or type(x) is Pred:
                    if x.ar is not ar:  # built outside the arena: Network registers it later
                        self.ar = None
                        return
                    kids.append(x.n)
                else:
                    kids.append(ar.const(int(x)))
        ar.op.append(CODES[op])
        ar.kids.append(tuple(kids))
        self.n = len(ar.op) - 1

    # ---- arithmetic -------------------------------------------------------------------------
    def __add__(self, o):
        o = _int(o, "+")
        return self if o == 0 else Term("add", (self, o))

    def __radd__(self, o):
        o = _int(o, "+")
        return self if o == 0 else Term("add", (o, self))

    def __sub__(self, o):
        o = _int(o, "-")
        return self if o == 0 else Term("sub", (self, o))

    def __rsub__(self, o):
        return Term("sub", (_int(o, "-"), self))

    def __mul__(self, o):
        o = _int(o, "*")
        return self if o == 1 else Term("mul", (self, o))

    def __rmul__(self, o):
        o = _int(o, "*")
        return self if o == 1 else Term("mul", (o, self))

    def __neg__(self):
        return Term("neg", (self,))

    def __pos__(self):
        return self

    def __floordiv__(self, o):
        return Term("div", (self, _int(o, "//")))

    def __rfloordiv__(self, o):
        return Term("div", (_int(o, "//"), self))

    __truediv__ = __floordiv__  # z3's ``/`` on Int terms is SMT-LIB div too
    __rtruediv__ = __rfloordiv__

    def __mod__(self, o):
        return Term("mod", (self, _int(o, "%")))

    def __rmod__(self, o):
        return Term("mod", (_int(o, "%"), self))

    # ---- comparisons ------------------------------------------------------------------------
    def __le__(self, o):
        return Pred("le", (self, _int(o, "<=")))

    def __lt__(self, o):
        return Pred("lt", (self, _int(o, "<")))

    def __ge__(self, o):
        return Pred("le", (_int(o, ">="), self))

    def __gt__(self, o):
        return Pred("lt", (_int(o, ">"), self))

    def __eq__(self, o):
        if isinstance(o, (int, Term)) and not isinstance(o, bool):
            return Pred("eq", (self, o))
        return NotImplemented

    def __ne__(self, o):
        if isinstance(o, (int, Term)) and not isinstance(o, bool):
            return Pred("ne", (self, o))
        return NotImplemented

    def __hash__(self):
        return hash((self.op, self.args))

    def __bool__(self):
        raise TypeError("Symbolic expressions cannot be cast to concrete Boolean values "
                        f"(a symbolic int {self} used as a condition)")

    def __repr__(self):
        return show(self)

    __str__ = __repr__


class Pred(z3.BoolRef):
    """A predicate over Terms (see the module docstring for why it subclasses z3.BoolRef)."""
    __slots__ = ("op", "args", "ar", "n")
    __init__ = Term.__init__

    def __del__(self):  # z3.AstRef.__del__ would release a z3 AST this object never had
        pass

    def __bool__(self):
        if self.op == "eq":
            return same(self.args[0], self.args[1])
        if self.op == "ne":
            return not same(self.args[0], self.args[1])
        raise TypeError("Symbolic expressions cannot be cast to concrete Boolean values "
                        f"(the predicate {self} used as a condition)")

    def __eq__(self, o):  # predicates as values are compared structurally (z3 would build a Boolean ==)
        return isinstance(o, Pred) and same(self, o)

    def __ne__(self, o):
        return not self.__eq__(o)

    def __hash__(self):
        return hash((self.op, self.args))

    def __and__(self, o):
        return conj([self, o])

    __rand__ = __and__

    def __or__(self, o):
        return disj([self, o])

    __ror__ = __or__

    def __invert__(self):
        return negate(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def sort(self):
        raise TypeError(f"{self} is an nnfuzz predicate, not a z3 term")

    def __repr__(self):
        return show(self)

    __str__ = __repr__


def _int(o, op: str):
    if isinstance(o, Term) or (isinstance(o, int) and not isinstance(o, bool)):
        return o
    if isinstance(o, bool):
        return int(o)
    raise TypeError(f"`{op}` on symbolic ints needs integer operands, got {o!r} ({type(o).__name__}); "
                    "convert with int(...)")


def var(name: str) -> Term:
    return Term("var", (name,))


def is_term(x) -> bool:
    return isinstance(x, (Term, Pred))


def same(a, b) -> bool:
    """Structural equality (what z3's ``a.eq(b)`` answers)."""
    if a is b:
        return True
    if type(a) is not type(b) or (not isinstance(a, (Term, Pred)) and a != b):
        return False
    if not isinstance(a, (Term, Pred)):
        return True
    return a.op == b.op and len(a.args) == len(b.args) and all(same(x, y) for x, y in zip(a.args, b.args))


# ---- predicate builders used by nnfuzz.abstract.arith ---------------------------------------
def conj(ps: Sequence) -> object:
    """And over bools and Preds (flattened; True/False folded)."""
    rest = []
    for p in ps:
        if p is True or p is False or isinstance(p, bool):
            if not p:
                return False
        elif isinstance(p, Pred) and p.op == "and":
            rest.extend(p.args)
        else:
            rest.append(_pred(p))
    if not rest:
        return True
    return rest[0] if len(rest) == 1 else Pred("and", tuple(rest))


def disj(ps: Sequence) -> object:
    rest = []
    for p in ps:
        if isinstance(p, bool):
            if p:
                return True
        elif isinstance(p, Pred) and p.op == "or":
            rest.extend(p.args)
        else:
            rest.append(_pred(p))
    if not rest:
        return False
    return rest[0] if len(rest) == 1 else Pred("or", tuple(rest))


def negate(p):
    if isinstance(p, bool):
        return not p
    p = _pred(p)
    if p.op in ("and", "or"):
        return Pred(NEG[p.op], tuple(negate(a) for a in p.args))
    a, b = p.args
    if p.op in ("le", "lt"):  # not (a <= b)  is  b < a
        return Pred(NEG[p.op], (b, a))
    return Pred(NEG[p.op], (a, b))


def ite(c, a, b):
    """If-then-else on a Pred condition; int branches give a Term, Boolean ones a Pred."""
    if isinstance(a, (bool, Pred)) or isinstance(b, (bool, Pred)):
        return disj([conj([c, a]), conj([negate(c), b])])
    a, b = _int(a, "If"), _int(b, "If")
    if same(a, b):
        return a
    return Term("ite", (_pred(c), a, b))


def _pred(p):
    if not isinstance(p, Pred):
        raise TypeError(f"expected a predicate over nnfuzz symbolic ints, got {p!r} ({type(p).__name__})")
    return p


# ---- evaluation at a point ------------------------------------------------------------------
def smt_div(a: int, b: int) -> Optional[int]:
    """SMT-LIB ``div``: floor for b > 0, -(a div -b) for b < 0; None (no fixed value) for b == 0."""
    if b > 0:
        return a // b
    if b < 0:
        return -(a // -b)
    return None


def smt_mod(a: int, b: int) -> Optional[int]:
    return a % abs(b) if b else None


def value(x, env: Dict[str, int]):
    """The int or bool ``x`` takes with its variables set by ``env`` (None where it has no fixed value)."""
    if not isinstance(x, (Term, Pred)):
        return x
    op, args = x.op, x.args
    if op == "var":
        return env[args[0]]
    if op == "ite":
        c = value(args[0], env)
        return None if c is None else value(args[1] if c else args[2], env)
    if op == "and" or op == "or":
        vals = [value(a, env) for a in args]
        if op == "and":
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    vals = [value(a, env) for a in args]
    if None in vals:
        return None
    if op == "neg":
        return -vals[0]
    a, b = vals
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "div": lambda: smt_div(a, b), "mod": lambda: smt_mod(a, b),
            "le": lambda: a <= b, "lt": lambda: a < b, "eq": lambda: a == b, "ne": lambda: a != b}[op]()


_SYM = {"add": "+", "sub": "-", "mul": "*", "div": "//", "mod": "%", "le": "<=", "lt": "<", "eq": "==", "ne": "!="}


def show(x) -> str:
    if not isinstance(x, (Term, Pred)):
        return str(x)
    if x.op == "var":
        return x.args[0]
    if x.op == "neg":
        return f"-{show(x.args[0])}"
    if x.op == "ite":
        return f"If({', '.join(show(a) for a in x.args)})"
    if x.op in ("and", "or"):
        return f"{x.op.capitalize()}({', '.join(show(a) for a in x.args)})"
    return f"({show(x.args[0])} {_SYM[x.op]} {show(x.args[1])})"
