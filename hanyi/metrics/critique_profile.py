"""VULCA critique profiling: label sets, the five rule-based expert profiles, the 47-d vector, expert alignment.

Paper: Yu, Ruiz-Dolz and Yi, "A Structured Framework for Evaluating and Enhancing Interpretive Capabilities of
Multimodal LLMs in Culturally Situated Tasks" (EMNLP 2025), §3.2-§3.4, §4.4, App. C.5-C.6. The profile rules follow
the released research scorer (``phase_1_1_benchmark_script_part2_candidate_selection.py`` in
yha9806/EMNLP2025-VULCA) exactly, quirks included [CODE]: every comparison is ``>=``, a failed stance rule does not
zero a specialised score (0.3 S_C + 0.7 F), and six rule labels that the extractor never produces read 0. Those rules
cannot reproduce the paper's Table 5 (see docs/vulca.md). Inputs are plain dicts of zero-shot scores (label -> p).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: Evaluative stance labels, code order (spec §2.1). Single-label zero-shot classification.
STANCE_LABELS = (
    "Historical Research", "Aesthetic Appreciation", "Socio-cultural Interpretation", "Comparative Analysis",
    "Theoretical Construction", "Critical Inquiry", "High Praise", "Objective Description", "Mild Criticism",
    "Strong Negation",
)  # fmt: skip
#: Feature-focus labels, code order. Multi-label zero-shot classification.
FEATURE_LABELS = (
    "Use of Color", "Brushwork Technique", "Texture Strokes (Chunfa)", "Line Quality", "Ink Application",
    "Layout and Structure", "Spatial Representation", "Artistic Conception", "Emotional Expression", "Subject Matter",
    "Genre", "Symbolism", "Historical Context", "Artist Biography", "Style/School",
    "Technique Inheritance & Innovation", "Cross-cultural Influence",
)  # fmt: skip
#: Commentary-quality labels, code order (6 positive, 5 negative). Multi-label.
QUALITY_LABELS = (
    "Profound Insight", "Strong Argumentation", "Clear Logic", "Detailed Analysis", "Classical Citations",
    "Objective Viewpoint", "Superficial Treatment", "Overly General Content", "Lacks Examples", "Logical Gaps",
    "Subjective/Biased View",
)  # fmt: skip

#: Profile keys (our metric suffixes) -> the released CSV's column names.
PROFILES = (
    ("comprehensive_analyst", "score_Comprehensive_Analyst"),
    ("historically_focused", "score_Historically_Focused"),
    ("technique_style_focused", "score_Technique_and_Style_Focused"),
    ("theory_comparison_focused", "score_Theory_and_Comparison_Focused"),
    ("general_descriptive", "score_General_Descriptive_Profile"),
)
PROFILE_KEYS = tuple(key for key, _ in PROFILES)
LACKS_FOCUS = "lacks_specific_focus"

# (label, type, min) flexible rules per specialised profile; every max is 1.0 [CODE].
_COMPREHENSIVE = tuple(
    (label, "feature", 0.60)
    for label in (
        "Use of Color", "Brushwork Technique", "Texture Strokes (Chunfa)", "Line Quality", "Ink Application",
        "Layout and Structure", "Spatial Representation", "Pictorial Structure", "Artistic Conception",
        "Emotional Expression", "Subject Matter", "Genre", "Symbolism", "Historical Context", "Artist Biography",
        "Style/School", "Technique Inheritance & Innovation", "Cross-cultural Influence", "Stylistic Analysis",
        "Cross-cultural Comparison", "Theoretical Construction", "Critical Review", "Artist Case Study",
    )
)  # fmt: skip
#: profile -> (stance rule (label, min) or None, flexible rules, min rules to pass).
SPECIALISED_RULES = {
    "comprehensive_analyst": (None, _COMPREHENSIVE, 10),
    "historically_focused": (
        None,
        (("Historical Context", "feature", 0.50), ("Artist Biography", "feature", 0.40),
         ("Style/School", "feature", 0.40), ("Classical Citations", "quality", 0.25)),
        2,
    ),
    "technique_style_focused": (
        ("Aesthetic Appreciation", 0.40),
        (("Technique Inheritance & Innovation", "feature", 0.30), ("Artist Case Study", "feature", 0.25),
         ("Artistic Conception", "feature", 0.20), ("Emotional Expression", "feature", 0.15)),
        2,
    ),
    "theory_comparison_focused": (
        None,
        (("Stylistic Analysis", "feature", 0.30), ("Cross-cultural Comparison", "feature", 0.40),
         ("Theoretical Construction", "feature", 0.30), ("Critical Review", "feature", 0.20),
         ("Layout and Structure", "feature", 0.50), ("Spatial Representation", "feature", 0.50),
         ("Symbolism", "feature", 0.50)),
        3,
    ),
}  # fmt: skip
GDP_STANCES = (
    "Objective Description",
    "Socio-cultural Interpretation",
    "Aesthetic Appreciation",
    "Historical Research",
)
GDP_STANCE_MIN = 0.15
GDP_POOL = (
    "Cross-cultural Influence", "Historical Context", "Layout and Structure", "Symbolism", "Emotional Expression",
    "Subject Matter", "Use of Color", "Artist Biography", "Style/School", "Brushwork Technique", "Artistic Conception",
)  # fmt: skip
GDP_MIN_MENTIONED, GDP_MIN_AVG = 3, 0.20
#: The 4 supplementary dims (not defined by the paper; our documented choice, spec §6 item 9).
SUPPLEMENTARY = ("stylistic_analysis", "cross_cultural_comparison", "theoretical_construction", "overall_coherence")
VECTOR_DIM = len(STANCE_LABELS) + len(FEATURE_LABELS) + len(QUALITY_LABELS) + len(PROFILES) + len(SUPPLEMENTARY)
EXPERT_ALIGNMENT_THRESHOLD = 0.7


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def stance_contribution(
    top_label: str, top_score: float, rule: tuple[str, float] | None, rule_max: float = 1.0
) -> float:
    """S_C of the released scorer: 1 without a stance rule; 0 on another label or below the minimum; else scaled.

    >>> round(stance_contribution("Aesthetic Appreciation", 0.7, ("Aesthetic Appreciation", 0.4)), 6)
    0.5
    >>> stance_contribution("High Praise", 0.9, ("Aesthetic Appreciation", 0.4)), stance_contribution("X", 0.1, None)
    (0.0, 1.0)
    """
    if rule is None:
        return 1.0
    label, low = rule
    if top_label != label or top_score < low:
        return 0.0
    if rule_max == low:
        return 1.0
    return _clip((top_score - low) / (rule_max - low))


def flexible_contribution(values: Sequence[float], minima: Sequence[float], min_pass: int) -> float:
    """F: 0.5 * quantity bonus + 0.5 * mean quality of the met rules; 0 when fewer than ``min_pass`` rules are met.

    ``values[r]`` is the score of rule r's label (0 when absent), ``minima[r]`` its threshold; every max is 1.

    >>> round(flexible_contribution([0.8, 0.5, 0.3, 0.6], [0.5, 0.4, 0.4, 0.25], 2), 5)
    0.45556
    """
    met = [_clip((v - lo) / (1.0 - lo)) if lo != 1.0 else 1.0 for v, lo in zip(values, minima) if v >= lo]
    n, total = len(met), len(minima)
    if n < min_pass:
        return 0.0
    quantity = 1.0 if total - min_pass <= 0 else _clip((n - min_pass) / (total - min_pass))
    return _clip(0.5 * quantity + 0.5 * sum(met) / n)


def general_descriptive_score(top_label: str, top_score: float, features: Mapping[str, float]) -> float:
    """General Descriptive Profile [CODE]: 0.5 * stance satisfaction + 0.5 * pool-feature satisfaction.

    A pool label counts as "mentioned" when it is a key of ``features`` (so with multi-label extraction all 11 are).

    >>> pool = dict(zip(GDP_POOL, [0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.5]))
    >>> round(general_descriptive_score("Socio-cultural Interpretation", 0.55, pool), 5)
    0.36598
    """
    ok = top_label in GDP_STANCES and top_score >= GDP_STANCE_MIN
    stance_sat = _clip((top_score - GDP_STANCE_MIN) / (1.0 - GDP_STANCE_MIN)) if ok else 0.0
    mentioned = [float(features[label]) for label in GDP_POOL if label in features]
    feature_sat = 0.0
    if len(mentioned) >= GDP_MIN_MENTIONED:
        feature_sat = _clip((sum(mentioned) / len(mentioned) - GDP_MIN_AVG) / (1.0 - GDP_MIN_AVG))
    return 0.5 * stance_sat + 0.5 * feature_sat


def profile_scores(
    top_label: str, top_score: float, features: Mapping[str, float], quality: Mapping[str, float]
) -> dict[str, float]:
    """The five profile scores of one critique with the released rules (``profile_rules: code_v1``).

    Args:
        top_label, top_score: top-1 stance label and its single-label probability.
        features, quality: zero-shot scores by English label; a label the rules need but the dict lacks reads 0.

    Returns:
        ``{profile_key: score}`` in :data:`PROFILE_KEYS` order, each in [0, 1].

    >>> s = profile_scores("Aesthetic Appreciation", 0.7,
    ...     {"Technique Inheritance & Innovation": 0.5, "Artistic Conception": 0.6, "Emotional Expression": 0.1}, {})
    >>> round(s["technique_style_focused"], 4), s["historically_focused"]
    (0.2875, 0.0)
    """
    out = {}
    for key in PROFILE_KEYS[:4]:
        stance_rule, rules, min_pass = SPECIALISED_RULES[key]
        values = [float((features if kind == "feature" else quality).get(label, 0.0)) for label, kind, _ in rules]
        flex = flexible_contribution(values, [lo for _, _, lo in rules], min_pass)
        out[key] = (
            flex if stance_rule is None else 0.3 * stance_contribution(top_label, top_score, stance_rule) + 0.7 * flex
        )
    out["general_descriptive"] = general_descriptive_score(top_label, top_score, features)
    return out


def primary_profile(scores: Mapping[str, float]) -> str:
    """``primary_profile_by_proportion``: argmax of the scores (first on ties), or ``lacks_specific_focus`` if all 0.

    >>> primary_profile({"historically_focused": 0.2, "general_descriptive": 0.3}), primary_profile({"a": 0.0})
    ('general_descriptive', 'lacks_specific_focus')
    """
    if sum(scores.values()) <= 0:
        return LACKS_FOCUS
    return max(scores, key=lambda k: scores[k])


def supplementary_dims(
    stance_probs: Mapping[str, float], features: Mapping[str, float], quality: Mapping[str, float]
) -> dict:
    """The 4 supplementary dims, which the paper names but never defines (our choice, flagged non-paper).

    >>> round(supplementary_dims({"Theoretical Construction": 0.2}, {"Style/School": 0.4}, {"Clear Logic": 0.5,
    ...     "Strong Argumentation": 0.7, "Logical Gaps": 0.3})["overall_coherence"], 6)
    0.633333
    """
    coherence = (
        quality.get("Clear Logic", 0.0)
        + quality.get("Strong Argumentation", 0.0)
        + 1.0
        - quality.get("Logical Gaps", 0.0)
    ) / 3
    return {
        "stylistic_analysis": float(features.get("Style/School", 0.0)),
        "cross_cultural_comparison": float(features.get("Cross-cultural Influence", 0.0)),
        "theoretical_construction": float(stance_probs.get("Theoretical Construction", 0.0)),
        "overall_coherence": float(coherence),
    }


def feature_vector(stance_probs, features, quality) -> list[float]:
    """The canonical 47-d vector: 10 stance probs + 17 features + 11 quality + 5 profiles + 4 supplementary dims.

    ``stance_probs`` may hold only the top-1 label (the human reference does); missing labels read 0. The
    profiles use the top-1 stance of ``stance_probs``.

    >>> len(feature_vector({"High Praise": 0.9}, {}, {}))
    47
    """
    top = max(stance_probs, key=lambda k: stance_probs[k]) if stance_probs else ""
    profiles = profile_scores(top, float(stance_probs.get(top, 0.0)), features, quality)
    return (
        [float(stance_probs.get(label, 0.0)) for label in STANCE_LABELS]
        + [float(features.get(label, 0.0)) for label in FEATURE_LABELS]
        + [float(quality.get(label, 0.0)) for label in QUALITY_LABELS]
        + [profiles[key] for key in PROFILE_KEYS]
        + list(supplementary_dims(stance_probs, features, quality).values())
    )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is all zeros.

    >>> cosine([1, 0], [1, 1])
    0.7071067811865475
    """
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b)) / (na * nb) if na and nb else 0.0


