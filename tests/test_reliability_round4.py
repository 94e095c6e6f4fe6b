"""Issue 40 (reliability round 4): the report never miscounts, every write is safe, crashes are one line each, and
the unclear cases each get a decision (docs/when-things-go-wrong.md, "Hostile inputs")."""

from __future__ import annotations

import json
import logging
import math

from tests.test_report_honest import choice_samples, report, section, table, write_run


def _headline(rep, bench):
    return table(rep, bench, "Headline metrics")


# ---- (b) the report never miscounts ------------------------------------------------------------------------------------


def test_duplicated_sample_log_lines_are_counted_once_with_a_warning(tmp_path, caplog):
    """n=18 for 12 docs, and every share computed over the duplicated lines, before."""
    correct = [i < 3 for i in range(12)]
    samples = choice_samples(correct, ["A" if i < 3 else "" for i in range(12)])
    for line in samples:
        line["accuracy"]["parsed"] = line["filtered_resps"] == ["A"]
    doubled = samples + samples[:6]  # six lines logged twice
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.25}},
        {"punrebus_textonly": doubled},
        n={"punrebus_textonly": 12},
    )
    with caplog.at_level(logging.WARNING, logger="hanyi.report"):
        rep = report(tmp_path, d)
    row = next(r for r in _headline(rep, "punrebus")["rows"] if r[1].startswith("accuracy"))
    assert row[-1] == "12", row
    assert any("6 line(s) repeat a doc_id" in r.getMessage() for r in caplog.records)
    assert "9 failed or empty generations" in json.dumps(section(rep, "punrebus"))  # 12 counted from 18 lines


def test_runs_over_different_docs_with_the_same_prompt_are_not_paired(tmp_path):
    """lmms-eval's doc_hash hashes the prompt only (the same for every Pun Rebus doc): two runs over other docs
    were paired doc by doc."""
    dirs = []
    for name, images in (("a", "abcdefghij"), ("b", "abcdeVWXYZ")):
        samples = choice_samples([i % 2 == 0 for i in range(10)])
        for line, image in zip(samples, images):
            line.update(doc={"image_id": f"{image}.jpg", "options": ["x", "y"]}, target="A", doc_hash="same-prompt")
        dirs.append(
            write_run(
                tmp_path / name,
                "pretrained=m",
                {"punrebus_textonly": {"accuracy,none": 0.5}},
                {"punrebus_textonly": samples},
            )
        )
    sec = section(report(tmp_path, *dirs), "punrebus")
    assert [p for p in sec["paired"] if p["task"] == "punrebus_textonly"] == []
    assert any("5 of the 10 doc ids" in n and "not paired doc by doc" in n for n in sec["notes"])


def test_a_partly_judged_metric_shows_its_judged_n_and_failures(tmp_path):
    ok = {"verdict": 9, "judge_raw": "9", "judge_error": None, "prompt": "p"}
    down = {"verdict": None, "judge_raw": None, "judge_error": "request_failed: HTTP 503", "prompt": "p"}
    samples = [
        {
            "doc_id": i,
            "filtered_resps": ["A"],
            "accuracy": {"parsed": True, "correct": True, "pred": ["A"], "gold": ["A"]},
            "judge_score": ok if i < 4 else down,
        }
        for i in range(12)
    ]
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_expression": {"accuracy,none": 1.0, "judge_score,none": 9.0}},
        {"punrebus_expression": samples},
    )
    row = next(r for r in _headline(report(tmp_path, d), "punrebus")["rows"] if r[1].startswith("judge_score"))
    assert "judged 4 of 12 docs; 8 judge requests failed" in row[2], row


def test_a_nan_headline_row_stays_with_its_reason(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5, "accuracy_robust,none": math.nan}},
        {"punrebus_textonly": choice_samples([True, False])},
    )
    head = _headline(report(tmp_path, d), "punrebus")
    assert [r[2] for r in head["rows"] if r[1].startswith("accuracy_robust")] == ["NaN"]
    assert head["caption"].startswith("NaN: the run reported NaN, so scoring or aggregation failed")
