"""VULCA aggregations named in the task YAMLs (``!function aggregate.<name>``): defined in
:mod:`hanyi.metrics.vulca_aggregations` (cheap combines of the numbers ``utils.vulca_process_results`` logged per
critique). Every other VULCA number is computed from the sample log. See docs/vulca.md."""

from hanyi.metrics.vulca_aggregations import vulca_expert_alignment, vulca_json_valid_rate

__all__ = ["vulca_expert_alignment", "vulca_json_valid_rate"]
