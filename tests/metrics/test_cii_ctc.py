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


def test_judge_batch_scores_official_outputs_once(official):
    from hanyi.tasks.cii.ctc import judge_batch

    items = [{"judge_user": f"prompt {r[0]}", "difficulty": r[2], "emotion": r[3]} for r in official]
    answers = {it["judge_user"]: r[1] for it, r in zip(items, official)}
    client = _FakeClient(answers)
    first = judge_batch(items, "SYSTEM", client=client)
    again = judge_batch(items, "SYSTEM", client=client)
    assert first is again and len(client.calls) == 1 and client.calls[0][1] == "SYSTEM"
    assert round(ctc_mean(first["scores"]), 2) == 2.71 and first["failures"] == 0


def test_judge_batch_failures_are_zero_and_counted():
    from hanyi.tasks.cii.ctc import judge_batch

    items = [{"judge_user": u} for u in ("u-ok", "u-unparsed", "u-down")]
    client = _FakeClient({"u-ok": "[4]", "u-unparsed": "[ratings]", "u-down": None})
    judged = judge_batch(items, "S", client=client)
    assert judged["scores"] == [4, 0, 0] and judged["failures"] == 2
