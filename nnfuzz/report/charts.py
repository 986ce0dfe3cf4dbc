"""Plots as inline SVG text: step/line charts over time and horizontal bar charts.

Written by hand rather than with matplotlib so the report needs no plotting package, stays a few
kilobytes per plot, and its text (titles, legends, ticks) is real text a browser test can find. Every
label passes through ``esc``: series names may come from a campaign log.
"""
from __future__ import annotations

import math
from html import escape
from typing import Dict, List, Sequence, Tuple

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#17becf", "#bcbd22")
W, H = 600, 260                    # the plot's size in SVG units (it scales to the page)
SCALE = 0.94                       # drawn size / SVG units: two plots side by side in a 1200 px page
LEFT, RIGHT, TOP, BOTTOM = 58, 175, 28, 40  # margins: room for ticks, the legend and the title


def esc(text) -> str:
    return escape(str(text), quote=True)


def nice_ticks(lo: float, hi: float, n: int = 5) -> List[float]:
    """About ``n`` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 12)]
    while ticks[-1] < hi - step * 1e-9:  # the last tick is at or past ``hi``: the data stays inside
        ticks.append(round(start + len(ticks) * step, 12))
    return ticks


def _fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.3g}"


def line_chart(title: str, series: Dict[str, Sequence[Tuple[float, float]]], xlabel: str, ylabel: str,
               step: bool = True, css_id: str = "", marks: Sequence[float] = ()) -> str:
    """One SVG with a line per series (``name -> [(x, y), ...]``, x ascending); ``step`` draws counts
    that change at events as steps; ``marks`` are x values drawn as dashed lines (where a campaign
    starts). An empty series dict gives a plot that says so."""
    pts = [p for s in series.values() for p in s]
    if not pts:
        return _frame(title, css_id, f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="note">'
                                     f'no data</text>')
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    xt = nice_ticks(min(0.0, min(xs)), max(xs))
    yt = nice_ticks(min(0.0, min(ys)), max(ys))
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x):
        return LEFT + (x - x0) / ((x1 - x0) or 1) * pw

    def sy(y):
        return TOP + ph - (y - y0) / ((y1 - y0) or 1) * ph

    parts = [_axes(xt, yt, sx, sy, xlabel, ylabel)]
    parts += [f'<line x1="{sx(m):.1f}" x2="{sx(m):.1f}" y1="{TOP}" y2="{H - BOTTOM}" class="mark">'
              f'<title>a campaign starts</title></line>' for m in marks]
    for k, (name, s) in enumerate(series.items()):
        color = PALETTE[k % len(PALETTE)]
        coords: List[str] = []
        prev = None
        for x, y in s:
            if step and prev is not None:
                coords.append(f"{sx(x):.1f},{sy(prev):.1f}")
            coords.append(f"{sx(x):.1f},{sy(y):.1f}")
            prev = y
        if len(coords) == 1:
            parts.append(f'<circle cx="{coords[0].split(",")[0]}" cy="{coords[0].split(",")[1]}" r="2.5" '
                         f'fill="{color}"/>')
        else:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{" ".join(coords)}">'
                         f'<title>{esc(name)}</title></polyline>')
        ly = TOP + 6 + 16 * k
        parts.append(f'<rect x="{W - RIGHT + 10}" y="{ly - 8}" width="12" height="3" fill="{color}"/>'
                     f'<text x="{W - RIGHT + 26}" y="{ly - 3}" class="legend">{esc(name)} ({_fmt(s[-1][1]) if s else 0})'
                     f'</text>')
    return _frame(title, css_id, "".join(parts))


def bar_chart(title: str, items: Sequence[Tuple[str, float]], unit: str = "", css_id: str = "") -> str:
    """Horizontal bars, one per ``(label, value)``, each labelled with its value and share of the total."""
    if not items:
        return _frame(title, css_id, f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" class="note">no data</text>')
    total = sum(v for _, v in items) or 1.0
    top = max(v for _, v in items) or 1.0
    bar_h = min(24.0, (H - TOP - 12) / len(items))
    left, width = 110, W - 110 - 150
    parts = []
    for k, (label, v) in enumerate(items):
        y = TOP + k * bar_h
        w = max(1.0, v / top * width)
        parts.append(f'<text x="{left - 6}" y="{y + bar_h * 0.65:.1f}" text-anchor="end" class="tick">{esc(label)}</text>'
                     f'<rect x="{left}" y="{y + 2:.1f}" width="{w:.1f}" height="{bar_h - 4:.1f}" '
                     f'fill="{PALETTE[k % len(PALETTE)]}"><title>{esc(label)}: {v:.4g}{esc(unit)}</title></rect>'
                     f'<text x="{left + w + 6:.1f}" y="{y + bar_h * 0.65:.1f}" class="tick">{v:.3g}{esc(unit)} '
                     f'({100 * v / total:.0f} %)</text>')
    return _frame(title, css_id, "".join(parts))


def _axes(xt, yt, sx, sy, xlabel, ylabel) -> str:
    out = []
    for t in yt:
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="grid"/>'
                   f'<text x="{LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" class="tick">{_fmt(t)}</text>')
    for t in xt:
        out.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{H - BOTTOM}" y2="{H - BOTTOM + 4}" class="axis"/>'
                   f'<text x="{sx(t):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" class="tick">{_fmt(t)}</text>')
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
