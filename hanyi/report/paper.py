"""The papers' numbers beside ours in the report: one ranking per anchor link of a headline metric, one table per
category family with selected paper rows, and each paper table as printed with our rows added.

A Δ is shown only where the comparison is comparable (:mod:`hanyi.results.comparability`); every comparison made is
recorded with its ``comparable`` and ``reasons``.
"""

from __future__ import annotations

from hanyi.report.tables import BarPlot, Table, decimals_of, fmt, fmt_diff
from hanyi.results import anchors as anchor_mod
from hanyi.results import provenance as prov_mod
from hanyi.results.comparability import anchor_fields, provenance_of, row_reasons, run_mark
from hanyi.results.measures import interval_of
from hanyi.results.perdoc import metric_of as _metric
from hanyi.results.runs import Run

#: How many paper rows a category table and plot show beside our runs.
MAX_PAPER_ROWS = 4


def comparison_record(run: str, link, *, name: str, model: str, paper: float, ours: float, ok: bool, reasons) -> dict:
    """One comparison of ours with a paper number, as ``Section.comparisons`` and ``report.json`` hold it (the
    difference only where it is comparable)."""
    return {
        "run": run,
        "task": link.task,
        "metric": name,
        "table": link.table.get("id"),
        "cite": link.cite,
        "column": link.column,
        "paper_model": model,
        "paper_value": paper,
        "ours": ours,
        "difference": round(ours - paper, 10) if ok else None,
        "comparable": ok,
        "reasons": reasons,
    }


def comparison(runs: list[Run], link: anchor_mod.Link, records: list | None = None) -> tuple[Table, BarPlot]:
    """The paper's rows for ``link`` with ours among them (sorted by value), and a bar plot of the same.

    A Δ is shown only where the comparison is comparable; ``records`` receives one dict per (run, paper row).
    """
    decimals = decimals_of([row.value for row in link.rows()])
    ours = [(r.label, link.to_paper_unit(getattr(_metric(r, link.task, link.metric), "value", None))) for r in runs]
    provs = [provenance_of(r, link.task) for r in runs]
    run_level = [run_mark(p, link) for p in provs]
    entries = [(row.model, row.value, False) for row in link.rows()]
    entries += [
        (f"{label} (ours)" + ("" if ok else f" ⚠ {prov_mod.short_reason(reasons)}"), value, True)
        for (label, value), (ok, reasons) in zip(ours, run_level)
    ]
    entries.sort(key=lambda e: (e[1] is None, -(e[1] or 0)))
    header = ["model", link.column, *[f"Δ {label}" for label, _ in ours]]
    rows, marked = [], []
    for i, (model, value, is_ours) in enumerate(entries):
        diffs = []
        for (label, o), prov in zip(ours, provs):
            if is_ours or o is None or value is None:
                diffs.append("-")
                continue
            ok, reasons = prov_mod.comparability(prov, link.metric, anchor_fields(link, model))
            diffs.append(fmt_diff(o - value, decimals) if ok else "n/c")
            if records is not None:
                records.append(
                    comparison_record(
                        label, link, name=link.metric, model=model, paper=value, ours=o, ok=ok, reasons=reasons
                    )
                )
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
    for (label, _), (ok, reasons) in zip(ours, run_level):
        if not ok:
            caption += f" {label}: not comparable, so no Δ (n/c): {'; '.join(reasons)}."
    if link.table.get("note"):
        caption += f" Note: {link.table['note']}"
    table = Table(title, header, rows, caption.strip(), marked, kind="comparison")
    shown = [e for e in entries if e[1] is not None]
    plot = BarPlot(
        name=f"{link.task}__{link.metric}__{link.table['id']}",
        title=f"{link.task}: {link.metric} vs. {link.cite}",
        categories=[e[0].split(" ⚠ ")[0] + (" ⚠ n/c" if " ⚠ " in e[0] else "") for e in shown],
        series=[(link.column, [e[1] for e in shown], False)],
        ylabel=link.column + " (ours: 95 % interval)",
        kind="ranking",
        highlight=[e[2] for e in shown],
        errors=[_interval_in_paper_unit(runs, link, e[0]) if e[2] else None for e in shown],
    )
    return table, plot


def _interval_in_paper_unit(runs: list[Run], link: anchor_mod.Link, label: str) -> tuple[float, float] | None:
    """The 95 % interval of our bar ``label`` (``<run> (ours)...``) in the paper's unit, or ``None``."""
    run = next((r for r in runs if label.startswith(f"{r.label} (ours)")), None)
    m = None if run is None else _metric(run, link.task, link.metric)
    if m is None or m.value is None or isinstance(m.value, dict):
        return None
    ci = interval_of(run, link.task, link.metric)
    if ci.get("ci_low") is None:
        return None
    factor = (link.to_paper_unit(m.value) or 0.0) / m.value if m.value else None
    if factor is None:
        return None
    return ci["ci_low"] * factor, ci["ci_high"] * factor


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


