"""The interval rules of the propagation (propagate.py): how one node of the compiled constraint DAG
(symint.Arena's codes) gets its interval from its children's (``_forward``: + - * // % If and the
comparisons, evaluated on intervals) and how a node's interval narrows its children's (``_backward``:
the projections, HC4-style). Bounds at or beyond +-BIG stand for infinity; predicates are intervals over
{0, 1}; a narrowing that empties an interval raises ``Empty``. Every rule is sound: it never cuts a value
that some solution takes."""
from __future__ import annotations

from typing import List

BIG = 1 << 100
ADD, SUB, MUL, NEG, DIV, MOD, ITE, LE, LT, EQ, NE, AND, OR, VAR, CONST = range(15)  # symint.CODES


class Empty(Exception):
    """Some interval became empty: no solution within the current domains."""


def _sat(x: int) -> int:
    return BIG if x >= BIG else (-BIG if x <= -BIG else x)


def _cdiv(a: int, b: int) -> int:  # ceil(a / b), b > 0
    return -(-a // b)


class IntervalRules:
    """The per-node rules over a Network's arrays: ``op``/``kids`` (the DAG), ``lo``/``hi`` (each node's
    interval), ``dirty`` (nodes whose children are still to narrow) and ``node_var`` (a VAR node's
    variable index); a narrowed variable is appended to ``changed`` for the propagation to re-queue."""

    def _forward(self, order: List[int]) -> None:
        op, kids, lo, hi, dirty = self.op, self.kids, self.lo, self.hi, self.dirty
        for i in order:
            dirty[i] = False
            code, k = op[i], kids[i]
            if code == ITE:
                c, a, b = k
                if lo[c] == 1:
                    lo[i], hi[i] = lo[a], hi[a]
                elif hi[c] == 0:
                    lo[i], hi[i] = lo[b], hi[b]
                else:
                    la, lb, ha, hb = lo[a], lo[b], hi[a], hi[b]
                    lo[i] = la if la < lb else lb
                    hi[i] = ha if ha > hb else hb
            elif code == EQ or code == NE:
                a, b = k
                la, lb = lo[a], lo[b]
                if la == hi[a] == lb == hi[b]:
                    t = 1
                elif hi[a] < lb or hi[b] < la:
                    t = 0
                else:
                    lo[i], hi[i] = 0, 1
                    continue
                lo[i] = hi[i] = t if code == EQ else 1 - t
            elif code == LE or code == LT:
                a, b = k
                s = code == LT
                if hi[a] + s <= lo[b]:
                    lo[i] = hi[i] = 1
                elif lo[a] + s > hi[b]:
                    lo[i] = hi[i] = 0
                else:
                    lo[i], hi[i] = 0, 1
            elif code == MUL:
                a, b = k
                al, ah, bl, bh = lo[a], hi[a], lo[b], hi[b]
                if al >= 0 and bl >= 0:
                    x, y = al * bl, ah * bh
                else:
                    ps = (al * bl, al * bh, ah * bl, ah * bh)
                    x, y = min(ps), max(ps)
                lo[i] = x if x > -BIG else -BIG
                hi[i] = y if y < BIG else BIG
            elif code == ADD:
                a, b = k
                x, y = lo[a] + lo[b], hi[a] + hi[b]
                lo[i] = x if x > -BIG else -BIG
                hi[i] = y if y < BIG else BIG
            elif code == SUB:
                a, b = k
                x, y = lo[a] - hi[b], hi[a] - lo[b]
                lo[i] = x if x > -BIG else -BIG
                hi[i] = y if y < BIG else BIG
            elif code == AND:
                lo[i], hi[i] = min([lo[c] for c in k]), min([hi[c] for c in k])
            elif code == OR:
                lo[i], hi[i] = max([lo[c] for c in k]), max([hi[c] for c in k])
            elif code == NEG:
                lo[i], hi[i] = -hi[k[0]], -lo[k[0]]
            elif code == DIV:
                lo[i], hi[i] = _div_fwd(lo[k[0]], hi[k[0]], lo[k[1]], hi[k[1]])
            else:  # MOD
                lo[i], hi[i] = _mod_fwd(lo[k[0]], hi[k[0]], lo[k[1]], hi[k[1]])

    def _narrow(self, k: int, nl: int, nh: int, changed: List[int]) -> None:
        lo, hi = self.lo, self.hi
        ol, oh = lo[k], hi[k]
        if nl <= ol and nh >= oh:
            return
        nl, nh = max(nl, ol), min(nh, oh)
        if nl > nh:
            raise Empty
        lo[k], hi[k] = nl, nh
        code = self.op[k]
        if code == VAR:
            changed.append(self.node_var[k])
        elif code != CONST:
            self.dirty[k] = True

    def _backward(self, i: int, ch: List[int]) -> None:
        code, k, lo, hi, nar = self.op[i], self.kids[i], self.lo, self.hi, self._narrow
        L, H = lo[i], hi[i]
        if code == ADD:
            a, b = k
            nar(a, _sat(L - hi[b]), _sat(H - lo[b]), ch)
            nar(b, _sat(L - hi[a]), _sat(H - lo[a]), ch)
        elif code == SUB:
            a, b = k
            nar(a, _sat(L + lo[b]), _sat(H + hi[b]), ch)
            nar(b, _sat(lo[a] - H), _sat(hi[a] - L), ch)
        elif code == MUL:
            a, b = k
            r = _factor(L, H, lo[b], hi[b])
            if r is not None:
                nar(a, r[0], r[1], ch)
            r = _factor(L, H, lo[a], hi[a])
            if r is not None:
                nar(b, r[0], r[1], ch)
        elif code == LE or code == LT:
            a, b = k
            s = code == LT
            if L == 1:
                nar(a, -BIG, hi[b] - s, ch)
                nar(b, lo[a] + s, BIG, ch)
            elif H == 0:  # a > b  (LE) or a >= b (LT)
                nar(a, lo[b] + 1 - s, BIG, ch)
                nar(b, -BIG, hi[a] - 1 + s, ch)
        elif code == EQ or code == NE:
            a, b = k
            if (L == 1) == (code == EQ):
                nar(a, lo[b], hi[b], ch)
                nar(b, lo[a], hi[a], ch)
            else:
                self._differ(a, b, ch)
                self._differ(b, a, ch)
        elif code == AND:
            if L == 1:
                for c in k:
                    nar(c, 1, 1, ch)
            else:
                open_ = [c for c in k if lo[c] != 1]
                if len(open_) == 1:
                    nar(open_[0], 0, 0, ch)
        elif code == OR:
            if H == 0:
                for c in k:
                    nar(c, 0, 0, ch)
            else:
                open_ = [c for c in k if hi[c] != 0]
                if len(open_) == 1:
                    nar(open_[0], 1, 1, ch)
        elif code == ITE:
            c, a, b = k
            if lo[c] == 1:
                nar(a, L, H, ch)
            elif hi[c] == 0:
                nar(b, L, H, ch)
            elif hi[a] < L or lo[a] > H:
                nar(c, 0, 0, ch)
                nar(b, L, H, ch)
            elif hi[b] < L or lo[b] > H:
                nar(c, 1, 1, ch)
                nar(a, L, H, ch)
        elif code == NEG:
            nar(k[0], -H, -L, ch)
        elif code == DIV:
            self._div_bwd(k[0], k[1], L, H, ch)
        elif code == MOD:
            self._mod_bwd(k[0], k[1], L, H, ch)

    def _differ(self, a: int, b: int, ch: List[int]) -> None:
        lo, hi = self.lo, self.hi
        if lo[b] == hi[b]:
            v = lo[b]
            if lo[a] == v:
                self._narrow(a, v + 1, BIG, ch)
            if hi[a] == v:
                self._narrow(a, -BIG, v - 1, ch)

    def _div_bwd(self, a: int, b: int, L: int, H: int, ch: List[int]) -> None:
        lo, hi = self.lo, self.hi
        bl, bh, neg = lo[b], hi[b], False
        if bh < 0:
            bl, bh, L, H, neg = -bh, -bl, -H, -L, True
        if bl <= 0:
            return
        # a == q*b + r with q in [L, H], b in [bl, bh], 0 <= r < b
        nl = L * bl if L >= 0 else L * bh
        nh = (H * bh if H >= 0 else H * bl) + bh - 1
        self._narrow(a, _sat(nl) if L > -BIG else -BIG, _sat(nh) if H < BIG else BIG, ch)
        al, ah = lo[a], hi[a]
        if L >= 1 and ah >= 0 and ah < BIG:  # q >= L  needs  b <= a / L
            nb = ah // L
            self._narrow(b, -nb if neg else 1, -1 if neg else nb, ch)
        if H >= 0 and al >= 0 and H < BIG:  # q <= H  needs  b > a / (H + 1)
            nb = al // (H + 1) + 1
            self._narrow(b, -BIG if neg else nb, -nb if neg else BIG, ch)

    def _mod_bwd(self, a: int, b: int, L: int, H: int, ch: List[int]) -> None:
        lo, hi = self.lo, self.hi
        if lo[b] > 0 and L >= 0:
            self._narrow(b, L + 1, BIG, ch)  # the remainder is below the divisor
        elif hi[b] < 0 and L >= 0:
            self._narrow(b, -BIG, -L - 1, ch)
        if lo[b] != hi[b] or lo[b] == 0:
            return
        m = abs(lo[b])
        L, H = max(L, 0), min(H, m - 1)
        if L > H:
            raise Empty
        if H - L + 1 >= m or lo[a] <= -BIG or hi[a] >= BIG:
            return
        nl, nh = lo[a], hi[a]
        r = nl % m
        if r < L:
            nl += L - r
        elif r > H:
            nl += m - r + L
        r = nh % m
        if r > H:
            nh -= r - H
        elif r < L:
            nh -= r + m - H
        self._narrow(a, nl, nh, ch)


def _factor(L: int, H: int, bl: int, bh: int):
    """The range of x with x*y in [L, H] for some y in [bl, bh] (None: no narrowing known)."""
    if bl > 0:
        nl = -BIG if L <= -BIG else min(_cdiv(L, bl), _cdiv(L, bh))
        nh = BIG if H >= BIG else max(H // bl, H // bh)
        return nl, nh
    if bh < 0:
        r = _factor(-H, -L, -bh, -bl)
        return -r[1], -r[0]
    return None


def _div_fwd(al: int, ah: int, bl: int, bh: int):
    if bl > 0:
        qs = (al // bl, al // bh, ah // bl, ah // bh)
        return min(qs), max(qs)
    if bh < 0:  # a div b == -(a div -b)
        ql, qh = _div_fwd(al, ah, -bh, -bl)
        return -qh, -ql
    return -BIG, BIG  # a divisor that may be 0: z3 leaves a / 0 unconstrained


def _mod_fwd(al: int, ah: int, bl: int, bh: int):
    if bl <= 0 <= bh:
        return -BIG, BIG
    m = max(abs(bl), abs(bh))
    if bl == bh and ah - al < m and al > -BIG and ah < BIG:
        ra, rb = al % m, ah % m
        if ra <= rb:
            return ra, rb
    if al >= 0:
        if ah < min(abs(bl), abs(bh)):  # below every divisor: a mod b == a
            return al, ah
        return 0, min(ah, m - 1)
    return 0, m - 1
