"""Reliability of what hanyi writes: ``hanyi report`` and ``hanyi submit`` on
hand-written lmms-eval output folders with hostile contents: secrets in ``model_args``, HTML and ``$`` in names,
NaN values, incomplete or duplicated sample logs, wrong-typed fields, and a ``--out`` folder holding user files."""

from __future__ import annotations

import json
import os

import pytest

from hanyi.report import main as report_main
from hanyi.submit import main as submit_main

SECRETS = ("sk-LEAK-123", "hunter2-LEAK", "tok-LEAK-9", "urlkey-LEAK")
SECRET_ARGS = (
    "pretrained=org/m,API_KEY=sk-LEAK-123,Password=hunter2-LEAK,hf_token=tok-LEAK-9,"
    "base_url=https://bob:hunter2-LEAK@judge.example/v1?key=urlkey-LEAK"
)


def write_run(directory, tasks: dict, model_args="pretrained=m", model_name=None, limit=None, samples=None, **over):
    """An lmms-eval 0.7.3 results file (``tasks``: {task: {metric,filter: value}}) plus sample logs."""
    os.makedirs(directory, exist_ok=True)
    samples = samples or {}
    data = {
        "results": {t: {"alias": t, **m} for t, m in tasks.items()},
        "group_subtasks": {t: [] for t in tasks},
        "higher_is_better": {t: {k.split(",")[0]: True for k in m} for t, m in tasks.items()},
        "n-samples": {t: {"original": 3, "effective": 3 if limit is None else limit} for t in tasks},
        "versions": {t: 1.0 for t in tasks},
        "config": {"model": "replay", "model_args": model_args, "limit": limit},
        "model_name": model_name if model_name is not None else model_args,
        "date": "20250101_000000",
        "lmms_eval_version": "0.7.3",
    }
    data.update(over)
    with open(os.path.join(directory, "20250101_000000_results.json"), "w", encoding="utf-8") as f:
        json.dump(data, f)
    for task, rows in samples.items():
        with open(os.path.join(directory, f"20250101_000000_samples_{task}.jsonl"), "w", encoding="utf-8") as f:
            for row in rows:
                f.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return directory


def sample(doc_id, response="A", **metrics):
    return {"doc_id": doc_id, "target": "A", "resps": [[response]], "filtered_resps": [response], **metrics}


def full_log(n=3):
    return [sample(i, accuracy={"pred": "A", "score": 1.0}) for i in range(n)]


def all_text(folder) -> str:
    out = []
    for root, _dirs, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                out.append(f.read().decode("utf-8", "replace"))
    return "\n".join(out)


# ---- secrets (item 10) -------------------------------------------------------------------------------------------------
def test_no_secret_from_model_args_or_urls_reaches_any_report_or_submission_file(tmp_path, caplog, capfd):
    run = write_run(
        tmp_path / "out" / "m",
        {"punrebus_matching": {"accuracy,none": 0.5}},
        model_args=SECRET_ARGS,
        samples={"punrebus_matching": full_log()},
    )
    with caplog.at_level("DEBUG"):
        assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
        assert submit_main([str(run), "--benchmark", "punrebus", "--out", str(tmp_path / "sub")]) == 0
    printed = caplog.text + "".join(capfd.readouterr())
    assert "rep" in printed and all(secret not in printed for secret in SECRETS)  # logs and console too
    for folder in (tmp_path / "rep", tmp_path / "sub"):
        text = all_text(folder)
        assert text, folder
        for secret in SECRETS:
            assert secret not in text, (folder, secret)
    assert "API_KEY=***" in all_text(tmp_path / "rep")  # the name stays: a reader sees a key was given
    doc = json.loads((tmp_path / "sub" / "punrebus_submission.json").read_text(encoding="utf-8"))
    assert "api_key=***" in doc["model_args"].lower()