def expert_alignment(
    vector: Sequence[float], centroids: Mapping[str, Sequence[float]]
) -> tuple[str | None, float, bool]:
    """Paper §4.4 / eq. (8): best-matching human profile centroid, its cosine, and ``cosine > 0.7`` (strict).

    >>> expert_alignment([1.0, 0.0], {"a": [1.0, 1.0], "b": [0.0, 1.0]})
    ('a', 0.7071067811865475, True)
    """
    best, best_cos = None, 0.0
    for name, centroid in centroids.items():
        c = cosine(vector, centroid)
        if best is None or c > best_cos:
            best, best_cos = name, c
    return best, best_cos, best_cos > EXPERT_ALIGNMENT_THRESHOLD


def centered(vector: Sequence[float]) -> list[float]:
    """``vector`` minus its own mean, so that cosine becomes Pearson correlation across the dimensions.

    >>> centered([1.0, 2.0, 3.0])
    [-1.0, 0.0, 1.0]
    """
    mean = sum(vector) / len(vector)
    return [x - mean for x in vector]


def expert_alignment_centered(
    vector: Sequence[float], centroids: Mapping[str, Sequence[float]]
) -> tuple[str | None, float, bool]:
    """(ours, not the paper's) :func:`expert_alignment` on mean-centred vectors: best Pearson r > 0.7.

    Every 47-d vector is non-negative, so plain cosines to the human centroids are high for almost any input (the
    shared positive component dominates); centring each vector and centroid on its own mean removes that component,
    so only the *shape* of the profile (which dimensions are above the vector's average) has to match.

    >>> best, r, matched = expert_alignment_centered([1.0, 0.0, 0.5], {"a": [2.0, 1.0, 1.5], "b": [0.0, 1.0, 0.5]})
    >>> best, round(r, 6), matched
    ('a', 1.0, True)
    """
    return expert_alignment(centered(vector), {name: centered(c) for name, c in centroids.items()})


