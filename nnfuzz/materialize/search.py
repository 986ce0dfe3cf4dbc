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
from nnfuzz.materialize.leaves import Leaf, fresh


@dataclasses.dataclass
class SearchConfig:
    """The ``search`` config group (conf/search/*.yaml)."""
    enabled: bool = True
    time_ms: float = 100.0     # budget per model; past it the reference is undefined (output None)
    proxy: bool = True         # proxy derivatives through floor/round/relu/comparisons/casts
    lr: float = 0.5            # Adam step size (values are of order 1)
    patience: int = 12         # steps without progress before a restart from fresh values
    starts: int = 8            # random starting points compared before the first step (best kept)
    max_passes: int = 0        # forward passes at most (0: only time_ms limits): a budget independent of load
    value_aware: bool = True   # grow graphs with safe values (generate/valueaware.py); the search checks them once
    repair_passes: int = 8     # value-aware generation: search passes to repair an insertion before undoing it
    int64_bits: int = 64       # 32 for systems that compute int64 in 32 bits (set by the campaign, not a knob)
    kinks: bool = False        # keep values a margin from each op's kinks (materialize/torch/kinks.py): oracle=grad sets it

    @classmethod
    def from_dict(cls, d) -> "SearchConfig":
        """Checked construction from a config mapping: the bad key or value is named with the fix."""
        from nnfuzz.errors import ConfigError

        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise ConfigError(f"unknown search key(s) {unknown}; valid: {names}")
        for key, lo in (("time_ms", 0), ("lr", 1e-9), ("patience", 1), ("starts", 1), ("max_passes", 0),
                        ("repair_passes", 0)):
            v = d.get(key, getattr(cls, key))
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < lo:
                raise ConfigError(f"search.{key}={v!r} must be a number >= {lo}")
        if d.get("int64_bits", 64) not in (32, 64):
            raise ConfigError(f"search.int64_bits={d['int64_bits']!r} must be 32 or 64")
        for key in ("enabled", "proxy", "value_aware", "kinks"):
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
    passes: int = 0                       # forward passes (1: the values given were safe, nothing searched)
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
                "draws": self.draws, "passes": self.passes,
                "time_ms": round(self.time_ms, 2), "blocker": self.blocker}


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
        from nnfuzz.materialize.check import loss_of
        from nnfuzz.materialize.torch.lowering import graph_lowerings

        self.gir, self.cfg = gir, cfg
        self.passes = 0  # forward passes made (the check-once pass included)
        self.fns = graph_lowerings(gir)
        self.losses = [loss_of(type(inst.op)) for inst in gir.insts]
        if cfg.kinks:  # gradients are compared: values a margin away from every kink too
            from nnfuzz.materialize.torch.kinks import with_kinks

            self.losses = [with_kinks(lf, type(inst.op)) for lf, inst in zip(self.losses, gir.insts)]
        self._domains = None  # input/weight -> the domain its consumers ask of it (built on first draw)
        self._fixed: dict = {}  # values held as they are (run's ``fixed``): name -> tensor

    def evaluate(self, leaves: List[Leaf], proxy: bool) -> _Eval:
        """One forward pass on the leaves' values: is the graph safe, and if not, the loss to minimise."""
        env, sur = dict(self._fixed), {}
        for leaf in leaves:
            env[leaf.name], sur[leaf.name] = leaf.values()
        return self.evaluate_env(env, sur, proxy)

    def evaluate_env(self, env: dict, sur: dict, proxy: bool) -> _Eval:
        """One forward pass from ``env`` (input name -> tensor) and ``sur`` (their float64 surrogates,
        where there are any); both are filled with the values computed."""
        from nnfuzz.materialize.check import check_inst

        gir = self.gir
        self.passes += 1
        total, first_bad, blocker, out_of_domain = None, len(gir.insts), None, False
        for k, (fn, lf, inst) in enumerate(zip(self.fns, self.losses, gir.insts)):
            term, finite, violated = check_inst(inst, fn, lf, env, sur, gir.vars, proxy, self.cfg.int64_bits,
                                                "during the value search")
            if term is None:
                continue
            if first_bad == len(gir.insts):
                first_bad = k
                why = "input outside its domain" if violated else "non-finite output"
                out_of_domain = violated
                blocker = f"{inst.op.name} ({', '.join(inst.outputs)}): {why}"
            total = term if total is None else total + term
            if not finite:
                return _Eval(False, False, total, first_bad, blocker, out_of_domain)
        return _Eval(total is None, True, total, first_bad, blocker, out_of_domain)

    def _draw(self, leaf: Leaf, rng, restart: int) -> np.ndarray:
        """Fresh values for ``leaf``, inside the domain of the ops that consume it directly (a log's
        input drawn positive, an acos's in (-1, 1), a divisor off zero): a draw outside it is wasted."""
        from nnfuzz.materialize.values import consumer_domain, in_domain

        if self._domains is None:
            names = list(self.gir.inputs) + list(self.gir.weights)
            self._domains = {n: consumer_domain(self.gir.insts, n) for n in names}
        v = fresh(leaf, rng, restart)
        dom = self._domains[leaf.name]
        return v if dom is None else in_domain(v, dom, leaf.dtype)

    def _spent(self, deadline: float) -> bool:
        """The budget is spent: the time, or the deterministic ``max_passes``."""
        over = self.cfg.max_passes and self.passes >= self.cfg.max_passes
        return bool(over) or time.perf_counter() >= deadline

    def check(self, values: Dict[str, np.ndarray]) -> _Eval:
        """The check-once pass: the given values as they are, no gradients, no leaves."""
        import torch

        from nnfuzz.materialize.values import to_torch

        env = {n: to_torch(values[n], self.gir.vars[n].dtype) for n in list(self.gir.inputs) + list(self.gir.weights)}
        with torch.no_grad():
            return self.evaluate_env(env, {}, proxy=False)

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
                if made and self._spent(deadline):
                    break
                for lf in leaves:
                    lf.set(self._draw(lf, rng, k))
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
            proxy: Optional[bool] = None, gradient: bool = True, unsafe: bool = False,
            fixed: tuple = ()) -> SearchResult:
        """Search from the given values. ``gradient=False`` only re-draws values (plain sampling);
        ``unsafe``: the caller knows they are unsafe, so the check-once pass is skipped; ``fixed``: names
        whose values are kept as given (a dynamic model's weights, shared by all its shapes)."""
        import torch

        from nnfuzz.materialize import search_record
        from nnfuzz.materialize.values import to_torch

        cfg, gir = self.cfg, self.gir
        proxy = cfg.proxy if proxy is None else proxy
        rng = np.random.default_rng([seed, 4242])
        t0 = time.perf_counter()
        deadline = t0 + cfg.time_ms / 1000.0
        values = {**weights, **inputs}
        first = None if unsafe else self.check(values)
        if first is not None and (first.safe or self._spent(deadline)):  # nothing is wrong (or no budget): no leaves, no gradients
            return SearchResult(ok=first.safe, finite=first.finite, weights=dict(weights), inputs=dict(inputs),
                                passes=self.passes, time_ms=(time.perf_counter() - t0) * 1000.0,
                                blocker=first.blocker, out_of_domain=first.out_of_domain)
        # (a producer records a search that will step, before its first backward: search_record.py)
        search_record.write(gir, cfg, weights, inputs, seed,
                            {"proxy": proxy, "gradient": gradient, "unsafe": unsafe, "fixed": fixed})
        deadline += warm_up()  # one-off, not out of this graph's budget
        self._fixed = {n: to_torch(values[n], gir.vars[n].dtype) for n in fixed}
        leaves = [Leaf(n, gir.vars[n].dtype, values[n], gradient and (proxy or gir.vars[n].dtype.is_float))
                  for n in list(gir.inputs) + list(gir.weights) if n not in self._fixed]
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
            if ev.safe or self._spent(deadline):
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
                        lf.set(self._draw(lf, rng, draws))
                best, since = (-1, float("inf")), 0
                undo = None
                if opt is not None:
                    opt = _optimizer(params, cfg.lr)
        out = {**{n: values[n] for n in fixed}, **{lf.name: lf.numpy() for lf in leaves}}
        return SearchResult(
            ok=ev.safe, finite=ev.finite, weights={n: out[n] for n in gir.weights},
            inputs={n: out[n] for n in gir.inputs}, steps=steps, restarts=restarts, draws=draws,
            passes=self.passes, time_ms=(time.perf_counter() - t0) * 1000.0,
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


def warm_up() -> float:
    """torch's first backward pass and optimizer step cost over a second of one-off initialisation;
    paid here, once per process, and given back to the first searched model's time budget (returns
    the seconds it took)."""
    global _warm
    t0 = time.perf_counter()
    if not _warm:
        import torch

        _warm = True
        x = torch.zeros(2, dtype=torch.float64, requires_grad=True)
        opt = _optimizer([x], 0.1)
        torch.relu(1 - x.to(torch.float16).double()).sum().backward()
        opt.step()
    return time.perf_counter() - t0
