"""The float rule (docs/dev/contributing.md, "Floats: one rule"; hanyi.floats): which keys are backbone values, and how
two runs' numbers are compared."""

from __future__ import annotations

import re

import pytest

from hanyi import backbones, floats

#: Backbones whose metrics pass through a neural network (WordNet is a table look-up, a judge returns verdicts).
NEURAL = ("sbert", "bertscore", "vulca_nli", "vulca_embedder")


def _keys(pattern_text: str) -> list[str]:
    """The metric keys a backbone's fallback/custom table names (``"profile_* / feat_*"`` -> a key of each form)."""
    return [re.sub(r"\*|<the same>", "x", part.strip()) for part in pattern_text.split("/") if part.strip()]


@pytest.mark.parametrize("name", NEURAL)
def test_every_key_of_a_neural_backbone_is_a_backbone_value(name):
    backbone = backbones.BACKBONES[name]
    keys = [k for table in (backbone.fallbacks, backbone.custom) for key in table for k in _keys(key)]
    keys += [k for value in backbone.custom.values() if value and "<the same>" not in value for k in _keys(value)]
    assert keys
    for key in keys:
        assert floats.passes_through_backbone(key) or key.startswith("disamb_acc_chrf"), (name, key)


@pytest.mark.parametrize(
    "key",
    ["element_abs,none", "element_abs_rule_lemma", "meteor", "disamb_acc_chrf", "accuracy", "acc", "miou", "bleu4",
     "exact_match", "judge_score", "correct_custom_judge", "rubric_x", "json_valid_rate"],
)  # fmt: skip
def test_keys_computed_without_a_neural_backbone_are_compared_exactly(key):
    assert not floats.passes_through_backbone(key)
    assert not floats.same_value(key, 0.5, 0.5 + 1e-12)
    assert floats.same_value(key, float("nan"), float("nan"))


@pytest.mark.parametrize("key", ["element_sim,none", "element_sim_custom_model", "sem_sim_mean", "feat_symbolism",
                                 "profile_historically_focused_custom_model", "expert_alignment",
                                 "disamb_acc_bertscore", "disamb_acc_custom_model", "element_sim_stderr,none"])  # fmt: skip
def test_a_backbone_value_is_held_to_the_stated_tolerance_not_tighter_not_looser(key):
    value = 0.19028734674470293
    assert floats.same_value(key, value, value * (1 + 5e-7))  # float noise of another CPU: passes
    assert floats.same_value(key, 1e-9, 5e-7)  # near 0: the absolute tolerance
    assert not floats.same_value(key, value, value * (1 + 1e-4))  # a real difference: fails
    assert floats.RTOL >= 1e-6 and floats.ATOL >= 1e-6  # the measured noise is up to 3.6e-7 (docs/dev/contributing.md)
