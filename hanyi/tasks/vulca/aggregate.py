"""VULCA aggregations named in the task YAMLs (``aggregate.<name>``): cheap combines of the numbers that
``utils.vulca_process_results`` returned per critique (each critique is scored there). Every other VULCA number
(profiles, per-feature scores, rubric and embedding metrics) is computed by ``hanyi report`` from the sample log
(:mod:`hanyi.metrics.vulca_breakdowns`). See docs/vulca.md."""

import math

from hanyi.metrics.resample import decomposed, fsum_mean_of_finite


@decomposed(fsum_mean_of_finite, light=True, name="vulca_expert_alignment")
def vulca_expert_alignment(items):
    """Per critique 1.0 when its 47-d profile vector is within cosine 0.7 of a human profile centroid, else 0.0
    (paper §4.4, Table 1); the aggregate is their share, an exact sum in any order."""
    return [float(x) for x in items]


def vulca_chance(items):
    """The chance level every critique carries (a constant of the shipped human reference); NaN for none. ``max``:
    the same value whatever the order of the items."""
    return max(float(x) for x in items) if items else math.nan
