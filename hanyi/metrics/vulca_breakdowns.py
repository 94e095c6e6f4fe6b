"""VULCA numbers computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

A VULCA task emits Expert Alignment (paper Table 1) and one diagnostic, ``json_valid_rate``. Their logged items
hold what the report shows beside them under the names the task emitted before version 0.7, with the former
aggregations: ``expert_alignment_chance`` (``_custom_model``), the chance level, from each ``expert_alignment`` item's
``chance`` (shown next to Expert Alignment: registered first); ``empty_response_rate`` from each ``json_valid_rate``
item's ``empty``. Its ``process_results`` also logs each critique's zero-shot NLI scores (``vulca_nli``, or ``vulca_nli_custom_model`` with an
NLI model or template other than the released code's), its embedding (``vulca_embed[_custom_model]``) and its rubric
judge levels (``vulca_rubric``). From those, with no model, the report computes every other number under the name the
task emitted before: ``profile_*`` (Table 5), ``feat_*`` (Table 4), ``qual_*`` (Table 7), ``primary_profile_rate_*``,
``expert_alignment_centered`` (+ chance), ``profile_cosine_max``, ``feature_profile_l1_to_human``, ``sem_*`` and
``rubric_*``; same formulas, and means summed in doc order as the former aggregations did.
"""

from __future__ import annotations

from hanyi.metrics import critique_embed, critique_rubric, critique_scoring
from hanyi.metrics.critique_profile import LACKS_FOCUS, QUALITY_LABELS
from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.vulca_aggregations import vulca_chance, vulca_empty_response_rate

TASKS = r"vulca_.*"
CUSTOM = "_custom_model"
#: The weakness labels (the last five quality labels), "lacks specific focus" and the distance: lower is better.
NLI_LOWER = (
    *(f"qual_{critique_scoring.slug(label)}" for label in QUALITY_LABELS[6:]),
    f"primary_profile_rate_{LACKS_FOCUS}",
    "feature_profile_l1_to_human",
)
EMBED_LOWER = ("sem_mean_pairwise_cosdist",)
RUBRIC_LOWER = (critique_rubric.UNSCORED,)
_NLI = tuple(m for m in critique_scoring.NLI_METRICS if m not in critique_scoring.EMITTED)
#: Every name these breakdowns can give (the anchors' upkeep check reads it).
METRICS = (
    "expert_alignment_chance",
    "expert_alignment_chance_custom_model",
    "empty_response_rate",
    *_NLI,
    *critique_embed.EMBED_METRICS,
    *(name + "_custom_model" for name in (*_NLI, *critique_embed.EMBED_METRICS)),
    *critique_rubric.RUBRIC_METRICS,
)


def _custom(names):
    return tuple(name + CUSTOM for name in names)


def _with_suffix(values: dict) -> dict:
    return {name + CUSTOM: value for name, value in values.items()}


@breakdown(TASKS, "expert_alignment", intervals={"expert_alignment_chance": vulca_chance})
def chance_level(items):
    """Expert Alignment's chance level from the logged ``expert_alignment`` items (the former ``vulca_chance``)."""
    return {"expert_alignment_chance": vulca_chance(items)}


@breakdown(TASKS, "expert_alignment" + CUSTOM, intervals={"expert_alignment_chance" + CUSTOM: vulca_chance})
def chance_level_custom_model(items):
    """:func:`chance_level` of a run with a non-paper NLI model or template, under its ``_custom_model`` name."""
    return _with_suffix(chance_level(items))


@breakdown(
    TASKS,
    "json_valid_rate",
    lower_is_better=["empty_response_rate"],
    intervals={"empty_response_rate": vulca_empty_response_rate},
)
def empty_response_rate(items):
    """Share of empty answers from the logged ``json_valid_rate`` items (the former aggregation: lmms-eval's mean)."""
    return {"empty_response_rate": vulca_empty_response_rate(items)}


@breakdown(TASKS, "vulca_nli", lower_is_better=NLI_LOWER)
def nli_metrics(values):
    """Every NLI metric but the emitted ones, from the critiques' logged zero-shot scores."""
    from hanyi.data.vulca_reference import load_reference

    reference = load_reference()
    return {m: v for m, v in critique_scoring.metric_values(values, reference).items() if m in _NLI}


@breakdown(TASKS, "vulca_nli" + CUSTOM, lower_is_better=_custom(NLI_LOWER))
def nli_metrics_custom_model(values):
    """:func:`nli_metrics` of a run with a non-paper NLI model or template, under ``*_custom_model`` names."""
    return _with_suffix(nli_metrics(values))


@breakdown(TASKS, "vulca_embed", lower_is_better=EMBED_LOWER)
def embed_metrics(values):
    """The sem_* metrics from the critiques' logged embeddings and similarities to the human texts."""
    return critique_embed.metric_values(values)


@breakdown(TASKS, "vulca_embed" + CUSTOM, lower_is_better=_custom(EMBED_LOWER))
def embed_metrics_custom_model(values):
    """:func:`embed_metrics` of a run with an embedder other than the paper's, under ``*_custom_model`` names."""
    return _with_suffix(embed_metrics(values))


@breakdown(TASKS, "vulca_rubric", lower_is_better=RUBRIC_LOWER)
def rubric_metrics(values):
    """The rubric means and the unscored count from the critiques' logged judge levels."""
    return critique_rubric.metric_values(values)
