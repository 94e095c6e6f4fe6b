"""95 % intervals for headline numbers whose aggregation is decomposed (:mod:`hanyi.metrics.resample`), and for groups.

A decomposed aggregation is ``combine(per_doc(items))``. The run stores each doc's statistic in its sample-log line
(``hanyi_per_doc``, :mod:`hanyi.host.run_intervals`); for an aggregation marked ``light`` (no backbone) the report can also
recompute them from the logged items, e.g. for runs made before the statistics were logged. Either way the interval
is given only when ``combine(all statistics)`` reproduces the number lmms-eval reported; then it is
:func:`hanyi.metrics.resample.bootstrap` (exact Clopper–Pearson for a share of 0/1 statistics, else a seeded percentile
bootstrap over units re-running ``combine``).

A group gets a stratified bootstrap (:func:`hanyi.metrics.resample.stratified_bootstrap`): units are resampled within
each subtask, each subtask's aggregation re-run, and the results averaged with the group's own weights, equal (the
mean of the subtasks' values, e.g. UNPIE's "All = mean of Homo and Hetero") or by size (lmms-eval's
``weight_by_size``), whichever reproduces the group's value; nested groups multiply the levels' weights. A subtask
whose aggregation is lmms-eval's plain ``mean`` takes part with its per-doc scores (:func:`stats.per_doc_scores`).
"""

from __future__ import annotations

import math

from hanyi.metrics import resample
from hanyi.metrics.resample import PER_DOC_KEY
from hanyi.report import stats
from hanyi.report.aggregations import aggregation

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


def _breakdown_source(t, task: str, name: str):
    """``(source metric, decomposed aggregation)`` of a metric the report computed from the sample log
    (:mod:`hanyi.metrics.from_samples`): the first source its breakdown names whose items every logged line holds;
    None for any other metric, or when no source was logged."""
    if t is None or not t.samples or not getattr((getattr(t, "metrics", None) or {}).get(name), "from_samples", False):
        return None
    from hanyi.metrics.from_samples import interval_sources

    lines = [s for s in t.samples if isinstance(s, dict)]
    return next(((s, f) for s, f in interval_sources(task, name.split(",")[0]) if all(s in ln for ln in lines)), None)


def from_samples_per_doc(run, task: str, name: str) -> dict:
    """``{doc_id: statistic}`` of a metric the report computed from the sample log, from the decomposed aggregation
    its breakdown names over the logged items of its source (finite statistics only: a NaN is an unscored doc);
    ``{}`` for any other metric. The report's per-doc path (paired comparison of two runs) reads it."""
    t = run.tasks.get(task)
    found = _breakdown_source(t, task, name)
    if found is None:
        return {}
    source, fn = found
    lines = [s for s in t.samples if isinstance(s, dict)]
    per_doc = getattr(fn, "doc_values", None) or fn.per_doc  # one number per line (UNPIE's one split: NaN off it)
    try:
        values = [float(v) for v in per_doc([s[source] for s in lines])]
    except Exception:  # an older or foreign log
        return {}
    return {s.get("doc_id"): v for s, v in zip(lines, values) if math.isfinite(v)}


def _leaf(run, task: str, name: str, value: float):
    """``[(1.0, combine, stats)]`` reproducing ``value``, or a ``why`` string."""
    found = unit_stats(run, task, name)
    if isinstance(found, str):
        return found
    if found is None:  # lmms-eval's own mean: the per-doc scores it averaged
        vals, scale = stats.per_doc_scores(run.tasks[task].samples, name, value)
        if not vals or scale != 1.0:
            return "the aggregate is not a mean of logged per-doc scores"
        found = (resample.sum_mean, resample.as_array(list(vals.values())))
    combine, arr = found
    if len(arr) == 0 or not _close(float(combine(arr)), value):
        return "the per-doc statistics do not reproduce the reported value"
    return [(1.0, combine, arr)]


def parts_of(run, task: str, name: str, depth: int = 0):
    """``[(weight, combine, stats)]`` of a task or (nested) group, weights reproducing its value; or a ``why``."""
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
        sizes.append(sum(len(arr) for _, _, arr in found))
    for weights in ([1 / len(subs)] * len(subs), [n / sum(sizes) for n in sizes]):
        if _close(sum(w * v for w, v in zip(weights, values)), m.value):
            return [(w * wl, c, a) for w, found in zip(weights, sub_parts) for wl, c, a in found]
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
    if not any(_scored(a) for _, _, a in found):
        return {"why": NONE_SCORED, "final": True}
    if t.is_group:
        if len(found) == 1:
            _, combine, arr = found[0]
            out = resample.bootstrap(combine, arr)
        else:
            out = resample.stratified_bootstrap([(c, a) for _, c, a in found], weights=[w for w, _, _ in found])
    else:
        _, combine, arr = found[0]
        out = resample.bootstrap(combine, arr)
    if out.get("ci_low") is None:
        return {"why": out.get("why", "no interval"), "final": True}
    keep = ("ci_low", "ci_high", "stderr", "method")
    return {**{k: out[k] for k in keep if k in out}, "n": sum(_scored(a) for _, _, a in found)}


def _scored(arr) -> int:
    """Units with every statistic finite (a doc left out of a mean over the scored docs has NaN)."""
    import numpy as np

    finite = np.isfinite(arr)
    return int(finite.all(axis=1).sum() if finite.ndim == 2 else finite.sum())
