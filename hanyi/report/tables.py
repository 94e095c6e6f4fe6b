"""What a report section is made of (tables of strings, bar-plot specifications) and how a number is printed in one.

The report's views (:mod:`hanyi.report.build`, :mod:`hanyi.report.paper`, :mod:`hanyi.report.bias`,
:mod:`hanyi.report.retriever`) fill these; :mod:`hanyi.report.render` and :mod:`hanyi.report.plots` draw them. The
numbers themselves come from the results layer (:mod:`hanyi.results`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    caption: str = ""
    ours: list[int] = field(default_factory=list)  # indices of rows that are our runs (highlighted)
    plot: str | None = None  # name of the BarPlot drawn from this table, if any
    #: ``headline``, ``paper`` (the paper's main table with our rows), ``paired``: shown open; ``paper_more`` (the
    #: paper's other tables), ``comparison`` and ``category``: breakdowns, shown collapsed.
    kind: str = ""


@dataclass
class BarPlot:
    """``series`` = ``[(name, [value per category], is_ours)]``; one group of bars per category."""

    name: str
    title: str
    categories: list[str]
    series: list[tuple[str, list[float | None], bool]]
    ylabel: str = ""
    #: ``ranking``: one horizontal bar per category, ``highlight`` marks ours; ``grouped``: bars per series.
    kind: str = "grouped"
    highlight: list[bool] = field(default_factory=list)
    #: ``ranking``: the 95 % interval ``(low, high)`` of each bar, ``None`` where there is none (paper rows).
    errors: list = field(default_factory=list)


@dataclass
class Section:
    benchmark: str
    paper: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[BarPlot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: One dict per (run, paper number) compared: task, metric, paper row, values, ``comparable``, ``reasons``.
    comparisons: list[dict] = field(default_factory=list)
    #: One dict per (run, task, headline metric): value, 95 % interval (or why none), method.
    intervals: list[dict] = field(default_factory=list)
    #: With two runs: one dict per (task, headline metric) compared doc by doc (:func:`hanyi.results.stats.paired`).
    paired: list[dict] = field(default_factory=list)


def fmt(value, decimals: int | None = None) -> str:
    """A number for a table cell: 4 decimals for fractions, 2 otherwise; ``-`` for missing.

    >>> fmt(0.40404), fmt(40.404), fmt(None), fmt(3, 1), fmt(-0.5)
    ('0.4040', '40.40', '-', '3.0', '-0.5000')
    """
    if value is None or isinstance(value, dict):
        return "-"
    if decimals is None:
        decimals = 4 if abs(value) <= 1 else 2
    return f"{value:.{decimals}f}"


def fmt_diff(value: float | None, decimals: int = 2) -> str:
    """``+1.20`` / ``-0.35`` / ``-``.

    >>> fmt_diff(1.2), fmt_diff(-0.349), fmt_diff(None)
    ('+1.20', '-0.35', '-')
    """
    return "-" if value is None else f"{value:+.{decimals}f}"


#: A metric the run reported as NaN (or non-numeric): shown as such, never as a blank.
NAN_CELL = "NaN"
#: Every non-finite value a run can report, shown as JSON spells it (:func:`hanyi.results.runs.non_finite`).
NON_FINITE_CELLS = (NAN_CELL, "Infinity", "-Infinity")


def reported_cell(metric) -> str:
    """The cell of a metric the run reported as NaN or an infinity ("" for any other)."""
    if not getattr(metric, "nan", False):
        return ""
    return getattr(metric, "reported", "") or NAN_CELL


def value_cell(metric, ci: dict | None = None, count: bool = False) -> str:
    """``0.4444 [0.3100, 0.5800]`` with a 95 % interval, ``value ± stderr`` without one; counts as integers."""
    if metric is None or metric.value is None:
        return "-"
    if isinstance(metric.value, dict):
        return "(table)"
    if count:
        return f"{metric.value:.0f}" if float(metric.value).is_integer() else fmt(metric.value)
    text = fmt(metric.value)
    if ci and ci.get("ci_low") is not None:
        decimals = 4 if abs(metric.value) <= 1 else 2
        of = f" (n={ci['n']} of {ci['n_units']} docs)" if ci.get("n_units", ci.get("n")) != ci.get("n") else ""
        return f"{text} [{fmt(ci['ci_low'], decimals)}, {fmt(ci['ci_high'], decimals)}]{of}"
    return text if metric.stderr is None else f"{text} ± {fmt(metric.stderr)}"


def decimals_of(values: list[float | None]) -> int:
    """Decimals to print a paper column with: as many as its most precise value, 1 to 4.

    >>> decimals_of([40.4, 42.18, None]), decimals_of([0.3145]), decimals_of([]), decimals_of([0.4261660233])
    (2, 4, 2, 4)
    """
    digits = [len(repr(float(v)).split(".")[1].rstrip("0")) for v in values if v is not None]
    return min(4, max([1, *digits])) if digits else 2


def has_values(table: Table) -> bool:
    """Whether a table shows at least one number of ours (not only ``-`` or ``(table)``)."""
    cols = [i for i, h in enumerate(table.header) if "(ours" in h] or None
    for i, row in enumerate(table.rows):
        cells = row[1:] if cols is None else [row[c] for c in cols]
        if (cols is not None or i in table.ours or table.kind in ("headline", "paired")) and any(
            c not in ("-", "(table)", "n/c", "") for c in cells
        ):
            return True
    return False
