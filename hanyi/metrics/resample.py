"""Aggregations that split into per-doc statistics, so every headline number can carry a bootstrap interval.

Most of hanyi's aggregations are not a plain mean of what ``process_results`` logged: corpus BLEU-4 sums n-gram
counts over the corpus, UNPIE's All is the mean of its two splits' values, CVLUE's ITR scores one unit per query,
VULCA averages NLI profiles. Each such aggregation is written as two steps:

* ``per_doc(items)``: one statistic per scored unit (a float, or a tuple of floats of fixed length), where all
  the work is reading what ``process_results`` logged (backbones and judges run there, once per doc);
* ``combine(stats)``: the aggregate from a ``numpy`` array of those statistics (shape ``(n,)`` or ``(n, k)``);
  cheap, so it can run on thousands of resamples.

:func:`decomposed` builds the aggregation from the two, so ``agg(items) == combine(per_doc(items))`` holds by
construction, and exposes both as ``agg.per_doc`` / ``agg.combine``. :func:`bootstrap` then resamples units with
replacement (seeded) and re-runs ``combine``: a percentile bootstrap of the *aggregation itself* (Efron & Tibshirani
1993, ch. 13; for BLEU this is Koehn 2004's bootstrap over sentences). A mean of 0/1 statistics instead gets the exact
Clopper–Pearson interval (:func:`clopper_pearson`, also used by :mod:`hanyi.results.stats`).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: Key of the per-doc statistics in a sample-log line, written by ``hanyi eval``'s run-time extra
#: (:mod:`hanyi.host.run_intervals`) for aggregations whose statistics cannot be recomputed from the logged items.
PER_DOC_KEY = "hanyi_per_doc"

#: Level, resamples and seed of every bootstrap interval (the report's are the same: ``hanyi.results.stats``).
LEVEL = 0.95
ITERS = 2000
SEED = 1234


def mean(stats):
    """Default ``combine``: the arithmetic mean of 1-D statistics (0.0 for none, like lmms-eval's ``mean``)."""
    return float(stats.mean()) if len(stats) else 0.0


def sum_mean(stats):
    """``combine``: ``sum(stats) / len(stats)`` summed left to right in Python, as lmms-eval's ``mean`` and most
    hand-written aggregations do, so a decomposed aggregation keeps their value to the last bit (0.0 for none)."""
    return sum(stats.tolist()) / len(stats) if len(stats) else 0.0


def fsum_mean_of_finite(stats):
    """``combine``: mean of the finite statistics with an exactly rounded sum (:func:`math.fsum`); 0.0 for none.

    For "mean over the scored docs" aggregations: a doc that is not scored (e.g. an unparsed answer) has the
    statistic NaN and stays a resampling unit, so the denominator varies across resamples as it does across samples.
    """
    values = [v for v in stats.tolist() if math.isfinite(v)]
    return math.fsum(values) / len(values) if values else 0.0


def share_of_finite(stats):
    """``combine``: ``sum(stats) / len(stats)`` over the finite statistics (left to right), 0.0 for none."""
    values = [v for v in stats.tolist() if math.isfinite(v)]
    return sum(values) / len(values) if values else 0.0


def nan_mean(stats):
    """``combine``: ``sum(xs) / len(xs)`` (left to right) over the non-NaN statistics; NaN when there is none.

    For aggregations that leave some docs out and are undefined with none left (UNPIE, VULCA): such a doc gets the
    statistic NaN, stays a resampling unit, and is skipped here, so the value keeps the former aggregation's to the
    last bit. :func:`rate` is the same arithmetic, declared a proportion.

    >>> import numpy as np
    >>> nan_mean(np.array([1.0, 0.0, float("nan"), 1.0])), math.isnan(nan_mean(np.array([float("nan")])))
    (0.6666666666666666, True)
    """
    kept = [x for x in stats.tolist() if not math.isnan(x)]
    return sum(kept) / len(kept) if kept else math.nan


def rate(stats):
    """``combine``: the share of 1s among the non-NaN 0/1 statistics (:func:`nan_mean`), NaN when there is none; a
    proportion, so it gets the exact interval of the docs it counts (:data:`FINITE_MEANS`)."""
    return nan_mean(stats)


def percent_share(stats):
    """``combine``: the share of true statistics computed as ``100.0 * k / n / 100`` (a percentage turned back into a
    fraction, as CII's aggregations compute it, so their value is kept to the last bit); NaN for none."""
    return 100.0 * sum(bool(v) for v in stats.tolist()) / len(stats) / 100 if len(stats) else math.nan


#: Combines that are the plain mean of 1-D statistics: with 0/1 statistics they get the exact Clopper–Pearson interval.
PLAIN_MEANS = (mean, sum_mean, percent_share)
#: Combines that are the mean of the finite statistics: with 0/1 finite statistics they get the exact interval given
#: the number of finite ones (the docs scored), as the report's per-doc path always did for "correct, parsed docs".
FINITE_MEANS = (fsum_mean_of_finite, share_of_finite, rate)


def as_array(stats: Sequence):
    """``per_doc`` output as a float array, ``(n,)`` for scalars and ``(n, k)`` for tuples."""
    import numpy as np

    if len(stats) == 0:
        return np.zeros((0,), dtype=float)
    return np.asarray([tuple(s) if isinstance(s, (tuple, list)) else s for s in stats], dtype=float)


#: Every decomposed aggregation by its name, which lmms-eval writes in a results file's task config
#: (``"aggregation": "<function cii_acc at 0x...>"``): ``hanyi report`` finds the ``combine`` behind a logged metric
#: here, without importing any task code (:mod:`hanyi.results.aggregations`).
BY_NAME: dict[str, Callable] = {}
#: The modules that define the aggregations hanyi's task YAMLs name, imported by :func:`by_name`.
AGGREGATION_MODULES: tuple[str, ...] = (
    "hanyi.metrics.punrebus_aggregations",
    "hanyi.metrics.cvlue_aggregations",
    "hanyi.metrics.cii_aggregations",
    "hanyi.metrics.unpie_aggregations",
    "hanyi.metrics.vulca_aggregations",
    "hanyi.metrics.vulca_bench_aggregations",
)


def by_name(name: str):
    """The decomposed aggregation registered under ``name`` (after importing :data:`AGGREGATION_MODULES`), or None."""
    import importlib

    for module in AGGREGATION_MODULES:
        importlib.import_module(module)
    return BY_NAME.get(name)


def decomposed(combine: Callable = mean, *, light: bool = False, name: str | None = None):
    """Decorator: the decorated function is ``per_doc``; the result is the aggregation ``combine(per_doc(items))``.

    >>> @decomposed()
    ... def share_correct(items):
    ...     return [float(it["ok"]) for it in items]
    >>> share_correct([{"ok": True}, {"ok": False}]), share_correct.per_doc([{"ok": True}])
    (0.5, [1.0])

    ``light=True`` says ``per_doc`` is cheap and needs nothing but the items (no backbone, no network), so the report may
    recompute it from the items in a sample log that has no ``hanyi_per_doc`` statistics (older runs).
    """

    def wrap(per_doc: Callable) -> Callable:
        @functools.wraps(per_doc)
        def aggregate(items, *args, **kwargs):
            return combine(as_array(per_doc(items)))

        aggregate.per_doc = per_doc
        aggregate.combine = combine
        aggregate.light = light
        if name:  # lmms-eval prints the aggregation's name in the results' task config
            aggregate.__name__ = aggregate.__qualname__ = name
        BY_NAME.setdefault(aggregate.__name__, aggregate)
        return aggregate

    return wrap


def is_decomposed(fn) -> bool:
    return callable(getattr(fn, "per_doc", None)) and callable(getattr(fn, "combine", None))


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space (the log pmf built by its ratio recursion, vectorised:
    fast at CVLUE's 26,892 docs)."""
    import numpy as np

    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    i = np.arange(1, k + 1, dtype=float)
    steps = np.log(n - i + 1) - np.log(i) + (lp - lq)  # log pmf(i) - log pmf(i - 1)
    logs = np.concatenate(([n * lq], n * lq + np.cumsum(steps)))
    top = float(logs.max())
    return min(1.0, math.exp(top) * float(np.exp(logs - top).sum()))


def _solve(f, lo: float = 0.0, hi: float = 1.0, iters: int = 80) -> float:
    """The root of an increasing ``f`` on [lo, hi] by bisection."""
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval for ``k`` successes in ``n`` trials.

    >>> [round(x, 4) for x in clopper_pearson(7, 20)]
    [0.1539, 0.5922]
    >>> clopper_pearson(0, 10)[0], clopper_pearson(10, 10)[1]
    (0.0, 1.0)
    """
    if n <= 0:
        raise ValueError("clopper_pearson needs n > 0")
    alpha = 1 - level
    lower = 0.0 if k == 0 else _solve(lambda p: (1 - _binom_cdf(k - 1, n, p)) - alpha / 2)
    upper = 1.0 if k == n else _solve(lambda p: alpha / 2 - _binom_cdf(k, n, p))
    return lower, upper


def _percentile(values, q: float) -> float:
    import numpy as np

    return float(np.percentile(values, 100 * q))


def bootstrap(combine: Callable, stats, iters: int = ITERS, seed: int = SEED, level: float = LEVEL) -> dict:
    """Percentile bootstrap of ``combine`` over the rows of ``stats`` (units resampled with replacement, seeded).

    Returns ``{"value", "ci_low", "ci_high", "stderr", "method", "n"}``; ``stderr`` is the standard deviation of the
    resampled aggregates. A share of 0/1 statistics (:func:`is_proportion`: a plain mean, or a mean over the finite
    ones) gets the exact Clopper–Pearson interval and the closed-form standard error instead. NaN resamples (e.g. a resample with no unit in a subset) are dropped; if more
    than 5 % are NaN there is no interval (``ci_low`` None, ``why`` set).

    >>> out = bootstrap(mean, as_array([0.2, 0.4, 0.6, 0.8]), iters=500)
    >>> round(out["value"], 2), out["ci_low"] >= 0.2, out["ci_high"] <= 0.8, out["n"]
    (0.5, True, True, 4)
    """
    import numpy as np

    arr = np.asarray(stats, dtype=float)
    n = len(arr)
    value = float(combine(arr)) if n else float("nan")
    out = {"value": value, "n": n}
    if n == 0 or not math.isfinite(value):
        return {**out, "ci_low": None, "ci_high": None, "stderr": None, "why": "no scored unit"}
    if is_proportion(combine, arr):
        scored = arr[np.isfinite(arr)]
        k, m = int(scored.sum()), len(scored)
        low, high = clopper_pearson(k, m, level)
        se = math.sqrt(value * (1 - value) / (m - 1)) if m > 1 else 0.0  # lmms-eval's mean_stderr on 0/1 items
        return {**out, "n": m, "ci_low": low, "ci_high": high, "stderr": se, "method": "exact (Clopper-Pearson)"}
    rng = np.random.default_rng(seed)
    values = np.empty(iters)
    one = _fast_resample(combine, arr)
    for i in range(iters):
        idx = rng.integers(0, n, size=n)
        values[i] = one(idx) if one is not None else combine(arr[idx])
    method = f"bootstrap over units re-running the aggregation ({iters}, seed {seed})"
    why = f"the aggregate is undefined on {int((~np.isfinite(values)).sum())} of {iters} resamples"
    return _percentile_record(out, values, level, method, why)


def _percentile_record(out: dict, values, level: float, method: str, why: str) -> dict:
    """``out`` plus the percentile interval and standard deviation of the resampled aggregates ``values``; no
    interval (``why``) when the value is undefined or more than 5 % of the resamples are."""
    import numpy as np

    finite = values[np.isfinite(values)]
    if not math.isfinite(out["value"]) or len(finite) < 0.95 * len(values):
        return {**out, "ci_low": None, "ci_high": None, "stderr": None, "why": why, "method": method}
    alpha = 1 - level
    return {
        **out,
        "ci_low": _percentile(finite, alpha / 2),
        "ci_high": _percentile(finite, 1 - alpha / 2),
        "stderr": float(finite.std(ddof=1)) if len(finite) > 1 else 0.0,
        "method": method,
    }


def _counted(combine: Callable, arr):
    """For a mean-like ``combine`` of 1-D statistics, the mask of the statistics it averages (all of them for a plain
    mean; the non-NaN ones for :func:`nan_mean` / :func:`rate`; the finite ones for the other :data:`FINITE_MEANS`);
    None for any other combine. The one rule behind :func:`_fast_resample`, :func:`standard_error` and
    :func:`is_proportion`."""
    import numpy as np

    if arr.ndim != 1:
        return None
    if combine in PLAIN_MEANS:
        return np.ones(len(arr), dtype=bool)
    if combine in (nan_mean, rate):
        return ~np.isnan(arr)
    if combine in FINITE_MEANS:
        return np.isfinite(arr)
    return None


def _fast_resample(combine: Callable, arr):
    """For a mean-like ``combine`` of 1-D statistics, a function of the resample's indices that computes the same mean
    with numpy (a resample needs no bit-exact sum, only the point value does); else None. At CVLUE's 21,507 VQA docs
    this turns a resample from ~1 ms (Python ``sum`` over a list) into ~0.1 ms."""
    import numpy as np

    keep = _counted(combine, arr)
    if keep is None or combine is percent_share:
        return None  # percent_share: shares of true values get the exact interval, never a bootstrap
    if combine in PLAIN_MEANS:
        return lambda idx: float(arr[idx].mean()) if len(idx) else 0.0
    vals = np.where(keep, arr, 0.0)
    empty = math.nan if combine in (nan_mean, rate) else 0.0

    def one(idx):
        count = int(keep[idx].sum())
        return float(vals[idx].sum() / count) if count else empty

    return one


def mean_scale(combine: Callable) -> float | None:
    """The factor ``f`` when ``combine`` is ``f`` x the mean of the statistics it counts (1.0 for the mean-likes of
    :func:`_counted`; a combine's own ``mean_scale`` attribute, e.g. 100 for METEOR x100); None for any other."""
    if combine in PLAIN_MEANS or combine in FINITE_MEANS or combine is nan_mean:
        return 1.0
    return getattr(combine, "mean_scale", None)


def split_rows(combine: Callable, arr) -> list | None:
    """For a mean over splits (``combine.split_column`` and ``combine.inner``, e.g. UNPIE's All), each split's
    statistics without the split column (1-D for one statistic), splits in order of first appearance; else None."""
    import numpy as np

    column, inner = getattr(combine, "split_column", None), getattr(combine, "inner", None)
    if column is None or inner is None or arr.ndim != 2:
        return None
    parts = []
    for code in dict.fromkeys(arr[:, column].tolist()):
        rows = np.delete(arr[arr[:, column] == code], column, axis=1)
        parts.append(rows[:, 0] if rows.shape[1] == 1 else rows)
    return parts


def standard_error(combine: Callable, stats, iters: int = ITERS, seed: int = SEED) -> float | None:
    """The standard error of ``combine(stats)`` for lmms-eval's Stderr column: for a mean of 1-D statistics (a share
    of 0/1 ones included) the closed form lmms-eval's ``mean_stderr`` uses, ``sd(ddof=1) / sqrt(m)`` over the
    statistics the mean counts (times the combine's :func:`mean_scale`); for a mean over k splits (UNPIE's All, the
    unweighted mean of the splits' values) the standard error of a mean of k independent values,
    ``sqrt(sum of the splits' squared standard errors) / k``; for any other combine the standard deviation of
    :func:`bootstrap`'s resamples. ``None`` when there is none (no unit, or an undefined aggregate).

    >>> round(standard_error(mean, as_array([0.0, 1.0, 1.0, 0.0])), 4)
    0.2887
    """
    import numpy as np

    arr = np.asarray(stats, dtype=float)
    parts = split_rows(combine, arr)
    if parts is not None:
        errors = [standard_error(combine.inner, rows, iters, seed) for rows in parts]
        if not errors or any(e is None for e in errors):
            return None
        return math.sqrt(sum(e * e for e in errors)) / len(errors)
    keep = _counted(combine, arr)
    scale = mean_scale(combine)
    if keep is None and scale is not None and arr.ndim == 1:
        keep = np.ones(len(arr), dtype=bool)
    if keep is not None:
        kept = arr[keep]
        if len(kept) == 0 or not bool(np.isfinite(kept).all()):
            return None
        return float(scale * kept.std(ddof=1) / math.sqrt(len(kept))) if len(kept) > 1 else 0.0
    return bootstrap(combine, arr, iters=iters, seed=seed).get("stderr")


def is_proportion(combine: Callable, stats) -> bool:
    """Whether ``combine(stats)`` is a share of 0/1 statistics: a plain mean of 1-D 0/1 values, or a mean of the finite
    ones (:data:`FINITE_MEANS`) when those are 0/1 and there is at least one."""
    import numpy as np

    arr = np.asarray(stats, dtype=float)
    keep = _counted(combine, arr)
    if keep is None or combine is nan_mean or not keep.any():
        return False  # nan_mean: a mean, not declared a proportion (rate is)
    return bool(np.isin(arr[keep], (0.0, 1.0)).all())
