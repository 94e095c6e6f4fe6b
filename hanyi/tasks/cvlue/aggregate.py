"""The aggregations the CVLUE task YAMLs name (``!function aggregate.cvlue_mean`` ...), defined in
:mod:`hanyi.metrics.cvlue_aggregations` so that the sample-log breakdowns find them without this package."""

from hanyi.metrics.cvlue_aggregations import (  # noqa: F401  (named by the task YAMLs)
    cvlue_itr_parse_failure_rate,
    cvlue_itr_r1,
    cvlue_itr_r5,
    cvlue_itr_r10,
    cvlue_itr_stage1_ceiling,
    cvlue_mean,
)
