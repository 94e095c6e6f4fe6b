"""PNG bar charts with matplotlib (the ``report`` extra): our runs among the paper's models.

Uses matplotlib's object API with the Agg canvas (no pyplot, no display, no global state). A missing matplotlib is
reported by :func:`available`, and the report is then written without plots.
"""

from __future__ import annotations

import io

from hanyi.report.tables import BarPlot

OURS_COLORS = ("#d1495b", "#00798c", "#edae49", "#66a182", "#8d6a9f")
PAPER_COLORS = ("#5d6d7e", "#85929e", "#aeb6bf", "#d5d8dc")
DPI = 90
PAPER_BAR = "#a6acaf"
#: Length of the stub that draws a bar whose value is 0.0, as a share of the value axis; a missing value is "n/a".
ZERO_STUB = 0.01
#: Approximate width of one tick-label character at font size 8, in inches.
CHAR_INCHES = 0.075


def rotate_labels(labels: list[str], axis_inches: float) -> bool:
    """Whether x tick labels must be slanted: only when the longest does not fit the room of one category.

    >>> rotate_labels(list("ABCDEFG"), 4.6), rotate_labels(["a long model label"] * 12, 9.0)
    (False, True)
    """
    longest = max((len(c) for c in labels), default=0)
    return longest * CHAR_INCHES > 0.9 * axis_inches / max(1, len(labels))


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _ranking(plot: BarPlot):
    values = plot.series[0][1]
    n = len(values)
    fig = _figure(7.5, 0.9 + 0.28 * n)
    ax = fig.add_subplot(1, 1, 1)
    y = list(range(n))[::-1]
    ours_seen = 0
    colors = []
    for is_ours in plot.highlight:
        colors.append(OURS_COLORS[ours_seen % len(OURS_COLORS)] if is_ours else PAPER_BAR)
        ours_seen += bool(is_ours)
    ax.barh(y, values, color=colors, height=0.7)
    for yi, v, err in zip(y, values, plot.errors or []):
        if err is not None:  # our 95 % interval
            xerr = [[max(0.0, v - err[0])], [max(0.0, err[1] - v)]]
            ax.errorbar([v], [yi], xerr=xerr, fmt="none", ecolor="black", elinewidth=1.0, capsize=3)
    ax.set_yticks(y)
    ax.set_yticklabels(plot.categories, fontsize=8)
    for tick, is_ours in zip(ax.get_yticklabels(), plot.highlight):
        if is_ours:
            tick.set_fontweight("bold")
    highs = [e[1] for e in plot.errors or [] if e is not None]
    top = max([v for v in values if v is not None] + highs or [1])
    ends = [max(v, e[1]) if e is not None else v for v, e in zip(values, plot.errors or [None] * n)]
    for yi, v, end in zip(y, values, ends):
        ax.text(max(end, top * ZERO_STUB * 1.3) + top * 0.01, yi, f"{v:.4g}", va="center", fontsize=7)  # past a stub
    ax.set_xlim(min(0, min(values)), top * 1.15 if top > 0 else 1)
    stub = ZERO_STUB * (ax.get_xlim()[1] - ax.get_xlim()[0])
    for yi, v, color in zip(y, values, colors):
        if v == 0:  # a zero-length bar is invisible, like a missing one: a stub in the bar's colour (labelled 0)
            ax.barh([yi], [stub], color=color, height=0.7, gid="zero-stub")
    ax.set_xlabel(plot.ylabel, fontsize=8)
    ax.set_title(plot.title, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    longest = max((len(c) for c in plot.categories), default=10)
    fig.subplots_adjust(
        left=min(0.5, 0.04 + 0.0125 * longest),
        right=0.97,
        top=1 - 0.45 / fig.get_figheight(),
        bottom=0.5 / fig.get_figheight(),
    )
    return fig


def _grouped(plot: BarPlot):
    n_cat, n_ser = len(plot.categories), len(plot.series)
    fig = _figure(max(8.0, min(14.0, 3.0 + 0.55 * n_cat * max(1, n_ser) ** 0.5)), 3.6)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, n_ser)
    ours_i = paper_i = 0
    zeros, missing = [], []
    for j, (name, values, is_ours) in enumerate(plot.series):
        if is_ours:
            color, ours_i = OURS_COLORS[ours_i % len(OURS_COLORS)], ours_i + 1
        else:
            color, paper_i = PAPER_COLORS[paper_i % len(PAPER_COLORS)], paper_i + 1
        xs = [i - 0.4 + width * (j + 0.5) for i in range(n_cat)]
        ax.bar(
            xs,
            [0 if v is None else v for v in values],
            width,
            label=name,
            color=color,
            edgecolor="white",
            linewidth=0.3,
        )
        zeros += [(x, color) for x, v in zip(xs, values) if v == 0]
        missing += [x for x, v in zip(xs, values) if v is None]
    flat = [v for _, values, _ in plot.series for v in values if v is not None]
    low, high = min([0.0, *flat]), max([0.0, *flat])
    ax.set_ylim(low, high * 1.08 if high > 0 else 1.0)
    stub = ZERO_STUB * (ax.get_ylim()[1] - ax.get_ylim()[0])
    for x, color in zeros:  # a zero-height bar is invisible, like a missing one: a stub in the bar's colour, "0"
        ax.bar([x], [stub], width, color=color, gid="zero-stub")
        ax.text(x, stub, "0", ha="center", va="bottom", fontsize=6)
    for x in missing:
        ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=6, color="#5d6d7e")
    ax.set_xticks(range(n_cat))
    slant = rotate_labels(plot.categories, fig.get_figwidth() * (0.76 - 0.1))  # one-letter labels stay upright
    ax.set_xticklabels(plot.categories, rotation=30 if slant else 0, ha="right" if slant else "center", fontsize=8)
    ax.set_ylabel(plot.ylabel, fontsize=8)
    ax.set_title(plot.title, fontsize=9)
    ax.legend(fontsize=7, frameon=False, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    fig.subplots_adjust(left=0.1, right=0.76, top=0.9, bottom=0.28 if slant else 0.14)
    return fig


def render_png(plot: BarPlot) -> bytes:
    """The PNG bytes of one plot. Labels are plain text: a ``$`` in a model or task name is not mathtext."""
    import matplotlib

    with matplotlib.rc_context({"text.parse_math": False}):
        fig = _ranking(plot) if plot.kind == "ranking" else _grouped(plot)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.15)  # no label clipped
    return buf.getvalue()
