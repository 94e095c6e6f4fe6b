"""Uncertainty for the report: 95 % intervals for headline numbers and paired comparisons of two runs.

Per-doc scores come from lmms-eval's sample log (``--log_samples``): the item a task's ``process_results`` returned
for a metric, one per doc. :func:`hanyi.results.perdoc.per_doc_scores` reads the per-doc value (a number, or a dict's ``correct`` /
``instance_score``) and keeps it only when the mean of those values reproduces the aggregated number lmms-eval
reported (as a fraction or a percentage), so an interval is never attached to an aggregate that is not a per-doc mean.

* **Intervals** (:func:`interval`) and the **paired comparison** (:func:`paired`, on the docs both runs scored, matched
  by task and ``doc_id``) are :mod:`hanyi.metrics.intervals`' methods, one per kind of number, over docs or over
  the clusters the task's ``cluster_key`` names (:func:`hanyi.results.perdoc.cluster_labels`).
"""

from __future__ import annotations

from hanyi.metrics.intervals import mcnemar_exact  # noqa: F401  (one source, re-exported)
from hanyi.metrics.resample import ITERS as BOOTSTRAP_ITERS
from hanyi.metrics.resample import LEVEL, SEED, _binom_cdf, clopper_pearson  # noqa: F401  (one source, re-exported)


def interval(values: list[float], clusters: list | None = None) -> dict:
    """The interval record of the plain mean of per-doc ``values`` (in their unit; :func:`hanyi.metrics.intervals.interval`:
    exact Clopper–Pearson for 0/1 values, clustered by the design effect; else a bootstrap over docs or clusters)."""
    from hanyi.metrics import intervals, resample

    return intervals.interval(resample.sum_mean, values, clusters)


def paired(
    a: dict[int, float],
    b: dict[int, float],
    iters: int = BOOTSTRAP_ITERS,
    seed: int = SEED,
    clusters: dict | None = None,
) -> dict | None:
    """Compare two runs' per-doc scores on the docs both have (:func:`hanyi.metrics.intervals.paired`: difference
    B − A, paired bootstrap CI over docs, or over the clusters ``clusters`` maps doc keys to; McNemar; MDD)."""
    from hanyi.metrics import intervals

    shared = sorted(set(a) & set(b), key=str)
    if not shared:
        return None
    labels = None if not clusters else [clusters.get(d) for d in shared]
    return intervals.paired([a[d] for d in shared], [b[d] for d in shared], labels, iters=iters, seed=seed)
