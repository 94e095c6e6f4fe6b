"""Reliability: the report never miscounts, every write is safe, crashes are one line each, and
the unclear cases each get a decision (docs/when-things-go-wrong.md, "Hostile inputs")."""

from __future__ import annotations

import json
import logging
import math
import os

import pytest

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


# ---- (c) every write is safe -------------------------------------------------------------------------------------------


def _cli(argv, capsys):
    from hanyi.cli import main

    status = main(argv)
    return status, capsys.readouterr().err


def _a_run(tmp_path):
    return write_run(
        str(tmp_path / "run"),
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5}},
        {"punrebus_textonly": choice_samples([True, False])},
    )


@pytest.mark.parametrize("planted", ["report.md", "report.json", "plots"])
def test_report_out_never_writes_through_a_planted_symlink(tmp_path, capsys, planted):
    run, out, outside = _a_run(tmp_path), tmp_path / "rep", tmp_path / "outside"
    assert _cli(["report", run, "--out", str(out)], capsys)[0] == 0  # an earlier report: a folder it may rewrite
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    target = outside if planted == "plots" else outside / "precious"
    if planted == "plots":
        for name in os.listdir(out / "plots"):
            os.remove(out / "plots" / name)
        os.rmdir(out / "plots")
        (outside / "x.png").write_text("keep me too")
    elif planted == "report.json":  # keep it readable as an earlier report: the link points at a copy outside
        (outside / "precious").write_text((out / "report.json").read_text())
        os.remove(out / planted)
    else:
        os.remove(out / planted)
    os.symlink(target, out / planted)
    before = {p: p.read_bytes() for p in outside.iterdir()}
    status, err = _cli(["report", run, "--out", str(out)], capsys)
    if planted == "plots":  # with --no-plots nothing is written there; with plots: refused
        status, err = _cli(["report", run, "--out", str(out)], capsys) if status else (status, err)
    assert {p: p.read_bytes() for p in outside.iterdir()} == before
    if status or planted != "plots":  # plots: refused when matplotlib draws any
        assert status == 1 and len(err.strip().splitlines()) == 1 and "symlink" in err, err


