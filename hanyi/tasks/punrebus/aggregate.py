"""Pun Rebus Art aggregations named in the task YAMLs (``aggregate.<name>``), defined in
hanyi/metrics/punrebus_aggregations.py: accuracies over parsed / all docs, the element scores, the expression judge.
Items come from ``utils``' ``process_results``. The per-category accuracies and the confusion rows are computed
from the sample log. See docs/punrebus.md."""

from hanyi.metrics.punrebus_aggregations import (  # noqa: F401  (named by the YAMLs as aggregate.*)
    punrebus_accuracy_over_all,
    punrebus_accuracy_over_parsed,
    punrebus_element_sim,
    punrebus_judge_score,
    punrebus_mean_over_parsed,
)
