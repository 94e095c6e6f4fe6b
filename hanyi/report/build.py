"""Turn loaded runs into report sections: plain tables (header + rows of strings) and plot specifications.

Nothing here draws or writes; :mod:`hanyi.report.render` and :mod:`hanyi.report.plots` do. One :class:`Section` per
benchmark found in the results, in the order of :data:`hanyi.BENCHMARKS`:

* the headline table: every headline metric of every task (and group), one column per run, value ± stderr;
* one comparison per anchor link of a headline metric: the paper's rows and ours in the paper's unit, with the
  difference ours − paper;
* one table per category family (``acc_domain_*``), our runs beside selected paper rows of the linked table;
* notes: what could not be compared, runs made with ``--limit``.

Every comparison with a paper number is judged by :func:`hanyi.results.provenance.comparability` and recorded in
``Section.comparisons`` (``comparable`` + ``reasons``); a non-comparable one shows no Δ. Headline numbers get a 95 %
interval from the sample log (:mod:`hanyi.results.decomposed` for decomposed aggregations and groups,
:mod:`hanyi.results.stats` for per-doc means); with exactly two runs, ``Section.paired`` compares them doc by doc.
"""

from __future__ import annotations

from hanyi.report import bias, retriever
from hanyi.report.paper import category_table, comparison, paper_table
from hanyi.report.tables import (
    NON_FINITE_CELLS,
    BarPlot,
    Section,
    Table,
    fmt,
    fmt_diff,
    has_values,
    reported_cell,
    value_cell,
)
from hanyi.results import anchors as anchor_mod
from hanyi.results.comparability import shortlist_notes
from hanyi.results.layout import category_tables
from hanyi.results.measures import docs_scored, interval_of, is_count, metric_names, paired_records, tasks_by_benchmark
from hanyi.results.perdoc import metric_of as _metric
from hanyi.results.runs import Run
from hanyi.results.samples import judged_note

__all__ = ["BarPlot", "Section", "Table", "build_sections"]


def _arrow(runs: list[Run], task: str, name: str) -> str:
    for run in runs:
        m = _metric(run, task, name)
        if m is not None and m.higher_is_better is not None:
            return " ↑" if m.higher_is_better else " ↓"
    return ""


def headline_table(runs: list[Run], tasks: list[str], hints=None, intervals: list | None = None) -> Table:
    header = ["task", "metric", *[r.label for r in runs], "n"]
    rows, shown = [], []
    for task in tasks:
        head, _ = category_tables(metric_names(runs, task), hints)
        n = "/".join(dict.fromkeys(c for r in runs if task in r.tasks and (c := docs_scored(r.tasks[task]))))
        for name in head:
            cells = []
            for r in runs:
                count = is_count(r, task, name)
                ci = interval_of(r, task, name) if _metric(r, task, name) is not None else None
                if ci is not None and intervals is not None:
                    intervals.append(ci)
                shown.append(ci or {})
                judged = judged_note(r.tasks[task].samples, name) if task in r.tasks else ""  # partly judged
                cells.append(value_cell(_metric(r, task, name), ci, count) + judged)
            cells = [reported_cell(_metric(r, task, name)) or c for r, c in zip(runs, cells)]
            rows.append([task, name + _arrow(runs, task, name), *cells, n or "-"])
    kept = [r for r in rows if any(c not in ("-", "(table)") for c in r[2:-1]) or r[-1].startswith("0 (")]
    why = ""
    kinds = [k for k in NON_FINITE_CELLS if any(k in r[2:-1] for r in kept)]
    if kinds:  # a NaN or infinite row stays, with its reason
        every = all(c in ("-", "(table)", *NON_FINITE_CELLS) for r in kept for c in r[2:-1])
        said = " or ".join(kinds)
        why = (
            (
                f"No headline value: every headline metric of these tasks is {said}"
                if every
                else f"{' / '.join(kinds)}: the run reported {said}"
            )
            + ", so scoring or aggregation failed in the run (see its ERROR lines, and 'hanyi_error' in the sample "
            "log); fix the cause and re-score the sample log with the replay model (docs/when-things-go-wrong.md). "
        )
    return Table(
        "Headline metrics",
        header,
        kept,
        why
        + "value [95 % interval] from the sample log (exact Clopper-Pearson for shares of 0/1 scores, clustered by the "
        "design effect; else a seeded bootstrap over docs or clusters re-running the aggregation; groups and UNPIE's "
        "both-split values: stratified by subtask and split); (n=k of N docs): the value's denominator where it is not "
        "every doc; value ± standard error where only lmms-eval's is available; counts as integers; n = docs scored "
        "(0 with the reason when none was). Dict-valued metrics (confusion rows) have tables of their own."
        + cluster_note(shown),
        kind="headline",
    )


