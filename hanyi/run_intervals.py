"""In-run standard errors and per-doc statistics for hanyi's decomposed aggregations (issue 15, item 3).

lmms-eval 0.7.3 computes a metric's standard error only for its registered aggregations (``mean``, ``bleu`` ...,
``lmms_eval.api.metrics.stderr_for_metric``); a task's own aggregation function gets ``N/A`` in the stderr column.
hanyi's headline aggregations are *decomposed* (:mod:`hanyi.metrics.resample`: ``agg = combine(per_doc(items))``).
:func:`patch_task_output` wraps ``TaskOutput.calculate_aggregate_metric`` so that, after lmms-eval has aggregated a
hanyi task, every (metric, filter) whose aggregation is decomposed gets:

* ``<metric>_stderr,<filter>``: :func:`hanyi.metrics.resample.standard_error` (the closed form of lmms-eval's
  ``mean_stderr`` for means and shares of 0/1 statistics, else the standard deviation of
  :data:`~hanyi.metrics.resample.ITERS` seeded bootstrap resamples of the aggregation itself), only when lmms-eval's ``--bootstrap_iters`` is above 0 (0 turns standard
  errors off, as it does for lmms-eval's own);
* in each line of the sample log (``--log_samples``), ``hanyi_per_doc[<metric>]``: that doc's statistic, so
  ``hanyi report`` can give the 95 % interval later without loading any backbone. Only when ``per_doc`` gives one
  statistic per doc: CVLUE's ITR re-ranking scores one unit per *query* (many docs), and the report recomputes those
  from the logged pair items instead.

The statistics come from the aggregation's own call (its memo), so no backbone work (SBERT, BERTScore ...) is done
twice. Nothing here may break a run: any exception logs one warning naming task and metric and leaves ``N/A``.
Installed with the discovery hook (:mod:`hanyi.discovery`), after the doc-order patch of :mod:`hanyi.multiprocess`
(so items and sample-log lines are both in doc order). ``docs/upstream/0006-stderr-from-decomposed-aggregations.patch``
proposes the same to lmms-eval's ``stderr_for_metric``.
"""

from __future__ import annotations

import logging
import math

from hanyi.metrics import resample

log = logging.getLogger(__name__)
_MARKER = "_hanyi_intervals"
#: Key of the per-doc statistics in a sample-log line.
PER_DOC_KEY = "hanyi_per_doc"


def _json_stat(stat):
    """A statistic as plain JSON: a float (None for NaN) or a list of them."""
    if hasattr(stat, "tolist"):
        stat = stat.tolist()
    if isinstance(stat, (list, tuple)):
        return [_json_stat(s) for s in stat]
    value = float(stat)
    return value if math.isfinite(value) else None


def _bootstrap_iters(args, kwargs) -> int:
    value = kwargs.get("bootstrap_iters", args[0] if args else 100000)
    return value if isinstance(value, int) else 0


def _samples_for(task_output, filter_key) -> list[dict]:
    samples = getattr(task_output, "logged_samples", None) or []
    return [s for s in samples if isinstance(s, dict) and s.get("filter", filter_key) == filter_key]


def add_intervals(task_output, bootstrap_iters: int) -> int:
    """Standard errors and per-doc statistics for one aggregated ``TaskOutput``; returns how many metrics got them."""
    task = task_output.task
    name = getattr(task_output, "task_name", None) or getattr(getattr(task, "config", None), "task", "?")
    table = task.aggregation()
    done = 0
    for (metric, filter_key), items in list(task_output.sample_metrics.items()):
        fn = table.get(metric)
        if not resample.is_decomposed(fn):
            continue
        try:
            value = task_output.agg_metrics.get(f"{metric},{filter_key}")
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                continue  # N/A, or NaN from hanyi.guard: no interval around a failed aggregation
            memo = getattr(fn, "memo", None)
            stats = memo.take(items) if memo is not None else None
            if stats is None:
                stats = resample.as_array(fn.per_doc(items))
            if bootstrap_iters > 0 and len(stats) > 1:
                stderr = resample.standard_error(fn.combine, stats)
                if stderr is not None:
                    task_output.agg_metrics[f"{metric}_stderr,{filter_key}"] = stderr
            samples = _samples_for(task_output, filter_key)
            if len(stats) == len(items) and len(samples) == len(items):
                for sample, stat in zip(samples, stats):
                    sample.setdefault(PER_DOC_KEY, {})[metric] = _json_stat(stat)
            done += 1
        except Exception as exc:  # never break a run because of an interval
            log.warning(
                "hanyi: task %s: no standard error for metric %s (%s: %s)", name, metric, type(exc).__name__, exc
            )
    return done


def _after_aggregation(task_output, args, kwargs) -> None:
    try:
        add_intervals(task_output, _bootstrap_iters(args, kwargs))
    except Exception as exc:  # never break a run because of an interval
        log.warning("hanyi: task %s: no standard errors (%r)", getattr(task_output, "task_name", "?"), exc)


def patch_task_output(task_output_cls=None) -> bool:
    """Wrap ``TaskOutput.calculate_aggregate_metric`` (outside the doc-order patch). Idempotent; True if patched."""
    from hanyi.multiprocess import wrap_aggregation

    return wrap_aggregation(task_output_cls, _MARKER, after=_after_aggregation)


def install() -> bool:
    """:func:`patch_task_output` on lmms-eval's class; never raises (a failure is logged, the run goes on)."""
    from hanyi.multiprocess import safe_install

    return safe_install(patch_task_output, "in-run standard errors")
