"""In-run standard errors and per-doc statistics for hanyi's decomposed aggregations.

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

For a hanyi task lmms-eval itself aggregates with ``bootstrap_iters=0`` and the hook writes the standard errors it
would have written for the other metrics (``mean``'s closed form, ``N/A`` for a task's own function:
:func:`lmms_eval_stderr`), the same values without the two optional imports its ``stderr_for_metric`` retries for
every metric.

Every decomposed aggregation is light (its per-doc statistics are the numbers ``process_results`` logged), so they
are recomputed here at no cost. Nothing here may break a run: any exception logs one warning naming task and metric and leaves ``N/A``.
Installed by ``hanyi eval`` only (:func:`hanyi.host.install_eval_extras`): a run-time extra, never part of a plain
lmms-eval run; ``hanyi report`` computes the same intervals from the sample log. ``docs/upstream/0006-stderr-from-decomposed-aggregations.patch``
proposes the same to lmms-eval's ``stderr_for_metric``.
"""

from __future__ import annotations

import logging
import math

from hanyi.metrics import resample

log = logging.getLogger(__name__)
_MARKER = "_hanyi_intervals"
PER_DOC_KEY = resample.PER_DOC_KEY


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
                continue  # N/A or NaN: no interval around a failed aggregation
            stats = resample.as_array(fn.per_doc(items))  # light: the logged numbers, no backbone work
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


def lmms_eval_stderr(fn, metric: str, bootstrap_iters: int):
    """The standard-error function lmms-eval 0.7.3's ``calculate_aggregate_metric`` uses for aggregation ``fn`` of
    ``metric`` (``None``: it writes ``N/A``), decided without its optional imports where they cannot change it.

    ``lmms_eval.api.metrics.stderr_for_metric`` tries to import two of its own task modules (``amber_g``,
    ``coco_cap_chair``) on *every* call, to see whether ``fn`` is one of their functions. Where ``spacy`` is not
    installed the first import fails, after importing NLTK (0.37 s once per process), and Python retries a failed
    import each time: 29 times for ``cii`` alone. The answer cannot depend on them for a function outside lmms-eval
    (a hanyi aggregation: ``None``, as lmms-eval decides: it is not in its bootstrap list and its name matches no
    rule) or for ``mean`` / ``acc_all`` (their closed forms); any other lmms-eval function is asked of lmms-eval itself.
    """
    from lmms_eval.api import metrics

    if fn is metrics.mean:
        return metrics.mean_stderr
    if fn is getattr(metrics, "acc_all", None):
        return metrics.acc_all_stderr
    name = getattr(fn, "__name__", "") or ""
    if not str(getattr(fn, "__module__", "") or "").startswith("lmms_eval") and not (
        "coco_cap_chair" in name or "amber_" in name
    ):
        return None
    iters = min(bootstrap_iters, 100) if metric in ("bleu", "chrf", "ter") else bootstrap_iters
    return metrics.stderr_for_metric(metric=fn, bootstrap_iters=iters)


def _lmms_eval_iters(args, kwargs):
    return kwargs.get("bootstrap_iters", args[0] if args else 100000)


def _own_stderrs(task_output, args, kwargs):
    """For a hanyi task, lmms-eval aggregates with ``bootstrap_iters=0`` (no ``stderr_for_metric`` calls); the
    standard errors it would have written are then written by :func:`lmms_eval_stderrs`, the same values."""
    iters = _lmms_eval_iters(args, kwargs)
    if not isinstance(iters, int) or iters <= 0:
        return args, kwargs  # lmms-eval's own handling (0: no standard errors; not an integer: its error)
    return (), {**{k: v for k, v in kwargs.items() if k != "bootstrap_iters"}, "bootstrap_iters": 0}


def lmms_eval_stderrs(task_output, bootstrap_iters: int) -> None:
    """``<metric>_stderr,<filter>`` of every metric whose aggregation is not decomposed, as lmms-eval writes it
    (:func:`lmms_eval_stderr`; ``N/A`` without a function or with one item). Decomposed ones keep lmms-eval's ``N/A``
    until :func:`add_intervals`."""
    table = task_output.task.aggregation()
    for (metric, filter_key), items in task_output.sample_metrics.items():
        if metric not in table or resample.is_decomposed(table[metric]):
            continue
        stderr_fn = lmms_eval_stderr(table[metric], metric, bootstrap_iters)
        task_output.agg_metrics[f"{metric}_stderr,{filter_key}"] = (
            stderr_fn(items) if (stderr_fn and len(items) > 1) else "N/A"
        )


def _after_aggregation(task_output, args, kwargs) -> None:
    iters = _lmms_eval_iters(args, kwargs)
    if isinstance(iters, int) and iters > 0:
        lmms_eval_stderrs(task_output, iters)  # as lmms-eval computes them: an error here is an error there
    try:
        add_intervals(task_output, _bootstrap_iters(args, kwargs))
    except Exception as exc:  # never break a run because of an interval
        log.warning("hanyi: task %s: no standard errors (%r)", getattr(task_output, "task_name", "?"), exc)


def wrap_aggregation(task_output_cls, marker: str, after=None, arguments=None) -> bool:
    """Wrap ``task_output_cls.calculate_aggregate_metric`` once per ``marker``: ``arguments(self, args, kwargs) ->
    (args, kwargs)`` gives what lmms-eval's method is called with, and ``after(self, args, kwargs)`` runs after
    lmms-eval has aggregated, with the arguments the wrapper was given; both for hanyi's tasks only
    (:func:`hanyi.host.ownership.is_hanyi_task`). True if it patched."""
    import functools

    from hanyi.host import ownership

    if task_output_cls is None:
        from lmms_eval.evaluator_utils import TaskOutput as task_output_cls
    original = task_output_cls.calculate_aggregate_metric
    if getattr(original, marker, False):
        return False

    @functools.wraps(original)
    def calculate_aggregate_metric(self, *args, **kwargs):
        ours = ownership.is_hanyi_task(getattr(self, "task", None))
        call_args, call_kwargs = arguments(self, args, kwargs) if ours and arguments is not None else (args, kwargs)
        result = original(self, *call_args, **call_kwargs)
        if ours and after is not None:
            after(self, args, kwargs)
        return result

    setattr(calculate_aggregate_metric, marker, True)
    task_output_cls.calculate_aggregate_metric = calculate_aggregate_metric
    return True


def patch_task_output(task_output_cls=None) -> bool:
    """Wrap ``TaskOutput.calculate_aggregate_metric``. Idempotent; True if patched."""
    return wrap_aggregation(task_output_cls, _MARKER, after=_after_aggregation, arguments=_own_stderrs)


def install() -> bool:
    """:func:`patch_task_output` on lmms-eval's class; never raises (a failure is logged, the run goes on)."""
    try:
        return patch_task_output()
    except Exception as exc:  # never break lmms-eval because of us
        log.warning("hanyi: could not install in-run standard errors (%r)", exc)
        return False