def cluster_note(records: list[dict]) -> str:
    """`` Clusters resampled: <task> by <key> (k of n docs), ...`` for the interval records that resampled clusters."""
    seen = {}
    for r in records:
        if r.get("cluster_key") and r.get("clusters") and r.get("task"):
            seen.setdefault(r["task"], f"{r['task']} by {r['cluster_key']} ({r['clusters']} clusters)")
    return f" Clusters resampled (the task's cluster_key): {', '.join(seen.values())}." if seen else ""


def power_table(runs: list[Run], records: list[dict]) -> Table | None:
    """Minimum detectable difference at 80 % power (two-sided, 5 %) of each headline number with an interval: the
    smallest true difference to another run of the same size that a comparison would detect 4 times in 5
    (:func:`hanyi.metrics.intervals.mdd` of √2 · its standard error)."""
    by = {(r["task"], r["metric"], r["run"]): r for r in records if r.get("mdd") is not None}
    keys = list(dict.fromkeys((t, m) for t, m, _ in by))
    if not keys:
        return None
    rows = []
    for task, metric in keys:
        cells = []
        for run in runs:
            r = by.get((task, metric, run.label))
            units = f"n={r['n']}" + (f", {r['clusters']} clusters" if r.get("cluster_key") else "") if r else ""
            cells.append(f"{fmt(r['mdd'])} ({units})" if r else "-")
        rows.append([task, metric.split(",")[0], *cells])
    return Table(
        "Power: minimum detectable differences",
        ["task", "metric", *[r.label for r in runs]],
        rows,
        "The smallest true difference to another run of the same size that a two-sided test at 5 % detects with 80 % "
        "power: (z 0.975 + z 0.8) · √2 · SE (Cohen 1988; independent runs: pairing on the same docs can only lower it; "
        "SE clustered where the task sets a cluster_key). A difference smaller than this is one these docs could "
        "easily miss; the paired table marks the comparisons below their own MDD.",
        kind="power",
    )


def dict_tables(runs: list[Run], task: str) -> list[Table]:
    """Dict-valued metrics of ``task`` as tables, one per run and family: the rows of a matrix named
    ``<base>_<row>`` (Pun Rebus's ``wrong_answer_confusion_A`` ... ``_G``: row = true option, column = responded
    option), each cell the count, in the order the results (or the sample-log breakdown) give them."""
    out = []
    for run in runs:
        result = run.tasks.get(task)
        families: dict[str, dict[str, dict]] = {}
        for name, metric in (result.metrics if result else {}).items():
            if isinstance(metric.value, dict):
                base, _, row = name.rpartition("_")
                families.setdefault(base or name, {})[row if base else name] = metric.value
        for base, rows in families.items():
            columns = list(dict.fromkeys(str(k) for row in rows.values() for k in row))
            title = f"{task} · {base}" + (f" ({run.label})" if len(runs) > 1 else "")
            body = [[label, *(str(row.get(c, "-")) for c in columns)] for label, row in rows.items()]
            note = f"Rows: the last word of each metric name ({base}_<row>); columns: the keys of its value."
            out.append(Table(title, ["row", *columns], body, note, kind="category"))
    return out


