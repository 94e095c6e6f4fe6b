"""VULCA-Bench aggregations, named in the task YAMLs (``!function aggregate.<name>``, bound in
``hanyi/tasks/vulca_bench/aggregate.py``): means of the per-critique numbers ``vulca_bench_process_results`` logged.

The release averages its per-sample DCR and overall layer score over the samples (``calculate_dcr.evaluate_results``:
``sum / len`` then rounded to 4; ``layer_scorer.evaluate_file``: rounded to 2); the task keeps the unrounded mean,
summed left to right as the release does (docs/vulca_bench.md). The 1-5 scores combine with ``nan_mean`` (the same
arithmetic), which the report never takes for a share of 0/1 values: a run whose every layer score is 1 gets no
proportion's interval reaching below the scale. All are decomposed
(:func:`hanyi.metrics.resample.decomposed`) so ``hanyi report`` recomputes their intervals from the sample log.
"""

from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, nan_mean, sum_mean


@decomposed(sum_mean, light=True, name="vulca_bench_dcr")
def vulca_bench_dcr(items):
    """Mean Dimension Coverage Rate (0-1): each item's ``score`` is the release's per-critique ``dcr``.

    >>> vulca_bench_dcr([{"score": 0.5}, {"score": 0.25}])
    0.375
    """
    return [float(x["score"]) for x in items]


@decomposed(nan_mean, light=True, name="vulca_bench_layer_score")
def vulca_bench_layer_score(items):
    """Mean overall layer score (1-5): each item's ``score`` is the release's ``overall_score``.

    >>> vulca_bench_layer_score([{"score": 3.0}, {"score": 2.2}])
    2.6
    """
    return [float(x["score"]) for x in items]


@decomposed(fsum_mean_of_finite, light=True, name="vulca_bench_mean_robust")
def vulca_bench_mean_robust(items):
    """Mean of our per-critique scores over the critiques that have one (NaN: not scored), exactly rounded sum.

    >>> vulca_bench_mean_robust([{"score": 1.0}, {"score": float("nan")}, {"score": 0.5}])
    0.75
    """
    return [float(x["score"]) for x in items]


@decomposed(nan_mean, light=True, name="vulca_bench_judge_score")
def vulca_bench_judge_score(items):
    """Mean uncalibrated judge score (1-5) over the critiques the judge scored (a failed or unparsed verdict is NaN
    and left out of the mean; its count is logged per item).

    >>> vulca_bench_judge_score([{"score": 4.0}, {"score": float("nan")}, {"score": 2.0}])
    3.0
    """
    return [float(x["score"]) for x in items]
