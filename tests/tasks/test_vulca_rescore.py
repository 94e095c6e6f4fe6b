"""Released-style critiques re-scored through the real evaluator (replay model) with a deterministic fake NLI scorer.

The fake scorer gives entailment logit 2 when the label occurs in the critique (case-insensitive), else 0, and
contradiction logit 0. So a multi-label score is sigmoid(2) = 0.8808 for a mentioned label and 0.5 otherwise, and the
stance is a softmax over 2/0 logits. Expected profile values are computed from those hand-derived scores with the
pure rule functions, independently of the extractor and of the evaluator plumbing under test.
"""

import math

import pytest

from hanyi.metrics.critique_profile import (
    FEATURE_LABELS,
    PROFILE_KEYS,
    QUALITY_LABELS,
    STANCE_LABELS,
    primary_profile,
    profile_scores,
)

HIGH = 1 / (1 + math.exp(-2.0))  # 0.8808: a mentioned label

# Our own short texts in the shape of the released transcripts (TEXT: paragraphs, Part Two heading, fenced JSON).
CRITIQUES = {
    "04": (
        "TEXT:\nThis Fourth Month scroll is a work of Historical Research: its Historical Context is the Qianlong court, "
        "and the lanterns carry Symbolism of renewal.\nTEXT:\nThe Use of Color is rich; Line Quality is fine.\n"
        '**Part Two: Structured Evaluation in JSON Format**\n```json\n{"artwork_identifier": {}}\n```'
    ),
    "05": "TEXT:\nDragon boats race on the river. A festive scene, Subject Matter of the fifth month.",
}


def fake_logits(premises, hypotheses):
    return [[2.0 if h[len("This example is ") : -1].lower() in p.lower() else 0.0, 0.0] for p, h in zip(premises, hypotheses)]  # fmt: skip


def expected_scores(text):
    """The scores the fake scorer implies, derived by hand (substring rule), not through the extractor."""
    low = text.lower()
    feats = {lab: HIGH if lab.lower() in low else 0.5 for lab in FEATURE_LABELS}
    qual = {lab: HIGH if lab.lower() in low else 0.5 for lab in QUALITY_LABELS}
    logits = [2.0 if lab.lower() in low else 0.0 for lab in STANCE_LABELS]
    z = sum(math.exp(x) for x in logits)
    top = max(range(len(STANCE_LABELS)), key=lambda i: (logits[i], -i))
    return profile_scores(STANCE_LABELS[top], math.exp(logits[top]) / z, feats, qual), feats


@pytest.fixture
def fake_nli(monkeypatch, tmp_path):
    from hanyi.data.vulca import build_synthetic
    from hanyi.metrics.zeroshot_nli import register_logits_fn

    build_synthetic(str(tmp_path / "vulca"), sorted(CRITIQUES), builder="tests")
    monkeypatch.setenv("HANYI_VULCA_DATA", str(tmp_path / "vulca"))
    monkeypatch.setenv("HANYI_VULCA_NLI_MODEL", "fake-keyword-nli")  # also its own cache key in critique_scoring
    register_logits_fn("fake-keyword-nli", fake_logits)
    yield
    register_logits_fn("fake-keyword-nli", None)


def test_hand_derived_expectations_are_not_trivial():
    (p04, f04), (p05, f05) = expected_scores(CRITIQUES["04"]), expected_scores(CRITIQUES["05"])
    assert f04["Symbolism"] == pytest.approx(0.8808, abs=1e-4) and f05["Symbolism"] == 0.5
    assert p04["historically_focused"] != p05["historically_focused"] and p04["theory_comparison_focused"] > 0.1


def test_released_style_critiques_through_the_replay_model(replay, fake_nli):
    records = [{"task": "vulca_persona_kb_su_shi", "key": {"doc_id": d}, "response": t} for d, t in CRITIQUES.items()]
    from hanyi.metrics import from_samples

    out = replay(records, ["vulca_persona_kb_su_shi"])
    samples = out["samples"]["vulca_persona_kb_su_shi"]
    assert len(samples) == 2
    # the task emits expert alignment; the rest is computed from the sample log, as hanyi report does
    res = {f"{k},none": v for k, (v, _) in from_samples.derive("vulca_persona_kb_su_shi", samples).items()}
    res.update(out["results"]["vulca_persona_kb_su_shi"])
    exp = [expected_scores(t) for t in CRITIQUES.values()]
    for key in PROFILE_KEYS:
        assert res[f"profile_{key}_custom_model,none"] == pytest.approx(sum(p[key] for p, _ in exp) / 2, abs=1e-9), key
    assert res["feat_symbolism_custom_model,none"] == pytest.approx((HIGH + 0.5) / 2, abs=1e-9)
    assert res["feat_subject_matter_custom_model,none"] == pytest.approx((0.5 + HIGH) / 2, abs=1e-9)
    for key in PROFILE_KEYS:
        share = sum(primary_profile(p) == key for p, _ in exp) / 2
        assert res[f"primary_profile_rate_{key}_custom_model,none"] == pytest.approx(share), key
    assert res["json_valid_rate,none"] == 0.0  # the fixture JSON lacks four of the five schema keys
