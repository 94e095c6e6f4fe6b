"""Turn loaded runs into report sections: plain tables (header + rows of strings) and plot specifications.

Nothing here draws or writes; :mod:`hanyi.report.render` and :mod:`hanyi.report.plots` do. One :class:`Section` per
benchmark found in the results, in the order of :data:`hanyi.BENCHMARKS`:

* the headline table: every headline metric of every task (and group), one column per run, value ± stderr;
* one comparison per anchor link of a headline metric: the paper's rows and ours in the paper's unit, with the
  difference ours − paper;
* one table per category family (``acc_domain_*``), our runs beside selected paper rows of the linked table;
* notes: what could not be compared, runs made with ``--limit``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hanyi import BENCHMARKS
from hanyi.report import anchors as anchor_mod
from hanyi.report import bias
from hanyi.report.layout import category_tables
from hanyi.report.results import Run, benchmark_of, parents_of

#: How many paper rows a category table and plot show beside our runs.
MAX_PAPER_ROWS = 4


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    caption: str = ""
    ours: list[int] = field(default_factory=list)  # indices of rows that are our runs (highlighted)


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


@dataclass
class Section:
    benchmark: str
    paper: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[BarPlot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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


def _value_cell(metric) -> str:
    if metric is None:
        return "-"
    if isinstance(metric.value, dict):
        return "(table)"
    text = fmt(metric.value)
    return text if metric.stderr is None else f"{text} ± {fmt(metric.stderr)}"


def tasks_by_benchmark(runs: list[Run]) -> dict[str, list[str]]:
    """``{benchmark: [task names]}`` over every run: groups first, then tasks, each sorted."""
    found: dict[str, set[str]] = {}
    groups: set[str] = set()
    for run in runs:
        parents = parents_of(run)
        for name, task in run.tasks.items():
            bench = benchmark_of(name, parents)
            if task.is_group and len(task.subtasks) == 1 and task.subtasks[0] in run.tasks:
                continue  # a one-task group repeats its task's numbers
            if bench:
                found.setdefault(bench, set()).add(name)
                if task.is_group:
                    groups.add(name)
    return {b: sorted(found[b], key=lambda t: (t not in groups, t)) for b in BENCHMARKS if b in found}


def _metric_names(runs: list[Run], task: str) -> list[str]:
    names: list[str] = []
    for run in runs:
        for name in run.tasks.get(task).metrics if task in run.tasks else ():
            if name not in names:
                names.append(name)
    return names


def _metric(run: Run, task: str, name: str):
    t = run.tasks.get(task)
    return t.metrics.get(name) if t else None


def _arrow(runs: list[Run], task: str, name: str) -> str:
    for run in runs:
        m = _metric(run, task, name)
        if m is not None and m.higher_is_better is not None:
            return " ↑" if m.higher_is_better else " ↓"
    return ""


def headline_table(runs: list[Run], tasks: list[str], hints=None) -> Table:
    header = ["task", "metric", *[r.label for r in runs], "n"]
    rows = []
    for task in tasks:
        head, _ = category_tables(_metric_names(runs, task), hints)
        n = "/".join(sorted({str(r.tasks[task].n) for r in runs if task in r.tasks and r.tasks[task].n is not None}))
        for name in head:
            cells = [_value_cell(_metric(r, task, name)) for r in runs]
            rows.append([task, name + _arrow(runs, task, name), *cells, n or "-"])
    return Table(
        "Headline metrics", header, rows, "value ± standard error where lmms-eval reports one; n = docs scored"
    )


def comparison(runs: list[Run], link: anchor_mod.Link) -> tuple[Table, BarPlot]:
    """The paper's rows for ``link`` with ours among them (sorted by value), and a bar plot of the same."""
    decimals = _decimals([row.value for row in link.rows()])
    ours = [(r.label, link.to_paper_unit(getattr(_metric(r, link.task, link.metric), "value", None))) for r in runs]
    entries = [(row.model, row.value, False) for row in link.rows()]
    entries += [(f"{label} (ours)", value, True) for label, value in ours]
    entries.sort(key=lambda e: (e[1] is None, -(e[1] or 0)))
    header = ["model", link.column, *[f"Δ {label}" for label, _ in ours]]
    rows, marked = [], []
    for i, (model, value, is_ours) in enumerate(entries):
        diffs = [
            fmt_diff(o - value if o is not None and value is not None and not is_ours else None, decimals)
            for _, o in ours
        ]
        rows.append([model, fmt(value, decimals), *diffs])
        if is_ours:
            marked.append(i)
    title = f"{link.task} · {link.metric} vs. {link.cite}, “{link.column}”"
    caption = f"{link.table.get('caption', '')} Δ = ours − paper, in the paper's unit ({link.table.get('unit', '')})."
    if link.excludes_rows:
        caption += (
            f" Only paper rows produced by {link.task} with prompt variant {link.variant or '(unknown)'} are shown;"
            " rows from other tasks or prompts are not comparable."
        )
    if link.table.get("note"):
        caption += f" Note: {link.table['note']}"
    table = Table(title, header, rows, caption.strip(), marked)
    shown = [e for e in entries if e[1] is not None]
    plot = BarPlot(
        name=f"{link.task}__{link.metric}__{link.table['id']}",
        title=f"{link.task}: {link.metric} vs. {link.cite}",
        categories=[e[0] for e in shown],
        series=[(link.column, [e[1] for e in shown], False)],
        ylabel=link.column,
        kind="ranking",
        highlight=[e[2] for e in shown],
    )
    return table, plot


