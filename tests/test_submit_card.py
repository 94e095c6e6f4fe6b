"""``hanyi submit --name`` and the model card (``hanyi.submit.model_card``): a display name and what a visitor of the
board asks first (organisation, size, openness, link, release date, training data), from flags or a file, checked
before anything is written."""

from __future__ import annotations

import json

import pytest

from hanyi.submit import main
from hanyi.submit.hanyi_format import validate_hanyi_submission
from hanyi.submit.model_card import card_problems, clean_card, parse_parameters, size_label
from hanyi.submit.samples import SubmissionError


def run_dir(tmp_path) -> str:
    """A finished replay run of ``cii_none`` (2 docs) on prepared data: what ``hanyi submit`` reads."""
    run = tmp_path / "out" / "m"
    run.mkdir(parents=True)
    n = {"original": 2, "effective": 2}
    data = {"results": {"cii_none": {"alias": "cii_none", "acc,none": 50.0}}, "n-samples": {"cii_none": n},
            "configs": {"cii_none": {"task": "cii_none", "dataset_path": str(tmp_path / "prepared" / "cii")}},
            "config": {"model": "replay", "model_args": "path=r"}, "lmms_eval_version": "0.7.3"}  # fmt: skip
    (run / "20250101_000000_results.json").write_text(json.dumps(data))
    rows = [{"doc_id": i, "target": "A", "resps": [["A"]], "filtered_resps": ["A"]} for i in range(2)]
    (run / "20250101_000000_samples_cii_none.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(tmp_path / "out")


def written(tmp_path) -> dict:
    return json.loads((tmp_path / "sub" / "cii_submission.json").read_text(encoding="utf-8"))


def test_name_and_card_flags_write_a_model_card_and_keep_the_model_class(tmp_path):
    argv = [run_dir(tmp_path), "--benchmark", "cii", "--out", str(tmp_path / "sub"), "--name", "Qwen2.5-VL 7B",
            "--organisation", "Alibaba", "--params", "7B", "--open-weights", "--link", "https://qwenlm.github.io",
            "--release-date", "2025-01-28", "--training-data", "4.1T tokens of image-text pairs"]  # fmt: skip
    assert main(argv) == 0
    doc = written(tmp_path)
    assert doc["model"] == "replay" and doc["model_args"] == "path=r"  # provenance stays
    assert doc["model_card"] == {
        "name": "Qwen2.5-VL 7B", "organisation": "Alibaba", "link": "https://qwenlm.github.io",
        "release_date": "2025-01-28", "training_data": "4.1T tokens of image-text pairs", "parameters": 7_000_000_000,
        "open_weights": True,
    }  # fmt: skip
    validate_hanyi_submission(doc)


def test_a_card_file_is_read_and_a_flag_wins_over_it(tmp_path):
    card = tmp_path / "card.json"
    card.write_text(
        json.dumps({"name": "From file", "organisation": "Lab", "parameters": "1.5B", "open_weights": False})
    )
    argv = [run_dir(tmp_path), "--benchmark", "cii", "--out", str(tmp_path / "sub"), "--model-card", str(card)]
    assert main([*argv, "--name", "From flag"]) == 0
    assert written(tmp_path)["model_card"] == {
        "name": "From flag", "organisation": "Lab", "parameters": 1_500_000_000, "open_weights": False,
    }  # fmt: skip


def test_no_card_flag_writes_no_card(tmp_path):
    assert main([run_dir(tmp_path), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 0
    assert "model_card" not in written(tmp_path)


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--params", "seven"], "not a count such as 7B"),
        (["--link", "javascript:alert(1)"], "link: not an http(s) URL"),
        (["--name", "LV-ahpla\u202e"], "name: control or format character U+202E"),
        (["--release-date", "28/01/2025"], "release_date: not a date YYYY-MM-DD"),
        (["--name", "x" * 81], "name: 81 characters (at most 80)"),
    ],
)
def test_a_bad_card_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, flags, message):
    argv = [run_dir(tmp_path), "--benchmark", "cii", "--out", str(tmp_path / "sub"), *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "sub").exists()


def test_the_card_file_must_be_a_json_object(tmp_path, capsys):
    card = tmp_path / "card.json"
    card.write_text("[1, 2]")
    argv = [run_dir(tmp_path), "--benchmark", "cii", "--out", str(tmp_path / "sub"), "--model-card", str(card)]
    assert main(argv) == 2 and f"--model-card {card}: not a JSON object" in capsys.readouterr().err


def test_the_submission_format_refuses_a_card_with_an_unknown_field_or_a_bad_value():
    doc = {"format": "hanyi-submission", "version": 1, "benchmark": "cii", "model": "m",
           "tasks": {"cii_none": {"metrics": {"acc": 50.0}, "predictions": [{"doc_id": 0, "response": "A"}]}}}  # fmt: skip
    validate_hanyi_submission({**doc, "model_card": {"name": "ok"}})
    with pytest.raises(SubmissionError, match="model_card: unknown field 'colour'"):
        validate_hanyi_submission({**doc, "model_card": {"name": "ok", "colour": "red"}})
    with pytest.raises(SubmissionError, match="open_weights: not true or false"):
        validate_hanyi_submission({**doc, "model_card": {"open_weights": "yes"}})


def test_parameters_and_sizes_round_trip():
    for text in ("7B", "1.5B", "350M", "72B", "2T"):
        assert size_label(parse_parameters(text)) == text
    assert card_problems(None) == [] and clean_card({"name": " A\u0301 "}) == {"name": "\u00c1"}  # NFC, stripped
    assert clean_card({"name": "x", "bogus": 1}) == {}  # a bad card is no card
