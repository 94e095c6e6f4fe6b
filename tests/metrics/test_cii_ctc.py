"""CII-Bench CTC judge scoring: the official parser and Table 4 from the released GPT-4o judge outputs."""

import json
import os

import pytest

from hanyi.metrics.cii_ctc import ctc_group_mean, ctc_human_answer, ctc_mean, ctc_scores, parse_ctc_score
from hanyi.metrics.judge import JudgeResult

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cii", "ctc_official_scores.json")


@pytest.fixture(scope="module")
def official():
    with open(FIXTURE, encoding="utf-8") as f:
        rows = json.load(f)["rows"]
    assert len(rows) == 130
    return rows


@pytest.mark.parametrize(
    "text,expected",
    [("[3]", 3), ("[4]\n\nThe description is detailed.", 4), ("Score: 2 of 5", 2), ("[ratings]", None), ("", None)],
)
def test_parse_ctc_score_takes_first_integer(text, expected):
    assert parse_ctc_score(text) == expected


def test_unparsed_and_failed_count_as_zero():
    assert ctc_scores([None, 3, None]) == [0, 3, 0]
    assert ctc_mean(ctc_scores([None, 3, None])) == 1.0


def test_official_judge_outputs_give_table4(official):
    scores = ctc_scores(parse_ctc_score(r[1]) for r in official)
    assert sum(scores) == 352
    assert round(ctc_mean(scores), 2) == 2.71
    labels = {2: [r[2] for r in official], 3: [r[3] for r in official]}
    table4 = {
        ("简单", 2): 3.0,
        ("中等", 2): 3.2,
        ("困难", 2): 2.35,
        ("积极", 3): 2.63,
        ("消极", 3): 3.0,
        ("中性", 3): 2.82,
    }
    for (label, column), expected in table4.items():
        assert round(ctc_group_mean(scores, labels[column], label), 2) == expected, label


def test_human_answer_concatenates_without_separator():
    assert ctc_human_answer("解释。", "含义。") == "解释。含义。"


class _FakeClient:
    """Stands in for the shared judge client: answers each prompt from a table, records the calls."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def judge_many(self, prompts, parse, system=None):
        self.calls.append((list(prompts), system))
        out = []
        for p in prompts:
            raw = self.answers[p]
            value = parse(raw) if raw is not None else None
            error = "request_failed: down" if raw is None else (None if value is not None else "parse_failure")
            out.append(JudgeResult("h", raw, value, error, False))
        return out


def test_official_judge_outputs_judged_one_by_one_give_table4_through_the_aggregations(official):
    from hanyi.metrics import cii_aggregations as agg
    from hanyi.tasks.cii.ctc import judge_one

    users = [f"prompt {r[0]}" for r in official]
    client = _FakeClient(dict(zip(users, (r[1] for r in official))))
    items = [
        {"difficulty": r[2], "emotion": r[3], **judge_one(u, "SYSTEM", client=client)} for u, r in zip(users, official)
    ]
    assert len(client.calls) == 130 and {c[1] for c in client.calls} == {"SYSTEM"}
    assert round(agg.cii_ctc_score(items), 2) == 2.71 and agg.cii_ctc_judge_failures(items) == 0.0
    assert agg.cii_ctc_score(items) == ctc_mean(ctc_scores(parse_ctc_score(r[1]) for r in official))
    assert round(agg.cii_ctc_score_difficulty_hard(items), 2) == 2.35
    assert round(agg.cii_ctc_score_emotion_neutral(items), 2) == 2.82


def test_judge_failures_are_zero_and_counted_and_a_failed_request_makes_every_score_nan():
    import math

    from hanyi.metrics import cii_aggregations as agg
    from hanyi.tasks.cii.ctc import judge_one

    client = _FakeClient({"u-ok": "[4]", "u-unparsed": "[ratings]", "u-down": None})
    judged = [{"difficulty": "简单", "emotion": "积极", **judge_one(u, "S", client=client)} for u in client.answers]
    assert [j["score"] for j in judged] == [4, 0, 0] and agg.cii_ctc_judge_failures(judged) == 2.0
    assert [j["judge_request_failed"] for j in judged] == [False, False, True]
    assert agg.cii_ctc_score(judged[:2]) == 2.0
    assert math.isnan(agg.cii_ctc_score(judged)) and math.isnan(agg.cii_ctc_score_emotion_positive(judged))