def _decimals(values: list[float | None]) -> int:
    """Decimals to print a paper column with: as many as its most precise value, 1 to 4.

    >>> _decimals([40.4, 42.18, None]), _decimals([0.3145]), _decimals([]), _decimals([0.4261660233])
    (2, 4, 2, 4)
    """
    digits = [len(repr(float(v)).split(".")[1].rstrip("0")) for v in values if v is not None]
    return min(4, max([1, *digits])) if digits else 2


def _pick_rows(rows_by_model: dict[str, list[float | None]], k: int = MAX_PAPER_ROWS) -> list[str]:
    """Up to ``k`` paper rows spanning the table: human rows, then best, median and worst by mean.

    >>> _pick_rows({"a": [1.0], "b": [3.0], "c": [2.0], "Human_avg": [9.0], "d": [None]}, 4)
    ['Human_avg', 'b', 'c', 'a']
    """
    means = {
        m: sum(v for v in vals if v is not None) / max(1, sum(v is not None for v in vals))
        for m, vals in rows_by_model.items()
        if any(v is not None for v in vals)
    }
    ranked = sorted(means, key=lambda m: -means[m])
    human = [m for m in ranked if "human" in m.lower()]
    others = [m for m in ranked if m not in human]
    picks = human[:1]
    if others:
        for idx in (0, len(others) // 2, len(others) - 1):
            if others[idx] not in picks:
                picks.append(others[idx])
    return picks[:k]


def category_table(runs, task, base, dim, cells, links, display=None) -> tuple[Table, BarPlot]:
    """Our runs (and linked paper rows) per category label; ``display`` maps labels to printed names."""
    by_metric = {link.metric: link for link in links}
    linked = [by_metric.get(name) for _, name in cells]
    any_link = next((lk for lk in linked if lk is not None), None)
    display = display or {}
    labels = [lk.column if lk is not None else display.get(label, label) for (label, _), lk in zip(cells, linked)]
    ours = []
    for run in runs:
        vals = []
        for (_, name), lk in zip(cells, linked):
            m = _metric(run, task, name)
            v = m.value if m is not None and not isinstance(m.value, dict) else None
            vals.append(lk.to_paper_unit(v) if lk is not None else v)
        ours.append((run.label, vals))
    paper: list[tuple[str, list[float | None]]] = []
    if any_link is not None:
        rows_by_model: dict[str, list[float | None]] = {}
        for lk in linked:
            values = {r.model: r.value for r in lk.rows()} if lk is not None else {}
            for model in [r.model for r in any_link.rows()]:
                rows_by_model.setdefault(model, []).append(values.get(model))
        paper = [(m, rows_by_model[m]) for m in _pick_rows(rows_by_model)]
    header = [dim, *[f"{label} (ours)" for label, _ in ours], *paper_names(paper)]
    rows = []
    for i, label in enumerate(labels):
        rows.append([label, *[fmt(vals[i]) for _, vals in ours], *[fmt(vals[i]) for _, vals in paper]])
    title = f"{task} · {base} by {dim}"
    caption = ""
    if any_link is not None:
        caption = (
            f"Paper columns: {any_link.cite} ({any_link.table.get('unit', '')}); ours converted to the paper's unit."
        )
    plot = BarPlot(
        name=f"{task}__{base}__{dim}",
        title=f"{task}: {base} by {dim}",
        categories=labels,
        series=[(f"{label} (ours)", vals, True) for label, vals in ours] + [(m, vals, False) for m, vals in paper],
        ylabel=base,
    )
    return Table(title, header, rows, caption), plot


def paper_names(paper) -> list[str]:
    return [f"{m} (paper)" for m, _ in paper]


def build_sections(runs: list[Run], anchors_dir: str = anchor_mod.ANCHORS_DIR) -> list[Section]:
    sections = []
    for bench, tasks in tasks_by_benchmark(runs).items():
        data = anchor_mod.load_anchor_file(bench, anchors_dir) or {}
        section = Section(bench, data.get("paper", ""))
        hints = data.get("categories") or []
        display = {k: v for hint in hints for k, v in hint["labels"].items()}
        section.tables.append(headline_table(runs, tasks, hints))
        linked_any = False
        for task in tasks:
            names = _metric_names(runs, task)
            head, families = category_tables(names, hints)
            variants = {r.tasks[task].prompt_variant for r in runs if task in r.tasks}
            variant = variants.pop() if len(variants) == 1 else None
            if len(variants) > 0:
                section.notes.append(f"{task} ran with different prompt variants: no prompt-specific paper rows.")
            links = anchor_mod.links_for(bench, task, names, anchors_dir, variant)
            linked_any |= bool(links)
            for link in links:
                if link.metric in head:
                    table, plot = comparison(runs, link)
                    section.tables.append(table)
                    section.plots.append(plot)
            for (base, dim), cells in families.items():
                table, plot = category_table(runs, task, base, dim, cells, links, display)
                section.tables.append(table)
                section.plots.append(plot)
        if not data:
            section.notes.append(f"No anchor table ships for {bench}; values are shown without paper numbers.")
        elif not linked_any:
            section.notes.append(
                f"None of these tasks/metrics is mapped to a paper table in hanyi/anchors/{bench}.yaml "
                "(no paper number measures the same thing, or the map needs an update)."
            )
        bias.add_sections(section, runs, tasks)  # beyond the papers: position bias, prompt sensitivity
        for run in runs:
            if run.limit not in (None, "", 0):
                section.notes.append(f"{run.label} was run with --limit {run.limit}: not comparable to the paper.")
        sections.append(section)
    return sections
