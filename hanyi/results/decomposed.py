"""95 % intervals for headline numbers whose aggregation is decomposed (:mod:`hanyi.metrics.resample`), and for groups.

A decomposed aggregation is ``combine(per_doc(items))``. The run stores each doc's statistic in its sample-log line
(``hanyi_per_doc``, :mod:`hanyi.host.run_intervals`); for an aggregation marked ``light`` (no backbone) the report can also
recompute them from the logged items, e.g. for runs made before the statistics were logged. Either way the interval
is given only when ``combine(all statistics)`` reproduces the number lmms-eval reported; then it is
:func:`hanyi.metrics.intervals.interval`: exact Clopper–Pearson for a share of 0/1 statistics, clustered by the design
effect, else a seeded percentile bootstrap re-running ``combine`` over docs, or over the clusters the task's
``cluster_key`` names (the label each logged item carries), stratified by split for UNPIE's both-split values.

A group gets :func:`hanyi.metrics.intervals.cluster_bootstrap` over its subtasks: each subtask's aggregation re-run
on every resample and the results averaged with the group's own weights, equal (the mean of the subtasks' values)
or by size (lmms-eval's ``weight_by_size``), whichever reproduces the group's value; nested groups multiply the
levels' weights. Subtasks that share no cluster are strata (resampled within themselves); a cluster shared by
subtasks (one pun in three languages' tasks) is drawn for all of them together. A subtask whose aggregation is
lmms-eval's plain ``mean`` takes part with its per-doc scores (:func:`hanyi.results.perdoc.per_doc_scores`).
"""

from __future__ import annotations

import math

import numpy as np

from hanyi.metrics import intervals, resample
from hanyi.metrics.resample import PER_DOC_KEY
from hanyi.results.aggregations import aggregation
from hanyi.results.perdoc import breakdown_source as _breakdown_source
from hanyi.results.perdoc import cluster_key, cluster_labels, leaves, per_doc_scores

NO_STATS = (
    "no per-doc statistics for it in the sample log (a run made before hanyi logged them, or with the start-up hook "
    "off; re-score the sample log with the replay model, docs/when-things-go-wrong.md)"
)


NONE_SCORED = "no doc was scored (e.g. none parsed): the value is the aggregation's default for none, not an estimate"


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _stat(value):
    if isinstance(value, list):
        return tuple(math.nan if v is None else v for v in value)
    return math.nan if value is None else value


def _is_number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _is_stat(value) -> bool:
    """A logged per-doc statistic: a number (or null), or a list of them.

    >>> _is_stat(0.5), _is_stat([1, None]), _is_stat("x"), _is_stat([1, "y"]), _is_stat({"a": 1})
    (True, True, False, False, False)
    """
    if isinstance(value, list):
        return all(_is_number(v) for v in value)
    return _is_number(value)


def unit_stats(run, task: str, name: str):
    """``(combine, stats)`` of one non-group task's metric, a ``why`` string, or None (not decomposed).

    A metric the report computed from the sample log (:mod:`hanyi.metrics.from_samples`) uses the decomposed
    aggregation its breakdown names, over the logged items of the breakdown's source metric."""
    t = run.tasks.get(task)
    fn = aggregation(task, name, run)
    metric = source = name.split(",")[0]
    if fn is None:
        source, fn = _breakdown_source(t, task, name) or (metric, None)
    if t is None or not resample.is_decomposed(fn):
        return None
    if t.samples is None:
        return "no sample log (run lmms-eval with --log_samples)"
    lines = [s for s in t.samples if isinstance(s, dict)]
    if lines and all(isinstance(s.get(PER_DOC_KEY), dict) and metric in s[PER_DOC_KEY] for s in lines):
        values = [s[PER_DOC_KEY][metric] for s in lines]
        bad = next((i for i, v in enumerate(values) if not _is_stat(v)), None)
        if bad is not None:
            return (
                f"the sample log's per-doc statistics are not numbers (doc_id {lines[bad].get('doc_id')}: "
                f"{str(values[bad])[:60]!r}); re-score the sample log with the replay model"
            )
        try:
            return fn.combine, resample.as_array([_stat(v) for v in values])
        except ValueError as exc:  # lists of different lengths
            return f"the sample log's per-doc statistics do not have one shape ({exc})"
    if getattr(fn, "light", False) and lines and all(source in s for s in lines):
        try:
            return fn.combine, resample.as_array(fn.per_doc([s[source] for s in lines]))
        except Exception as exc:  # a log whose items are not this aggregation's (older or foreign): no interval
            return f"the logged items do not fit the aggregation ({type(exc).__name__}: {exc})"
    return NO_STATS


