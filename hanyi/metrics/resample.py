"""Aggregations that split into per-doc statistics, so every headline number can carry a bootstrap interval.

Most of hanyi's aggregations are not a plain mean of what ``process_results`` logged: corpus BLEU-4 sums n-gram
counts over the corpus, BERTScore/chrF disambiguation scores every doc's pair at aggregation time in one batch,
CVLUE's ITR scores one unit per query, VULCA averages NLI profiles. Each such aggregation is written as two steps:

* ``per_doc(items)``: one statistic per scored unit (a float, or a tuple of floats of fixed length), where all
  the expensive work (backbones, parsing) happens once;
* ``combine(stats)``: the aggregate from a ``numpy`` array of those statistics (shape ``(n,)`` or ``(n, k)``);
  cheap, so it can run on thousands of resamples.

:func:`decomposed` builds the aggregation from the two, so ``agg(items) == combine(per_doc(items))`` holds by
construction, and exposes both as ``agg.per_doc`` / ``agg.combine``. :func:`bootstrap` then resamples units with
replacement (seeded) and re-runs ``combine``: a percentile bootstrap of the *aggregation itself* (Efron & Tibshirani
1993, ch. 13; for BLEU this is Koehn 2004's bootstrap over sentences). A mean of 0/1 statistics instead gets the exact
Clopper–Pearson interval (:func:`hanyi.report.stats.clopper_pearson`).
"""

from __future__ import annotations

import functools
import math
from typing import Callable, Sequence

#: Level, resamples and seed of every bootstrap interval (the report's are the same: ``hanyi.report.stats``).
LEVEL = 0.95
ITERS = 2000
SEED = 1234


def mean(stats):
    """Default ``combine``: the arithmetic mean of 1-D statistics (0.0 for none, like lmms-eval's ``mean``)."""
    return float(stats.mean()) if len(stats) else 0.0


def as_array(stats: Sequence):
    """``per_doc`` output as a float array, ``(n,)`` for scalars and ``(n, k)`` for tuples."""
    import numpy as np

    if len(stats) == 0:
        return np.zeros((0,), dtype=float)
    return np.asarray([tuple(s) if isinstance(s, (tuple, list)) else s for s in stats], dtype=float)


def decomposed(combine: Callable = mean):
    """Decorator: the decorated function is ``per_doc``; the result is the aggregation ``combine(per_doc(items))``.

    >>> @decomposed()
    ... def share_correct(items):
    ...     return [float(it["ok"]) for it in items]
    >>> share_correct([{"ok": True}, {"ok": False}]), share_correct.per_doc([{"ok": True}])
    (0.5, [1.0])
    """

    def wrap(per_doc: Callable) -> Callable:
        @functools.wraps(per_doc)
        def aggregate(items, *args, **kwargs):
            return combine(as_array(per_doc(items)))

        aggregate.per_doc = per_doc
        aggregate.combine = combine
        return aggregate

    return wrap


def is_decomposed(fn) -> bool:
    return callable(getattr(fn, "per_doc", None)) and callable(getattr(fn, "combine", None))


def _percentile(values, q: float) -> float:
    import numpy as np

    return float(np.percentile(values, 100 * q))


def bootstrap(combine: Callable, stats, iters: int = ITERS, seed: int = SEED, level: float = LEVEL) -> dict:
    """Percentile bootstrap of ``combine`` over the rows of ``stats`` (units resampled with replacement, seeded).

    Returns ``{"value", "ci_low", "ci_high", "stderr", "method", "n"}``; ``stderr`` is the standard deviation of the
    resampled aggregates. A 1-D 0/1 ``stats`` combined by :func:`mean` gets the exact Clopper–Pearson interval and the
    closed-form standard error instead. NaN resamples (e.g. a resample with no unit in a subset) are dropped; if more
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
    if combine is mean and arr.ndim == 1 and bool(np.isin(arr, (0.0, 1.0)).all()):
        from hanyi.report.stats import clopper_pearson

        low, high = clopper_pearson(int(arr.sum()), n, level)
        se = math.sqrt(value * (1 - value) / (n - 1)) if n > 1 else 0.0  # lmms-eval's mean_stderr on 0/1 items
        return {**out, "ci_low": low, "ci_high": high, "stderr": se, "method": "exact (Clopper-Pearson)"}
    rng = np.random.default_rng(seed)
    values = np.empty(iters)
    for i in range(iters):
        values[i] = combine(arr[rng.integers(0, n, size=n)])
    finite = values[np.isfinite(values)]
    method = f"bootstrap over units re-running the aggregation ({iters}, seed {seed})"
    if len(finite) < 0.95 * iters:
        return {**out, "ci_low": None, "ci_high": None, "stderr": None, "why": "the aggregate is undefined on "
                f"{iters - len(finite)} of {iters} resamples", "method": method}
    alpha = 1 - level
    return {
        **out,
        "ci_low": _percentile(finite, alpha / 2),
        "ci_high": _percentile(finite, 1 - alpha / 2),
        "stderr": float(finite.std(ddof=1)) if len(finite) > 1 else 0.0,
        "method": method,
    }
