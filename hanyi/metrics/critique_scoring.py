"""VULCA scoring: each critique's zero-shot NLI scores, and every NLI metric of a set of critiques from them.

``process_results`` scores its one critique (:func:`critique_features` on one text: its 38 (text, label) pairs are one
batch; the model is loaded once per process) and logs the scores, plain numbers, in the sample log. The task emits
only ``expert_alignment`` and its chance level (:func:`doc_matched`, :func:`chance`); every other NLI metric
(:data:`NLI_METRICS`) is computed from the logged scores by :func:`metric_value`, which ``hanyi report`` runs
(:mod:`hanyi.metrics.vulca_breakdowns`) with no model. Definitions: paper §3.2-§3.4, §4.4; rules in
:mod:`hanyi.metrics.critique_profile`; see docs/vulca.md.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence

from hanyi.metrics.critique_profile import (
    FEATURE_LABELS,
    LACKS_FOCUS,
    PROFILE_KEYS,
    QUALITY_LABELS,
    STANCE_LABELS,
    alignment_chance,
    expert_alignment,
    expert_alignment_centered,
    feature_vector,
    l1_distance,
    mean_profile,
    primary_profile,
    profile_scores,
)
from hanyi.metrics.zeroshot_nli import NLIConfig, extract_features, try_logits_fn


def slug(label: str) -> str:
    """Metric-name form of a label.

    >>> slug("Texture Strokes (Chunfa)"), slug("Technique Inheritance & Innovation"), slug("Subjective/Biased View")
    ('texture_strokes_chunfa', 'technique_inheritance_innovation', 'subjective_biased_view')
    """
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


#: Every NLI-derived metric name, in results order: the task emits those in :data:`EMITTED`, ``hanyi report`` computes
#: the others from the sample log.
NLI_METRICS = (
    *(f"profile_{k}" for k in PROFILE_KEYS),
    *(f"primary_profile_rate_{k}" for k in (*PROFILE_KEYS, LACKS_FOCUS)),
    "expert_alignment",
    "expert_alignment_chance",
    "expert_alignment_centered",
    "expert_alignment_centered_chance",
    "profile_cosine_max",
    "feature_profile_l1_to_human",
    *(f"feat_{slug(label)}" for label in FEATURE_LABELS),
    *(f"qual_{slug(label)}" for label in QUALITY_LABELS),
)
_FEAT = {f"feat_{slug(label)}": label for label in FEATURE_LABELS}
_QUAL = {f"qual_{slug(label)}": label for label in QUALITY_LABELS}


#: The NLI metrics a VULCA task logs in each critique's ``expert_alignment`` item (paper Table 1's Expert Alignment,
#: emitted, and the chance level needed to read it, computed by ``hanyi report`` from that item), not recomputed from
#: the logged zero-shot scores.
EMITTED = ("expert_alignment", "expert_alignment_chance")

_CACHE: dict[tuple[NLIConfig, str], dict] = {}
_LOCK = threading.Lock()


def critique_features(texts: Sequence[str], config: NLIConfig, logits_fn=None) -> list[dict] | None:
    """Zero-shot scores of ``texts`` (cached by config and text); ``None`` when the NLI model is unavailable.

    Each score dict (:func:`hanyi.metrics.zeroshot_nli.extract_features`) is plain JSON: ``stance`` {label: p},
    ``stance_top1`` [label, p], ``features`` and ``quality`` {label: p}.
    """
    with _LOCK:
        todo = sorted({t for t in texts if (config, t) not in _CACHE})
        if todo:
            fn = logits_fn or try_logits_fn(config)
            if fn is None:
                return None
            for text, feats in zip(
                todo, extract_features(todo, fn, STANCE_LABELS, FEATURE_LABELS, QUALITY_LABELS, config.template)
            ):
                _CACHE[(config, text)] = feats
        return [_CACHE[(config, t)] for t in texts]


def score_critique(feats: Mapping, centroids: Mapping[str, Sequence[float]]) -> dict:
    """Per-critique derived values: profile scores, primary profile, best centroid cosine and match (> 0.7).

    The alignment vector keeps only the top-1 stance probability, like the human centroids it is compared with.
    """
    label, score = feats["stance_top1"]
    profiles = profile_scores(label, score, feats["features"], feats["quality"])
    vector = feature_vector({label: score}, feats["features"], feats["quality"])
    best, cos, matched = expert_alignment(vector, centroids)
    return {
        "matched_centered": expert_alignment_centered(vector, centroids)[2],
        "profiles": profiles,
        "primary": primary_profile(profiles),
        "best_profile": best,
        "cosine": cos,
        "matched": matched,
    }


def doc_matched(feats: Mapping, reference: Mapping) -> float:
    """One critique's ``expert_alignment`` statistic: 1.0 when its best profile-centroid cosine is > 0.7, else 0.0."""
    return float(score_critique(feats, reference["profile_centroids_47d"])["matched"])


