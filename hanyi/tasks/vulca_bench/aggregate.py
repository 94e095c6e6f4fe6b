"""VULCA-Bench aggregations named in the task YAMLs (``!function aggregate.<name>``): defined in
:mod:`hanyi.metrics.vulca_bench_aggregations` (means of the numbers ``utils.vulca_bench_process_results`` logged per
critique). The per-layer numbers are computed from the sample log. See docs/vulca_bench.md."""

from hanyi.metrics.vulca_bench_aggregations import (
    vulca_bench_dcr,
    vulca_bench_judge_score,
    vulca_bench_layer_score,
    vulca_bench_mean_robust,
)

__all__ = ["vulca_bench_dcr", "vulca_bench_judge_score", "vulca_bench_layer_score", "vulca_bench_mean_robust"]
