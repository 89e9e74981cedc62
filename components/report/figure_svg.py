"""A laid-out report figure as SVG bytes, drawn once.

- Text stays <text> (svg.fonttype none): no glyph outlines to build, and drawing text is
  most of a figure's time. Ids are hashed with a fixed salt and the metadata has no date
  and no creator, so the same figure gives the same bytes.
- Drawn once: fig.tight_layout() leaves a placeholder layout engine on the figure, and
  with any engine savefig draws the whole figure once more before drawing it for real;
  the layout is done, so the engine is dropped.
- At the figure's own size, which tight_layout fits every panel's tick labels, axis
  labels and titles into, unless a title, a legend or a text sticks out of it (a legend
  centred under a narrow panel, a suptitle wider than the figure): then the saved area
  grows to hold it, PAD to spare, as bbox_inches="tight" would have (which measures every
  artist of the figure again: a tenth of a second over the demo's 8 figures).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

EXT = ".svg"
SVG_PARAMS: dict[Any, Any] = {"svg.fonttype": "none", "svg.hashsalt": "ablate"}
PAD = 0.1  # inches beyond what sticks out (savefig's pad_inches)


def figure_bytes(fig) -> bytes:
    """The figure (laid out) as SVG bytes; the figure is closed."""
    area = saved_area(fig)
    fig.set_layout_engine(None)  # tight_layout's placeholder: no second draw
    buf = io.BytesIO()
    with matplotlib.rc_context(SVG_PARAMS):
        fig.savefig(buf, format="svg", bbox_inches=area, metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return buf.getvalue()


def saved_area(fig) -> Bbox | None:
    """None (the figure's own area) when its titles, legends and texts are inside it, else
    the area (inches) grown to hold them, PAD beyond, on the sides they stick out of.
    Measured with the figure's own renderer, whose text sizes tight_layout has cached."""
    renderer = fig.canvas.get_renderer()
    to_inches = fig.dpi_scale_trans.inverted()
    boxes = [a.get_window_extent(renderer).transformed(to_inches) for a in _loose_artists(fig)]
    w, h = fig.get_size_inches()
    x0, y0 = min((b.x0 for b in boxes), default=0.0), min((b.y0 for b in boxes), default=0.0)
    x1, y1 = max((b.x1 for b in boxes), default=w), max((b.y1 for b in boxes), default=h)
    if x0 >= 0 and y0 >= 0 and x1 <= w and y1 <= h:
        return None
    return Bbox.from_extents(x0 - PAD if x0 < 0 else 0.0, y0 - PAD if y0 < 0 else 0.0,
                             x1 + PAD if x1 > w else w, y1 + PAD if y1 > h else h)


def _loose_artists(fig) -> list:
    """What tight_layout may leave outside the figure: its texts (the suptitle among them)
    and legends, and each panel's title, legend and texts."""
    out = [*fig.texts, *fig.legends]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        out += [ax.title, *ax.texts]
        if ax.get_legend() is not None:
            out.append(ax.get_legend())
    return [a for a in out if a.get_visible() and (not hasattr(a, "get_text") or a.get_text())]
