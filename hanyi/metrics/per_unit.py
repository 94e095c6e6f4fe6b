"""Per-doc decompositions of aggregations whose docs may be left out (UNPIE, VULCA): exact combines and a memo.

:func:`hanyi.metrics.resample.decomposed` splits an aggregation into ``per_doc`` + ``combine`` so that a bootstrap
can re-run it on resampled docs (Efron & Tibshirani 1993, ch. 13). Here ``per_doc`` returns **one statistic per
item**, in item order, so each doc's statistic can be stored next to its sample; a doc that is not a scored unit
(an UNPIE disambiguation doc whose image did not resolve, a judge request that failed, a rubric answer without a
score, every critique when the NLI model is missing) gets NaN, and the combines below skip NaN rows. Each combine
repeats the arithmetic of the aggregation it replaces operation for operation (Python's left-to-right ``sum``, the
same division), so values are bit-identical to the former aggregations, which the tests check.

:func:`decomposed_items` also memoises ``per_doc`` by the identity of the items list, so the aggregation and the
in-run interval hook, which calls ``agg.per_doc(items)`` on the same list right after, share one pass of the
expensive work (BERTScore, judge calls). The memo holds a reference to each remembered list, so an ``id`` cannot be
reused by another list while its entry lives; a list whose length changed is recomputed.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable

from hanyi.metrics.resample import as_array

#: Remembered (items, args) -> per_doc results per decorated function; the oldest entry is dropped first.
MEMO_SIZE = 32


def _finite(stats) -> list[float]:
    return [x for x in stats.tolist() if x == x]  # NaN != NaN


def rate(stats) -> float:
    """Share of 1s among the non-NaN rows of a 0/1 ``stats`` (NaN when none): a proportion.

    Carries ``proportion = True``: the exact (Clopper–Pearson) interval applies to its non-NaN rows.

    >>> import numpy as np
    >>> rate(np.array([1.0, 0.0, float("nan"), 1.0])), math.isnan(rate(np.array([float("nan")])))
    (0.6666666666666666, True)
    """
    kept = _finite(stats)
    return sum(kept) / len(kept) if kept else math.nan


rate.proportion = True


def nan_mean(stats) -> float:
    """Left-to-right mean of the non-NaN rows of 1-D ``stats`` (NaN when none), as ``sum(xs) / len(xs)``.

    >>> import numpy as np
    >>> nan_mean(np.array([0.5, float("nan"), 0.25]))
    0.375
    """
    kept = _finite(stats)
    return sum(kept) / len(kept) if kept else math.nan


def interval(combine: Callable, stats, **kwargs) -> dict:
    """:func:`hanyi.metrics.resample.bootstrap` of ``combine`` over ``stats``, except that a proportion (a combine with
    ``proportion = True``, like :func:`rate`) gets the exact Clopper–Pearson interval of its non-NaN 0/1 rows, as
    ``bootstrap`` gives :func:`~hanyi.metrics.resample.mean`; the value is the same number.

    >>> import numpy as np
    >>> out = interval(rate, np.array([1.0, float("nan"), 0.0, 1.0, 1.0]))
    >>> out["value"], out["n"], out["method"]
    (0.75, 4, 'exact (Clopper-Pearson)')
    """
    import numpy as np

    from hanyi.metrics import resample

    arr = np.asarray(stats, dtype=float)
    if getattr(combine, "proportion", False) and arr.ndim == 1:
        kept = arr[~np.isnan(arr)]
        if bool(np.isin(kept, (0.0, 1.0)).all()):
            return resample.bootstrap(resample.mean, kept, **kwargs)
    return resample.bootstrap(combine, arr, **kwargs)


def _remember(per_doc: Callable) -> Callable:
    memo: OrderedDict = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(per_doc)
    def remembered(items, *args, **kwargs):
        key = (id(items), args, tuple(sorted(kwargs.items())))
        with lock:
            hit = memo.get(key)
            if hit is not None and hit[0] is items and hit[1] == len(items):
                memo.move_to_end(key)
                return list(hit[2])
        stats = per_doc(items, *args, **kwargs)
        with lock:
            memo[key] = (items, len(items), list(stats))
            while len(memo) > MEMO_SIZE:
                memo.popitem(last=False)
        return stats

    remembered.forget = memo.clear
    return remembered


def decomposed_items(combine: Callable, name: str | None = None) -> Callable:
    """Decorator like :func:`hanyi.metrics.resample.decomposed`, for a ``per_doc`` giving one stat per item.

    The aggregation is ``combine(as_array(per_doc(items)))``; ``per_doc`` is memoised by the items list's identity
    (module docstring), so ``agg(items)`` then ``agg.per_doc(items)`` does the expensive work once. ``name`` names
    the aggregation (``__name__`` and ``__qualname__``: lmms-eval prints it in the results' task config).

    >>> calls = []
    >>> @decomposed_items(rate)
    ... def ok(items):
    ...     calls.append(1)
    ...     return [float(it) for it in items]
    >>> items = [True, False, True, True]
    >>> ok(items), ok.per_doc(items), len(calls)
    (0.75, [1.0, 0.0, 1.0, 1.0], 1)
    """

    def wrap(per_doc: Callable) -> Callable:
        remembered = _remember(per_doc)

        @functools.wraps(per_doc)
        def aggregate(items, *args, **kwargs):
            return combine(as_array(remembered(items, *args, **kwargs)))

        aggregate.per_doc = remembered
        aggregate.combine = combine
        if name:
            aggregate.__name__ = aggregate.__qualname__ = name
        return aggregate

    return wrap