#: Null model of the chance level: N critiques with uniform random label scores, fixed seed (docs/vulca.md).
CHANCE_SAMPLES, CHANCE_SEED = 2000, 20250101


def uniform_null_vectors(n: int = CHANCE_SAMPLES, seed: int = CHANCE_SEED) -> list[list[float]]:
    """47-d vectors of ``n`` critiques whose zero-shot scores are uniform random: a top-1 stance label drawn
    uniformly with a U(0, 1) probability, and U(0, 1) for every feature and quality label, through
    :func:`feature_vector` exactly as a real critique.

    >>> len(uniform_null_vectors(3)), len(uniform_null_vectors(3)[0]), uniform_null_vectors(3) == uniform_null_vectors(3)
    (3, 47, True)
    """
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = STANCE_LABELS[rng.randrange(len(STANCE_LABELS))]
        stance = {label: rng.random()}
        features = {f: rng.random() for f in FEATURE_LABELS}
        quality = {q: rng.random() for q in QUALITY_LABELS}
        out.append(feature_vector(stance, features, quality))
    return out


def alignment_chance(centroids: Mapping[str, Sequence[float]], centered_variant: bool = False) -> float:
    """Chance level of expert alignment: the share of :func:`uniform_null_vectors` that match a centroid.

    With ``centered_variant`` the rule is :func:`expert_alignment_centered`, else the paper's
    :func:`expert_alignment`. Deterministic (fixed seed); the caller computes it once per reference.
    """
    rule = expert_alignment_centered if centered_variant else expert_alignment
    nulls = uniform_null_vectors()
    return sum(rule(v, centroids)[2] for v in nulls) / len(nulls)


def l1_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Sum of absolute differences (profile distance to the human mean).

    >>> l1_distance([0.5, 0.2], [0.25, 0.4])
    0.45
    """
    return round(sum(abs(x - y) for x, y in zip(a, b, strict=True)), 12)


def mean_profile(rows: Sequence[Mapping[str, float]], labels: Sequence[str]) -> list[float]:
    """Per-label mean over rows (eq. 2); a label a row lacks reads 0.

    >>> mean_profile([{"a": 1.0}, {"a": 0.5, "b": 1.0}], ["a", "b"])
    [0.75, 0.5]
    """
    if not rows:
        raise ValueError("mean_profile of no rows")
    return [sum(float(r.get(label, 0.0)) for r in rows) / len(rows) for label in labels]
