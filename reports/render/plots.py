"""Plots as PNG bytes, drawn with matplotlib's Agg canvas (no pyplot state, no display, no fonts
fetched). The PNGs carry no timestamp or software stamp, so the same run gives the same bytes."""
from __future__ import annotations

import base64
import functools
import io
import math

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


def svg_text(fig, title: str = "") -> str:
    """The figure as an SVG document without the XML prolog (so it can stand inline in HTML too). Glyphs are
    drawn as paths, so the text looks as matplotlib measured it when it placed the labels; no date, no
    creator, fixed ids: the same figure gives the same bytes. ``title`` becomes the SVG's ``<title>`` and
    ``aria-label``."""
    from matplotlib import rc_context  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import

    buf = io.StringIO()
    with rc_context({"svg.hashsalt": "groundedness-harness", "svg.fonttype": "path", "svg.id": None}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight",
                    pad_inches=0.08)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    if title:
        from harness.reports.render.markup import e  # noqa: PLC0415 - the one escaper

        head = text.index(">") + 1
        text = (text[:head - 1] + f' role="img" aria-label="{e(title)}">' + f"<title>{e(title)}</title>"
                + text[head:])
    return text


def _overlaps(a, b, pad: float = 0.0) -> bool:
    """Do two boxes (x0, y0, x1, y1) intersect, ``pad`` pixels apart counting as touching?

    >>> _overlaps((0, 0, 10, 10), (10.5, 0, 20, 10)), _overlaps((0, 0, 10, 10), (10.5, 0, 20, 10), pad=1)
    (False, True)
    """
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _crosses(b, seg, pad: float = 0.0) -> bool:
    """Does the segment ``seg`` ((x0, y0), (x1, y1)) pass through box ``b`` grown by ``pad`` (Liang-Barsky
    clipping)?

    >>> _crosses((0, 0, 10, 10), ((-5, 5), (15, 5))), _crosses((0, 0, 10, 10), ((-5, 12), (15, 12)))
    (True, False)
    >>> _crosses((0, 0, 10, 10), ((-5, 12), (15, 12)), pad=3)
    True
    """
    (x0, y0), (x1, y1) = seg
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - (b[0] - pad)), (dx, (b[2] + pad) - x0), (-dy, y0 - (b[1] - pad)), (dy, (b[3] + pad) - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


def _free(b, inner, taken, lines, pad: float) -> bool:
    """Is box ``b`` inside ``inner`` and clear of every box of ``taken`` and every segment of ``lines``?"""
    inside = b[0] >= inner[0] and b[1] >= inner[1] and b[2] <= inner[2] and b[3] <= inner[3]
    return (inside and not any(_overlaps(b, o, pad) for o in taken)
            and not any(_crosses(b, seg, pad) for seg in lines))


def _extents(bbox) -> tuple[float, float, float, float]:
    return (bbox.x0, bbox.y0, bbox.x1, bbox.y1)


def _leader(p, b) -> tuple:
    """The leader line from point ``p`` to the nearest point of box ``b``, stopped short of both ends (the
    point's marker and the text are not crossed).

    >>> _leader((0, 0), (10, 0, 20, 5))
    ((5.0, 0.0), (8.0, 0.0))
    """
    cx, cy = min(max(p[0], b[0]), b[2]), min(max(p[1], b[1]), b[3])
    d = math.hypot(cx - p[0], cy - p[1]) or 1.0
    ux, uy = (cx - p[0]) / d, (cy - p[1]) / d
    return ((p[0] + ux * 5, p[1] + uy * 5), (cx - ux * 2, cy - uy * 2))


def _directions(ring: int) -> list[tuple[float, float]]:
    """Unit directions tried on ring ``ring`` (0 = next to the point), in a fixed order: the four diagonals
    first (a label beside its point reads best there), then more as the ring grows so the spacing along it
    stays about even.

    >>> [(round(x, 2), round(y, 2)) for x, y in _directions(0)][:2]
    [(0.87, 0.5), (-0.87, 0.5)]
    """
    first = [30, 150, -30, -150, 0, 180, 90, -90]
    k = max(8, 4 * (ring + 1))
    more = [round(360 * i / k) for i in range(k)]
    angles = first + [a if a <= 180 else a - 360 for a in more if (a if a <= 180 else a - 360) not in first]
    return [(math.cos(math.radians(a)), math.sin(math.radians(a))) for a in angles]


def _align(dx: float, dy: float) -> tuple[str, str]:
    """Horizontal and vertical alignment that keep a label on the far side of its point."""
    ha = "left" if dx > 0.2 else "right" if dx < -0.2 else "center"
    va = "bottom" if dy > 0.2 else "top" if dy < -0.2 else "center"
    return ha, va


CROWD = 4
"""Points this many or more close together (within 42 pt of each other, in a chain) get their labels in a
column beside them (:func:`place_labels`)."""


def place_labels(ax, items: list[tuple[float, float, str]], avoid: list | None = None, lines: list | None = None,
                 soft: list | None = None, fontsize: float = 9, color: str = "#222", leader: str = "#9aa5b1") -> list:
    """Put each text of ``items`` ((x, y, text) in data coordinates) near its point, where its box as the
    renderer measures it meets no other label, no point (every point of ``items`` is kept clear), no box of
    ``avoid`` (display pixels: x0, y0, x1, y1) and no segment of ``lines`` or ``soft`` (display pixels:
    (x0, y0), (x1, y1)), and stays inside the axes; a column of step 2 may cross a ``soft`` line (each label
    sits on a white ground, so the line passes behind it). Every step runs in a fixed order, so the same items give the same
    places:

    1. the labels of each crowd (:data:`CROWD` or more points close together) stacked in a column beside it
       (the nearest free place, right of it or left), in the order of their points' heights, each with a
       leader line that crosses no label;
    2. in the order given, every other label right beside its point (the four diagonals, then the sides),
       or one step out with a short leader line; those left over in columns by cluster, as in step 1;
    3. a label no column can take walks rings of growing radius around its point, then a scan of the whole
       axes; were the axes full, it stays beside its point (the only case where labels can meet).

    Returns the label ``Text`` artists, in the order of ``items`` (what a test measures)."""
    fig = ax.figure
    r = fig.canvas.get_renderer()
    pt = fig.dpi / 72.0
    box = _extents(ax.get_window_extent(r))
    to_px = ax.transData.transform
    to_data = ax.transData.inverted().transform
    pxs = [tuple(to_px((x, y))) for x, y, _ in items]
    mark = 4.5 * pt
    taken = [(px - mark, py - mark, px + mark, py + mark) for px, py in pxs] + list(avoid or [])
    segs = list(lines or [])
    soft = list(soft or [])
    placed: list = []
    gap, step, pad = 7.5 * pt, 7 * pt, 1.5 * pt
    inner = (box[0] + 2 * pt, box[1] + 2 * pt, box[2] - 2 * pt, box[3] - 2 * pt)
    ground = {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"}
    texts = [ax.text(x, y, text, fontsize=fontsize, color=color, zorder=5, bbox=ground) for x, y, text in items]
    sizes = [(b.width, b.height) for b in (t.get_window_extent(r) for t in texts)]

    def guess(i, ax_, ay, ha, va):
        w, h = sizes[i]
        x0 = ax_ if ha == "left" else ax_ - w if ha == "right" else ax_ - w / 2
        y0 = ay if va == "bottom" else ay - h if va == "top" else ay - h / 2
        return (x0, y0, x0 + w, y0 + h)

    def clear(b, led, i, others=(), hard=True) -> bool:
        """Box ``b`` free, and (``led``) the leader from point ``i`` to it crossing no label; ``hard``: the
        soft lines count too."""
        if not _free(b, inner, taken, segs, pad) or any(_overlaps(b, o, pad) for o in others):
            return False
        if hard and any(_crosses(b, seg, pad) for seg in soft):
            return False
        return not led or not any(_crosses(o, _leader(pxs[i], b)) for o in (*placed, *others))

    def put(i, ax_, ay, ha, va):
        """Move label ``i`` there; the box the renderer measures."""
        t = texts[i]
        t.set_position(tuple(to_data((ax_, ay))))
        t.set_ha(ha)
        t.set_va(va)
        return _extents(t.get_window_extent(r))

    def commit(i, b, led):
        if led:
            seg = _leader(pxs[i], b)
            (x0, y0), (x1, y1) = to_data(seg[0]), to_data(seg[1])
            ax.plot([x0, x1], [y0, y1], color=leader, lw=0.6, zorder=4)
            segs.append(seg)
        taken.append(b)
        placed.append(b)

    def near(i, rings) -> bool:
        px, py = pxs[i]
        for ring in rings:
            rad = gap + ring * step
            for dx, dy in _directions(ring):
                ha, va = _align(dx, dy)
                a = (px + dx * rad, py + dy * rad)
                if clear(guess(i, *a, ha, va), ring > 0, i):
                    b = put(i, *a, ha, va)
                    if clear(b, ring > 0, i):
                        commit(i, b, ring > 0)
                        return True
        return False

    def column(group) -> bool:
        """Stack the labels of ``group`` (top point first) in a column beside its points."""
        hs = [sizes[i][1] for i in group]
        tall = sum(hs) + 2 * pad * (len(group) - 1)
        mid = sum(pxs[i][1] for i in group) / len(group)
        shifts = [0.0] + [s * k * step for k in range(1, int((inner[3] - inner[1]) / step) + 1) for s in (1, -1)]
        right = max(pxs[i][0] for i in group) + 3 * step   # a column right of the points (labels aligned left)
        left = min(pxs[i][0] for i in group) - 3 * step    # ... or left of them (labels aligned right)
        edges = [(k * step, "left", right + k * step) for k in range(int((inner[2] - right) / step) + 1)]
        edges += [(k * step, "right", left - k * step) for k in range(int((left - inner[0]) / step) + 1)]
        tries = sorted(((dx + abs(dy), n, side, edge, dy) for n, (dx, side, edge) in enumerate(edges)
                        for dy in shifts), key=lambda c: (c[0], c[1], c[4]))
        for _, _, side, edge, shift in tries:   # the nearest place first
            top = min(inner[3], max(inner[1] + tall, mid + tall / 2 + shift))
            boxes, y = [], top
            for i, h in zip(group, hs):
                boxes.append(guess(i, edge, y, side, "top"))
                y -= h + 2 * pad
            if all(clear(b, True, i, boxes[:k], False) for k, (i, b) in enumerate(zip(group, boxes))):
                real, y = [], top
                for i, h in zip(group, hs):
                    real.append(put(i, edge, y, side, "top"))
                    y -= h + 2 * pad
                if all(clear(b, True, i, real[:k], False) for k, (i, b) in enumerate(zip(group, real))):
                    for i, b in zip(group, real):
                        commit(i, b, True)
                    return True
        return False

    def anywhere(i) -> None:
        if near(i, range(0, int(math.hypot(box[2] - box[0], box[3] - box[1]) / step) + 1, 3)):
            return
        w, h = sizes[i]
        gy = inner[3]
        while gy - h >= inner[1]:   # a scan of the axes, row by row
            gx = inner[0]
            while gx + w <= inner[2]:
                if clear(guess(i, gx, gy, "left", "top"), True, i):
                    b = put(i, gx, gy, "left", "top")
                    if clear(b, True, i):
                        commit(i, b, True)
                        return
                gx += step
            gy -= step
        commit(i, put(i, *pxs[i], "left", "bottom"), False)   # the axes are full: beside the point

    def columns(idx: list[int]) -> None:
        for group in _clusters([pxs[i] for i in idx], 6 * step):
            group = sorted((idx[k] for k in group), key=lambda i: (-pxs[i][1], items[i][2]))
            if not column(group):
                for i in group:
                    anywhere(i)

    crowds = [g for g in _clusters(pxs, 6 * step) if len(g) >= CROWD]
    for g in crowds:   # the crowds' columns first: they need the most room
        columns(g)
    crowd = {i for g in crowds for i in g}
    columns([i for i in range(len(items)) if i not in crowd and not near(i, (0, 1))])
    return texts


def _clusters(points: list[tuple[float, float]], reach: float) -> list[list[int]]:
    """Indices of ``points`` grouped by single linkage (points within ``reach`` of each other, directly or
    through others, share a group), in order of each group's first point.

    >>> _clusters([(0, 0), (50, 0), (5, 0), (54, 3)], 10)
    [[0, 2], [1, 3]]
    """
    groups: list[list[int]] = []
    for i, p in enumerate(points):
        near = [g for g in groups if any(math.hypot(p[0] - points[j][0], p[1] - points[j][1]) <= reach for j in g)]
        merged = sorted([i] + [j for g in near for j in g])
        groups = [g for g in groups if g not in near] + [merged]
    return sorted(groups, key=lambda g: g[0])


def _fit_note(n_by: list[int]) -> str:
    """How many answers a per-answer figure is averaged over.

    >>> _fit_note([24, 24]), _fit_note([20, 24]), _fit_note([])
    ('n = 24 answers per metric', 'n = 20 to 24 answers per metric', '')
    """
    if not n_by:
        return ""
    lo, hi = min(n_by), max(n_by)
    return f"n = {lo:,} answers per metric" if lo == hi else f"n = {lo:,} to {hi:,} answers per metric"


def _short(v: float) -> str:
    """A tick value in few characters.

    >>> _short(0), _short(2.5), _short(150), _short(1500), _short(25000), _short(2_500_000)
    ('0', '2.5', '150', '1.5k', '25k', '2.5M')
    """
    if abs(v) >= 1e6:
        return f"{v / 1e6:g}M"
    if abs(v) >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def cost_figure(costs: list, labels: dict[str, str]):
    """The cost chart as a matplotlib figure: three horizontal bar panels (judge calls, tokens and judge
    latency per answer), one row per metric, each bar's value written after it and the x range widened
    until every value fits inside its panel (measured by the renderer)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import

    names = [labels.get(c.metric, c.metric) for c in costs][::-1]
    panels = [("judge calls / answer", [c.calls for c in costs][::-1], "{:.1f}"),
              ("tokens / answer", [c.tokens for c in costs][::-1], "{:,.0f}"),
              ("judge latency / answer (ms)", [c.latency_ms for c in costs][::-1], "{:,.0f}")]
    rows = max(1, len(costs))
    fig = _figure(12, 1.3 + 0.36 * rows)
    fig.subplots_adjust(left=0.17, right=0.97, wspace=0.16, top=1 - 0.75 / (1.3 + 0.36 * rows),
                        bottom=0.45 / (1.3 + 0.36 * rows))
    note = _fit_note([c.answers for c in costs])
    fig.suptitle("Judge cost per answer, by metric" + (f" ({note})" if note else ""), fontsize=12, x=0.17,
                 ha="left", y=1 - 0.12 / (1.3 + 0.36 * rows), va="top")
    r = fig.canvas.get_renderer()
    for k, (title, vals, fmt) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.barh(range(len(vals)), vals, color="#3b7dbf", height=0.7)
        ax.set_ylim(-0.6, len(vals) - 0.4)
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels(names if k == 0 else [""] * len(vals), fontsize=10)
        ax.set_title(title, fontsize=11)
        ax.tick_params(axis="x", labelsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _short(v)))
        for s in ("top", "right"):
            ax.spines[s].set_visible(False)
        top = max(vals) if vals and max(vals) > 0 else 1.0
        texts = [ax.text(v + top * 0.02, y, fmt.format(v), va="center", fontsize=9.5) for y, v in enumerate(vals)]
        width = ax.get_window_extent(r).width
        hi = top * 1.05
        for v, t in zip(vals, texts):   # the axis must reach past the widest value label
            share = (t.get_window_extent(r).width + 4) / width
            hi = max(hi, (v + top * 0.02) / max(0.05, 1 - share))
        ax.set_xlim(0, hi)
    return fig


def cost_chart(costs: list, labels: dict[str, str]) -> bytes:
    """The cost chart (:func:`cost_figure`) as PNG bytes."""
    return _png(cost_figure(costs, labels))


@functools.lru_cache(maxsize=4096)
def score_style(v: float) -> str:
    """Inline background for a score cell (the heatmap's colour map)."""
    from harness.core.paths import matplotlib_home  # noqa: PLC0415 - lazy: only a plot needs it

    matplotlib_home()
    from matplotlib import colormaps  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import
    from matplotlib.colors import to_hex  # noqa: PLC0415 - lazy: matplotlib costs ~0.5 s to import

    c = colormaps[CMAP](0.1 + 0.85 * max(0.0, min(1.0, v)))
    return f"background:{to_hex(c)};color:{'#fff' if v > 0.55 else '#000'}"