def test_submit_out_never_writes_through_a_planted_symlink(tmp_path, capsys):
    from tests.test_submit import _results_on

    out = _results_on(tmp_path, str(tmp_path / "prepared" / "cii"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "precious").write_text("keep me")
    os.symlink(tmp_path / "precious", tmp_path / "sub" / "cii_submission.json")
    status, err = _cli(["submit", out, "--benchmark", "cii", "--out", str(tmp_path / "sub")], capsys)
    assert (tmp_path / "precious").read_text() == "keep me"
    assert status == 1 and len(err.strip().splitlines()) == 1 and "symlink" in err, err


@pytest.mark.parametrize("command", ["report", "submit", "export"])
@pytest.mark.parametrize("code", ["ENOSPC", "EROFS"])
def test_a_full_disk_or_read_only_folder_is_one_line_and_exit_1(tmp_path, capsys, monkeypatch, command, code):
    """Tracebacks before (the tests run as root, where chmod does not stop a write: the failure is injected)."""
    import builtins
    import errno

    out, err_no = tmp_path / "dest", getattr(errno, code)
    real_open, real_os_open = builtins.open, os.open

    def fake_open(path, mode="r", *args, **kwargs):
        if str(path).startswith(str(out)) and any(c in mode for c in "wax"):
            raise OSError(err_no, os.strerror(err_no), str(path))
        return real_open(path, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if str(path).startswith(str(out)) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(err_no, os.strerror(err_no), str(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    if command == "report":
        argv = ["report", _a_run(tmp_path), "--out", str(out), "--no-plots"]
    elif command == "submit":
        from tests.test_submit import _results_on

        argv = [
            "submit",
            _results_on(tmp_path, str(tmp_path / "prepared" / "cii")),
            "--benchmark",
            "cii",
            "--out",
            str(out),
        ]
    else:
        argv = ["export", "lmms-eval", "--out", str(out), "--benchmarks", "cii"]
    status, err = _cli(argv, capsys)
    assert status == 1 and len(err.strip().splitlines()) == 1 and str(out) in err, err
    assert "Traceback" not in err


def test_hanyi_eval_refuses_an_output_folder_another_run_is_writing_or_that_cannot_be_written(
    tmp_path, capsys, monkeypatch
):
    from hanyi import outputs

    release = outputs.claim_run_folder(str(tmp_path / "out"))
    status, err = _cli(
        ["eval", "--model", "replay", "--tasks", "punrebus_textonly", "--output_path", str(tmp_path / "out")], capsys
    )
    assert (
        status == 1 and "another hanyi eval is writing into this folder" in err and len(err.strip().splitlines()) == 1
    )
    release()
    assert not os.path.exists(tmp_path / "out" / outputs.LOCK)
    with open(tmp_path / "out" / outputs.LOCK, "w") as f:
        f.write("999999999")  # a run that was killed: its lock is taken over
    outputs.claim_run_folder(str(tmp_path / "out"))()
    (tmp_path / "out" / "m").mkdir()
    (tmp_path / "out" / "m" / "x_samples_t.jsonl").write_text("")
    assert outputs.empty_outputs(str(tmp_path / "out"), 0) == [str(tmp_path / "out" / "m" / "x_samples_t.jsonl")]


def test_a_cr_or_newline_in_model_args_or_model_name_cannot_break_report_md(tmp_path):
    d = write_run(
        tmp_path / "run",
        "pretrained=m\rx,evil=1\n| a | b |",
        {"punrebus_textonly": {"accuracy,none": 0.5}},
        {"punrebus_textonly": choice_samples([True, False])},
    )
    report(tmp_path, d)
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "\r" not in md and md.splitlines()[0].startswith("# hanyi report: ")
    runs = [line for line in md.splitlines() if "pretrained=m" in line]
    assert runs and all(line.count(" | ") == runs[0].count(" | ") for line in runs)
    assert "\\r" in runs[0] and "\\n" in md


# ---- (d) crashes become one line naming the file -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["utf16", "deep"])
def test_a_utf16_or_deeply_nested_results_file_is_one_line(tmp_path, capsys, kind):
    run = _a_run(tmp_path)
    (results,) = [os.path.join(run, f) for f in os.listdir(run) if f.endswith("_results.json")]
    text = open(results, encoding="utf-8").read()
    with open(results, "wb") as f:
        f.write(text.encode("utf-16") if kind == "utf16" else b"[" * 100_000 + b"]" * 100_000)
    status, err = _cli(["report", run, "--out", str(tmp_path / "rep")], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1 and results in err and "Traceback" not in err, err


def test_invalid_utf8_in_a_sample_log_is_named_and_the_report_goes_on(tmp_path, capsys, caplog):
    run = _a_run(tmp_path)
    (log,) = [os.path.join(run, f) for f in os.listdir(run) if f.endswith(".jsonl")]
    with open(log, "ab") as f:
        f.write(b'{"doc_id": 9, "x": "\xff\xfe"}\n')
    with caplog.at_level(logging.WARNING, logger="hanyi.report"):
        status, err = _cli(["report", run, "--out", str(tmp_path / "rep"), "--no-plots"], capsys)
    assert status == 0 and "Traceback" not in err
    assert any(f"{log}:3: not valid UTF-8" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("readme", [b"---\nconfigs: [\xff\xfe]\n---\n", b"no header at all\n"])
def test_hanyi_tasks_names_an_unreadable_prepared_folder_instead_of_not_prepared(tmp_path, capsys, monkeypatch, readme):
    (tmp_path / "cii").mkdir()
    (tmp_path / "cii" / "README.md").write_bytes(readme)
    monkeypatch.setenv("HANYI_DATA_ROOT", str(tmp_path))
    from hanyi.cli import main

    assert main(["tasks", "cii", "--no-count"]) == 0
    out = capsys.readouterr().out
    assert "unreadable" in out and "not prepared" not in out and str(tmp_path / "cii" / "README.md") in out, out


# ---- (e) nothing is scored twice, nothing dropped without a word -------------------------------------------------------


def _sample(bench, config, tmp_path):
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    return datasets.load_dataset(os.path.join(SAMPLE_DIR, bench), config, split="test", cache_dir=str(tmp_path / "c"))


def test_a_duplicated_pun_rebus_row_stops_the_load_naming_it(tmp_path):
    import datasets

    from hanyi.tasks.punrebus import loading

    ds = _sample("punrebus", "textonly", tmp_path)
    assert len(loading.punrebus_textonly_process_docs(ds)) == len(ds)
    doubled = datasets.concatenate_datasets([ds, ds.select([1])])
    with pytest.raises(ValueError, match=rf"1 story_zh\(s\) appear in more than one row: {ds[1]['story_zh']}"):
        loading.punrebus_textonly_process_docs(doubled)
    images = _sample("punrebus", "images", tmp_path)
    with pytest.raises(ValueError, match="more than one row"):
        loading.punrebus_process_docs(datasets.concatenate_datasets([images, images.select([0])]))


def test_a_nan_gold_box_stops_the_load_naming_the_doc(tmp_path):
    from hanyi.tasks.cvlue import utils

    ds = _sample("cvlue", "vg", tmp_path)
    assert len(utils.cvlue_process_docs(ds)) == len(ds)
    broken = ds.map(lambda row, i: {"bbox": [math.nan, 1.0, 2.0, 3.0] if i == 1 else row["bbox"]}, with_indices=True)
    with pytest.raises(ValueError, match=rf"1 doc\(s\) have a non-finite gold bbox \(ref_id: {ds[1]['ref_id']}\)"):
        utils.cvlue_process_docs(broken)


# ---- (f) the unclear cases: one decision each (docs/when-things-go-wrong.md, "Hostile inputs") -------------------------


def test_a_key_in_the_judge_url_is_refused_at_load():
    from hanyi import settings

    model = {"HANYI_JUDGE_MODEL": "judge"}
    assert settings.problems({"HANYI_JUDGE_BASE_URL": "https://judge.example/v1", **model}) == []
    (why,) = settings.problems({"HANYI_JUDGE_BASE_URL": "https://judge.example/v1?key=sk-secret", **model})
    assert "no query string" in why and "sk-secret" not in why


def test_an_absolute_or_escaping_cvlue_image_path_is_refused_not_read(tmp_path):
    from hanyi.data.images import ImageUnavailableError, synthetic_image
    from hanyi.tasks import _common

    synthetic_image("x").save(tmp_path / "outside.png")
    (tmp_path / "root").mkdir()
    for bad in (str(tmp_path / "outside.png"), "../outside.png"):
        with pytest.raises(ImageUnavailableError, match="leave"):
            _common.require_image_files(str(tmp_path / "root"), [bad], "FIX")


def test_limit_minus_one_is_no_limit(tmp_path):
    """lmms-eval reads --limit -1 as every doc; the report called it a limit run."""
    d = write_run(
        tmp_path / "run",
        "pretrained=m",
        {"punrebus_textonly": {"accuracy,none": 0.5}},
        {"punrebus_textonly": choice_samples([True, False])},
        limit=-1,
    )
    assert not [n for n in section(report(tmp_path, d), "punrebus")["notes"] if "--limit" in n]


def test_a_torn_last_line_of_the_response_cache_costs_that_answer_only(tmp_path, caplog):
    from hanyi.models.replay import _audit_records

    line = {"task_name": "t", "doc_id": 0, "idx": 0, "request_type": "generate_until", "response": json.dumps("A")}
    log = tmp_path / "rank_0.audit.jsonl"
    log.write_text(json.dumps(line) + "\n" + json.dumps({**line, "doc_id": 1})[:40], encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hanyi.replay"):
        assert [r["doc_id"] for r in _audit_records(str(log))] == [0]
    assert "torn last line" in caplog.text


@pytest.mark.parametrize("mark", ["\u200b", "\ufeff", "\u202b"])
def test_an_answer_behind_an_invisible_mark_is_unparsed_not_guessed(mark):
    """Decision: a letter behind a zero-width, BOM or RTL mark is not read (it counts as unparsed, in parse_rate),
    by the paper's parser and ours alike: the official parsers do not read it, and ours never guess."""
    from hanyi.metrics.choice import extract_leading_letter

    assert extract_leading_letter("A") == "A" and extract_leading_letter(mark + "A") is None


def test_exif_rotation_is_not_applied():
    """Decision: an image reaches the model as stored, EXIF orientation ignored, as datasets' Image feature and
    lmms-eval's loaders give it (a rotation would change what every model of every harness sees)."""
    import io

    from PIL import Image

    from hanyi.data.images import synthetic_image, to_pil, undecodable

    buf = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    synthetic_image("exif", size=48).crop((0, 0, 48, 24)).save(buf, format="JPEG", exif=exif)
    assert undecodable(buf.getvalue()) is None and to_pil(buf.getvalue()).size == (48, 24)


def test_a_split_missing_a_column_is_named_before_datasets_is_asked(tmp_path):
    """It surfaced as a DatasetGenerationError that lmms-eval retried 5 times, naming nothing."""
    import shutil

    import pyarrow.parquet as pq

    from hanyi.data import sources

    shutil.copytree(os.path.join(sources.SAMPLE_DIR, "cii"), tmp_path / "cii")
    sources.check_prepared(str(tmp_path / "cii"))
    (dev,) = (tmp_path / "cii" / "data").glob("dev-*.parquet")
    table = pq.read_table(dev)
    pq.write_table(table.drop(["answer"]), dev)
    with pytest.raises(sources.DataCorruptError, match=rf"{dev.name}: lacks column\(s\) \['answer'\]"):
        sources.check_prepared(str(tmp_path / "cii"))