def build_sections(runs: list[Run], anchors_dir: str = anchor_mod.ANCHORS_DIR) -> list[Section]:
    sections = []
    for bench, tasks in tasks_by_benchmark(runs).items():
        data = anchor_mod.load_anchor_file(bench, anchors_dir) or {}
        section = Section(bench, data.get("paper", ""))
        hints = data.get("categories") or []
        display = {k: v for hint in hints for k, v in hint["labels"].items()}
        section.tables.append(headline_table(runs, tasks, hints, section.intervals))
        power = power_table(runs, section.intervals)
        if power is not None:
            section.tables.append(power)
        stage1 = retriever.stage1_table(runs, tasks)
        if stage1 is not None:
            section.tables.append(stage1)
        section.notes += shortlist_notes(runs, tasks)
        linked_any = False
        all_links: list[anchor_mod.Link] = []
        empty = 0
        for task in tasks:
            names = metric_names(runs, task)
            head, families = category_tables(names, hints)
            variants = {r.tasks[task].prompt_variant for r in runs if task in r.tasks}
            variant = variants.pop() if len(variants) == 1 else None
            if len(variants) > 0:
                section.notes.append(f"{task} ran with different prompt variants: no prompt-specific paper rows.")
            links = anchor_mod.links_for(bench, task, names, anchors_dir, variant)
            all_links += links
            linked_any |= bool(links)
            pairs = []
            for link in links:
                if link.metric in head:
                    pairs.append(comparison(runs, link, section.comparisons))
            for (base, dim), cells in families.items():
                pairs.append(category_table(runs, task, base, dim, cells, links, display, section.comparisons))
            for table, plot in pairs:
                if not has_values(table):
                    empty += 1
                    continue
                if any(v is not None for _, vals, _ in plot.series for v in vals):
                    table.plot = plot.name
                    section.plots.append(plot)
                section.tables.append(table)
            section.tables += dict_tables(runs, task)
        for table_dict in data.get("tables") or []:
            shaped = paper_table(runs, table_dict, [lk for lk in all_links if lk.table is table_dict])
            if shaped is not None:
                n_paper = sum(t.kind in ("paper", "paper_more") for t in section.tables)
                shaped.kind = "paper" if n_paper == 0 else "paper_more"  # the first is the main table: shown open
                section.tables.insert(1 + n_paper, shaped)
        if empty:
            section.notes.append(f"{empty} breakdown table(s) left out: no value of ours in them (e.g. all N/A).")
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
        if len(runs) == 2:
            section.paired = paired_records(runs, tasks, hints, section.notes)
            if section.paired:
                section.tables.insert(1, paired_table(runs, section.paired))
        sections.append(section)
    return sections


def paired_table(runs: list[Run], records: list[dict]) -> Table:
    a, b = runs[0].label, runs[1].label
    header = ["task", "metric", "docs", a, b, f"{b} − {a}", "95 % CI", "McNemar p", "at 0.05", "MDD (80 %)"]
    rows = []
    for r in records:
        p = r.get("mcnemar_p")
        rows.append(
            [
                r["task"],
                r["metric"],
                str(r["n_pairs"])
                + (f" ({r['clusters']} clusters)" if r.get("clusters", r["n_pairs"]) < r["n_pairs"] else ""),
                fmt(r["mean_a"]),
                fmt(r["mean_b"]),
                fmt_diff(r["difference"], 4 if abs(r["mean_a"]) <= 1 and abs(r["mean_b"]) <= 1 else 2),
                f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
                "-" if p is None else f"{p:.4g}",
                "significant" if r["significant"] else "not significant",
                "-" if r.get("mdd") is None else fmt(r["mdd"]) + (" (difference below it)" if r["below_mdd"] else ""),
            ]
        )
    return Table(
        kind="paired",
        title=f"Paired comparison: {b} vs. {a}",
        header=header,
        rows=rows,
        caption="Docs scored by both runs, matched by task and doc id. 95 % CI: paired bootstrap over docs, or over "
        "the clusters the task's cluster_key names (seeded). McNemar p: exact two-sided binomial test on the discordant "
        "docs (0/1 scores only; with clusters, Durkalski et al. 2003's clustered McNemar); without it, significance "
        "means the CI excludes 0. MDD: the minimum difference detectable at 80 % power with these pairs, "
        "(z 0.975 + z 0.8) · SE of the difference; a difference below it is one these docs could easily miss."
        + cluster_note(records),
    )
