"""Gradient-guided value search: inputs and weights for which every value in the graph is safe.

*Safe* means every intermediate float value is finite, every op's domain loss is zero (its inputs
are inside its domain with a margin, see ``torch/losses.py``) and no integer op overflows.

The search runs the graph in torch on trainable leaves (float inputs and weights, and float
surrogates of the integer/bool ones, see ``torch/proxy.py``). At each step it sums the domain losses
of the ops up to the first one whose outputs are not finite (that op's loss being the magnitude
fallback if it has no violation of its own) and takes an Adam step on the leaves; leaves that became
NaN are re-drawn. After a stall (no progress for ``patience`` steps) it takes ten times smaller
steps, twice, and then restarts from fresh random values, alternating value scales and signs (every
other draw is one-signed, mostly positive) and, for integers, ranges that avoid zero. It stops when the
graph is safe or after ``time_ms``.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Dict, List, Optional

import numpy as np

from nnfuzz.abstract.dtype import DType
from nnfuzz.gir import GraphIR


@dataclasses.dataclass
class SearchConfig:
    """The ``search`` config group (conf/search/*.yaml)."""
    enabled: bool = True
    time_ms: float = 100.0     # budget per model; past it the reference is undefined (output None)
    proxy: bool = True         # proxy derivatives through floor/round/relu/comparisons/casts
    lr: float = 0.5            # Adam step size (values are of order 1)
    patience: int = 12         # steps without progress before a restart from fresh values
    starts: int = 8            # random starting points compared before the first step (best kept)
    int64_bits: int = 64       # 32 for systems that compute int64 in 32 bits (set by the campaign, not a knob)

    @classmethod
    def from_dict(cls, d) -> "SearchConfig":
        """Checked construction from a config mapping: the bad key or value is named with the fix."""
        from nnfuzz.errors import ConfigError

        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise ConfigError(f"unknown search key(s) {unknown}; valid: {names}")
        for key, lo in (("time_ms", 0), ("lr", 1e-9), ("patience", 1), ("starts", 1)):
            v = d.get(key, getattr(cls, key))
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo:
                raise ConfigError(f"search.{key}={v!r} must be a number >= {lo}")
        if d.get("int64_bits", 64) not in (32, 64):
            raise ConfigError(f"search.int64_bits={d['int64_bits']!r} must be 32 or 64")
        for key in ("enabled", "proxy"):
            v = d.get(key, getattr(cls, key))
            if not isinstance(v, bool):
                raise ConfigError(f"search.{key}={v!r} must be true or false")
        return cls(**d)


@dataclasses.dataclass
class SearchResult:
    ok: bool                              # every value safe
    finite: bool                          # every float value finite (may hold without ok)
    weights: Dict[str, np.ndarray]
    inputs: Dict[str, np.ndarray]
    steps: int = 0
    restarts: int = 0                     # fresh starts after a stall
    draws: int = 0                        # random value sets tried (starting points, restarts, sampling)
    time_ms: float = 0.0
    blocker: Optional[str] = None         # when not ok: the unsafe op the search got furthest to, and why
    out_of_domain: bool = False           # when not ok: the first unsafe op's input is outside its domain

    @property
    def values_undefined(self) -> bool:
        """The first unsafe op's input is outside its domain, or an integer result overflows (an
        integer division by zero, say): undefined behaviour, where a system may raise or crash as it
        likes, so such a model is not run at all. (Values whose first fault is a NaN/Inf are run:
        a system must compute NaN there, not fail.)"""
        return not self.ok and self.out_of_domain

    def summary(self) -> dict:
        return {"ok": self.ok, "finite": self.finite, "values_undefined": self.values_undefined,
                "steps": self.steps, "restarts": self.restarts,
                "draws": self.draws,
                "time_ms": round(self.time_ms, 2), "blocker": self.blocker}


class _Leaf:
    """A trainable float64 master tensor behind one graph input or weight."""

    def __init__(self, name: str, dtype: DType, value: np.ndarray, grad: bool):
        import torch

        self.name, self.dtype = name, dtype
        if dtype.is_float:
            self.lo, self.hi = None, None
        elif dtype is DType.bool:
            self.lo, self.hi = 0.0, 1.0
        else:
            info = np.iinfo(dtype.numpy())
            self.lo, self.hi = float(info.min), float(info.max)
        self.master = torch.zeros(value.shape, dtype=torch.float64, requires_grad=grad)
        self.set(value)

    def set(self, value: np.ndarray) -> None:
        import torch

        v = np.asarray(value).astype(np.float64)
        if self.dtype is DType.bool:
            v = np.where(v > 0.5, 1.0, -1.0)  # the master's sign is the bool
        with torch.no_grad():
            self.master.copy_(torch.from_numpy(np.array(v, dtype=np.float64, order="C")))

    def values(self):
        """(hard value in the leaf's dtype, float64 surrogate or None)."""
        import torch

        m, dt = self.master, self.dtype
        if dt.is_float:
            return m.to(dt.torch()), None
        if dt is DType.bool:
            hard = m.detach() > 0
            sig = torch.sigmoid(m)
            return hard, hard.double() + (sig - sig.detach())
        r = torch.round(m.detach()).clamp(self.lo, self.hi)
        return r.to(dt.torch()), m + (r - m).detach()

    def numpy(self) -> np.ndarray:
        from nnfuzz.materialize.values import to_numpy

        return to_numpy(self.values()[0])

    def redraw_nonfinite(self, rng) -> None:
        import torch

        with torch.no_grad():
            bad = ~torch.isfinite(self.master)
            if bad.any():
                self.master[bad] = torch.from_numpy(rng.standard_normal(int(bad.sum())))


def _fresh(leaf: _Leaf, rng: np.random.Generator, restart: int) -> np.ndarray:
    """Values for a restart: float scales alternate; integers shrink towards small non-zero values."""
    shape = tuple(leaf.master.shape)
    if leaf.dtype.is_float:
        v = rng.standard_normal(shape) * (1.0, 0.5, 2.0, 0.25, 1.0, 0.5)[restart % 6]
        # every other draw one-signed, mostly positive: most domains (log, sqrt, pow's base) lie on
        # that side, a reciprocal's sign cannot be changed by small steps, and a zero pushed away from
        # 0 through a floor or a min may only be able to go negative
        if restart % 2:
            return (np.abs(v) + 0.05) * (-1.0 if restart % 6 == 5 else 1.0)
        return v
    if leaf.dtype is DType.bool:
        return rng.random(shape) < 0.5
    mag = max(1, 8 >> (restart // 2))
    v = rng.integers(1, mag + 1, size=shape)
    if leaf.dtype is DType.uint8:
        return v
    return v * rng.choice([-1, 1], size=shape)


@dataclasses.dataclass
class _Eval:
    safe: bool
    finite: bool
    loss: object             # torch scalar (None when safe)
    first_bad: int           # index of the first unsafe op (len(insts) when safe)
    blocker: Optional[str]
    out_of_domain: bool = False  # the first unsafe op's input is outside its domain (not only non-finite)


class ValueSearch:
    """The search for one graph; ``run`` returns a SearchResult."""

    def __init__(self, gir: GraphIR, cfg: SearchConfig):
        from nnfuzz.materialize.torch.losses import loss_for
        from nnfuzz.materialize.torch.lowering import graph_lowerings

        self.gir, self.cfg = gir, cfg
        _warm_up()
        self.fns = graph_lowerings(gir)
        self.losses = [loss_for(type(inst.op)) for inst in gir.insts]

    def evaluate(self, leaves: List[_Leaf], proxy: bool) -> _Eval:
        """One forward pass: is the graph safe, and if not, the loss to minimise."""
        import torch

        from nnfuzz.materialize.torch.losses import int_overflow, magnitude_loss
        from nnfuzz.materialize.torch.lowering import lowering_error
        from nnfuzz.materialize.torch.proxy import apply_proxies, soft

        gir = self.gir
        env, sur = {}, {}
        for leaf in leaves:
            env[leaf.name], sur[leaf.name] = leaf.values()
        total, first_bad, blocker, out_of_domain = None, len(gir.insts), None, False
        for k, (fn, lf, inst) in enumerate(zip(self.fns, self.losses, gir.insts)):
            args = [env[v] for v in inst.inputs]
            softs = [sur.get(v) for v in inst.inputs]
            try:
                outs, osur = apply_proxies(inst.op, fn, args, softs, proxy)
            except Exception as e:  # the same lowering runs again for the reference: a bug in the op
                raise lowering_error(inst, gir, e, "during the value search") from e
            finite = all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point())
            overflow = [(s, gir.vars[v].dtype) for v, s in zip(inst.outputs, osur)
                        if s is not None and gir.vars[v].dtype.is_int]
            if finite and lf is None and not overflow:  # nothing to check: most ops
                env.update(zip(inst.outputs, outs))
                sur.update((v, s) for v, s in zip(inst.outputs, osur) if s is not None)
                continue
            xs = [soft(a, s) for a, s in zip(args, softs)]
            dts = [gir.vars[v].dtype for v in inst.inputs]
            term = lf(inst.op, xs, dts) if lf is not None else torch.zeros(())
            for s, dt in overflow:
                narrow = dt is DType.int64 and self.cfg.int64_bits == 32
                term = term + int_overflow(s, DType.int32 if narrow else dt)
            violated = float(term.detach()) > 0
            if not finite and not violated:
                term = magnitude_loss([x for x in xs if x.numel()])
            if violated or not finite:
                if first_bad == len(gir.insts):
                    first_bad = k
                    why = "input outside its domain" if violated else "non-finite output"
                    out_of_domain = violated
                    blocker = f"{inst.op.name} ({', '.join(inst.outputs)}): {why}"
                total = term if total is None else total + term
            if not finite:
                return _Eval(False, False, total, first_bad, blocker, out_of_domain)
            env.update(zip(inst.outputs, outs))
            sur.update((v, s) for v, s in zip(inst.outputs, osur) if s is not None)
        return _Eval(total is None, True, total, first_bad, blocker, out_of_domain)

    def _best_of(self, leaves, proxy, rng, first: int, draws: int, deadline: float, keep_current: bool) -> int:
        """Move the leaves to the best of ``draws`` fresh random draws (restart indices ``first``, ...)
        and, with ``keep_current``, their current values: the furthest first unsafe op, then the
        smallest loss. Forward passes without gradients are cheap and spare gradient steps.
        Returns how many draws were made."""
        import torch

        def key(ev):
            return (ev.first_bad, -float(ev.loss) if ev.loss is not None else 0.0)

        made, best, best_vals = 0, None, None
        with torch.no_grad():
            if keep_current:
                ev = self.evaluate(leaves, proxy)
                if ev.safe:
                    return 0
                best, best_vals = key(ev), [lf.master.detach().clone() for lf in leaves]
            for k in range(first, first + draws):
                if made and time.perf_counter() >= deadline:
                    break
                for lf in leaves:
                    lf.set(_fresh(lf, rng, k))
                made += 1
                ev = self.evaluate(leaves, proxy)
                if ev.safe:
                    return made
                if best is None or key(ev) > best:
                    best, best_vals = key(ev), [lf.master.detach().clone() for lf in leaves]
            for lf, v in zip(leaves, best_vals):
                lf.master.copy_(v)
        return made

    def run(self, weights: Dict[str, np.ndarray], inputs: Dict[str, np.ndarray], seed: int,
            proxy: Optional[bool] = None, gradient: bool = True) -> SearchResult:
        """Search from the given values. ``gradient=False`` only re-draws values (plain sampling)."""
        import torch

        cfg, gir = self.cfg, self.gir
        proxy = cfg.proxy if proxy is None else proxy
        rng = np.random.default_rng([seed, 4242])
        t0 = time.perf_counter()
        deadline = t0 + cfg.time_ms / 1000.0
        values = {**weights, **inputs}
        leaves = [_Leaf(n, gir.vars[n].dtype, values[n], gradient and (proxy or gir.vars[n].dtype.is_float))
                  for n in list(gir.inputs) + list(gir.weights)]
        params = [lf.master for lf in leaves if lf.master.requires_grad]
        steps = restarts = since = 0
        best = (-1, float("inf"))
        furthest = (-1, None)
        draws = 0
        if params and cfg.starts > 1:
            draws = self._best_of(leaves, proxy, rng, 1, cfg.starts - 1, deadline, keep_current=True)
        opt = _optimizer(params, cfg.lr) if params else None
        ev = undo = None
        last_bad = -1
        while True:
            with torch.set_grad_enabled(bool(params)):
                ev = self.evaluate(leaves, proxy)
            if ev.safe or time.perf_counter() >= deadline:
                break
            if undo is not None and ev.first_bad < undo[0] and opt.param_groups[0]["lr"] > cfg.lr / 100:
                # the step broke an op that was safe before it: take it back and try a shorter one
                with torch.no_grad():
                    for p, v in zip(params, undo[1]):
                        p.copy_(v)
                for group in opt.param_groups:
                    group["lr"] *= 0.3
                undo = None
                continue
            undo = None
            if opt is not None and ev.first_bad != last_bad:
                opt = _optimizer(params, cfg.lr)  # another op to fix: the old momentum does not apply
            last_bad = ev.first_bad
            loss = ev.loss
            stepped = False
            if opt is not None and loss is not None and loss.requires_grad and torch.isfinite(loss):
                before = [p.detach().clone() for p in params]
                stepped = _gradient_step(loss, params, opt)
                if stepped:
                    undo = (ev.first_bad, before)
                    steps += 1
                    for lf in leaves:
                        lf.redraw_nonfinite(rng)
            key = (ev.first_bad, float(loss.detach()) if loss is not None else float("inf"))
            if ev.first_bad > furthest[0]:
                furthest = (ev.first_bad, ev.blocker)
            if key[0] > best[0] or (key[0] == best[0] and key[1] < best[1] * 0.99):
                if key[0] > best[0] and opt is not None:
                    for group in opt.param_groups:
                        group["lr"] = cfg.lr  # a new op made safe: full steps again
                best, since = key, 0
            else:
                since += 1
            if stepped and since >= cfg.patience and opt.param_groups[0]["lr"] > cfg.lr / 50:
                # a stall: first finer steps (an oscillation around a narrow safe region), then restart
                for group in opt.param_groups:
                    group["lr"] *= 0.1
                best, since = key, 0
            elif not stepped or since >= cfg.patience:
                restarts += 1
                if params:
                    draws += self._best_of(leaves, proxy, rng, draws + 1, cfg.starts, deadline, keep_current=False)
                else:  # plain sampling: one draw per round
                    draws += 1
                    for lf in leaves:
                        lf.set(_fresh(lf, rng, draws))
                best, since = (-1, float("inf")), 0
                undo = None
                if opt is not None:
                    opt = _optimizer(params, cfg.lr)
        out = {lf.name: lf.numpy() for lf in leaves}
        return SearchResult(
            ok=ev.safe, finite=ev.finite, weights={n: out[n] for n in gir.weights},
            inputs={n: out[n] for n in gir.inputs}, steps=steps, restarts=restarts, draws=draws,
            time_ms=(time.perf_counter() - t0) * 1000.0,
            blocker=None if ev.safe else furthest[1] or ev.blocker, out_of_domain=ev.out_of_domain)


def search_values(gir: GraphIR, weights, inputs, cfg: SearchConfig, seed: int, **kw) -> SearchResult:
    return ValueSearch(gir, cfg).run(weights, inputs, seed, **kw)


def _gradient_step(loss, params, opt) -> bool:
    """One Adam step on ``loss``; False when there is no gradient to follow (none reaches a leaf, or
    a kernel has no backward for this dtype: the caller then re-draws values instead)."""
    import torch

    opt.zero_grad(set_to_none=True)
    try:
        loss.backward()
    except RuntimeError as e:
        if "not implemented" not in str(e):
            from nnfuzz.errors import InternalError

            raise InternalError(f"value search: the backward pass failed: {type(e).__name__}: {e}") from e
        return False
    for p in params:
        if p.grad is not None:
            torch.nan_to_num_(p.grad, 0.0, 0.0, 0.0)
    if not any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in params):
        return False
    opt.step()
    return True


def _optimizer(params, lr):
    import torch

    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.9))


_warm = False


def _warm_up() -> None:
    """torch's first backward pass and optimizer step cost over a second of one-off initialisation;
    paid here, once per process, instead of out of the first model's time budget."""
    global _warm
    if not _warm:
        import torch

        _warm = True
        x = torch.zeros(2, dtype=torch.float64, requires_grad=True)
        opt = _optimizer([x], 0.1)
        torch.relu(1 - x.to(torch.float16).double()).sum().backward()
        opt.step()
