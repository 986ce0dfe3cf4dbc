"""Plots as inline SVG text: step/line charts over time and horizontal bar charts.

Written by hand rather than with matplotlib so the report needs no plotting package, stays a few
kilobytes per plot, and its text (titles, legends, ticks) is real text a browser test can find. Every
label passes through ``esc``: series names may come from a campaign log.
"""
from __future__ import annotations

import math
from html import escape
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

# a verdict's colour, the same in every plot: bugs warm (crash red, inconsistency orange, timeout purple),
# what ran clean green, what the system does not take grey, what never reached the system pale
VERDICT_COLORS = {"pass": "#2ca02c", "unsupported": "#8c8c8c", "crash": "#d62728", "inconsistency": "#ff7f0e",
                  "timeout": "#9467bd", "no-graph": "#bcbd22", "undefined-values": "#17becf",
                  "nnfuzz-error": "#000000", "cut": "#e377c2"}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#17becf", "#bcbd22")
W, H = 600, 260                    # the plot's size in SVG units (it scales to the page)
SCALE = 0.94                       # drawn size / SVG units: two plots side by side in a 1200 px page
LEFT, RIGHT, TOP, BOTTOM = 58, 175, 28, 40  # margins: room for ticks, the legend and the title


def esc(text) -> str:
    return escape(str(text), quote=True)


