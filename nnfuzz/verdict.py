"""Verdicts: compare a backend's outputs with the reference, and classify what went wrong.

A verdict is PASS, UNSUPPORTED (the system said it lacks an op or dtype: not a bug), or a bug: a
``Symptom`` (crash | inconsistency | timeout, the values meta.json uses) at a ``Stage`` (export,
compile, execute, verify). A reference holding NaN/Inf is undefined behaviour: never compared.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, Mapping, Optional

import numpy as np

from nnfuzz.abstract.dtype import DType


class Symptom(str, enum.Enum):
    crash = "crash"
    inconsistency = "inconsistency"
    timeout = "timeout"


class Stage(str, enum.Enum):
    export = "export"
    compile = "compile"
    execute = "execute"
    verify = "verify"


class Outcome(str, enum.Enum):
    PASS = "pass"
    UNSUPPORTED = "unsupported"
    BUG = "bug"


@dataclass
class Verdict:
    outcome: Outcome
    symptom: Optional[Symptom] = None
    stage: Optional[Stage] = None
    summary: str = ""                 # one line
    detail: str = ""                  # full error text (err.log)
    errors: Dict[str, dict] = field(default_factory=dict)  # per-output error figures

    @property
    def is_bug(self) -> bool:
        return self.outcome is Outcome.BUG

    @property
    def label(self) -> str:
        return self.symptom.value if self.symptom else self.outcome.value

    @staticmethod
    def passed(errors=None) -> "Verdict":
        return Verdict(Outcome.PASS, errors=errors or {})

    @staticmethod
    def unsupported(summary: str, detail: str = "") -> "Verdict":
        return Verdict(Outcome.UNSUPPORTED, summary=summary, detail=detail)

    @staticmethod
    def bug(symptom: Symptom, stage: Stage, summary: str, detail: str = "", errors=None) -> "Verdict":
        return Verdict(Outcome.BUG, symptom, stage, summary, detail, errors or {})


# (rtol, atol) per dtype: wide enough for reassociation and fused kernels, tight enough for real bugs.
DEFAULT_TOLERANCES: Dict[str, tuple] = {
    "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-3, 1e-4), "float64": (1e-6, 1e-8),
}


def compare(reference: Optional[Mapping[str, np.ndarray]], actual: Mapping[str, np.ndarray],
            tolerances: Mapping[str, tuple] = DEFAULT_TOLERANCES,
            twin: Optional[Mapping[str, np.ndarray]] = None,
            jitter: Optional[Mapping[str, np.ndarray]] = None) -> Verdict:
    """Compare ``actual`` with ``reference`` per output (shape, dtype, values within tolerance).

    ``twin`` is the reference graph computed in float64. With it, an element counts as wrong only if
    the backend is off from the reference *and* further from the float64 truth than the reference is
    (by more than the tolerance), and non-float elements where the reference itself disagrees with
    the twin (a comparison or argmax flipped by rounding) are not compared: that is precision noise.
    ``jitter`` (the envelopes of jittered twin runs, see materialize.model.add_twins) widens the
    allowance where the graph is ill-conditioned (tan near a pole, a difference of near-equal values),
    and widens it far more where rounding alone moves a value beyond the tolerance: the graph does not
    determine that value (an fmod by a tiny computed divisor), only its scale.
    """
    if reference is None:
        return Verdict.passed()  # undefined behaviour: nothing to compare
    errors, problems = {}, []
    for name, want in reference.items():
        if name not in actual:
            problems.append(f"output {name} missing")
            continue
        got = np.asarray(actual[name])
        if got.shape != want.shape:
            problems.append(f"{name}: shape {list(got.shape)} != reference {list(want.shape)}")
            continue
        dt = DType.parse(str(want.dtype))
        if DType.parse(str(got.dtype)) != dt:
            problems.append(f"{name}: dtype {got.dtype} != reference {want.dtype}")
            continue
        fig = error_figures(want, got)
        errors[name] = fig
        t = _as_f64(twin, name, want.shape)
        j, r = _envelopes(jitter, name, want.shape)
        if dt.is_float:
            # an entry under the output's own name first (the gradient oracle scales them, materialize/torch/grad.py)
            rtol, atol = tolerances.get(name) or tolerances.get(dt.value, (1e-3, 1e-4))
            w, g = want.astype(np.float64), got.astype(np.float64)
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=False)
            if t is not None:
                with np.errstate(invalid="ignore", over="ignore"):
                    noise = _allowance(w, t, j, r, rtol, atol)
                    closer = np.abs(g - t) <= atol + rtol * np.abs(t) + noise
                    # beyond the dtype's range in exact arithmetic: overflow territory, not comparable
                    limit = float(np.finfo(np.float16).max) if dt is DType.float16 else np.inf
                    wild = (np.abs(t) > limit) | ((np.abs(j) > limit) if j is not None else False)
                bad &= ~(closer | wild | ~np.isfinite(t) | ~np.isfinite(noise))
            if bad.any():
                problems.append(f"{name}: {int(bad.sum())}/{bad.size} values off ({_nonfinite_words(w, g, bad)}"
                                f"max abs {fig['max_abs']:.3g}, max rel {fig['max_rel']:.3g}; rtol {rtol}, atol {atol})")
        else:
            differ = want != got
            if t is not None:
                differ &= (want.astype(np.float64) == t)  # where the reference is stable
            for env in (j, r):
                if env is not None:
                    differ &= (want.astype(np.float64) == env)
            if differ.any():
                problems.append(f"{name}: {int(differ.sum())}/{want.size} values differ ({dt.value})")
    if problems:
        return Verdict.bug(Symptom.inconsistency, Stage.verify, problems[0], "\n".join(problems), errors)
    return Verdict.passed(errors)


def _as_f64(arrays, name, shape):
    a = arrays.get(name) if arrays is not None else None
    return np.asarray(a, dtype=np.float64) if a is not None and a.shape == shape else None


# How many times the twin runs' displacement a value may be off: twice where the graph determines it;
# where rounding alone moves it beyond the tolerance only its scale is known (an fmod by a tiny computed
# divisor lands anywhere below the divisor, and a few runs sample that range), so more, but not any
# value (an Inf, or a floor at its jump that is off by far more than 1, is still a bug).
DETERMINED_FACTOR, UNDETERMINED_FACTOR = 2.0, 16.0


def _allowance(w, t, j, r, rtol, atol):
    """Per element, how far beyond the tolerance a system may be from the twin ``t``: the reference's
    own error plus the jittered (``j``) and rounding-level (``r``) runs' displacement, times the factor
    above. NaN/Inf where a run gave NaN/Inf: not comparable."""
    moved = np.abs(j - t) if j is not None else 0.0
    if r is None:
        return DETERMINED_FACTOR * (np.abs(w - t) + moved)
    rounded = np.abs(r - t)
    factor = np.where(rounded <= atol + rtol * np.abs(t), DETERMINED_FACTOR, UNDETERMINED_FACTOR)
    return factor * (np.abs(w - t) + np.maximum(moved, rounded))


def _envelopes(jitter, name, shape):
    """The coarse and the rounding-level jitter envelopes of output ``name`` (either None if absent).
    A folder saved before the rounding-level runs existed holds the coarse envelope alone."""
    a = jitter.get(name) if jitter is not None else None
    if a is None:
        return None, None
    a = np.asarray(a, dtype=np.float64)
    if a.shape == (2,) + tuple(shape):
        return a[0], a[1]
    return (a, None) if a.shape == tuple(shape) else (None, None)


def _nonfinite_words(want: np.ndarray, got: np.ndarray, bad: np.ndarray) -> str:
    """How many of the ``bad`` elements are NaN/inf on one side only: the max abs and rel errors count finite
    pairs alone, so where every bad element is such a pair they read 0 (a NaN gradient did)."""
    words = []
    for n, what in ((int((bad & np.isfinite(want) & ~np.isfinite(got)).sum()), "NaN/inf where the reference is finite"),
                    (int((bad & ~np.isfinite(want) & np.isfinite(got)).sum()), "finite where the reference is NaN/inf")):
        if n:
            words.append(f"{n} {what}; ")
    return "".join(words) + ("finite pairs: " if words else "")


def error_figures(want: np.ndarray, got: np.ndarray) -> dict:
    """Max absolute and relative error and the Chebyshev (L-inf) distance over finite values."""
    w, g = want.astype(np.float64).ravel(), got.astype(np.float64).ravel()
    if w.size == 0:
        return {"max_abs": 0.0, "max_rel": 0.0, "chebyshev": 0.0}
    both = np.isfinite(w) & np.isfinite(g)
    diff = np.abs(w[both] - g[both])
    nonfinite_mismatch = int((np.isfinite(w) != np.isfinite(g)).sum())
    max_abs = float(diff.max()) if diff.size else 0.0
    rel = diff / np.maximum(np.abs(w[both]), 1e-12)
    return {"max_abs": max_abs, "max_rel": float(rel.max()) if rel.size else 0.0, "chebyshev": max_abs,
            "nonfinite_mismatch": nonfinite_mismatch}


def judge(result, reference: Optional[Mapping[str, np.ndarray]], engine: str,
          tolerances: Mapping[str, tuple] = DEFAULT_TOLERANCES,
          twin: Optional[Mapping[str, np.ndarray]] = None,
          jitter: Optional[Mapping[str, np.ndarray]] = None) -> Verdict:
    """The verdict for a sandbox ``RunResult`` against the reference outputs (None: undefined);
    ``engine`` (``BackendInfo.engine``) picks the known limitations that make an error UNSUPPORTED."""
    from nnfuzz.backends.known import classify

    stage = Stage(result.stage) if result.stage in Stage._value2member_map_ else Stage.execute
    if result.status == "ok":
        return compare(reference, result.outputs or {}, tolerances, twin, jitter)
    if result.status == "timeout":
        return Verdict.bug(Symptom.timeout, stage, result.error, result.detail)
    if result.status == "error":
        known = classify(engine, f"{result.error}\n{result.detail}")
        if known is not None:
            return Verdict.unsupported(f"{known.note}: {result.error}", result.detail)
    return Verdict.bug(Symptom.crash, stage, result.error, result.detail)
