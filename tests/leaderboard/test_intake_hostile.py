"""The board's intake facing hostile submitters: forged verdicts, documents built to crash it, copies under other
names or bytes, look-alike names, files that are no files, huge files, lone surrogates, and the board's own failures
(pending, not rejected). Each case starts from a real ``hanyi submit`` file (``leaderboard_submissions``) where it
needs one, or from a small document the validation pass reads without re-scoring."""

from __future__ import annotations

import copy
import json
import os
import time

import pytest

from hanyi.cli import main


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write(path, doc, **kwargs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, **kwargs)
    return str(path)


def _check(capsys, path):
    code = main(["leaderboard", "check", str(path)])
    captured = capsys.readouterr()
    return code, [line for line in captured.err.splitlines() if line.startswith(f"{path}: ")], captured


def _small(**over):
    """A version-2 document of one cii_none prediction per doc (valid in shape; never re-scored here)."""
    doc = {
        "format": "hanyi-submission",
        "version": 2,
        "benchmark": "cii",
        "model": "m",
        "hanyi_version": "0.7.0",
        "lmms_eval_version": "0.7.3",
        "tasks": {
            "cii_none": {
                "version": 2.2,
                "metrics": {"acc": 0.5},
                "data_fingerprint": "sha256:00",
                "predictions": [{"doc_id": i, "doc_hash": f"h{i}", "response": "A"} for i in range(4)],
            }
        },
    }
    doc.update(over)
    return doc


# ---- documents that crashed the build or hid problems ------------------------------------------------------------
def _twice_then_not_an_object(doc):
    preds = doc["tasks"]["cii_none"]["predictions"]
    preds += [dict(preds[0]), 7]


def _twice_and_no_response(doc):
    doc["tasks"]["cii_none"]["predictions"].append(dict(doc["tasks"]["cii_none"]["predictions"][1]))
    del doc["tasks"]["cii_ctc"]["predictions"][0]["response"]


def _task_is_a_list(doc):
    doc["tasks"]["cii_ctc"] = [1, 2]


def _tag_as_task(doc):
    doc["tasks"]["cii"] = copy.deepcopy(doc["tasks"]["cii_none"])


def _forged_verdict(doc):
    for p in doc["tasks"]["cii_none"]["predictions"]:
        p["verdicts"] = {"acc": {"correct": True, "score": 1.0, "judge_model": "x"}}
    doc["tasks"]["cii_none"]["metrics"]["acc"] = 1.0