# ---- escaping (item 11) ------------------------------------------------------------------------------------------------
def test_report_md_escapes_html_in_names_and_plots_survive_mathtext(tmp_path):
    pytest.importorskip("matplotlib")
    name = "<b onmouseover=alert(1)>m$x^$"
    run = write_run(
        tmp_path / "m",
        {"punrebus_matching": {"accuracy,none": 0.5}, "cii_none": {"acc,none": 0.4}},
        model_name=name,
    )
    assert report_main([str(run), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "<b " not in md and "&lt;b onmouseover=alert\\(1\\)&gt;m$x^$" in md
    assert "<b " not in (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert os.listdir(tmp_path / "rep" / "plots")  # plots drawn with the "$x^$" label, no mathtext ParseException


def test_report_md_escapes_markdown_links_and_images_in_user_strings(tmp_path):
    """a model name or model_args holding [x](javascript:...) or ![](http://...) was copied verbatim
    into report.md, where a viewer renders a live link and fetches an image."""
    import re

    evil_name = "[click](javascript:alert(1))"
    evil_args = "pretrained=m,note=![](http://evil.example/p.png),x=*bold*_it_`code`"
    run = write_run(
        tmp_path / "m", {"punrebus_matching": {"accuracy,none": 0.5}}, model_name=evil_name, model_args=evil_args
    )
    assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "javascript:alert" in md and "evil.example" in md  # shown, as text
    assert not re.search(r"(?<!\\)\]\((?:javascript|http)", md)  # never a link or image target
    assert "](javascript" not in md and "![](" not in md and "*bold*" not in md and "`code`" not in md


def test_render_png_takes_a_dollar_in_a_label():
    pytest.importorskip("matplotlib")
    from hanyi.report.plots import render_png
    from hanyi.report.tables import BarPlot

    plot = BarPlot(
        name="p",
        title="acc $",
        kind="ranking",
        categories=["$x^$", "b$"],
        series=[("ours", [0.1, 0.2], True)],
        highlight=[True, False],
        ylabel="$",
    )
    assert render_png(plot).startswith(b"\x89PNG")


# ---- wrong-typed fields (item 11) --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "field, value, message",
    [
        ("config", ["x"], "field 'config' is a list, expected an object"),
        ("n-samples", {"cii_none": 3}, "field 'n-samples.cii_none' is a int, expected an object"),
        ("group_subtasks", {"cii": "cii_none"}, "field 'group_subtasks.cii' is a string, expected a list"),
        ("versions", "1.0", "field 'versions' is a string, expected an object"),
        ("model_name", 7, "field 'model_name' is a int, expected a string"),
    ],
)
def test_a_wrong_typed_results_field_gives_one_line_naming_the_file(tmp_path, capsys, field, value, message):
    run = write_run(tmp_path / "m", {"cii_none": {"acc,none": 0.4}}, **{field: value})
    assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "20250101_000000_results.json" in err and message in err
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 2
    assert message in capsys.readouterr().err


# ---- --out protection (item 9) -----------------------------------------------------------------------------------------
def test_report_refuses_a_folder_of_user_files_and_keeps_them(tmp_path, capsys):
    run = write_run(tmp_path / "m", {"cii_none": {"acc,none": 0.4}})
    user = tmp_path / "photos"
    (user / "plots").mkdir(parents=True)
    (user / "plots" / "holiday.png").write_bytes(b"mine")
    (user / "notes.txt").write_text("mine")
    assert report_main([str(run), "--out", str(user), "--no-plots"]) == 2
    assert "not empty and not an earlier hanyi report" in capsys.readouterr().err
    assert (user / "plots" / "holiday.png").read_bytes() == b"mine" and sorted(os.listdir(user)) == [
        "notes.txt",
        "plots",
    ]


def test_report_rewrites_its_own_folder_and_only_its_own_plots(tmp_path):
    pytest.importorskip("matplotlib")
    run = write_run(tmp_path / "m", {"punrebus_matching": {"accuracy,none": 0.5}})
    rep = tmp_path / "rep"
    assert report_main([str(run), "--out", str(rep)]) == 0
    ours = sorted(os.listdir(rep / "plots"))
    assert ours
    (rep / "plots" / "user_added.png").write_bytes(b"mine")
    assert report_main([str(run), "--out", str(rep)]) == 0
    assert (rep / "plots" / "user_added.png").read_bytes() == b"mine"
    assert sorted(os.listdir(rep / "plots")) == sorted([*ours, "user_added.png"])


# ---- submit: completeness, doc_id, NaN (items 4, 5) --------------------------------------------------------------------
@pytest.mark.parametrize(
    "rows, limit, message",
    [
        (full_log(2), None, "missing 1 of 3 docs (first: 2)"),
        ([*full_log(3), sample(1)], None, "doc_id 1 twice"),
        (full_log(3), 3, "run with --limit 3"),
        ([*full_log(3), sample(7)], None, "outside the dataset's 0..2"),
    ],
)
def test_submit_refuses_incomplete_logs_unless_allow_partial_and_then_says_so(tmp_path, capsys, rows, limit, message):
    run = write_run(tmp_path / "m", {"cii_none": {"acc,none": 0.4}}, limit=limit, samples={"cii_none": rows})
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cii_none" in err and message in err and "--allow-partial" in err
    assert not (tmp_path / "sub").exists()
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "sub"), "--allow-partial"]) == 0
    doc = json.loads((tmp_path / "sub" / "cii_submission.json").read_text(encoding="utf-8"))
    assert any(message in p for p in doc["partial"]["cii_none"])
    ids = [p["doc_id"] for p in doc["tasks"]["cii_none"]["predictions"]]
    assert ids == sorted(set(ids))  # one record per doc, matched by id


