"""CII-Bench extraction and accuracy: the official extractor pinned to its recorded behaviour, hanyi's robust parser."""

import json
import math
import os

import pytest

from hanyi.metrics.cii_extract import (
    accuracy_percent,
    category_accuracy,
    extract_answer_robust,
    extract_option_labels,
    paper_round,
    score_response,
)

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cii", "extract_cases.json")
with open(FIXTURE, encoding="utf-8") as _f:
    _DATA = json.load(_f)
CASES = [(c["response"], _DATA["options"][c["options"]], c["extracted"]) for c in _DATA["cases"]]
OWN = _DATA["options"]["own"]


@pytest.mark.parametrize("response,options,expected", CASES, ids=[repr(c[0])[:40] for c in CASES])
def test_official_extractor_matches_recorded_behaviour(response, options, expected):
    assert extract_option_labels(response, options) == expected


def test_official_extractor_dict_is_api_error():
    assert extract_option_labels({"error": "rate limited"}, OWN) == "error"


def test_official_extractor_without_options_skips_text_fallback():
    assert extract_option_labels("过多的关心会让人窒息。") is None


@pytest.mark.parametrize(
    "response,expected",
    [
        ("分析(A)...(B)...\n答案：(C)\n因为A不符合", "C"),  # official: A
        ("我认为答案是C选项", "C"),  # official: None
        ("根据分析，选C。", "C"),
        ("答案为C", "C"),
        ("答案：Ｄ", "D"),  # full-width letter
        ("选项A不对，选项B也不对。\n答案：E", "E"),
        ("The answer is (B).", "B"),
        ("**C.** 金钱不是万能的", "C"),
        ("答案是：\\boxed{D}", "D"),
        ("过多的关心会让人窒息。", "E"),
        ("Based on the image", None),  # a leading English word is not a letter
        ("A和B都可能", None),
        ("", None),
        ("   ", None),
        ("请使用以下格式：“答案：$LETTER”", None),
        # review defect 9: the English article is not answer A
        ("A man holds a fish over the pond. (E)", "E"),
        ("A man holds a fish over the pond.", None),
        ("The picture shows a boat.\nA woman waves. So E.", "E"),
        ("A 这幅图讽刺了过度关心", "A"),
        ("A\n这幅图讽刺了过度关心", "A"),
        ("A is correct: the man is blind to it", "A"),
    ],
)
def test_robust_extractor(response, expected):
    assert extract_answer_robust(response, OWN) == expected


@pytest.mark.parametrize("blank", ["", None])
def test_empty_answer_is_skipped_as_the_official_caller_does(blank):
    scored = score_response(blank, OWN, "F")
    assert scored == {
        "pred": None,
        "correct": False,
        "miss": True,
        "blank": True,
        "pred_robust": None,
        "correct_robust": False,
    }


@pytest.mark.parametrize("blank", ["   ", "\n\t", "\u3000"])
def test_whitespace_only_answer_extracts_f_under_acc_and_is_wrong_under_acc_robust(blank):
    """The official extractor strips a whitespace-only answer to "", a substring of every option: all six hit, the
    last (F) wins. ``acc`` keeps that quirk; ``acc_robust`` scores the blank answer wrong; ``blank`` counts it."""
    scored = score_response(blank, OWN, "F")
    assert scored == {
        "pred": "F",
        "correct": True,
        "miss": False,
        "blank": True,
        "pred_robust": None,
        "correct_robust": False,
    }
    assert score_response(blank, OWN, "B")["correct"] is False


@pytest.mark.parametrize(
    "response, paper, robust",
    [
        ("\u200bB\u200b", "B", "B"),  # zero-width space: not whitespace for str.strip, not a word character
        ("\ufeffC", "C", "C"),  # a byte-order mark
        ("\u2060D", "D", "D"),  # word joiner
        ("\u202eB", "B", None),  # right-to-left override: the robust parser refuses bidi controls
        ("\u200fE", "E", None),  # right-to-left mark
        ("答案：\u2066A\u2069", "A", None),  # an isolate around the letter
    ],
)
def test_zero_width_and_bidi_characters(response, paper, robust):
    scored = score_response(response, OWN, paper)
    assert (scored["pred"], scored["correct"], scored["pred_robust"]) == (paper, True, robust)
    assert scored["correct_robust"] is (robust is not None)


def test_letter_outside_options_is_wrong_not_miss():
    scored = score_response("分析\n答案：Hello", OWN, "A")
    assert scored["pred"] == "H" and scored["correct"] is False and scored["miss"] is False


def test_accuracy_counts_misses_in_denominator():
    items = [score_response(r, OWN, "C") for r in ("C", "答案：C", "选C", "B")]
    assert accuracy_percent(items) == 50.0
    assert accuracy_percent(items, "miss") == 25.0
    assert accuracy_percent(items, "correct_robust") == 75.0
    assert math.isnan(accuracy_percent([]))


def test_category_accuracy_multilabel_counts_every_label():
    items = [
        {"correct": True, "domain": "生活", "rhetorics": ["隐喻", "象征"]},
        {"correct": False, "domain": "生活", "rhetorics": ["隐喻"]},
        {"correct": True, "domain": "艺术", "rhetorics": ["对比"]},
    ]
    assert category_accuracy(items, "domain", "生活") == 50.0
    assert category_accuracy(items, "rhetorics", "隐喻") == 50.0
    assert category_accuracy(items, "rhetorics", "象征") == 100.0
    assert math.isnan(category_accuracy(items, "domain", "政治"))


@pytest.mark.parametrize(
    "correct,total,paper",
    [
        (515, 800, 64.4),  # Qwen2-VL-72B overall (spec §7)
        (148, 240, 61.7),  # Qwen2-VL-72B Life
        (19, 24, 79.2),  # Qwen2-VL-72B Politics
        (82, 137, 59.9),  # Qwen2-VL-72B CTC
        (7, 13, 53.9),  # double rounding: 53.846 -> 53.85 -> 53.9
        (9, 38, 23.7),  # Multi-panel comic step
    ],
)
def test_paper_round_reproduces_table_cells(correct, total, paper):
    assert paper_round(100 * correct / total) == paper


def test_robust_option_text_match_survives_fullwidth_punctuation():
    options = ["甲，乙。", "丙，丁。", "戊，己。", "庚，辛。", "壬，癸。", "子，丑。"]
    assert extract_answer_robust("我选：丙，丁。", options) == "B"
