"""hanyi.metrics.choice_punrebus and the paper parser of choice.py: official Pun Rebus scorer behaviour."""

import math

import pytest

from hanyi.metrics.choice import accuracy_over_parsed, extract_leading_letter, is_correct_choice
from hanyi.metrics.choice_punrebus import (
    category_accuracy,
    category_accuracy_dedup,
    extract_first_char_letter,
    wrong_answer_confusion,
)


@pytest.mark.parametrize(
    "response, image_parser, text_parser",
    [
        ("Based on the artwork, E", "B", "B"),  # the documented quirk: first character wins
        ("A vase with peaches", "A", "A"),
        ("Option G", "G", None),  # the image scorer takes "Option X", the text scorer does not
        ("**B**", None, None),
        (" B", None, None),
        ("b. happiness", None, None),
        ("", None, None),
    ],
)
def test_official_first_character_rules(response, image_parser, text_parser):
    assert extract_leading_letter(response, "ABCDEFG") == image_parser
    assert extract_first_char_letter(response, "ABCDEFG") == text_parser


def test_multi_label_gold_any_label_counts():
    assert is_correct_choice("D", ["A", "B", "D"])  # 三多 sanduo
    assert not is_correct_choice("C", ["A", "B", "D"])


def _item(pred, gold, gold_rows=None):
    item = {"parsed": pred is not None, "correct": is_correct_choice(pred, gold), "pred": pred, "gold": gold}
    return item | {"gold_rows": list(gold_rows or gold)}


ITEMS = [_item("A", ["A", "B"]), _item("D", ["B"]), _item("D", ["F", "G"]), _item(None, ["B"]), _item("B", ["B"])]


def test_paper_accuracy_leaves_unparsed_out_of_denominator():
    assert accuracy_over_parsed(ITEMS) == pytest.approx(2 / 4)


@pytest.mark.parametrize("letter, expected", [("A", 1.0), ("B", 1 / 3), ("F", 0.0), ("G", 0.0), ("C", math.nan)])
def test_per_category_accuracy_uses_chosen_letter_over_parsed_gold_counts(letter, expected):
    # B: parsed items with B in gold = 3 (A|B, B, B); correct with chosen B = 1; C: no parsed doc, no value
    assert category_accuracy(ITEMS, letter) == pytest.approx(expected, nan_ok=True)
    assert category_accuracy_dedup(ITEMS, letter) == pytest.approx(expected, nan_ok=True)  # no duplicated rows here


def test_per_category_accuracy_counts_duplicated_answer_sheet_rows_as_the_official_scorer():
    # review defect 5: a story listed twice under B in the CSV counts twice in the official B denominator
    items = [_item("B", ["B"], ["B", "B"]), _item("C", ["B", "C"], ["B", "C", "C"]), _item("D", ["B"])]
    assert category_accuracy(items, "B") == pytest.approx(1 / 4)
    assert category_accuracy(items, "C") == pytest.approx(1 / 2)
    assert category_accuracy_dedup(items, "B") == pytest.approx(1 / 3)
    assert category_accuracy_dedup(items, "C") == pytest.approx(1 / 1)


def test_per_category_accuracy_is_nan_without_answer_sheet_rows():
    items = [{"parsed": True, "correct": True, "pred": "B", "gold": ["B"]}]
    assert math.isnan(category_accuracy(items, "B")) and category_accuracy_dedup(items, "B") == 1.0


def test_confusion_counts_each_true_label_of_a_wrong_answer():
    m = wrong_answer_confusion(ITEMS)
    assert (m["B"]["D"], m["F"]["D"], m["G"]["D"]) == (1, 1, 1)
    assert sum(sum(row.values()) for row in m.values()) == 3


def test_per_category_accuracy_is_nan_for_a_category_with_no_parsed_doc():
    """the official grade_answers has no value for a category none of the parsed docs carries (0.0 was
    read as "always wrong"); a category whose docs are parsed and all wrong is 0.0."""
    items = [
        {"parsed": True, "correct": False, "pred": "C", "gold": ["B"], "gold_rows": ["B"]},
        {"parsed": False, "correct": False, "pred": None, "gold": ["D"], "gold_rows": ["D"]},
    ]
    for fn in (category_accuracy, category_accuracy_dedup):
        assert fn(items, "B") == 0.0
        assert math.isnan(fn(items, "D")) and math.isnan(fn(items, "G")) and math.isnan(fn([], "B"))
