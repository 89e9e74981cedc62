"""Report figures as SVG (ablate.components.report.figure_svg): drawn once, text as text,
at the figure's size unless something sticks out of it, and then nothing is cut off."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import polars as pl
import pytest
from matplotlib.figure import Figure

from ablate.components.report import plots
from ablate.components.report.figure_svg import PAD, figure_bytes, saved_area
from ablate.components.report.overview import forest_figure
from ablate.components.report.plots import variable_figure

TOL = 0.02  # inches


def _size_pt(svg: bytes) -> tuple[float, float]:
    m = re.search(rb'<svg [^>]*width="([0-9.]+)pt" height="([0-9.]+)pt"', svg)
    assert m is not None
    return float(m.group(1)), float(m.group(2))


def _narrow_panel_with_a_wide_legend() -> Figure:
    """cost_plot's layout: a legend of many entries centred under a narrow panel."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6, 2.5))
    for i in range(6):
        ax1.barh([0, 1], [1, 2], label=f"stage_{i}")
    ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False, ncol=6)
    ax2.plot([0, 1], [0, 1])
    fig.tight_layout()
    return fig


def _nothing_cut_off(fig: Figure) -> None:
    """Every artist of the figure (its whole tight box) lies in the area saved."""
    area = saved_area(fig)
    w, h = fig.get_size_inches()
    x0, y0, x1, y1 = (0.0, 0.0, w, h) if area is None else area.extents
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    assert (tight.x0 >= x0 - TOL and tight.y0 >= y0 - TOL and tight.x1 <= x1 + TOL
            and tight.y1 <= y1 + TOL), (tight.extents, (x0, y0, x1, y1))
    plt.close(fig)


def test_a_laid_out_figure_is_drawn_once(monkeypatch):
    draws = []
    real = Figure.draw

    def counted(self, renderer):
        draws.append(type(renderer).__name__)
        return real(self, renderer)
    monkeypatch.setattr(Figure, "draw", counted)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    ax.set_title("a title")
    fig.tight_layout()  # leaves a placeholder layout engine, which savefig draws for
    svg = figure_bytes(fig)
    assert draws == ["MixedModeRenderer"]  # savefig's SVG renderer, no other draw
    assert b">a title</text>" in svg and _size_pt(svg) == (216.0, 144.0)


def test_a_legend_that_sticks_out_grows_the_saved_area():
    fig = _narrow_panel_with_a_wide_legend()
    legend = fig.axes[0].get_legend().get_window_extent(fig.canvas.get_renderer())
    area = saved_area(fig)
    assert area is not None and area.x0 < 0 < legend.x1  # it stuck out on the left
    assert area.x0 == pytest.approx(legend.x0 / fig.dpi - PAD)
    assert (area.y1, area.x1) == (2.5, 6.0)  # nothing stuck out above or on the right
    _nothing_cut_off(fig)
    width, height = _size_pt(figure_bytes(_narrow_panel_with_a_wide_legend()))
    assert width > 6 * 72 and height >= 2.5 * 72


@pytest.mark.parametrize("metrics", [["answer/f1"], ["answer/f1", "final/recall_at_5"],
                                     ["answer/f1", "final/recall_at_5", "final/mrr", "answer/em"]])
def test_nothing_of_a_report_figure_is_cut_off(metrics, monkeypatch):
    """One key metric gives a panel narrower than the suptitle; long values wrap."""
    points = [("baseline", "{fusion: 0.5, semantic: 0.5}"), ("v1", "{fusion: 0.3, semantic: 0.7}"),
              ("v2", "bm25")]
    rows = {(v, m): {"variant": v, "metric": m, "delta": 0.01 * i, "ci_low": -0.02, "ci_high": 0.05,
                     "significant": i == 2} for i, (v, _) in enumerate(points) for m in metrics}
    means = {("baseline", m): 0.5 for m in metrics}
    _nothing_cut_off(variable_figure("rerank.weights", points, metrics, means, rows))
    variables = {"rerank.weights": points, "a.very_long_variable_name_indeed": [("v3", "x" * 50)]}
    _nothing_cut_off(forest_figure(variables, metrics, rows))
    figures: list[Figure] = []
    monkeypatch.setattr(plots, "figure_bytes", lambda fig: figures.append(fig) or b"")
    order = [v for v, _ in points]
    per_query = pl.DataFrame({"variant": order * 2, "bucket": ["ok", "retrieval_miss"] * 3,
                              "tokens/in": [500.0] * 6, "tokens/out": [20.0] * 6})
    timings = pl.DataFrame({"variant": order, **{f"latency/stage_{i}": [0.1] * 3 for i in range(7)}})
    plots.buckets_plot(per_query, order)
    plots.cost_plot(per_query, timings, order)
    for fig in figures:
        _nothing_cut_off(fig)
