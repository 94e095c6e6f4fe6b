"""``hanyi leaderboard check FILE``: the board's validation on one file, one line per problem on stderr, exit 1 on any.
Every case starts from a real ``hanyi submit`` file of a replay run (``leaderboard_submissions``) and
breaks one thing."""

from __future__ import annotations

import json

import pytest

from hanyi.cli import main


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _write(tmp_path, doc, name="cii_submission.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _check(capsys, path, *extra):
    code = main(["leaderboard", "check", path, *extra])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith(f"{path}: ")]


def _refit(doc, task):
    """The task's data_fingerprint recomputed from its (edited) doc hashes, as hanyi submit writes it."""
    from hanyi.results.perdoc import data_fingerprint

    preds = doc["tasks"][task]["predictions"]
    doc["tasks"][task]["data_fingerprint"] = data_fingerprint({p["doc_id"]: p["doc_hash"] for p in preds})


def _drop_doc(doc):
    doc["tasks"]["cii_none"]["predictions"].pop(5)
    _refit(doc, "cii_none")


def _twice(doc):
    preds = doc["tasks"]["cii_none"]["predictions"]
    preds.append(dict(preds[3]))


def _other_doc(doc):
    doc["tasks"]["cii_none"]["predictions"][4]["doc_hash"] = "0" * 64
    _refit(doc, "cii_none")


def _version(doc):
    doc["tasks"]["cii_none"]["version"] = 1.1


def _fingerprint(doc):
    doc["tasks"]["cii_ctc"]["data_fingerprint"] = "sha256:" + "ab" * 32


def _claim(doc):
    doc["tasks"]["cii_none"]["metrics"]["acc"] += 0.01


def _verdict(doc):  # the judge's logged verdict changed, the claimed aggregate left as it was
    item = doc["tasks"]["cii_ctc"]["predictions"][0]["verdicts"]["ctc_score"]
    item["score"] = 1 if item["score"] != 1 else 5


def _v1(doc):
    doc["version"] = 1


def _lmms(doc):
    doc["lmms_eval_version"] = "0.3.0"


#: case -> (edit of the beta file, what its one line says)
CASES = {
    "missing doc": (_drop_doc, "cii_none: missing 1 of the installed task's 12 docs (first: 5)"),
    "doc twice": (_twice, "cii_none: 1 doc id(s) predicted twice (first: doc 3)"),
    "doc hash": (_other_doc, "cii_none: 1 doc(s) hold other content than the installed data"),
    "task version": (_version, "cii_none: task version 1.1, the installed task is version 2.3"),
    "data fingerprint": (_fingerprint, "cii_ctc: unknown data fingerprint sha256:abab"),
    "claimed metric": (_claim, "cii_none/acc: claimed 0.26, re-scored 0.25"),
    "judge verdict": (_verdict, "cii_ctc/ctc_score: claimed"),
    "format version 1": (_v1, "hanyi-submission version 1 has no per-doc content hashes"),
    "lmms-eval version": (_lmms, "lmms-eval 0.3.0: the board runs 0.7"),
}


@pytest.mark.slow
def test_an_honest_submission_passes(leaderboard_submissions, capsys):
    path = leaderboard_submissions["beta"]
    code = main(["leaderboard", "check", path])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == "" and "accepted" in captured.out


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_check_exits_1_with_one_line_per_problem(case, leaderboard_submissions, tmp_path, capsys):
    edit, line = CASES[case]
    doc = _load(leaderboard_submissions["beta"])
    edit(doc)
    code, lines = _check(capsys, _write(tmp_path, doc))
    assert code == 1
    assert len(lines) == 1, lines
    assert line in lines[0], lines


@pytest.mark.slow
def test_a_limit_run_is_one_line_per_task(leaderboard_submissions, capsys):
    path = leaderboard_submissions["limit"]
    code, lines = _check(capsys, path)
    assert code == 1
    assert [line.split(": ", 2)[1] for line in lines] == ["cii_ctc", "cii_none"], lines
    assert "run with --limit 3: 3 of the 12 docs, not the full split" in lines[1]


def test_malformed_json_is_one_line(tmp_path, capsys):
    path = tmp_path / "cii_submission.json"
    path.write_text('{"format": "hanyi-submission", "version": 2,', encoding="utf-8")
    code, lines = _check(capsys, str(path))
    assert code == 1 and len(lines) == 1 and "malformed JSON" in lines[0]


def test_a_huge_file_is_one_line_and_never_read(tmp_path, capsys):
    path = tmp_path / "cii_submission.json"
    path.write_text(" " * 5000 + "{}", encoding="utf-8")
    code, lines = _check(capsys, str(path), "--max-bytes", "4096")
    assert code == 1 and len(lines) == 1 and "file too large: 5,002 bytes (the board reads at most 4,096)" in lines[0]


@pytest.mark.parametrize(
    "text, says",
    [
        ("[1, 2]", "the JSON is not an object"),
        ('{"format": "other"}', "format/version"),
        ("[" * 100000 + "]" * 100000, "malformed JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_other_bad_files_are_one_line(text, says, tmp_path, capsys):
    path = tmp_path / "cii_submission.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, lines = _check(capsys, str(path))
    assert code == 1 and len(lines) == 1 and says in lines[0], lines


@pytest.mark.slow
def test_a_model_name_with_html_is_no_reason_to_reject(leaderboard_submissions, capsys):
    from hanyi.leaderboard.intake import check_file

    path = leaderboard_submissions["html"]
    code, lines = _check(capsys, path)
    assert code == 0 and lines == []
    entry = check_file(path)
    assert entry.model == "<img src=x onerror=alert(1)>" == _load(path)["model"]  # kept as text; the site escapes it


@pytest.mark.parametrize("command", [["leaderboard"], ["leaderboard", "build"], ["leaderboard", "check"]])
def test_help_is_plain_text_and_explains_every_option(command, capsys):
    import re

    with pytest.raises(SystemExit) as exc:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and out.startswith("usage: hanyi leaderboard")
    assert "``" not in out and ":mod:" not in out
    options = re.findall(r"(?m)^  (-[-\w]+(?:[ ,][^ ]+)*)(.*)$", out)
    assert options and not [opt for opt, rest in options if not rest.strip()]


def test_build_of_a_path_that_does_not_exist_is_one_line(tmp_path, capsys):
    missing = str(tmp_path / "nowhere")
    assert main(["leaderboard", "build", missing, "--out", str(tmp_path / "site")]) == 2
    assert capsys.readouterr().err.splitlines() == [f"hanyi leaderboard build: no such file or folder: {missing}"]
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("kind", ["a file", "a folder of someone else's", "a symlinked page"])
def test_build_into_a_site_folder_it_must_not_write_is_one_line(kind, tmp_path, capsys):
    (subs := tmp_path / "subs").mkdir()
    site = tmp_path / "site"
    if kind == "a file":
        site.write_text("x")
    else:
        site.mkdir()
        if kind == "a symlinked page":
            (site / "index.html").symlink_to(tmp_path / "elsewhere.html")
        else:
            (site / "index.html").write_text("<p>someone else's page</p>")
    assert main(["leaderboard", "build", str(subs), "--out", str(site)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("hanyi leaderboard build: ") and str(site) in err[0]
    assert not (tmp_path / "elsewhere.html").exists()
