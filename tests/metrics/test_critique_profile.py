"""Profile rules pinned to the released scorer: the spec's worked examples, edge cases, and the official human means."""

import os

import pytest

from hanyi.metrics.critique_profile import (
    FEATURE_LABELS,
    GDP_POOL,
    QUALITY_LABELS,
    STANCE_LABELS,
    VECTOR_DIM,
    expert_alignment,
    feature_vector,
    flexible_contribution,
    primary_profile,
    profile_scores,
    stance_contribution,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_VULCA = os.path.join(REPO, "..", "shared", "data", "vulca")
CSV_NAME = "human_expert_features_consolidated.csv"
#: Where the released human-expert feature CSV is looked for: $HANYI_VULCA_HUMAN_CSV, then ../shared/data/vulca/.
HUMAN_CSV_CANDIDATES = [
    p
    for p in (
        os.environ.get("HANYI_VULCA_HUMAN_CSV", ""),
        os.path.join(SHARED_VULCA, CSV_NAME),
        os.path.join(SHARED_VULCA, "emnlp2025_research_branch", CSV_NAME),
    )
    if p
]
HUMAN_CSV = next((p for p in HUMAN_CSV_CANDIDATES if os.path.isfile(p)), None)


def test_label_sets_have_the_papers_38_labels():
    assert (len(STANCE_LABELS), len(FEATURE_LABELS), len(QUALITY_LABELS)) == (10, 17, 11)
    assert VECTOR_DIM == 47


@pytest.mark.parametrize(
    "stance, score, features, quality, profile, expected",
    [
        # spec §2.4 worked examples (computed with the released formulas)
        ("High Praise", 0.9, {"Historical Context": 0.8, "Artist Biography": 0.5, "Style/School": 0.3},
         {"Classical Citations": 0.6}, "historically_focused", 0.455556),
        ("Aesthetic Appreciation", 0.7, {"Technique Inheritance & Innovation": 0.5, "Artistic Conception": 0.6,
         "Emotional Expression": 0.1}, {}, "technique_style_focused", 0.2875),
        ("Socio-cultural Interpretation", 0.55, dict(zip(GDP_POOL, [0.9, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.5])),
         {}, "general_descriptive", 0.365980),
        ("High Praise", 0.9, dict(zip(FEATURE_LABELS, [0.9, 0.8, 0.7, 0.65, 0.62, 0.95, 0.6, 0.75, 0.85, 0.61, 0.66, 0.7])),
         {}, "comprehensive_analyst", 0.242548),
        # failed stance rule does not zero the score: 0.3 * 0 + 0.7 * F
        ("High Praise", 0.9, {"Technique Inheritance & Innovation": 1.0, "Artistic Conception": 1.0}, {},
         "technique_style_focused", 0.7 * (0.5 * 0.0 + 0.5 * 1.0)),
    ],
)  # fmt: skip
def test_profile_score_matches_released_formula(stance, score, features, quality, profile, expected):
    assert profile_scores(stance, score, features, quality)[profile] == pytest.approx(expected, abs=1e-5)


def test_theory_comparison_is_capped_at_one_half_under_released_rules():
    all_ones = {label: 1.0 for label in FEATURE_LABELS}
    # only 3 of its 7 rules can fire (4 labels are never extracted): quantity 0, quality 1 -> 0.5
    assert profile_scores("High Praise", 1.0, all_ones, {})["theory_comparison_focused"] == 0.5
    assert profile_scores("High Praise", 1.0, all_ones, {})["comprehensive_analyst"] == pytest.approx(
        0.5 * 7 / 13 + 0.5
    )


@pytest.mark.parametrize(
    "actual, score, rule, expected",
    [("X", 0.3, None, 1.0), ("Aesthetic Appreciation", 0.3, ("Aesthetic Appreciation", 0.4), 0.0),
     ("High Praise", 0.9, ("Aesthetic Appreciation", 0.4), 0.0), ("Aesthetic Appreciation", 0.4, ("Aesthetic Appreciation", 0.4), 0.0),
     ("Aesthetic Appreciation", 1.0, ("Aesthetic Appreciation", 0.4), 1.0)],
)  # fmt: skip
def test_stance_contribution_edge_cases(actual, score, rule, expected):
    assert stance_contribution(actual, score, rule) == pytest.approx(expected)


def test_stance_contribution_min_equal_max_is_one():
    assert stance_contribution("A", 0.5, ("A", 0.5), rule_max=0.5) == 1.0


def test_flexible_rule_boundary_is_inclusive_and_below_min_pass_is_zero():
    assert flexible_contribution([0.5, 0.4], [0.5, 0.4], 2) == pytest.approx(0.5 * 1.0 + 0.0)
    assert flexible_contribution([0.49, 0.4], [0.5, 0.4], 2) == 0.0


def test_all_zero_scores_lack_specific_focus():
    scores = profile_scores("Strong Negation", 0.9, {}, {})
    assert scores == dict.fromkeys(scores, 0.0) and primary_profile(scores) == "lacks_specific_focus"


def test_expert_alignment_threshold_is_strict():
    assert expert_alignment([1.0, 0.0], {"p": [0.7, (1 - 0.49) ** 0.5]})[2] is False  # cosine == 0.7 exactly
    name, cos, matched = expert_alignment([1.0, 0.0, 0.0], {"p": [1.0, 1.0, 0.0]})
    assert (name, round(cos, 6), matched) == ("p", 0.707107, True)
    assert expert_alignment([0.0, 1.0], {"p": [1.0, 0.0]})[2] is False


def test_feature_vector_layout():
    vec = feature_vector({"High Praise": 0.9}, {"Use of Color": 0.3}, {"Logical Gaps": 0.2})
    assert len(vec) == 47 and vec[6] == 0.9 and vec[10] == 0.3 and vec[10 + 17 + 9] == 0.2


def test_released_csv_is_looked_up_under_shared_data_not_a_temporary_path():
    """the parity test reads ../shared/data/vulca/ beside the repository (as CI has it), not a
    fixed temporary path (the clone itself may well live under /tmp)."""
    shared = os.path.normpath(os.path.join(REPO, os.pardir, "shared", "data", "vulca"))
    assert [os.path.normpath(p) for p in HUMAN_CSV_CANDIDATES[-2:]] == [
        os.path.join(shared, CSV_NAME),
        os.path.join(shared, "emnlp2025_research_branch", CSV_NAME),
    ]


@pytest.mark.skipif(
    HUMAN_CSV is None,
    reason=f"released {CSV_NAME} not found in ../shared/data/vulca/ (or $HANYI_VULCA_HUMAN_CSV); "
    "see hanyi/data/vulca_reference.py",
)
def test_released_human_csv_gives_the_released_profile_means_and_distribution():
    from hanyi.data.vulca_reference import derive_reference, read_reference_rows

    ref = derive_reference(read_reference_rows(HUMAN_CSV))
    # profile_scores_mean_by_persona.csv (human_expert row) and primary_profile_distribution_by_persona.csv
    expected = {"comprehensive_analyst": 0.1142007907311994, "historically_focused": 0.3552181864031619,
                "technique_style_focused": 0.24698545313548373, "theory_comparison_focused": 0.07163520312748073,
                "general_descriptive": 0.3205743625988675}  # fmt: skip
    assert ref["mean_profiles"] == pytest.approx(expected, abs=1e-12)
    pct = {k: round(100 * v / ref["n"], 2) for k, v in ref["primary_profile_counts"].items()}
    assert pct == {"comprehensive_analyst": 0.61, "general_descriptive": 39.88, "historically_focused": 48.47,
                   "lacks_specific_focus": 1.23, "technique_style_focused": 8.59, "theory_comparison_focused": 1.23}  # fmt: skip


def test_shipped_reference_matches_the_released_statistics():
    from hanyi.data.vulca_reference import load_reference

    ref = load_reference()
    assert ref["n"] == 163 and "text_preview" not in ref["texts"][0]
    # eda_summary_statistics.csv means (spec §2.2)
    assert ref["mean_features"]["Historical Context"] == pytest.approx(0.6763, abs=5e-5)
    assert ref["mean_quality"]["Clear Logic"] == pytest.approx(0.0931, abs=5e-5)
    assert ref["mean_profiles"]["historically_focused"] == pytest.approx(0.3552, abs=5e-5)
    assert set(ref["profile_centroids_47d"]) == {"comprehensive_analyst", "general_descriptive", "historically_focused",
                                                 "technique_style_focused", "theory_comparison_focused"}  # fmt: skip


# ---- expert alignment beside its chance level, and a discriminating variant -----------------------
def _reference_feats():
    from hanyi.data.vulca_reference import load_reference

    ref = load_reference()
    return ref, [
        {"stance_top1": t["stance_top1"], "features": t["features"], "quality": t["quality"]} for t in ref["texts"]
    ]


def _shuffled(feats, seed=7):
    import random

    rng = random.Random(seed)
    out = []
    for f in feats:
        fv, qv = list(f["features"].values()), list(f["quality"].values())
        rng.shuffle(fv), rng.shuffle(qv)
        out.append({**f, "features": dict(zip(FEATURE_LABELS, fv)), "quality": dict(zip(QUALITY_LABELS, qv))})
    return out


def test_paper_expert_alignment_cannot_tell_human_profiles_from_random_ones():
    """The paper's statistic is kept as defined; its chance level shows it is near-saturated for any input."""
    from hanyi.metrics.critique_scoring import metric_value

    ref, human = _reference_feats()
    chance = metric_value("expert_alignment_chance", human, ref)
    assert chance > 0.9  # uniform random label scores: ~97 % "aligned"
    assert abs(metric_value("expert_alignment", human, ref) - chance) < 0.05  # the 163 human texts: no better
    assert chance == metric_value("expert_alignment_chance", human[:3], ref)  # a constant of the reference


def test_centered_alignment_discriminates_human_from_random_and_shuffled_profiles():
    from hanyi.metrics.critique_scoring import metric_value

    ref, human = _reference_feats()
    chance = metric_value("expert_alignment_centered_chance", human, ref)
    aligned = metric_value("expert_alignment_centered", human, ref)
    shuffled = metric_value("expert_alignment_centered", _shuffled(human), ref)
    assert chance < 0.1 and aligned > 0.8 and shuffled < 0.5
    # the paper's rule on the same shuffled profiles stays high: it does not see the shuffle
    assert metric_value("expert_alignment", _shuffled(human), ref) > 0.75


def test_chance_level_is_deterministic_and_uses_the_paper_rule():
    from hanyi.metrics.critique_profile import alignment_chance, expert_alignment, uniform_null_vectors

    centroids = {"a": [1.0] * 47, "b": [0.0] * 46 + [1.0]}
    nulls = uniform_null_vectors()
    expected = sum(expert_alignment(v, centroids)[2] for v in nulls) / len(nulls)
    assert alignment_chance(centroids) == expected == alignment_chance(centroids)
