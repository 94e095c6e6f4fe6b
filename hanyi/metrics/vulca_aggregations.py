"""VULCA's aggregations, named in the task YAMLs (``!function aggregate.<name>``, bound in
``hanyi/tasks/vulca/aggregate.py``): cheap, order-independent combines of the numbers that
``vulca_process_results`` logged per critique (each critique is scored there, the backbones loaded once per process).

Paper: Yu, Ruiz-Dolz, Yi, EMNLP 2025, §4.4 and Table 1 (docs/vulca.md). Both are decomposed
(:func:`hanyi.metrics.resample.decomposed`) under their lmms-eval names, so ``hanyi report`` finds the ``combine``
behind a logged metric by the name in the results file and recomputes its interval from the sample log alone.
"""

import math

from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, sum_mean


def max_of_finite(stats):
    """``combine``: the largest finite statistic; NaN when there is none. The same value in any order."""
    finite = [float(x) for x in stats if math.isfinite(float(x))]
    return max(finite) if finite else math.nan


def _field(item, name: str) -> float:
    """``item[name]``; an item of a run made before task version 0.7 is the number itself."""
    return float(item[name] if isinstance(item, dict) else item)


@decomposed(fsum_mean_of_finite, light=True, name="vulca_expert_alignment")
def vulca_expert_alignment(items):
    """Expert Alignment (paper §4.4, Table 1): ``EA = (1/N) * sum_i 1[max_c cos(p_i, mu_c) > 0.7]``, where ``p_i`` is
    critique ``i``'s 47-d profile vector and ``mu_c`` the human profile centroids. Each item holds the critique's
    indicator ``score`` (1.0 or 0.0, computed in ``process_results``) and the chance level; the aggregate is the
    indicators' share with an exactly rounded sum, the same in any order."""
    return [_field(x, "score") for x in items]


@decomposed(max_of_finite, light=True, name="vulca_chance")
def vulca_chance(items):
    """Expert Alignment's chance level (docs/vulca.md: uniform random label scores, fixed seed): a constant of the
    shipped human reference that every critique's ``expert_alignment`` item carries (``chance``); the aggregate is
    that constant (their maximum), NaN for none. ``hanyi report`` computes it (hanyi/metrics/vulca_breakdowns.py)."""
    return [float(x["chance"]) for x in items]


@decomposed(sum_mean, light=True, name="vulca_json_valid_rate")
def vulca_json_valid_rate(items):
    """Share of critiques whose answer holds a valid JSON object; per critique its ``score`` (0/1), summed left to
    right as lmms-eval's ``mean`` (the aggregation before task version 0.7), the same in any order."""
    return [_field(x, "score") for x in items]


@decomposed(sum_mean, light=True, name="vulca_empty_response_rate")
def vulca_empty_response_rate(items):
    """Share of empty answers (nothing but white space); per critique the ``empty`` of its ``json_valid_rate`` item.
    ``hanyi report`` computes it (hanyi/metrics/vulca_breakdowns.py)."""
    return [float(x["empty"]) for x in items]