def test_submit_duplicate_doc_keeps_the_last_record(tmp_path):
    rows = [*full_log(3), sample(1, response="LATER")]
    run = write_run(tmp_path / "m", {"cii_none": {"acc,none": 0.4}}, samples={"cii_none": rows})
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "s"), "--allow-partial"]) == 0
    doc = json.loads((tmp_path / "s" / "cii_submission.json").read_text(encoding="utf-8"))
    assert doc["tasks"]["cii_none"]["predictions"][1]["response"] == "LATER"


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"target": "A", "resps": [["A"]]}', ":2: no doc_id"),
        ('{"doc_id": 1.9, "resps": [["A"]]}', ":2: doc_id 1.9 is not an integer"),
        ('{"doc_id": true, "resps": [["A"]]}', ":2: doc_id True is not an integer"),
        ("[1, 2]", ":2: a sample line must be a JSON object"),
    ],
)
def test_submit_names_the_line_of_a_bad_sample_record(tmp_path, capsys, line, message):
    rows = [sample(0), line, sample(1), sample(2)]
    run = write_run(tmp_path / "m", {"cii_none": {"acc,none": 0.4}}, samples={"cii_none": rows})
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "samples_cii_none.jsonl" + message in err


def test_submission_files_are_standard_json_even_with_nan(tmp_path):
    rows = [sample(i, acc={"pred": "A", "score": float("nan")}) for i in range(3)]
    run = write_run(
        tmp_path / "m", {"cii_none": {"acc,none": float("nan"), "acc_robust,none": 0.5}}, samples={"cii_none": rows}
    )
    assert submit_main([str(run), "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 0
    text = (tmp_path / "sub" / "cii_submission.json").read_text(encoding="utf-8")
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert doc["tasks"]["cii_none"]["metrics"] == {"acc_robust": 0.5}


def test_cvlue_vg_nan_box_is_written_as_the_empty_box(tmp_path):
    from hanyi.submit import cvlue_vg, validate_cvlue

    rows = [
        sample(0, miou={"ref_id": 1, "image_path": "a.png", "pred_bbox": [float("nan"), 0.0, 1.0, 1.0]}),
        sample(1, miou={"ref_id": 2, "image_path": "a.png", "pred_bbox": [0.0, 0.0, 1.0, 1.0]}),
    ]
    data = cvlue_vg(rows)
    assert data[0]["bbox"] == [] and data[1]["bbox"] == [0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="bbox must be"):
        validate_cvlue("vg_submit.json", [{"ref_id": 1, "image": "a", "bbox": [float("inf"), 0, 1, 1]}])


@pytest.mark.parametrize(
    "task", ["punrebus_matching", "cii_none", "unpie_grounding_homo", "vulca_baseline", "cvlue_vqa"]
)
def test_a_lone_surrogate_in_a_response_is_made_valid_utf8_before_it_is_scored_and_logged(evaluate, task, tmp_path):
    """a reply cut at max_new_tokens can end in half a surrogate pair; lmms-eval then wrote a 0-byte
    sample log and exited 0. Every task's response filter replaces it (U+FFFD) in the logged resps too."""
    from hanyi.models.replay import ReplayModel

    class CutModel(ReplayModel):  # a model whose every reply ends in a lone surrogate
        def generate_until(self, requests):
            return ["A\ud800" for _ in requests]

    path = tmp_path / "none.jsonl"
    path.write_text("", encoding="utf-8")
    res = evaluate([task], CutModel(path=str(path), on_missing="empty"), limit=2)
    samples = res["samples"][task]
    assert len(samples) == 2
    for sample in samples:
        assert sample["resps"] == [["A\ufffd"]] and sample["filtered_resps"] == ["A\ufffd"]
        json.dumps(sample, ensure_ascii=False, default=str).encode("utf-8")  # what lmms-eval writes: no error


@pytest.mark.parametrize("bad", ["x", [1, "y"], {"a": 1}, [[1, 2], 3]])
def test_per_doc_statistics_that_are_not_numbers_give_no_interval_never_a_traceback(tmp_path, bad):
    """per-doc values that are strings or lists gave a TypeError traceback (metrics/resample.py)."""
    from hanyi.results.decomposed import unit_stats
    from hanyi.results.runs import load_runs

    lines = [sample(i, accuracy={"parsed": True, "correct": True, "pred": ["A"], "gold": ["A"]}) for i in range(3)]
    for line in lines:
        line["hanyi_per_doc"] = {"accuracy": 1.0}
    lines[1]["hanyi_per_doc"] = {"accuracy": bad}
    run = write_run(tmp_path / "m", {"punrebus_matching": {"accuracy,none": 1.0}}, samples={"punrebus_matching": lines})
    why = unit_stats(load_runs([str(run)])[0], "punrebus_matching", "accuracy,none")
    assert isinstance(why, str) and "doc_id 1" in why and "not numbers" in why
    assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    assert "punrebus\\_matching" in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")


def test_an_all_nan_run_shows_its_headline_rows_as_nan_and_says_why(tmp_path):
    """an all-NaN run showed an empty headline table."""
    nan = float("nan")
    run = write_run(
        tmp_path / "m",
        {"punrebus_matching": {"accuracy,none": nan, "parse_rate,none": nan}},
        samples={"punrebus_matching": full_log()},
    )
    assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    headline = md.split("### Headline metrics", 1)[1].split("###", 1)[0]
    assert "| punrebus\\_matching | accuracy ↑ | NaN |" in headline and "No headline value" in headline


def test_a_sample_log_line_that_is_not_json_is_named_not_skipped_silently(tmp_path, caplog):
    """a non-JSON sample-log line made the report drop the log without a word."""
    lines = [json.dumps(s) for s in full_log()] + ["{not json"]
    run = write_run(tmp_path / "m", {"punrebus_matching": {"accuracy,none": 1.0}}, samples={"punrebus_matching": lines})
    with caplog.at_level("WARNING", logger="hanyi.report"):
        assert report_main([str(run), "--out", str(tmp_path / "rep"), "--no-plots"]) == 0
    said = [r.getMessage() for r in caplog.records if "not valid JSON" in r.getMessage()]
    assert said and "_samples_punrebus_matching.jsonl:4" in said[0] and "not used" in said[0]