def category_table(runs, task, base, dim, cells, links, display=None, records=None) -> tuple[Table, BarPlot]:
    """Our runs (and linked paper rows) per category label; ``display`` maps labels to printed names.

    ``records`` receives one comparability record per (run, linked cell, paper row), as :func:`comparison` does."""
    by_metric = {link.metric: link for link in links}
    linked = [by_metric.get(name) for _, name in cells]
    if records is not None:
        for run in runs:
            prov = provenance_of(run, task)
            for (_, name), lk in zip(cells, linked):
                m = _metric(run, task, name)
                ours = None if lk is None or m is None or isinstance(m.value, dict) else lk.to_paper_unit(m.value)
                if ours is None:
                    continue
                for row in lk.rows():
                    if row.value is None:
                        continue
                    ok, reasons = prov_mod.comparability(prov, name, anchor_fields(lk, row.model))
                    records.append(
                        comparison_record(
                            run.label,
                            lk,
                            name=name,
                            model=row.model,
                            paper=row.value,
                            ours=ours,
                            ok=ok,
                            reasons=reasons,
                        )
                    )
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
    marks = []
    for run in runs:
        ok, reasons = run_mark(provenance_of(run, task), any_link) if any_link else (True, [])
        marks.append("" if ok or any_link is None else f" ⚠ {prov_mod.short_reason(reasons)}")
    header = [dim, *[f"{label} (ours){mark}" for (label, _), mark in zip(ours, marks)], *paper_names(paper)]
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
    return Table(title, header, rows, caption, kind="category"), plot


def paper_names(paper) -> list[str]:
    return [f"{m} (paper)" for m, _ in paper]


def paper_table(runs: list[Run], table: dict, links: list[anchor_mod.Link]) -> Table | None:
    """The paper's table as printed (its columns, units and row order), our runs added as marked rows at the end:
    one row per (run, task) with a value for each column that task maps, in the paper's unit. ``None`` when no run
    has a value for it.

    Comparability is decided per paper row, from the task, prompt variant, judge, doc count and setting that
    produced it (:func:`anchor_fields`): each paper row says whether our rows compare with it, and each of our rows
    with how many paper rows it compares."""
    columns = list(table["columns"])
    by_task: dict[str, list[anchor_mod.Link]] = {}
    for link in links:
        by_task.setdefault(link.task, []).append(link)
    decimals = [decimals_of([row["values"][i] for row in table["rows"]]) for i in range(len(columns))]
    ours = []
    for run in runs:
        for task, task_links in by_task.items():
            cells = ["-"] * len(columns)
            for link in task_links:
                m = _metric(run, task, link.metric)
                value = None if m is None or isinstance(m.value, dict) else link.to_paper_unit(m.value)
                if value is not None:
                    i = columns.index(link.column)
                    cells[i] = fmt(value, decimals[i])
            if any(c != "-" for c in cells):
                ours.append((run, task, task_links, cells))
    if not ours:
        return None
    verdicts = [[row_reasons(run, task, tl, row) for run, task, tl, _ in ours] for row in table["rows"]]
    reasons: list[str] = []  # every reason once, numbered: the footnotes the marks point to

    def mark(why: list[str] | None) -> str:
        if why is None:
            return "-"
        reasons.extend(r for r in why if r not in reasons)
        numbers = sorted(reasons.index(r) + 1 for r in why)
        return f"⚠ not comparable [{', '.join(map(str, numbers))}]" if why else "✓ comparable"

    rows = []
    for row, per_ours in zip(table["rows"], verdicts):
        values = [fmt(v, d) if v is not None else "-" for v, d in zip(row["values"], decimals)]
        rows.append([row["model"], *values, *map(mark, per_ours)])
    marked = []
    for j, (run, task, _, cells) in enumerate(ours):
        found = [v[j] for v in verdicts if v[j] is not None]
        ok = sum(1 for why in found if not why)
        own = ["" for _ in ours]
        own[j] = f"{'✓' if ok else '⚠'} comparable with {ok or 'none'} of {len(found)} paper rows" if found else "-"
        marked.append(len(rows))
        rows.append([f"{run.label} (ours, {task})", *cells, *own])
    caption = f"{table.get('caption', '')} Unit: {table.get('unit', '')}. Our rows (bold) in the paper's unit."
    caption += " The last columns, one per run and task of ours, say per paper row whether that row of ours compares"
    caption += " with it (same task, prompt variant, judge, doc count and setting): ✓, or ⚠ with the numbers of its"
    caption += " reasons below ('-': no column in common); on our own row, with how many paper rows."
    if reasons:
        caption += " Reasons: " + "; ".join(f"[{i}] {r}" for i, r in enumerate(reasons, 1)) + "."
    if table.get("note"):
        caption += f" Note: {table['note']}"
    runs_shown = {run.label for run, *_ in ours}
    marks = [
        f"comparable: {task}" if len(runs_shown) == 1 else f"comparable: {run.label}, {task}" for run, task, *_ in ours
    ]
    header = ["model", *columns, *(marks if len(ours) > 1 else ["comparable"])]
    return Table(
        f"{table.get('cite', table['id'])} as in the paper, with ours", header, rows, caption, marked, None, "paper"
    )