def _aligned_clusters(run, task: str, name: str, fn, arr):
    """One cluster label per row of ``arr`` (the task's ``cluster_key`` in the logged items), or None: rows are one
    per logged line, or ``per_doc`` of each line's item alone gives them (a filtered aggregation); else no labels."""
    t = run.tasks[task]
    lines = [s for s in t.samples or [] if isinstance(s, dict)]
    metric = name.split(",")[0]
    labels = cluster_labels(lines, cluster_key(run, task), metric)
    if labels is None or len(arr) == len(lines):
        return labels
    source = (_breakdown_source(t, task, name) or (metric, fn))[0]
    try:
        rows = [(label, row) for line, label in zip(lines, labels) for row in fn.per_doc([line[source]])]
        again = resample.as_array([r for _, r in rows])
    except Exception:
        return None
    same = len(again) == len(arr) and bool(((again == arr) | (np.isnan(again) & np.isnan(arr))).all())
    return [label for label, _ in rows] if same else None


def _leaf(run, task: str, name: str, value: float):
    """``[(1.0, combine, stats, clusters)]`` reproducing ``value``, or a ``why`` string."""
    found = unit_stats(run, task, name)
    if isinstance(found, str):
        return found
    if found is None:  # lmms-eval's own mean: the per-doc scores it averaged
        samples = run.tasks[task].samples
        vals, scale = per_doc_scores(samples, name, value)
        if not vals or scale != 1.0:
            return "the aggregate is not a mean of logged per-doc scores"
        lines = {s.get("doc_id"): s for s in samples if isinstance(s, dict)}
        labels = cluster_labels([lines[d] for d in vals], cluster_key(run, task), name.split(",")[0])
        return [(1.0, resample.sum_mean, resample.as_array(list(vals.values())), labels)]
    combine, arr = found
    if len(arr) == 0 or not _close(float(combine(arr)), value):
        return "the per-doc statistics do not reproduce the reported value"
    fn = aggregation(task, name, run) or (_breakdown_source(run.tasks[task], task, name) or (None, None))[1]
    return [(1.0, combine, arr, _aligned_clusters(run, task, name, fn, arr))]


def parts_of(run, task: str, name: str, depth: int = 0):
    """``[(weight, combine, stats, clusters)]`` of a task or (nested) group, weights reproducing its value; or a
    ``why``."""
    t = run.tasks.get(task)
    m = t.metrics.get(name) if t is not None else None
    if m is None or not isinstance(m.value, (int, float)):
        return "no value"
    if not t.is_group:
        return _leaf(run, task, name, m.value)
    subs = [s for s in t.subtasks if s in run.tasks and name in run.tasks[s].metrics]
    if not subs or depth > 6:
        return "no subtask value"
    sub_parts, values, sizes = [], [], []
    for sub in subs:
        found = parts_of(run, sub, name, depth + 1)
        if isinstance(found, str):
            return f"subtask {sub}: {found}"
        sub_parts.append(found)
        values.append(run.tasks[sub].metrics[name].value)
        sizes.append(sum(len(part[2]) for part in found))
    for weights in ([1 / len(subs)] * len(subs), [n / sum(sizes) for n in sizes]):
        if _close(sum(w * v for w, v in zip(weights, values)), m.value):
            return [(w * wl, c, a, k) for w, found in zip(weights, sub_parts) for wl, c, a, k in found]
    return "the group value is neither the mean nor the size-weighted mean of its subtasks' values"


def interval(run, task: str, name: str) -> dict | None:
    """The interval fields (``ci_low``, ``ci_high``, ``stderr``, ``method``, ``n``) or ``{"why": ...}`` (with
    ``final``: the statistics reproduce the value, so no other reading of the sample log may give one); None when this
    path does not apply (a non-group task whose aggregation is not decomposed: the report's per-doc-mean path)."""
    t = run.tasks.get(task)
    if t is None:
        return None
    if not t.is_group and unit_stats(run, task, name) is None:
        return None
    found = parts_of(run, task, name)
    if isinstance(found, str):
        return {"why": found}
    if not any(_scored(part[2]) for part in found):
        return {"why": NONE_SCORED, "final": True}
    if len(found) == 1:
        _, combine, arr, clusters = found[0]
        out = intervals.interval(combine, arr, clusters)
    else:
        parts = [(w, c, a, k, _strata(c, a)) for w, c, a, k in found]
        out = intervals.cluster_bootstrap(parts)
        out["n_units"] = out["n"] = sum(_scored(part[2]) for part in found)
        out["mdd"] = intervals.mdd(None if out.get("stderr") is None else 2**0.5 * out["stderr"])
    if out.get("ci_low") is None:
        return {"why": out.get("why", "no interval"), "final": True}
    keep = ("ci_low", "ci_high", "stderr", "method", "n", "n_units", "clusters", "deff", "mdd")
    key = {cluster_key(run, s) for s in leaves(run, task)} - {None}
    clustered = any(part[3] is not None for part in found)
    return {**{k: out[k] for k in keep if k in out}, **({"cluster_key": sorted(key)[0]} if clustered and key else {})}


def _strata(combine, arr):
    """A mean over splits (UNPIE's All): each row's split, so a resample keeps every split; else None."""
    column = getattr(combine, "split_column", None)
    return arr[:, column].tolist() if column is not None and arr.ndim == 2 else None


def _scored(arr) -> int:
    """Units with every statistic finite (a doc left out of a mean over the scored docs has NaN)."""
    import numpy as np

    finite = np.isfinite(arr)
    return int(finite.all(axis=1).sum() if finite.ndim == 2 else finite.sum())
