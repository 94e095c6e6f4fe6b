"""Charts of the board as inline SVG: no script, no image request (the pages' policy allows neither), each with a
title, a description and a text alternative that says every number, and readable without colour (marks and labels,
never colour alone, carry the meaning).

* :func:`rank_interval_chart`: a section's rows, one line each from the lowest to the highest rank of its 95 %
  interval with a dot at the point rank (as LMArena draws its confidence intervals);
* :func:`bar_chart`: a model's scores per category, a bar with its interval as a whisker and the value as text.
"""

from __future__ import annotations

import html


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def rank_interval_chart(ident: str, title: str, rows: list[tuple[str, int, int | None, int | None]]) -> str:
    """``rows``: ``(name, rank, rank_low, rank_high)``, in rank order. An empty string for fewer than two rows."""
    rows = [r for r in rows if r[1] is not None]
    if len(rows) < 2:
        return ""
    n = max(max(r[3] or r[1] for r in rows), max(r[1] for r in rows))
    label_w, plot_w, line_h, top = 210, 420, 22, 28
    height = top + line_h * len(rows) + 10
    x = lambda rank: label_w + 10 + (rank - 1) * plot_w / max(1, n - 1)  # noqa: E731
    out = [
        f'<figure class="chart"><div class="svg"><svg role="img" aria-labelledby="{_e(ident)}-t {_e(ident)}-d" '
        f'viewBox="0 0 {label_w + plot_w + 40} {height}" width="{label_w + plot_w + 40}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="14">',
        f'<title id="{_e(ident)}-t">{_e(title)}</title>',
    ]
    desc = "; ".join(
        f"{name}: rank {rank}" + (f", 95 % interval {lo} to {hi}" if lo is not None else "")
        for name, rank, lo, hi in rows
    )
    out.append(f'<desc id="{_e(ident)}-d">{_e(desc)}</desc>')
    for k in sorted({1, n, *range(1, n + 1, max(1, n // 10))}):
        out.append(f'<line x1="{x(k):.1f}" x2="{x(k):.1f}" y1="{top - 6}" y2="{height - 8}" stroke="#ddd"/>')
        out.append(f'<text x="{x(k):.1f}" y="{top - 10}" text-anchor="middle" fill="#333">{k}</text>')
    for j, (name, rank, lo, hi) in enumerate(rows):
        y = top + line_h * j + line_h / 2
        short = name if len(name) <= 26 else name[:25] + "\u2026"
        out.append(f'<text x="{label_w}" y="{y + 5:.1f}" text-anchor="end" fill="#222">{_e(short)}</text>')
        if lo is not None and hi is not None:
            out.append(
                f'<line x1="{x(lo):.1f}" x2="{x(hi):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#1f4e79" stroke-width="3"/>'
            )
            for end in (lo, hi):
                out.append(f'<line x1="{x(end):.1f}" x2="{x(end):.1f}" y1="{y - 6:.1f}" y2="{y + 6:.1f}" stroke="#1f4e79" stroke-width="2"/>')  # fmt: skip
        out.append(f'<circle cx="{x(rank):.1f}" cy="{y:.1f}" r="5" fill="#fff" stroke="#000" stroke-width="2"/>')
    out.append("</svg></div>")
    out.append(
        f"<figcaption>{_e(title)}. Each line runs from the best to the worst rank of the row's 95 % interval; "
        "the circle is its rank. Rows whose lines overlap are not told apart by the data.</figcaption></figure>"
    )
    return "".join(out)


def bar_chart(ident: str, title: str, bars: list[tuple[str, float, float | None, float | None]], top: float) -> str:
    """``bars``: ``(label, value, low, high)`` in one unit whose scale ends at ``top`` (100 for percent)."""
    bars = [b for b in bars if b[1] is not None]
    if not bars or top <= 0:
        return ""
    label_w, plot_w, line_h, head = 200, 380, 24, 10
    height = head + line_h * len(bars) + 24
    x = lambda v: label_w + 10 + max(0.0, min(v, top)) * plot_w / top  # noqa: E731
    out = [
        f'<figure class="chart"><div class="svg"><svg role="img" aria-labelledby="{_e(ident)}-t {_e(ident)}-d" '
        f'viewBox="0 0 {label_w + plot_w + 90} {height}" width="{label_w + plot_w + 90}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="14">',
        f'<title id="{_e(ident)}-t">{_e(title)}</title>',
        f'<desc id="{_e(ident)}-d">'
        + _e(
            "; ".join(
                f"{label}: {value:.1f}" + (f" [{low:.1f}, {high:.1f}]" if low is not None else "")
                for label, value, low, high in bars
            )
        )
        + "</desc>",
    ]
    for j, (label, value, low, high) in enumerate(bars):
        y = head + line_h * j
        short = label if len(label) <= 24 else label[:23] + "\u2026"
        out.append(f'<text x="{label_w}" y="{y + 16}" text-anchor="end" fill="#222">{_e(short)}</text>')
        out.append(f'<rect x="{label_w + 10}" y="{y + 4}" width="{x(value) - label_w - 10:.1f}" height="14" fill="#9fc5e8" stroke="#1f4e79"/>')  # fmt: skip
        if low is not None and high is not None:
            out.append(f'<line x1="{x(low):.1f}" x2="{x(high):.1f}" y1="{y + 11}" y2="{y + 11}" stroke="#000" stroke-width="2"/>')  # fmt: skip
        out.append(f'<text x="{label_w + plot_w + 16}" y="{y + 16}" fill="#222">{value:.1f}</text>')
    axis = head + line_h * len(bars) + 4
    out.append(f'<line x1="{label_w + 10}" x2="{label_w + 10 + plot_w}" y1="{axis}" y2="{axis}" stroke="#555"/>')
    for v in (0, top / 2, top):
        out.append(f'<text x="{x(v):.1f}" y="{axis + 16}" text-anchor="middle" fill="#333">{v:g}</text>')
    out.append(
        f"</svg></div><figcaption>{_e(title)}. Bar: the value; black line: its 95 % interval; the number at the right "
        "end is the value.</figcaption></figure>"
    )
    return "".join(out)
