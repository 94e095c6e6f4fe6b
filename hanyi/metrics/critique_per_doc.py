"""VULCA aggregations split into one statistic per critique and a combine, so each metric can carry an interval.

Every VULCA task aggregates 12 critiques (one per painting). The NLI metrics (paper §3.2-§3.4, §4.4;
:mod:`hanyi.metrics.critique_scoring`), the rubric-judge means (:mod:`hanyi.metrics.critique_rubric`) and the
reference-embedding similarities (paper eq. 9-10; :mod:`hanyi.metrics.critique_embed`) are means, or a function of
means, over critiques, so a critique's statistic is its own value and the combine re-forms the aggregate:

* ``expert_alignment``, ``expert_alignment_centered``, ``primary_profile_rate_*``: 1/0 per critique, a proportion
  (:func:`hanyi.metrics.resample.rate`, exact Clopper–Pearson interval);
* ``profile_*``, ``profile_cosine_max``, ``feat_*``, ``qual_*``, the rubric scores, ``sem_sim_mean`` /
  ``sem_sim_max``: the critique's value, combined by the left-to-right mean (bootstrap over critiques);
* ``sem_mean_pairwise_cosdist``: the critique's mean similarity to the human texts, combined as 1 - mean;
* ``feature_profile_l1_to_human``: the critique's 28 feature and quality scores; the combine takes the column means
  and their L1 distance to the human mean profile (bootstrap over critiques).

Each combine repeats the former aggregation's arithmetic, so values are bit-identical (tests compare with
:func:`hanyi.metrics.critique_scoring.aggregate_critique_metric` and friends). The zero-shot NLI scores and the
embeddings are computed once per text (their caches), and judge results once per prompt (``judge_rubric``'s memo).

Not decomposed (left on the former aggregations): ``expert_alignment_chance`` / ``_centered_chance`` (a constant of
the human reference: a fixed-seed null model, no statistic of the critiques), ``sem_diversity`` and ``sem_coherence``
(set statistics over pairs of critiques and their centroid: not a function of independent per-critique units, and a
resample with repeated critiques would pair a critique with itself), ``rubric_judge_unscored`` (a count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from hanyi.metrics.critique_profile import FEATURE_LABELS, QUALITY_LABELS, l1_distance
from hanyi.metrics.critique_scoring import _FEAT, _QUAL, NLI_METRICS, critique_features, score_critique
from hanyi.metrics.resample import decomposed, nan_mean, rate

#: NLI metrics whose aggregation is decomposed (all but the two chance levels).
DECOMPOSED_NLI = tuple(m for m in NLI_METRICS if not m.endswith("_chance"))
#: Reference-embedding metrics decomposed per critique (the set metrics are not).
DECOMPOSED_EMBED = ("sem_sim_mean", "sem_sim_max", "sem_mean_pairwise_cosdist")
_PROPORTIONS = ("expert_alignment", "expert_alignment_centered")


def critique_values(metric: str, feats: Sequence[Mapping], reference: Mapping) -> list:
    """The statistic of each critique for NLI ``metric`` from its zero-shot scores (one per critique, in order)."""
    if metric in _FEAT:
        return [f["features"][_FEAT[metric]] for f in feats]
    if metric in _QUAL:
        return [f["quality"][_QUAL[metric]] for f in feats]
    if metric == "feature_profile_l1_to_human":
        return [
            tuple(float(f["features"].get(x, 0.0)) for x in FEATURE_LABELS)
            + tuple(float(f["quality"].get(x, 0.0)) for x in QUALITY_LABELS)
            for f in feats
        ]
    if metric not in DECOMPOSED_NLI:
        raise KeyError(f"VULCA metric {metric!r} has no per-critique decomposition")
    scored = [score_critique(f, reference["profile_centroids_47d"]) for f in feats]
    if metric.startswith("primary_profile_rate_"):
        return [float(s["primary"] == metric[len("primary_profile_rate_") :]) for s in scored]
    if metric == "expert_alignment":
        return [float(s["matched"]) for s in scored]
    if metric == "expert_alignment_centered":
        return [float(s["matched_centered"]) for s in scored]
    if metric == "profile_cosine_max":
        return [s["cosine"] for s in scored]
    return [s["profiles"][metric[len("profile_") :]] for s in scored]


def l1_to_human(stats, reference: Mapping | None = None) -> float:
    """``feature_profile_l1_to_human`` from per-critique 28-d rows: L1 distance of their column means (eq. 2) to the
    human mean profile; NaN without a complete row."""
    if reference is None:
        from hanyi.data.vulca_reference import load_reference

        reference = load_reference()
    if stats.ndim != 2 or not len(stats):
        return math.nan
    rows = [r for r in stats.tolist() if not any(x != x for x in r)]
    if not rows:
        return math.nan
    model = [sum(col) / len(rows) for col in zip(*rows)]
    human = [reference["mean_features"][x] for x in FEATURE_LABELS] + [
        reference["mean_quality"][x] for x in QUALITY_LABELS
    ]
    return l1_distance(model, human)


def _check(items, metric: str) -> None:
    metrics = {it.metric for it in items}
    if metrics - {metric}:
        raise ValueError(f"VULCA aggregation of {metric!r} got items of {sorted(metrics)}")


def nli_per_doc(metric: str, items: Sequence, reference: Mapping, logits_fn=None) -> list:
    """Per-critique statistics of NLI ``metric`` over ``items`` (:class:`~hanyi.metrics.critique_scoring.CritiqueItem`);
    NaN for every critique when the NLI model is unavailable (the aggregate is then NaN, as before)."""
    _check(items, metric)
    if not items:
        return []
    feats = critique_features([it.text for it in items], items[0].nli, logits_fn)
    return [math.nan] * len(items) if feats is None else critique_values(metric, feats, reference)


def nli_combine(metric: str) -> Callable:
    if metric == "feature_profile_l1_to_human":
        return l1_to_human
    return rate if metric in _PROPORTIONS or metric.startswith("primary_profile_rate_") else nan_mean


def nli_aggregation(metric: str, load_reference: Callable[[], Mapping]) -> Callable:
    """The decomposed aggregation of NLI ``metric`` (its ``_custom_model`` key uses the same one)."""

    @decomposed(nli_combine(metric), name=f"vulca_{metric}")
    def per_doc(items):
        return nli_per_doc(metric, items, load_reference())

    return per_doc


def one_minus_mean(stats) -> float:
    """``sem_mean_pairwise_cosdist``: 1 - the mean per-critique similarity (code ``analyze.py``'s simplified EMD)."""
    return 1.0 - nan_mean(stats)


def embed_per_doc(metric: str, items: Sequence, reference: Mapping | None) -> list[float]:
    """Per-critique similarity to the human texts (mean for ``sem_sim_mean`` / ``sem_mean_pairwise_cosdist``, max
    for ``sem_sim_max``) through :func:`~hanyi.metrics.critique_embed.reference_similarities` on one critique; NaN
    for every critique without the embedder or a matching reference (warned once)."""
    from hanyi.metrics.critique_embed import (
        REFERENCE_METRICS,
        decode_vectors,
        embed_texts,
        reference_mismatch,
        reference_similarities,
        warn_once,
    )

    _check(items, metric)
    if not items:
        return []
    config = items[0].config
    vectors = embed_texts([it.text for it in items], config)
    if vectors is None:
        return [math.nan] * len(items)
    why = reference_mismatch(config, reference)
    if why:
        warn_once(f"hanyi vulca: {', '.join(REFERENCE_METRICS)} not computed: {why}.")
        return [math.nan] * len(items)
    humans = decode_vectors(reference["vectors_b64"], reference["n"], reference["dim"])
    key = "sem_sim_max" if metric == "sem_sim_max" else "sem_sim_mean"
    return [reference_similarities([v], humans)[key] for v in vectors]


def embed_aggregation(metric: str, load_reference: Callable[[], Mapping | None]) -> Callable:
    """The decomposed aggregation of reference-embedding ``metric`` (:data:`DECOMPOSED_EMBED`)."""

    combine = one_minus_mean if metric == "sem_mean_pairwise_cosdist" else nan_mean

    @decomposed(combine, name=f"vulca_{metric}")
    def per_doc(items):
        return embed_per_doc(metric, items, load_reference())

    return per_doc


def rubric_per_doc(metric: str, items: Sequence, prompts: Sequence[str], config) -> list[float]:
    """Per-critique judge level of rubric ``metric``; NaN when unscored (unparseable or failed), which the mean
    leaves out as :func:`~hanyi.metrics.critique_rubric.rubric_value` does."""
    from hanyi.metrics.critique_rubric import judge_rubric_results

    _check(items, metric)
    if not items:
        return []
    return [math.nan if r.value is None else float(r.value) for r in judge_rubric_results(metric, prompts, config)]


def rubric_aggregation(metric: str, prompts_of: Callable[[str, Sequence], list[str]]) -> Callable:
    """The decomposed aggregation of rubric ``metric``; ``prompts_of(metric, items)`` renders the judge prompts."""

    @decomposed(nan_mean, name=f"vulca_{metric}")
    def per_doc(items):
        from hanyi.metrics.judge import JudgeConfig

        return rubric_per_doc(metric, items, prompts_of(metric, items), JudgeConfig.from_env())

    return per_doc
