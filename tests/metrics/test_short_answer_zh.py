"""The official CVLUE VQA rule (spec §2.2), pinned by hand cases and by the official scorer's output on its example."""

import json
import os

import pytest

from hanyi.metrics.short_answer_zh import clean_answer, is_english_only, vqa_accuracy_official, vqa_correct_official

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cvlue", "official_examples.json")

CASES = [
    # pred, gold, lenient, strict
    ("是的", "是", True, False),  # yes synonym: lenient only
    ("2个", "2", True, True),  # digit run of the raw prediction
    ("12个", "2", False, False),  # a digit *run* must equal the gold
    ("2和3", "3", True, True),
    ("两个", "2", False, False),  # Chinese numerals never match digits
    ("右边", "右手边", False, False),  # no substring rule for non yes/no golds
    ("室外", "室内", False, False),
    (" Yes. ", "yes", True, True),  # lowercase + whitespace + ASCII punctuation
    ("坐着。", "坐着", True, True),  # trailing 。 stripped
    ("坐着！", "坐着", False, False),  # full-width punctuation is not stripped
    ("灯是关着的吗", "是", False, False),  # ends with 吗: echoed question
    ("是？", "是", False, False),  # ends with full-width ？
    ("是的，灯关着", "是", True, False),  # yes gold contained, no negation
    ("不是", "是", False, False),  # negation blocks the yes-substring rule
    ("没有", "否", True, False),  # NO synonym set
    ("否，没有人", "否", True, False),  # NO gold contained (no negation check)
    (None, "是", False, False),
    ("", "是", False, False),
]


@pytest.mark.parametrize(("pred", "gold", "lenient", "strict"), CASES)
def test_official_rule_lenient_and_strict(pred, gold, lenient, strict):
    assert vqa_correct_official(pred, gold) is lenient
    assert vqa_correct_official(pred, gold, strict=True) is strict


def test_parity_with_official_scorer_on_its_example():
    fx = json.load(open(FIXTURE, encoding="utf-8"))
    preds = [x["pred"] for x in fx["vqa"]]
    golds = [x["gold"] for x in fx["vqa"]]
    assert [vqa_accuracy_official(preds, golds)[k] for k in ("matched", "total")] == fx["expected"]["vqa_lenient"]
    assert [vqa_accuracy_official(preds, golds, strict=True)[k] for k in ("matched", "total")] == fx["expected"][
        "vqa_strict"
    ]


def test_every_item_counts_in_the_denominator():
    assert vqa_accuracy_official([None, None, "是"], ["是", "否", "是"])["accuracy"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [("答案：是的\n解释", "是的"), ("Answer: two", "two"), ("\n\n右边", "右边"), ("", ""), (None, "")],
)
def test_clean_answer_takes_first_line_without_prefix(raw, cleaned):
    assert clean_answer(raw) == cleaned


def test_english_only_diagnostic():
    assert [is_english_only(x) for x in ("two", "2", "两个", "left side", None)] == [True, False, False, True, False]
