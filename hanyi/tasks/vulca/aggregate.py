"""VULCA aggregation hooks named in the task YAMLs (``aggregate.<name>``): the NLI feature profile, the rubric judge and
the embedding metrics, over the items of ``utils.vulca_process_results``. See docs/vulca.md."""

from hanyi.data.vulca_embed_reference import load_embed_reference
from hanyi.data.vulca_reference import load_reference
from hanyi.metrics import critique_per_doc as per_doc
from hanyi.metrics.critique_embed import aggregate_embed_metric
from hanyi.metrics.critique_rubric import (
    RUBRICS,
    UNSCORED,
    judge_rubric,
    rubric_template_vars,
    rubric_value,
    unscored_count,
)
from hanyi.metrics.critique_scoring import aggregate_critique_metric
from hanyi.tasks._common import render


def vulca_aggregate(items):
    """The chance levels' aggregation (a constant of the reference, no per-critique decomposition)."""
    return aggregate_critique_metric(items, load_reference())


def _rubric_summary(metric, items):
    from hanyi.metrics.judge import JudgeConfig

    return judge_rubric(metric, _rubric_prompts(metric, items), JudgeConfig.from_env())


def _rubric_prompts(metric, items):
    return [
        render("vulca", "rubric_judge.jinja", title=it.title, critique=it.critique, **rubric_template_vars(metric))
        for it in items
    ]


def vulca_rubric_aggregate(items):
    """Mean judge level of one rubric (all items share the metric), or the unscored count over all three rubrics."""
    metric = items[0].metric
    if metric == UNSCORED:
        return unscored_count([_rubric_summary(m, items) for m in RUBRICS])
    return rubric_value(_rubric_summary(metric, items))


def vulca_embed_aggregate(items):
    return aggregate_embed_metric(items, load_embed_reference())


# Per-metric aggregations split into per-critique statistics + a combine (hanyi.metrics.critique_per_doc), so each
# metric gets an interval: vulca_<metric> for every NLI metric but the chance levels, the rubric means, sem_sim_*.
globals().update({f"vulca_{m}": per_doc.nli_aggregation(m, load_reference) for m in per_doc.DECOMPOSED_NLI})
globals().update({f"vulca_{m}": per_doc.rubric_aggregation(m, _rubric_prompts) for m in RUBRICS})
globals().update({f"vulca_{m}": per_doc.embed_aggregation(m, load_embed_reference) for m in per_doc.DECOMPOSED_EMBED})
