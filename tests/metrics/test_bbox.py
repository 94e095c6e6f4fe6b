"""Box parsing, per-model coordinate conventions and the official +1-pixel IoU (spec §2.3, §6.3)."""

import json
import os

import pytest

from hanyi.metrics.bbox import accuracy_at_iou, iou_continuous, iou_official, mean_iou, parse_box, to_pixel_xywh

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cvlue", "official_examples.json")


def _fx():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


def test_parity_mean_iou_with_official_scorer():
    fx = _fx()
    ious = [iou_official(x["pred"], x["gold"]) for x in fx["vg"]]
    assert mean_iou(ious) == fx["expected"]["vg_miou"]  # exact, same float arithmetic
    per_ref = {str(x["ref_id"]): round(v, 4) for x, v in zip(fx["vg"], ious)}
    assert per_ref == fx["expected"]["vg_per_ref"]
    assert accuracy_at_iou(ious) == pytest.approx(fx["expected"]["vg_acc_0_5"])


def test_continuous_iou_differs_from_official_on_the_example():
    fx = _fx()
    cont = mean_iou([iou_continuous(x["pred"], x["gold"]) for x in fx["vg"]])
    assert cont == pytest.approx(fx["expected"]["vg_miou_continuous"], abs=1e-12)
    assert cont != fx["expected"]["vg_miou"]


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ([0, 0, 9, 9], [0, 0, 9, 9], 1.0),
        ([0, 0, 9, 9], [10, 0, 9, 9], 0.0),  # adjacent: 9 - 10 + 1 = 0 px of x-overlap
        ([0, 0, 9, 9], [9.5, 0, 9, 9], 5.0 / 195.0),  # < 1 px apart still overlaps under +1
        ([], [0, 0, 9, 9], 0.0),  # empty prediction
    ],
)
def test_official_iou_plus_one_rule(pred, gold, expected):
    assert iou_official(pred, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("<ref>唢呐</ref><box>(100,200),(300,400)</box>", (100.0, 200.0, 300.0, 400.0)),
        ("(1, 2), (3, 4) and (5,6),(7,8)", (1.0, 2.0, 3.0, 4.0)),  # first box wins
        ('{"bbox_2d": [5, 6, 7, 8]}', (5.0, 6.0, 7.0, 8.0)),
        ("[0.1, 0.2, 0.3, 0.4]", (0.1, 0.2, 0.3, 0.4)),
        ("[0.1, 0.2, 0.3]", None),
        ("在左边", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_box(text, box):
    assert parse_box(text) == box


@pytest.mark.parametrize(
    ("box", "fmt", "expected"),
    [
        ((0.5, 0.5, 0.25, 0.25), "norm1", [25.0, 50.0, 25.0, 50.0]),  # reordered corners
        ((0, 0, 1000, 1000), "qwen1000", [0.0, 0.0, 100.0, 200.0]),
        ((-5, 10, 150, 90), "pixel", [0.0, 10.0, 100.0, 80.0]),  # clipped to the 100 x 200 image
    ],
)
def test_to_pixel_xywh_conventions(box, fmt, expected):
    assert to_pixel_xywh(box, fmt, 100, 200) == pytest.approx(expected)


def test_unknown_coord_format_raises():
    with pytest.raises(ValueError, match="coord_format"):
        to_pixel_xywh((0, 0, 1, 1), "guess", 10, 10)


def test_acc_threshold_is_strict():
    assert accuracy_at_iou([0.5, 0.5000001]) == 0.5


@pytest.mark.parametrize(
    "answer",
    [
        '{"bbox": [NaN, 0, 10, 10]}',
        '{"bbox_2d": [0, 0, Infinity, 10]}',
        "[0, 0, " + "9" * 400 + ", 10]",
        "(0," + "9" * 400 + "),(10,10)",
        '{"bbox": [' + "2" * 400 + ", 0, 0, 0]}",  # a JSON int too large for a float (found by the fuzzer)
    ],
)
def test_parse_box_treats_nan_or_inf_as_unparsed(answer):
    assert parse_box(answer) is None


def test_parse_box_survives_brackets_nested_past_the_recursion_limit():
    assert parse_box('{"bbox": ' + "[" * 100_000 + "]") is None
    assert parse_box('{"bbox": ' + "[" * 100_000 + "] then [1, 2, 3, 4]") == (1.0, 2.0, 3.0, 4.0)
