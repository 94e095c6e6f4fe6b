"""Every Eval Ever records of the board (``hanyi.leaderboard.eee``): valid for the reference validator (``jsonschema``)
against the vendored v0.2.2 schema, with each metric's direction and range right, ISO 8601 run dates, plain versions,
the model card, and no path of the submitter's machine."""

from __future__ import annotations

import json

import pytest

from hanyi.leaderboard import eee
from hanyi.leaderboard.entries import Board, Cell, Entry, Row, Section
from hanyi.leaderboard.site import write_site

HOME = "/home/alice/secret-project"
COLUMNS = {
    "cii_none/acc": Cell(0.541, 0.50, 0.58, 800, stderr=0.02, method="exact (Clopper-Pearson)"),
    "cii_none/miss_rate": Cell(0.05, 0.03, 0.07, 800),
    "cii_ctc/ctc_score": Cell(4.2, 3.9, 4.5, 40, note="judge re-judged"),
    "cii_ctc/ctc_blank_rate": Cell(0.025, 0.0, 0.13, 40),
    "cii_ctc/ctc_judge_failures": Cell(3.0, n=40),
}


def carded_entry() -> Entry:
    return Entry(
        submission_hash="c" * 64,
        benchmark="cii",
        model="llava_hf",
        model_args=f"pretrained={HOME}/ckpt/qwen7b,dtype=float16",
        date="20261120_103000",
        hanyi_version="v0.9.0",
        lmms_eval_version="0.7.3",
        protocol={"cii_ctc": {"judge_model": "gpt-4o-2024-08-06", "judge_version": "3"}},
        provenance={"cii_none": {"data_source": {"kind": "folder", "path": f"{HOME}/data/cii"}}},
        judged={"cii_ctc/ctc_score": "re-judged"},
        card={"name": "Qwen2.5-VL 7B", "organisation": "Alibaba", "parameters": 7_000_000_000, "open_weights": True},
    )


@pytest.fixture
def record(tmp_path) -> dict:
    section = Section("cii", {}, list(COLUMNS), "cii_none/acc")
    section.rows = [Row("llava_hf", dict(COLUMNS), carded_entry(), rank=1, rank_low=1, rank_high=1, tier=1)]
    write_site(Board(sections=[section]), str(tmp_path))
    (path,) = (tmp_path / "eee" / "data").glob("*/*/*/*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def results(record: dict) -> dict[str, dict]:
    return {r["evaluation_name"]: r for r in record["evaluation_results"]}


def test_the_record_is_valid_for_the_reference_validator_against_v0_2_2(record):
    assert record["schema_version"] == "0.2.2"
    assert eee.check(record) == []
    broken = json.loads(json.dumps(record))
    broken["evaluation_results"][0]["metric_config"]["lower_is_better"] = "no"
    assert any("lower_is_better" in e and "boolean" in e for e in eee.check(broken))


@pytest.mark.parametrize(
    "column, lower",
    [("cii_none/acc", False), ("cii_none/miss_rate", True), ("cii_ctc/ctc_score", False),
     ("cii_ctc/ctc_blank_rate", True), ("cii_ctc/ctc_judge_failures", True)],
)  # fmt: skip
def test_lower_is_better_is_right_for_every_metric(record, column, lower):
    assert results(record)[column]["metric_config"]["lower_is_better"] is lower


def test_a_1_to_5_judge_score_has_its_range_and_a_count_runs_to_the_docs_scored(record):
    found = results(record)
    assert (found["cii_ctc/ctc_score"]["metric_config"]["min_score"], found["cii_ctc/ctc_score"]["metric_config"]["max_score"]) == (1.0, 5.0)  # fmt: skip
    assert found["cii_ctc/ctc_judge_failures"]["metric_config"]["max_score"] == 40.0
    assert found["cii_none/acc"]["metric_config"]["max_score"] == 1.0
    for r in found.values():  # every value within its declared range
        assert r["metric_config"]["min_score"] <= r["score_details"]["score"] <= r["metric_config"]["max_score"]


def test_timestamps_are_iso_8601_and_versions_plain(record):
    assert record["evaluation_timestamp"] == "2026-11-20T10:30:00"
    assert all(r["evaluation_timestamp"] == "2026-11-20T10:30:00" for r in record["evaluation_results"])
    assert record["eval_library"]["version"] == "0.7.3"
    assert record["eval_library"]["additional_details"]["hanyi_version"] == "0.9.0"
    assert float(record["retrieved_timestamp"]) > 1.7e9  # Unix seconds, as the schema says


def test_the_model_card_names_the_model_and_0_3_0_fields_are_there(record):
    info = record["model_info"]
    assert info["name"] == "Qwen2.5-VL 7B" and info["developer"] == "Alibaba" and info["id"] == "qwen7b"
    assert info["additional_details"]["model_availability"] == "open_weights"
    assert info["additional_details"]["deployment_type"] == "self_deployed"
    (judge,) = results(record)["cii_ctc/ctc_score"]["metric_config"]["llm_scoring"]["judges"]
    assert judge["model_info"]["id"] == "gpt-4o-2024-08-06"
    assert judge["model_info"]["additional_details"]["judge_version"] == "3"
    assert eee.check(record, eee.SCHEMA_0_3_0_PATH) == []


def test_no_path_of_the_submitter_s_machine_anywhere_on_the_site(tmp_path):
    section = Section("cii", {}, list(COLUMNS), "cii_none/acc")
    section.rows = [Row("llava_hf", dict(COLUMNS), carded_entry(), rank=1)]
    write_site(Board(sections=[section]), str(tmp_path))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 6
    for path in files:
        assert "/home/alice" not in path.read_text(encoding="utf-8"), path.name
    assert "qwen7b" in (tmp_path / "leaderboard.csv").read_text(encoding="utf-8")


def test_the_predictions_copy_and_viewer_carry_no_path_of_the_submitter_s_machine(tmp_path):
    import hashlib

    sub = tmp_path / "q_submission.json"
    doc = {"format": "hanyi-submission", "model_args": f"pretrained={HOME}/ckpt",
           "tasks": {"cii_none": {"provenance": {"data_source": {"kind": "prepared", "path": f"{HOME}/data"}},
                                  "predictions": [{"doc_id": 0, "response": f"see {HOME}/notes.txt", "target": "A"}]}}}  # fmt: skip
    sub.write_text(json.dumps(doc), encoding="utf-8")
    entry = carded_entry()
    entry.source_path, entry.submission_hash = str(sub), hashlib.sha256(sub.read_bytes()).hexdigest()
    section = Section("cii", {}, list(COLUMNS), "cii_none/acc")
    section.rows = [Row("llava_hf", dict(COLUMNS), entry, rank=1)]
    site = tmp_path / "site"
    write_site(Board(sections=[section]), str(site))
    copy = json.loads((site / "predictions" / f"{entry.submission_hash}.json").read_text(encoding="utf-8"))
    assert copy["tasks"]["cii_none"]["provenance"]["data_source"]["path"] == "\u2026/data"
    assert copy["model_args"] == "pretrained=\u2026/ckpt"
    viewers = list(site.glob("pred-*.html"))
    assert len(viewers) == 1 and "\u2026/notes.txt" in viewers[0].read_text(encoding="utf-8")
    for path in site.rglob("*"):
        if path.is_file():
            assert "/home/alice" not in path.read_text(encoding="utf-8"), path.name
