"""The numbers a view shows about a run's task, computed once for the report and the leaderboard: whether a metric is
a count, its 95 % interval from the sample log, the docs it scored, the tasks of each benchmark, and the doc-by-doc
comparison of two runs.

Intervals: :mod:`hanyi.results.decomposed` for decomposed aggregations and groups, :mod:`hanyi.results.stats` for
per-doc means (clustered where the task sets a ``cluster_key``).
"""

from __future__ import annotations

import re

from hanyi import BENCHMARKS
from hanyi.results import decomposed, stats
from hanyi.results.comparability import data_differs, shortlists_differ
from hanyi.results.layout import category_tables
from hanyi.results.perdoc import doc_clusters, per_doc
from hanyi.results.perdoc import metric_of as _metric
from hanyi.results.runs import Run, benchmark_of, parents_of

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
            words = {w for w in re.split(r"[^a-z]+", agg.lower()) if w}
            return bool(words & set(COUNT_AGGREGATIONS))
    return False


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


def metric_names(runs: list[Run], task: str) -> list[str]:
    names: list[str] = []
    for run in runs:
        for name in run.tasks.get(task).metrics if task in run.tasks else ():
            if name not in names:
                names.append(name)
    return names


def docs_scored(t) -> str:
    """The ``n`` cell of one task: the docs scored, from the sample log where there is one (a doc whose every logged
    per-doc statistic is empty, e.g. an unresolved image or a failed judge request, is not scored), else lmms-eval's
    doc count; ``0 (why)`` when no doc was scored.

    >>> from hanyi.results.runs import TaskResult
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
    # a rerank@K task's doc is one (query, candidate) pair; its metrics and intervals are over queries
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


def paired_records(runs: list[Run], tasks: list[str], hints=None, notes: list | None = None) -> list[dict]:
    """Doc-by-doc comparison of two runs on every headline metric both logged per doc (B − A), and on the cells of a
    categories hint marked ``paired: true``. A task whose doc ids hold different docs in the two runs is not paired;
    the reason goes to ``notes``."""
    a_run, b_run = runs
    out = []
    for task in tasks:
        if shortlists_differ(runs, task):
            continue  # different stage-1 shortlists: not comparable with each other (a section note says so)
        why = data_differs(runs, task, notes)
        if why:
            if notes is not None:
                notes.append(why)
            continue
        head, tables = category_tables(metric_names(runs, task), hints)
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
