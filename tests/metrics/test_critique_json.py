"""Part One / Part Two split and JSON validity on Gemini-style transcripts."""

import json

import pytest

from hanyi.metrics.critique_json import PART_TWO_KEYS, split_critique

VALID = json.dumps({k: {} for k in PART_TWO_KEYS}, indent=2)


@pytest.mark.parametrize(
    "response, valid, error",
    [
        (
            f"TEXT:\nA fine scroll.\n**Part Two: Structured Evaluation in JSON Format**\n```json\n{VALID}\n```",
            True,
            None,
        ),
        (f"Commentary.\n{VALID}", True, None),  # unfenced: last balanced object
        ('Commentary.\n```json\n{"artwork_identifier": "x",}\n```', False, "invalid JSON"),
        ("Commentary only.", False, "no JSON object found"),
        ("", False, "no JSON object found"),
        ("```json\n[1, 2]\n```", False, "JSON is a list"),
        ('a {"b": "}"} then {"artwork_identifier": 1}', False, "missing keys"),
    ],
)
def test_json_validity(response, valid, error):
    result = split_critique(response)
    assert result["json_valid"] is valid
    assert (result["json_error"] is None) if error is None else result["json_error"].startswith(error)


def test_commentary_drops_the_part_two_heading_and_json():
    result = split_critique(f"TEXT:\nA fine scroll.\n**Part Two: JSON**\n```json\n{VALID}\n```")
    assert result["commentary"] == "TEXT:\nA fine scroll."


def test_released_gemini_transcript_has_valid_part_two():
    import os

    path = os.path.join(
        os.path.dirname(__file__),
        "..",
        "..",
        "..",
        "shared",
        "data",
        "vulca",
        "emnlp2025_research_branch",
        "gemini2.5_April_basic.txt",
    )
    if not os.path.isfile(path):
        pytest.skip("released Gemini transcript not present")
    result = split_critique(open(path, encoding="utf-8").read())
    assert result["json_valid"] and result["commentary"].startswith("TEXT:") and "Part Two" not in result["commentary"]


def test_split_critique_reports_json_nested_past_the_recursion_limit():
    r = split_critique("Fine.\n```json\n" + '{"a":' * 50_000 + "1" + "}" * 50_000 + "\n```")
    assert r["json_valid"] is False and r["json_error"] == "invalid JSON: nested too deeply"


def test_split_critique_bounds_the_brace_search(monkeypatch):
    import hanyi.metrics.critique_json as cj

    monkeypatch.setattr(cj, "_SEARCH_BUDGET", 10_000)
    r = cj.split_critique("{" * 8000)
    assert r["json_valid"] is False and r["json_error"].startswith("unparsed: too many unbalanced")
    assert cj.split_critique('text {"artwork_identifier": 1}')["json"] == {"artwork_identifier": 1}


def test_split_critique_rejects_nan_as_non_standard_json():
    r = split_critique('```json\n{"artwork_identifier": NaN}\n```')
    assert r["json"] is None and r["json_error"] == "invalid JSON: NaN is not standard JSON"


def test_split_critique_rejects_a_number_that_overflows_to_infinity():
    r = split_critique('```json\n{"artwork_identifier": [1E400]}\n```')
    assert r["json"] is None and r["json_error"].startswith("invalid JSON: number 1E400 is out of range")