def nice_ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> List[float]:
    """About ``n`` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten; whole
    steps when ``integer``, for counts)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    if integer:
        step = max(1.0, math.ceil(step))
    start = math.floor(lo / step) * step
    ticks = [round(start, 12)]
    while ticks[-1] < hi - step * 1e-9:  # the last tick is at or past ``hi``: the data stays inside
        ticks.append(round(start + len(ticks) * step, 12))
    return ticks


@dataclass(frozen=True)
class Axis:
    """How one axis maps data to the plot: linear from ``lo`` to ``hi`` (``hi`` None: the ticks' end), or
    ``log``: log10 from ``lo`` (> 0) up, for values that span orders of magnitude. A log y axis draws
    counts as log10(1 + y) so that 0 stays on it; a log x axis clamps x below ``lo`` to ``lo``."""
    lo: float = 0.0
    hi: Optional[float] = None
    log: bool = False
    integer: bool = False

    def ticks(self, vmax: float) -> List[float]:
        if self.log:
            top = self.hi if self.hi is not None else max(vmax, self.lo * 10, 1.0)
            out = [0.0] if self.lo <= 0 else []
            k = math.floor(math.log10(self.lo)) if self.lo > 0 else 0
            while not out or out[-1] < top:
                out.append(float(10 ** k))
                k += 1
            if self.hi is None:
                return out
            out = [t for t in out if t <= top * (1 + 1e-9)]
            end = [t for t in nice_ticks(0.0, top) if t <= top][-1]  # the axis' end labelled (20 s, 8 h)
            return out + [end] if out and end >= out[-1] * 1.8 else out
        hi = self.hi if self.hi is not None else vmax
        ticks = nice_ticks(self.lo, hi, integer=self.integer)
        return [t for t in ticks if t <= hi + 1e-9] if self.hi is not None else ticks

    def f(self, v: float) -> float:
        if not self.log:
            return v
        return math.log10(1 + max(v, 0.0)) if self.lo <= 0 else math.log10(max(v, self.lo))


def _fmt(v: float) -> str:
    """A tick or legend number: 250, 0.5, 12k, 1.5M (counts of hours-long campaigns stay short)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
        if abs(v) >= div:
            return f"{v / (div if div != 1e4 else 1e3):.3g}{suffix}"
    if v == int(v):
        return str(int(v))
    return f"{v:.3g}"


def duration(s: float) -> str:
    """Seconds in words: 7.2 s, 4.5 min, 2.8 h."""
    return f"{s:.3g} s" if s < 120 else f"{s / 60:.3g} min" if s < 7200 else f"{s / 3600:.3g} h"


def line_chart(title: str, series: Dict[str, Sequence[Tuple[float, float]]], xlabel: str, ylabel: str,
               step: bool = True, css_id: str = "", marks: Sequence[float] = (), x: Axis = Axis(),
               y: Axis = Axis(), colors: Optional[Dict[str, str]] = None, legend: Optional[Dict[str, str]] = None,
               hlines: Sequence[Tuple[float, str]] = (), dashed: Sequence[str] = ()) -> str:
    """One SVG with a line per series (``name -> [(x, y), ...]``, x ascending); ``step`` draws counts
    that change at events as steps; ``marks`` are x values drawn as dashed lines (where a campaign
    starts); ``x``/``y`` the axes (one campaign's plots share ``x.hi``, its end); ``colors`` a colour per
    series name (else the palette's); ``legend`` the text after each name (else its last value);
    ``hlines`` (y, label) drawn dashed across; ``dashed`` series drawn dashed (one that may lie on another
    stays visible). An empty series dict gives a plot that says so."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return _frame(title, css_id, f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="note">'
                                     f'no data</text>')
    xt = x.ticks(max(p[0] for p in pts))
    yt = y.ticks(max([p[1] for p in pts] + [h for h, _ in hlines]))
    x0, x1 = x.f(x.lo if x.log else min(xt[0], 0.0)), x.f(x.hi if x.hi is not None else xt[-1])
    y0, y1 = y.f(yt[0]), y.f(yt[-1])
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v):
        return LEFT + (x.f(v) - x0) / ((x1 - x0) or 1) * pw

    def sy(v):
        return TOP + ph - (y.f(v) - y0) / ((y1 - y0) or 1) * ph

    parts = [_axes(xt, yt, sx, sy, xlabel, ylabel)]
    parts += [f'<line x1="{sx(m):.1f}" x2="{sx(m):.1f}" y1="{TOP}" y2="{H - BOTTOM}" class="mark">'
              f'<title>a campaign starts</title></line>' for m in marks]
    for k, (name, s) in enumerate(series.items()):
        color = (colors or {}).get(name, PALETTE[k % len(PALETTE)])
        coords: List[str] = []
        prev = None
        for px, py in s:
            if step and prev is not None:
                coords.append(f"{sx(px):.1f},{sy(prev):.1f}")
            coords.append(f"{sx(px):.1f},{sy(py):.1f}")
            prev = py
        if len(coords) == 1:
            parts.append(f'<circle cx="{coords[0].split(",")[0]}" cy="{coords[0].split(",")[1]}" r="2.5" '
                         f'fill="{color}"/>')
        else:
            dash = ' stroke-dasharray="5 4"' if name in dashed else ""
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6"{dash} points="{" ".join(coords)}">'
                         f'<title>{esc(name)}</title></polyline>')
        ly = TOP + 6 + 16 * k
        text = (legend or {}).get(name, _fmt(s[-1][1]) if s else "0")
        parts.append(f'<rect x="{W - RIGHT + 10}" y="{ly - 8}" width="12" height="3" fill="{color}"/>'
                     f'<text x="{W - RIGHT + 26}" y="{ly - 3}" class="legend">{esc(name)} ({esc(text)})</text>')
    for k, (hy, label) in enumerate(hlines):
        ly = TOP + 6 + 16 * (len(series) + k)
        parts.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{sy(hy):.1f}" y2="{sy(hy):.1f}" class="hline"/>'
                     f'<line x1="{W - RIGHT + 10}" x2="{W - RIGHT + 22}" y1="{ly - 6}" y2="{ly - 6}" class="hline"/>'
                     f'<text x="{W - RIGHT + 26}" y="{ly - 3}" class="legend">{esc(label)}</text>')
    return _frame(title, css_id, "".join(parts))


def bar_chart(title: str, items: Sequence[Tuple[str, float]], unit: str = "", css_id: str = "") -> str:
    """Horizontal bars, one per ``(label, value)``, each labelled with its value and share of the total
    (``unit`` " s": values are seconds, written as a duration)."""
    if not items:
        return _frame(title, css_id, f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="note">no data</text>')
    total = sum(v for _, v in items) or 1.0
    top = max(v for _, v in items) or 1.0
    bar_h = min(24.0, (H - TOP - 12) / len(items))
    left, width = 110, W - 110 - 150
    parts = []

    def shown(v: float) -> str:
        return duration(v) if unit == " s" else f"{v:.3g}{unit}"

    for k, (label, v) in enumerate(items):
        y = TOP + k * bar_h
        w = max(1.0, v / top * width)
        parts.append(f'<text x="{left - 6}" y="{y + bar_h * 0.65:.1f}" text-anchor="end" class="tick">{esc(label)}</text>'
                     f'<rect x="{left}" y="{y + 2:.1f}" width="{w:.1f}" height="{bar_h - 4:.1f}" '
                     f'fill="{PALETTE[0]}"><title>{esc(label)}: {v:.4g}{esc(unit)}</title></rect>'
                     f'<text x="{left + w + 6:.1f}" y="{y + bar_h * 0.65:.1f}" class="tick">{esc(shown(v))} '
                     f'({100 * v / total:.0f} %)</text>')
    return _frame(title, css_id, "".join(parts))


def _axes(xt, yt, sx, sy, xlabel, ylabel) -> str:
    out = []
    last = None
    for t in yt:  # a label closer than 11 units to the last one drawn is left out (0 and 1 of a log axis)
        label = last is None or abs(sy(t) - last) >= 11
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>'
                   + (f'<text x="{LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" class="tick">{_fmt(t)}</text>'
                      if label else ""))
        last = sy(t) if label else last
    for t in xt:  # a label at the axes' corner starts there, clear of the y axis' lowest label
        anchor = "start" if abs(sx(t) - LEFT) < 1 and t != 0 else "middle"
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{H - BOTTOM}" y2="{H - BOTTOM + 4}" class="axis"/>'
                   f'<text x="{sx(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="{anchor}" class="tick">{_fmt(t)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}" class="axis"/>'
               f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{H - BOTTOM}" class="axis"/>'
               f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 6}" text-anchor="middle" class="label">{esc(xlabel)}</text>'
               f'<text transform="translate(14,{(TOP + H - BOTTOM) / 2}) rotate(-90)" text-anchor="middle" '
               f'class="label">{esc(ylabel)}</text>')
    return "".join(out)


def _frame(title: str, css_id: str, body: str) -> str:
    ident = f' id="{esc(css_id)}"' if css_id else ""
    return (f'<svg{ident} class="plot" viewBox="0 0 {W} {H}" width="{W * SCALE:.0f}" height="{H * SCALE:.0f}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{esc(title)}</title>'
            f'<text x="{W / 2 - (RIGHT - LEFT) / 2}" y="16" text-anchor="middle" class="ptitle">{esc(title)}</text>'
            f'{body}</svg>')