#: case -> (edit of the beta file, the lines that must all be said)
CRASHERS = {
    "doc twice, then a prediction that is no object": (
        _twice_then_not_an_object,
        ["tasks.cii_none.predictions[13]: Input should be a JSON object", "cii_none: 1 doc id(s) predicted twice"],
    ),
    "doc twice, and no response in another task": (
        _twice_and_no_response,
        ["tasks.cii_ctc.predictions[0].response: Field required", "cii_none: 1 doc id(s) predicted twice"],
    ),
    "a task that is a list": (_task_is_a_list, ["tasks.cii_ctc: Input should be a JSON object"]),
    "a tag as a task name": (_tag_as_task, ["cii: a group or tag, not a task"]),
    "a forged verdict under a metric no judge scores": (
        _forged_verdict,
        ["cii_none: a verdict under acc in 12 prediction(s), which the task does not declare as a judged metric"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CRASHERS))
def test_a_hostile_document_is_rejected_with_every_problem_and_no_traceback(
    case, leaderboard_submissions, tmp_path, capsys
):
    from hanyi.leaderboard import build

    edit, says = CRASHERS[case]
    doc = _load(leaderboard_submissions["beta"])
    edit(doc)
    path = _write(tmp_path / "subs" / "x_submission.json", doc)
    code, lines, _ = _check(capsys, path)
    assert code == 1
    for line in says:
        assert any(line in got for got in lines), (line, lines)
    board, found = build([str(tmp_path / "subs")], str(tmp_path / "site"))  # the build agrees, and writes its site
    (rej,) = found.rejected
    assert rej.state == "rejected" and [f"{path}: {r}" for r in rej.reasons] == lines
    assert os.path.exists(tmp_path / "site" / "index.html")


def test_a_lone_surrogate_is_one_line_and_leaves_no_temporary_file(tmp_path, capsys):
    from hanyi.leaderboard.intake import intake

    raw = json.dumps(_small(model="m")).replace('"model": "m"', '"model": "a\\ud800b"')
    path = tmp_path / "subs" / "x_submission.json"
    path.parent.mkdir()
    path.write_text(raw, encoding="ascii")
    code, lines, _ = _check(capsys, path)
    assert code == 1 and len(lines) == 1 and "surrogate" in lines[0], lines
    found = intake([str(path.parent)], str(tmp_path / "cache"))
    assert [r.state for r in found.rejected] == ["rejected"] and found.rejected[0].model is None
    assert not [p for p in os.listdir(tmp_path / "cache") if p.startswith(".tmp")]


def test_the_cache_writes_any_text_and_never_leaves_a_temporary_file(tmp_path):
    from hanyi.leaderboard.entries import Rejected
    from hanyi.leaderboard.intake import _cache_read, _cache_write

    rej = Rejected("p", "d" * 64, "a\ud800b", ["why \udcff"])
    _cache_write(str(tmp_path), "d" * 64, {"s": 1}, rej)
    assert _cache_read(str(tmp_path), "d" * 64, {"s": 1}) == rej
    assert os.listdir(tmp_path) == ["d" * 64 + ".json"]


# ---- verdicts and judged metrics ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_judged_metrics_without_a_board_judge_are_marked_as_the_submitters_claim(leaderboard_submissions, tmp_path):
    """Forged verdicts (every CTC score 5, the claims raised to match) are still only the submitter's claim: the entry
    marks every judged column unverified, so the ranking never ranks on it; metrics no judge scores are verified."""
    from hanyi.leaderboard.intake import check_file

    doc = _load(leaderboard_submissions["beta"])
    ctc = doc["tasks"]["cii_ctc"]
    for p in ctc["predictions"]:
        for item in p["verdicts"].values():
            if "score" in item:
                item["score"] = 5
    for metric in ctc["metrics"]:
        if metric.startswith("ctc_score"):
            ctc["metrics"][metric] = 5.0
    entry = check_file(_write(tmp_path / "forged_submission.json", doc))
    assert entry.values["cii_ctc"]["ctc_score"] == 5.0
    assert "cii_ctc/ctc_score" in entry.unverified and "the submitter's claim" in entry.unverified["cii_ctc/ctc_score"]
    assert not [k for k in entry.unverified if k.startswith("cii_none/")]


# ---- identity by content and arrival order -------------------------------------------------------------------------
@pytest.mark.slow
def test_a_copy_under_other_bytes_and_name_is_a_duplicate_of_the_first_arrival(leaderboard_submissions, tmp_path):
    from hanyi.leaderboard.intake import intake

    doc = _load(leaderboard_submissions["beta"])
    copied = {k: doc[k] for k in reversed(list(doc))} | {"model": "zeta-vl"}  # other key order, name and whitespace
    first = _write(tmp_path / "subs" / "zz" / "cii_submission.json", doc)
    cache = str(tmp_path / "cache")
    assert [e.model for e in intake([str(tmp_path / "subs")], cache).entries] == ["beta-vl"]
    later = _write(tmp_path / "subs" / "aa" / "cii_submission.json", copied, indent=3)  # sorts first, arrives later
    found = intake([str(tmp_path / "subs")], cache)
    assert [e.model for e in found.entries] == ["beta-vl"]
    (dup,) = found.rejected
    assert (dup.path, dup.state, dup.duplicate_of) == (later, "duplicate", first)
    assert "the same predictions of cii_ctc as" in dup.reasons[0]
    # byte-identical: the copy with the earlier name, arriving later, is the duplicate, not the genuine file
    same = tmp_path / "subs" / "a0" / "cii_submission.json"
    same.parent.mkdir()
    same.write_bytes(open(first, "rb").read())
    found = intake([str(tmp_path / "subs")], cache)
    states = {r.path: r.state for r in found.rejected}
    assert states == {later: "duplicate", str(same): "duplicate"} and found.entries[0].source_path == first


# ---- names ----------------------------------------------------------------------------------------------------------
def _entry(model, path, content, benchmark="cii"):
    from hanyi.leaderboard.entries import Entry

    return Entry("d" * 64, benchmark, model, "", "", "0.7", "0.7.3", source_path=path, content={"cii_none": content})


def test_a_bidi_override_in_a_name_is_refused(capsys, tmp_path):
    path = _write(tmp_path / "x_submission.json", _small(model="\u202eLV-ahpla"))
    code, lines, _ = _check(capsys, path)
    assert code == 1 and any("U+202E" in line for line in lines) and all("\u202e" not in line for line in lines)


def test_a_lookalike_name_is_refused_and_a_name_twice_flagged():
    from hanyi.leaderboard.intake import _by_content_and_name

    genuine, spoof = _entry("alpha-vl", "a.json", "1"), _entry("\u0430lpha-vl", "b.json", "2")
    again, other = _entry("Alpha-VL", "c.json", "3"), _entry("alpha-vl", "d.json", "4", benchmark="cvlue")
    out = _by_content_and_name([genuine, spoof, again, other])
    refused = [v for v in out if not hasattr(v, "values")]
    assert [r.path for r in refused] == ["b.json"] and "looks like 'alpha-vl' of a.json" in refused[0].reasons[0]
    assert refused[0].model is None  # nothing of a refused name is shown
    assert genuine.flags == ["the name 'alpha-vl' is also borne by c.json"] and again.flags
    assert other.flags == []  # the same model on another benchmark is no second bearer


def test_a_full_width_name_is_shown_normalised():
    from hanyi.leaderboard.names import normal, skeleton

    assert normal("ａｌｐｈａ-vl") == "alpha-vl" and skeleton("ａｌｐｈａ-vl") == skeleton("alpha-vl")


# ---- files --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["/etc/passwd", "/dev/zero", "/dev/stdin", "other.json"])
def test_a_link_is_never_followed_and_nothing_of_it_is_shown(target, tmp_path, capsys):
    from hanyi.leaderboard.intake import intake

    outside = tmp_path / "other.json"
    _write(outside, _small(model="from-outside"))
    subs = tmp_path / "subs"
    subs.mkdir()
    link = subs / "x_submission.json"
    link.symlink_to(outside if target == "other.json" else target)
    found = intake([str(subs)])
    (rej,) = found.rejected
    assert rej.model is None and rej.submission_hash is None and "symbolic link" in rej.reasons[0]
    code, lines, _ = _check(capsys, link)
    assert code == 1 and len(lines) == 1 and "symbolic link" in lines[0]


def test_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    path = tmp_path / "x_submission.json"
    os.mkfifo(path)
    code, lines, _ = _check(capsys, path)
    assert code == 1 and "not a regular file" in lines[0]


def test_a_hundred_megabyte_file_is_rejected_before_reading(tmp_path, capsys):
    path = tmp_path / "x_submission.json"
    with open(path, "wb") as f:
        f.truncate(100 * 1024 * 1024)
    start = time.perf_counter()
    code, lines, _ = _check(capsys, path)
    assert code == 1 and "file too large: 104,857,600 bytes" in lines[0]
    assert time.perf_counter() - start < 10


def test_a_large_file_of_duplicate_predictions_is_rejected_fast_without_rescoring(tmp_path, monkeypatch, capsys):
    """450,000 predictions of a handful of docs (about 40 MB, under the size cap): the split's duplicates are found in
    linear time before anything is re-scored."""
    from hanyi.leaderboard import intake as intake_mod

    def never(*args):
        raise AssertionError("re-scored a file the validation pass must refuse")

    monkeypatch.setattr(intake_mod, "rescore", never)
    doc = _small()
    doc["tasks"]["cii_none"]["predictions"] = [
        {"doc_id": i % 12, "doc_hash": "h" * 64, "response": "A" * 20} for i in range(450_000)
    ]
    path = _write(tmp_path / "x_submission.json", doc)
    start = time.perf_counter()
    code, lines, _ = _check(capsys, path)
    elapsed = time.perf_counter() - start
    assert code == 1 and lines == [f"{path}: cii_none: 12 doc id(s) predicted twice (first: doc 0)"]
    assert elapsed < 60  # generous on a shared machine; benchmarks/leaderboard_scale.py times it


# ---- the board's own failures: pending ------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_failure_of_the_board_is_pending_not_cached_and_retried(
    leaderboard_submissions, tmp_path, monkeypatch, capsys
):
    from hanyi.leaderboard import intake as intake_mod

    real = intake_mod.rescore

    def data_missing(doc, tasks, work):
        raise OSError("RetryError[data not found]")

    path = leaderboard_submissions["beta"]
    monkeypatch.setattr(intake_mod, "rescore", data_missing)
    code, lines, _ = _check(capsys, path)
    assert code == 3 and len(lines) == 1 and "pending: the board's own data, scorer or judge failed" in lines[0]
    cache = str(tmp_path / "cache")
    found = intake_mod.intake([path], cache)
    assert [r.state for r in found.rejected] == ["pending"] and found.count("pending") == 1
    assert not [p for p in os.listdir(cache) if p != "arrivals.json"]  # nothing cached
    monkeypatch.setattr(intake_mod, "rescore", real)
    again = intake_mod.intake([path], cache)
    assert [e.model for e in again.entries] == ["beta-vl"] and again.rescored == [path]


def test_an_unforeseen_error_is_pending_not_a_traceback(tmp_path, monkeypatch, capsys):
    from hanyi.leaderboard import intake as intake_mod

    def broken(*args):
        raise ZeroDivisionError("a bug of the board")

    monkeypatch.setattr(intake_mod, "check_document", broken)
    path = _write(tmp_path / "x_submission.json", _small())
    code, lines, _ = _check(capsys, path)
    assert code == 3 and "internal error: ZeroDivisionError: a bug of the board" in lines[0]


def test_an_unforeseen_error_while_reading_is_pending_in_check_and_build(tmp_path, monkeypatch, capsys):
    from hanyi.leaderboard import submission_schema
    from hanyi.leaderboard.intake import intake

    def broken(raw, **kwargs):
        raise RecursionError("a bug of the validation")

    monkeypatch.setattr(submission_schema, "validate", broken)
    path = _write(tmp_path / "subs" / "x_submission.json", _small())
    code, lines, _ = _check(capsys, path)
    assert code == 3 and "internal error: RecursionError: a bug of the validation" in lines[0]
    (rej,) = intake([str(tmp_path / "subs")], str(tmp_path / "cache")).rejected
    assert rej.state == "pending" and [f"{path}: {r}" for r in rej.reasons] == lines
