"""Plots as PNG bytes, drawn with matplotlib's Agg canvas (no pyplot state, no display, no fonts
fetched). The PNGs carry no timestamp or software stamp, so the same run gives the same bytes."""
from __future__ import annotations

import base64
import functools
import io

CMAP = "YlGnBu"


def _figure(w: float, h: float):
    from harness.core.paths import matplotlib_home  # noqa: PLC0415 - lazy: only a plot needs it

    matplotlib_home()
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import
    from matplotlib.figure import Figure  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import

    fig = Figure(figsize=(w, h), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None}, bbox_inches="tight")
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    """A ``data:`` URI for embedding a PNG in HTML."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def cost_chart(costs: list, labels: dict[str, str]) -> bytes:
    """Three horizontal bar panels: judge calls, tokens and judge latency per answer."""
    names = [labels.get(c.metric, c.metric) for c in costs][::-1]
    panels = [("judge calls / answer", [c.calls for c in costs][::-1], "{:.1f}"),
              ("tokens / answer", [c.tokens for c in costs][::-1], "{:,.0f}"),
              ("judge latency / answer (ms)", [c.latency_ms for c in costs][::-1], "{:,.0f}")]
    fig = _figure(11, 0.7 + 0.34 * max(1, len(costs)))
    for k, (title, vals, fmt) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.barh(range(len(vals)), vals, color="#3b7dbf")
        top = max(vals) if vals and max(vals) > 0 else 1
        for y, v in enumerate(vals):
            ax.text(v + top * 0.02, y, fmt.format(v), va="center", fontsize=7.5)
        ax.set_xlim(0, top * 1.3)
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels(names if k == 0 else [""] * len(vals), fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)
    fig.subplots_adjust(wspace=0.08)
    return _png(fig)


@functools.lru_cache(maxsize=4096)
def score_style(v: float) -> str:
    """Inline background for a score cell (the heatmap's colour map)."""
    from harness.core.paths import matplotlib_home  # noqa: PLC0415 - lazy: only a plot needs it

    matplotlib_home()
    from matplotlib import colormaps  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import
    from matplotlib.colors import to_hex  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import

    c = colormaps[CMAP](0.1 + 0.85 * max(0.0, min(1.0, v)))
    return f"background:{to_hex(c)};color:{'#fff' if v > 0.55 else '#000'}"
