"""Turn loaded runs into report sections: plain tables (header + rows of strings) and plot specifications.

Nothing here draws or writes; :mod:`hanyi.report.render` and :mod:`hanyi.report.plots` do. One :class:`Section` per
benchmark found in the results, in the order of :data:`hanyi.BENCHMARKS`:

* the headline table: every headline metric of every task (and group), one column per run, value ± stderr;
* one comparison per anchor link of a headline metric: the paper's rows and ours in the paper's unit, with the
  difference ours − paper;
* one table per category family (``acc_domain_*``), our runs beside selected paper rows of the linked table;
* notes: what could not be compared, runs made with ``--limit``.

Every comparison with a paper number is judged by :func:`hanyi.report.provenance.comparability` and recorded in
``Section.comparisons`` (``comparable`` + ``reasons``); a non-comparable one shows no Δ. Headline numbers get a 95 %
interval from the sample log (:mod:`hanyi.report.decomposed` for decomposed aggregations and groups,
:mod:`hanyi.report.stats` for per-doc means); with exactly two runs, ``Section.paired`` compares them doc by doc.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hanyi import BENCHMARKS
from hanyi.report import anchors as anchor_mod
from hanyi.report import bias, decomposed, stats
from hanyi.report import provenance as prov_mod
from hanyi.report.layout import category_tables
from hanyi.report.perdoc import doc_clusters, doc_hashes, per_doc  # noqa: F401  (the per-doc layer; importable here)
from hanyi.report.perdoc import metric_of as _metric
from hanyi.report.results import Run, benchmark_of, parents_of
from hanyi.report.samples import judged_note

#: How many paper rows a category table and plot show beside our runs.
MAX_PAPER_ROWS = 4


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
    #: With two runs: one dict per (task, headline metric) compared doc by doc (:func:`hanyi.report.stats.paired`).
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
#: Every non-finite value a run can report, shown as JSON spells it (:func:`hanyi.report.results.non_finite`).
NON_FINITE_CELLS = (NAN_CELL, "Infinity", "-Infinity")


def _reported(metric) -> str:
    """The cell of a metric the run reported as NaN or an infinity ("" for any other)."""
    if not getattr(metric, "nan", False):
        return ""
    return getattr(metric, "reported", "") or NAN_CELL


def _value_cell(metric, ci: dict | None = None, count: bool = False) -> str:
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


#: Aggregation names that make a metric a count (printed as an integer, never as a rate, no interval).
COUNT_AGGREGATIONS = ("sum", "count")


#: Metric-name endings of hanyi's counts, for results whose config does not say (and for aggregations named ``agg``).
COUNT_SUFFIXES = ("_failures", "_unscored", "_unresolved", "_count")


def is_count(run: Run, task: str, name: str) -> bool:
    """Whether ``name`` is a count: its ``metric_list`` aggregation (as lmms-eval logged it) sums or counts, or its
    name ends like one of :data:`COUNT_SUFFIXES`."""
    if name.split(",")[0].endswith(COUNT_SUFFIXES):
        return True
    t = run.tasks.get(task)
    config = ((run.raw.get("configs") or {}).get(task) or {}) if t else {}
    for entry in config.get("metric_list") or []:
        if entry.get("metric") == name.split(",")[0]:
            agg = str(entry.get("aggregation", ""))
            words = {w for w in __import__("re").split(r"[^a-z]+", agg.lower()) if w}
            return bool(words & set(COUNT_AGGREGATIONS))
    return False


def provenance_of(run: Run, task: str) -> dict:
    """A task's provenance; a group's is pooled from its tasks."""
    t = run.tasks.get(task)
    if t is None:
        return {}
    if not t.is_group:
        return t.provenance
    return prov_mod.combine(task, [provenance_of(run, s) for s in t.subtasks if s in run.tasks])


def interval_of(run: Run, task: str, name: str) -> dict:
    """The 95 % interval record of one headline number (``ci_low`` is ``None`` with a ``why`` when there is none)."""
    m = _metric(run, task, name)
    rec = {"run": run.label, "task": task, "metric": name, "value": None if m is None else m.value}
    if m is None or isinstance(m.value, dict) or m.value is None:
        return {**rec, "ci_low": None, "ci_high": None, "why": "no value"}
    if is_count(run, task, name):
        return {**rec, "ci_low": None, "ci_high": None, "unit": "count", "why": "a count, not an estimate"}
    t = run.tasks.get(task)
    found = None if t is not None and t.is_group else decomposed.interval(run, task, name)
    if found is not None and found.get("ci_low") is not None:
        return {**rec, **found}
    if found is not None and found.get("final"):
        return {**rec, "ci_low": None, "ci_high": None, "why": found["why"]}
    vals, scale = per_doc(run, task, name)
    if not vals and found is None and t is not None and t.is_group:
        found = decomposed.interval(run, task, name)  # a group: stratified over its subtasks
        if found is not None and found.get("ci_low") is not None:
            return {**rec, **found}
    if not vals:
        why = (
            "no sample log (run lmms-eval with --log_samples)"
            if t is not None and not t.is_group and t.samples is None
            else (found or {}).get("why", "the aggregate is not a mean of logged per-doc scores")
        )
        return {**rec, "ci_low": None, "ci_high": None, "why": why}
    key, clusters = doc_clusters(run, task, name)
    labels = [clusters.get(d) for d in vals] if clusters else None
    out = stats.interval(list(vals.values()), labels)
    for k in ("ci_low", "ci_high", "stderr", "mdd"):
        out[k] = None if out.get(k) is None else out[k] * scale
    keep = ("ci_low", "ci_high", "stderr", "method", "n", "n_units", "clusters", "deff", "mdd")
    return {**rec, **{k: out[k] for k in keep if k in out}, **({"cluster_key": key} if labels else {})}


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


def _arrow(runs: list[Run], task: str, name: str) -> str:
    for run in runs:
        m = _metric(run, task, name)
        if m is not None and m.higher_is_better is not None:
            return " ↑" if m.higher_is_better else " ↓"
    return ""


def docs_scored(t) -> str:
    """The ``n`` cell of one task: the docs scored, from the sample log where there is one (a doc whose every logged
    per-doc statistic is empty, e.g. an unresolved image or a failed judge request, is not scored), else lmms-eval's
    doc count; ``0 (why)`` when no doc was scored.

    >>> from hanyi.report.results import TaskResult
    >>> docs_scored(TaskResult("t", {}, n=5, samples=[{"hanyi_per_doc": {"acc": None}}] * 5))
    '0 (no doc scored: every per-doc statistic of the 5 docs is empty)'
    >>> docs_scored(TaskResult("t", {}, n=5, samples=[])), docs_scored(TaskResult("t", {}, n=7)), docs_scored(TaskResult("g", {}, n=0))
    ('0 (no doc scored: the sample log is empty)', '7', '0 (no doc evaluated: the task had no docs)')
    """
    if t.n == 0:
        return "0 (no doc evaluated: the task had no docs)"
    if t.is_group or t.samples is None:
        return "" if t.n is None else str(t.n)
    if not t.samples:
        return "0 (no doc scored: the sample log is empty)"
    # a rerank@K task's doc is one (query, candidate) pair; its metrics and intervals are over queries (issue 39)
    queries = {str(s["r1"]["query"]) for s in t.samples if isinstance(s.get("r1"), dict) and "stage1_rank" in s["r1"]}
    if queries:
        return f"{len(queries)} queries ({len(t.samples)} query-candidate pairs)"
    stats_logged = [s["hanyi_per_doc"] for s in t.samples if isinstance(s.get("hanyi_per_doc"), dict)]
    if len(stats_logged) < len(t.samples):  # no per-doc statistics logged: every logged doc counts
        return str(len(t.samples))
    scored = sum(1 for per in stats_logged if not per or any(v is not None for v in per.values()))
    if scored == 0:
        return f"0 (no doc scored: every per-doc statistic of the {len(t.samples)} docs is empty)"
    return str(scored)


def headline_table(runs: list[Run], tasks: list[str], hints=None, intervals: list | None = None) -> Table:
    header = ["task", "metric", *[r.label for r in runs], "n"]
    rows, shown = [], []
    for task in tasks:
        head, _ = category_tables(_metric_names(runs, task), hints)
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
                cells.append(_value_cell(_metric(r, task, name), ci, count) + judged)
            cells = [_reported(_metric(r, task, name)) or c for r, c in zip(runs, cells)]
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


#: Anchor fields that say how a paper number was produced (table-level, per column, overridden per row).
ANCHOR_FIELDS = ("task", "prompt_variant", "judge", "n")


def anchor_fields(link: anchor_mod.Link, model: str | None = None) -> dict:
    """How the paper produced the number in ``link``'s column of row ``model`` (``None``: the table's fields only):
    ``task``, ``prompt_variant``, ``judge``, ``n``. A field may be a ``{column: value, "*": default}`` map; the row's
    own fields win over the table's. The map entry's task pattern is not a paper fact and is not included.

    >>> table = {"columns": ["A", "B"], "n": {"*": 500, "B": 1000}, "judge": "none", "prompt_variant": "default",
    ...          "rows": [{"model": "M", "task": "t_x", "values": [1, 2]}]}
    >>> anchor_fields(anchor_mod.Link("t", "acc", table, "B"), "M")
    {'judge': 'none', 'n': 1000, 'prompt_variant': 'default', 'task': 't_x'}
    """
    table = link.table
    out = {}
    for key in ("judge", "n", "prompt_variant"):
        value = prov_mod.anchor_value(table.get(key), link.column)
        if value is not None:
            out[key] = value
    if link.n is not None:  # the map entry's: the docs of our task's run behind the paper's number
        out["n"] = link.n
    row = next((r for r in table["rows"] if r.get("model") == model), {}) if model is not None else {}
    for key in (*ANCHOR_FIELDS, "variant"):
        value = prov_mod.anchor_value(row.get(key), link.column)
        if value is not None:
            out["prompt_variant" if key == "variant" else key] = value
    return out


def _run_mark(prov: dict, link: anchor_mod.Link) -> tuple[bool, list[str]]:
    """Whether a run compares with any paper row of ``link``: its run-level reasons (sample data, ``--limit``, a
    fallback scorer ...) when it has any, else the reasons of every paper row when none of them is comparable."""
    ok, reasons = prov_mod.comparability(prov, link.metric)
    if not ok:
        return ok, reasons
    union: list[str] = []
    for row in link.rows():
        if row.value is None:
            continue
        ok, why = prov_mod.comparability(prov, link.metric, anchor_fields(link, row.model))
        if ok:
            return True, []
        union += [r for r in why if r not in union]
    return (not union), union


def comparison(runs: list[Run], link: anchor_mod.Link, records: list | None = None) -> tuple[Table, BarPlot]:
    """The paper's rows for ``link`` with ours among them (sorted by value), and a bar plot of the same.

    A Δ is shown only where the comparison is comparable; ``records`` receives one dict per (run, paper row).
    """
    decimals = _decimals([row.value for row in link.rows()])
    ours = [(r.label, link.to_paper_unit(getattr(_metric(r, link.task, link.metric), "value", None))) for r in runs]
    provs = [provenance_of(r, link.task) for r in runs]
    run_level = [_run_mark(p, link) for p in provs]
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
                    {
                        "run": label,
                        "task": link.task,
                        "metric": link.metric,
                        "table": link.table.get("id"),
                        "cite": link.cite,
                        "column": link.column,
                        "paper_model": model,
                        "paper_value": value,
                        "ours": o,
                        "difference": round(o - value, 10) if ok else None,
                        "comparable": ok,
                        "reasons": reasons,
                    }
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
                        {
                            "run": run.label,
                            "task": task,
                            "metric": name,
                            "table": lk.table.get("id"),
                            "cite": lk.cite,
                            "column": lk.column,
                            "paper_model": row.model,
                            "paper_value": row.value,
                            "ours": ours,
                            "difference": round(ours - row.value, 10) if ok else None,
                            "comparable": ok,
                            "reasons": reasons,
                        }
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
        ok, reasons = _run_mark(provenance_of(run, task), any_link) if any_link else (True, [])
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
        from hanyi.report import retriever  # imports this module

        stage1 = retriever.stage1_table(runs, tasks)
        if stage1 is not None:
            section.tables.append(stage1)
        section.notes += retriever.shortlist_notes(runs, tasks)
        linked_any = False
        all_links: list[anchor_mod.Link] = []
        empty = 0
        for task in tasks:
            names = _metric_names(runs, task)
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


def data_differs(runs: list[Run], task: str, notes: list | None = None) -> str | None:
    """Why two runs of ``task`` must not be paired doc by doc: the same doc ids hold different docs (lmms-eval's
    content differs, e.g. two data versions, or the images' bytes do); ``None`` when the shared docs match or no doc
    was logged. The images count when both logs carry their digests (issue 40); else ids and paths only, which goes
    to ``notes`` when the docs are paired."""
    full, plain = ([doc_hashes(r, task, images) for r in runs] for images in (True, False))
    carry = [f != p for f, p in zip(full, plain)]  # a log carries image digests when they change its hashes
    a, b = full if all(carry) else plain
    shared = set(a) & set(b)
    changed = sum(a[k] != b[k] for k in shared)
    if not changed:
        if shared and not all(carry) and notes is not None:
            notes.append(
                f"{task}: paired by doc ids and logged doc fields only: {'one' if any(carry) else 'no'} sample log "
                "carries image digests (a text-only task, or a log written before hanyi logged them): a changed "
                "image under the same id or path is not seen"
            )
        return None
    return (
        f"{task}: not paired doc by doc: {changed} of the {len(shared)} doc ids both runs scored hold different docs "
        "(their logged content differs: another data version or order); compare the headline values only"
    )


def paired_records(runs: list[Run], tasks: list[str], hints=None, notes: list | None = None) -> list[dict]:
    """Doc-by-doc comparison of two runs on every headline metric both logged per doc (B − A), and on the cells of a
    categories hint marked ``paired: true``. A task whose doc ids hold different docs in the two runs is not paired;
    the reason goes to ``notes``."""
    from hanyi.report.retriever import differ

    a_run, b_run = runs
    out = []
    for task in tasks:
        if differ(runs, task):
            continue  # different stage-1 shortlists: not comparable with each other (a section note says so)
        why = data_differs(runs, task, notes)
        if why:
            if notes is not None:
                notes.append(why)
            continue
        head, tables = category_tables(_metric_names(runs, task), hints)
        # a categories hint with ``paired: true`` (UNPIE's split: the values the one-split tasks emitted) is paired too
        paired_dims = {hint["dimension"] for hint in hints or () if hint.get("paired")}
        head += [name for (_, dim), cells in tables.items() if dim in paired_dims for _, name in cells]
        for name in head:
            if is_count(a_run, task, name) or is_count(b_run, task, name):
                continue
            a, scale_a = per_doc(a_run, task, name)
            b, scale_b = per_doc(b_run, task, name)
            if not a or not b or scale_a != scale_b:
                continue
            key, clusters = doc_clusters(a_run, task, name)
            result = stats.paired(a, b, clusters=clusters)
            if result is not None and clusters:
                result["cluster_key"] = key
            if result is None:
                continue
            for key in ("mean_a", "mean_b", "difference", "ci_low", "ci_high", "stderr", "mdd"):
                result[key] = None if result.get(key) is None else result[key] * scale_a
            out.append({"task": task, "metric": name, "run_a": a_run.label, "run_b": b_run.label, **result})
    return out


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


def _row_reasons(run: Run, task: str, task_links: list[anchor_mod.Link], row: dict) -> list[str] | None:
    """Why our ``task`` row of ``run`` is not comparable with paper ``row`` (``[]``: comparable), over every column
    both have a value in; ``None`` when they share no column."""
    reasons: list[str] = []
    shared = False
    for link in task_links:
        m = _metric(run, task, link.metric)
        paper_value = row["values"][link.table["columns"].index(link.column)]
        if m is None or isinstance(m.value, dict) or m.value is None or paper_value is None:
            continue
        shared = True
        why = [] if link.selects(row) else [f"a different setting (paper row: {link.row_setting(row)})"]
        why += prov_mod.comparability(provenance_of(run, task), link.metric, anchor_fields(link, row["model"]))[1]
        reasons += [r for r in why if r not in reasons]
    return reasons if shared else None


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
    decimals = [_decimals([row["values"][i] for row in table["rows"]]) for i in range(len(columns))]
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
    verdicts = [[_row_reasons(run, task, tl, row) for run, task, tl, _ in ours] for row in table["rows"]]
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