def chance(reference: Mapping, centered_variant: bool = False) -> float:
    """``expert_alignment_chance`` (or the centered variant's): the share of uniform random critiques matched."""
    return _chance(reference["profile_centroids_47d"], centered_variant)


_CHANCE: dict[tuple, float] = {}


def _chance(centroids: Mapping[str, Sequence[float]], centered_variant: bool) -> float:
    """:func:`alignment_chance` of a reference, computed once per process (2,000 null vectors, ~0.1 s)."""
    key = (centered_variant, tuple((name, tuple(c)) for name, c in sorted(centroids.items())))
    with _LOCK:
        if key not in _CHANCE:
            _CHANCE[key] = alignment_chance(centroids, centered_variant)
        return _CHANCE[key]


def metric_value(metric: str, feats: Sequence[Mapping], reference: Mapping) -> float:
    """The value of ``metric`` over a set of critiques' zero-shot scores ``feats`` (in doc order: the means sum left
    to right, as lmms-eval's aggregation of the per-doc items did before the scores were logged).

    ``reference`` is the shipped human reference (``mean_features``, ``mean_quality``, ``profile_centroids_47d``).
    """
    if not feats:
        return math.nan
    if metric in _FEAT:
        return sum(f["features"][_FEAT[metric]] for f in feats) / len(feats)
    if metric in _QUAL:
        return sum(f["quality"][_QUAL[metric]] for f in feats) / len(feats)
    if metric == "feature_profile_l1_to_human":
        model = mean_profile([f["features"] for f in feats], FEATURE_LABELS) + mean_profile(
            [f["quality"] for f in feats], QUALITY_LABELS
        )
        human = [reference["mean_features"][x] for x in FEATURE_LABELS] + [
            reference["mean_quality"][x] for x in QUALITY_LABELS
        ]
        return l1_distance(model, human)
    if metric in ("expert_alignment_chance", "expert_alignment_centered_chance"):
        return _chance(reference["profile_centroids_47d"], metric == "expert_alignment_centered_chance")
    scored = [score_critique(f, reference["profile_centroids_47d"]) for f in feats]
    if metric.startswith("primary_profile_rate_"):
        return sum(s["primary"] == metric[len("primary_profile_rate_") :] for s in scored) / len(scored)
    if metric == "expert_alignment":
        return sum(s["matched"] for s in scored) / len(scored)
    if metric == "expert_alignment_centered":
        return sum(s["matched_centered"] for s in scored) / len(scored)
    if metric == "profile_cosine_max":
        return sum(s["cosine"] for s in scored) / len(scored)
    if metric.startswith("profile_"):
        return sum(s["profiles"][metric[len("profile_") :]] for s in scored) / len(scored)
    raise KeyError(f"unknown VULCA metric {metric!r}")


def metric_values(feats: Sequence[Mapping], reference: Mapping) -> dict[str, float]:
    """Every NLI metric (:data:`NLI_METRICS`) over the critiques' zero-shot scores ``feats``.

    >>> fake = lambda premises, hyps: [[2.0 if "Symbolism" in h else 0.0, 0.0] for h in hyps]
    >>> feats = critique_features(["text"], NLIConfig(model="fake"), logits_fn=fake)
    >>> from hanyi.data.vulca_reference import load_reference
    >>> round(metric_values(feats, load_reference())["feat_symbolism"], 4)
    0.8808
    """
    return {m: metric_value(m, feats, reference) for m in NLI_METRICS}
