"""Set-level VULCA scoring: collect critiques per doc, run the zero-shot NLI once in batch, derive every metric.

``process_results`` emits one :class:`CritiqueItem` per metric name; lmms-eval hands each metric's items to one
aggregation, which calls :func:`aggregate_critique_metric`. The NLI pass runs on the first aggregation of a task
(all its texts in one batched call) and is cached by (config, text), so the 40-odd metrics of a task cost one pass.
Definitions: paper §3.2-§3.4, §4.4; rules in :mod:`hanyi.metrics.critique_profile`; see docs/vulca.md.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hanyi.metrics.critique_json import critique_tag
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


#: Every NLI-derived metric name, in results order. Tasks list exactly these (a test checks the YAML).
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


@dataclass(frozen=True)
class CritiqueItem:
    """One critique, as the item of one metric. ``str()`` is short, so sample logs do not repeat the text."""

    metric: str
    doc: str
    text: str
    nli: NLIConfig

    def __str__(self) -> str:
        return critique_tag(self.doc, self.text)


_CACHE: dict[tuple[NLIConfig, str], dict] = {}
_LOCK = threading.Lock()


def critique_features(texts: Sequence[str], config: NLIConfig, logits_fn=None) -> list[dict] | None:
    """Zero-shot scores of ``texts`` (cached by config and text); ``None`` when the NLI model is unavailable."""
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


_CHANCE: dict[tuple, float] = {}


def _chance(centroids: Mapping[str, Sequence[float]], centered_variant: bool) -> float:
    """:func:`alignment_chance` of a reference, computed once per process (2,000 null vectors, ~0.1 s)."""
    key = (centered_variant, tuple((name, tuple(c)) for name, c in sorted(centroids.items())))
    with _LOCK:
        if key not in _CHANCE:
            _CHANCE[key] = alignment_chance(centroids, centered_variant)
        return _CHANCE[key]


def metric_value(metric: str, feats: Sequence[Mapping], reference: Mapping) -> float:
    """The value of ``metric`` over a set of critiques' zero-shot scores ``feats``.

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


def aggregate_critique_metric(items: Sequence[CritiqueItem], reference: Mapping, logits_fn=None) -> float:
    """Aggregation hook body: all items share one metric; NaN (with the NLI warning already logged) if no model.

    >>> from hanyi.metrics.zeroshot_nli import NLIConfig
    >>> fake = lambda premises, hyps: [[2.0 if "Symbolism" in h else 0.0, 0.0] for h in hyps]
    >>> items = [CritiqueItem("feat_symbolism", "01", "text", NLIConfig(model="fake"))]
    >>> round(aggregate_critique_metric(items, {}, logits_fn=fake), 4)
    0.8808
    """
    if not items:
        return math.nan
    metrics = {it.metric for it in items}
    if len(metrics) != 1:
        raise ValueError(f"items of several metrics in one aggregation: {sorted(metrics)}")
    feats = critique_features([it.text for it in items], items[0].nli, logits_fn)
    return math.nan if feats is None else metric_value(items[0].metric, feats, reference)
