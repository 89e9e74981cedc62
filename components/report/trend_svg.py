"""The trend page (`trend.html`): per metric a hand-made SVG (no matplotlib, no script) of
each run's mean with its interval as a whisker, the means joined in run order, a run whose
step from the one before is significantly worse drawn red (class `worse`), better green;
then the trend's table (trend_text.trend_markdown). The page is the report's
self-contained HTML (components/report/html.py: inline CSS, plots as data URIs, nothing
fetched). Deterministic: the same table gives the same bytes."""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

import polars as pl

from ablate.components.report.html import render_html
from ablate.components.report.numbers import finite, fmt, fmt_signed
from ablate.components.report.plots import BASE_COLOR, DOWN, UP, VAR_COLOR
from ablate.components.report.trend_text import WORDS, trend_markdown

W, H = 640, 250
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 30, 52
INSET = 24  # the first and last runs this far inside the axes
MAX_LABELS = 12  # beyond this many runs, every k-th run is labelled
COLORS = {"worse": DOWN, "better": UP}
LEGEND = ("whiskers: 95% intervals; red: significantly worse than the run before, green: "
          "better (paired on their common questions)")


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _range(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    values = [float(r[k]) for r in rows for k in ("mean", "ci_low", "ci_high") if finite(r.get(k))]
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 if hi > lo else max(0.05, abs(hi) * 0.05)
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    raw = (hi - lo) / max(1, count - 1)
    step = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * step:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step) + 1)]


def _tip(row: dict[str, Any]) -> str:
    text = (f"run {row['run']} ({row.get('created') or ''}): {fmt(row.get('mean'))} "
            f"[{fmt(row.get('ci_low'))}, {fmt(row.get('ci_high'))}]")
    if finite(row.get("delta")):
        text += f"; Δ {fmt_signed(row['delta'])} {WORDS.get(str(row.get('verdict')), '')}"
    return text


def trend_svg(rows_frame: pl.DataFrame) -> str:
    """One metric's runs (rows of the trend table) as an SVG element."""
    rows = rows_frame.sort("run").to_dicts()
    lo, hi = _range(rows)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(i: int) -> float:
        inner = pw - 2 * INSET
        return LEFT + INSET + (inner / 2 if len(rows) == 1 else inner * i / (len(rows) - 1))

    def y(v: float) -> float:
        return TOP + ph * (hi - v) / (hi - lo)

    title = f"{rows[0]['metric']} ({rows[0]['variant']})" if rows else ""
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11" role="img">',
           f"<title>{_e(title)} across runs</title>",
           f'<text x="{LEFT}" y="18" font-size="13" font-weight="600">{_e(title)}</text>']
    for t in _ticks(lo, hi):
        ty = y(t)
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#d0d7de"/>'
                   f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{_e(fmt(t))}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + ph}" stroke="{BASE_COLOR}"/>')
    means = [(x(i), y(float(r["mean"]))) for i, r in enumerate(rows) if finite(r.get("mean"))]
    if len(means) > 1:
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in means)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{VAR_COLOR}" stroke-width="1.5"/>')
    every = math.ceil(len(rows) / MAX_LABELS)
    for i, r in enumerate(rows):
        cx = x(i)
        if (len(rows) - 1 - i) % every == 0:  # the newest run always labelled
            out.append(f'<text x="{cx:.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">run {r["run"]}</text>'
                       f'<text x="{cx:.1f}" y="{H - BOTTOM + 32}" text-anchor="middle" fill="{BASE_COLOR}">'
                       f"{_e(str(r.get('created') or '')[:10])}</text>")
        if not finite(r.get("mean")):
            continue
        kind = str(r.get("verdict")) if r.get("verdict") in COLORS else "run"
        color = COLORS.get(kind, VAR_COLOR)
        if finite(r.get("ci_low")) and finite(r.get("ci_high")):
            out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(float(r["ci_low"])):.1f}" '
                       f'y2="{y(float(r["ci_high"])):.1f}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<circle class="{kind}" cx="{cx:.1f}" cy="{y(float(r["mean"])):.1f}" r="4.5" '
                   f'fill="{color}"><title>{_e(_tip(r))}</title></circle>')
    out.append(f'<text x="{LEFT}" y="{H - 4}" font-size="10" fill="{BASE_COLOR}">{_e(LEGEND)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def trend_page(table: pl.DataFrame, experiment: str) -> str:
    """trend.html: the plots and the table of the trend of `experiment`."""
    metrics = table["metric"].unique(maintain_order=True).to_list() if table.height else []
    plots = {m: f"plots/trend-{i}.svg" for i, m in enumerate(metrics)}
    images = {plots[m]: trend_svg(table.filter(pl.col("metric") == m)).encode("utf-8")
              for m in metrics}
    body = f"# ablate trend: {experiment}\n\n" + trend_markdown(table, plots)
    return render_html(body, f"ablate trend: {experiment}", images)
