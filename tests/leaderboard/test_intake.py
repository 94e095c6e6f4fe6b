"""The board's intake: real ``hanyi submit`` files of replay runs (``leaderboard_submissions``) read,
checked and re-scored through the replay model; the cache; duplicates; judged metrics re-aggregated or re-judged."""

from __future__ import annotations

import json
import math
import shutil

import pytest


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def board_intake(leaderboard_submissions):
    from hanyi.leaderboard.intake import intake

    return intake(list(leaderboard_submissions.values()))


def _entry(found, model):
    (entry,) = [e for e in found.entries if e.model == model]
    return entry


@pytest.mark.slow
def test_honest_files_are_accepted_and_the_tampered_and_limit_files_rejected(board_intake, leaderboard_submissions):
    assert sorted(e.model for e in board_intake.entries) == sorted(
        ["alpha-vl", "beta-vl", "gamma-vl", "<img src=x onerror=alert(1)>"]
    )
    rejected = {r.path: r for r in board_intake.rejected}
    assert set(rejected) == {leaderboard_submissions["tampered"], leaderboard_submissions["limit"]}
    tampered = rejected[leaderboard_submissions["tampered"]]
    claimed = _load(leaderboard_submissions["tampered"])["tasks"]["cii_none"]["metrics"]["acc"]
    honest = _load(leaderboard_submissions["alpha"])["tasks"]["cii_none"]["metrics"]["acc"]
    assert tampered.reasons == [f"cii_none/acc: claimed {claimed!r}, re-scored {honest!r}"]
    assert tampered.model == "alpha-vl" and len(tampered.submission_hash) == 64
    limit = rejected[leaderboard_submissions["limit"]]
    assert [r.split(":")[0] for r in limit.reasons] == ["cii_ctc", "cii_none"]
    assert all("run with --limit 3" in r for r in limit.reasons)


@pytest.mark.slow
def test_an_entry_holds_the_boards_rescore_and_its_per_doc_layer(board_intake, leaderboard_submissions):
    from hanyi.floats import same_value

    doc = _load(leaderboard_submissions["beta"])
    entry = _entry(board_intake, "beta-vl")
    assert (
        entry.submission_hash
        == __import__("hashlib").sha256(open(leaderboard_submissions["beta"], "rb").read()).hexdigest()
    )
    for task in ("cii_none", "cii_ctc"):
        for metric, claimed in doc["tasks"][task]["metrics"].items():
            assert same_value(metric, claimed, entry.values[task][metric]), (task, metric)
    acc = entry.per_doc["cii_none"]["acc"]
    assert sorted(acc) == list(range(12)) and set(acc.values()) <= {0.0, 1.0}
    assert math.isclose(sum(acc.values()) / 12 * entry.scales["cii_none"]["acc"], entry.values["cii_none"]["acc"])
    assert 0 < entry.values["cii_none"]["acc"] < 1  # beta answers some docs right and some wrong
    # the judged metric: re-aggregated from the logged verdicts (no judge on the board), per doc from the verdicts
    assert entry.judged["cii_ctc/ctc_score"] == "re-aggregated"
    verdicts = {p["doc_id"]: p["verdicts"]["ctc_score"]["score"] for p in doc["tasks"]["cii_ctc"]["predictions"]}
    assert entry.per_doc["cii_ctc"]["ctc_score"] == {d: float(v) for d, v in verdicts.items()}
    assert entry.protocol["cii_ctc"]["judge_model"] == "fake-judge-a"
    assert entry.protocol["cii_none"]["judge_model"] == "none"
    assert entry.protocol["cii_none"]["task_version"] == str(doc["tasks"]["cii_none"]["version"])
    assert entry.protocol["cii_none"]["data_fingerprint"] == doc["tasks"]["cii_none"]["data_fingerprint"]
    assert entry.source_path == leaderboard_submissions["beta"]


@pytest.mark.slow
def test_another_judge_is_another_protocol_and_the_rest_is_shared(board_intake):
    from hanyi.leaderboard.ranking import SYSTEM_FIELDS

    def scoring(entry):  # the engine that served the answers describes the system, not how it is scored
        return {t: {k: v for k, v in f.items() if k not in SYSTEM_FIELDS} for t, f in entry.protocol.items()}

    a, b, g = (_entry(board_intake, m) for m in ("alpha-vl", "beta-vl", "gamma-vl"))
    assert scoring(a) == scoring(b)
    assert scoring(g)["cii_none"] == scoring(a)["cii_none"]
    assert g.protocol["cii_ctc"]["judge_model"] == "fake-judge-b" != a.protocol["cii_ctc"]["judge_model"]


@pytest.mark.slow
def test_the_cache_rescores_only_a_new_file(leaderboard_submissions, tmp_path, board_intake):
    from hanyi.leaderboard.intake import intake

    first = intake([leaderboard_submissions["alpha"], leaderboard_submissions["tampered"]], str(tmp_path / "cache"))
    assert first.rescored == [leaderboard_submissions["alpha"], leaderboard_submissions["tampered"]]
    paths = [leaderboard_submissions[n] for n in ("alpha", "tampered", "beta")]
    again = intake(paths, str(tmp_path / "cache"))
    assert again.rescored == [leaderboard_submissions["beta"]]  # one re-score: the file added
    assert len([p for p in (tmp_path / "cache").glob("*.json") if p.name != "arrivals.json"]) == 3
    cached, fresh = _entry(again, "alpha-vl"), _entry(board_intake, "alpha-vl")
    assert cached == fresh  # doc ids come back as integers
    assert [r.reasons for r in again.rejected] == [r.reasons for r in first.rejected if "tampered" in r.path]


@pytest.mark.slow
def test_a_duplicate_submission_is_rejected_in_one_line(leaderboard_submissions, tmp_path):
    from hanyi.leaderboard.intake import intake

    copy = tmp_path / "again" / "cii_submission.json"
    copy.parent.mkdir()
    shutil.copy(leaderboard_submissions["beta"], copy)
    found = intake([leaderboard_submissions["beta"], str(tmp_path / "again")])
    assert [e.model for e in found.entries] == ["beta-vl"] and found.rescored == [leaderboard_submissions["beta"]]
    (dup,) = found.rejected
    assert dup.path == str(copy) and dup.model == "beta-vl"
    assert dup.reasons == [f"a duplicate submission: the same bytes (sha256 {dup.submission_hash[:12]}) as "
                           f"{leaderboard_submissions['beta']}"]  # fmt: skip


@pytest.mark.slow
def test_with_a_judge_on_the_board_the_judged_metrics_are_rejudged(
    leaderboard_submissions, fake_judge, monkeypatch, tmp_path
):
    from hanyi.leaderboard.intake import check_file

    with fake_judge(answer=lambda messages: "Score: 1") as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "board-judge")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
        entry = check_file(leaderboard_submissions["beta"])
        assert judge.total_requests == 2  # both descriptions judged again
    assert entry.judged["cii_ctc/ctc_score"] == "re-judged"
    assert entry.values["cii_ctc"]["ctc_score"] == 1.0 and entry.per_doc["cii_ctc"]["ctc_score"] == {0: 1.0, 1: 1.0}
    assert entry.protocol["cii_ctc"]["judge_model"] == "board-judge"


@pytest.mark.slow
def test_build_writes_the_site_of_the_accepted_files(leaderboard_submissions, tmp_path, capsys):
    from hanyi.cli import main

    folder = str(tmp_path / "subs")
    for name, path in leaderboard_submissions.items():
        shutil.copytree(path.rsplit("/", 1)[0], f"{folder}/{name}")
    site = tmp_path / "site"
    assert main(["leaderboard", "build", folder, "--out", str(site)]) == 0
    captured = capsys.readouterr()
    assert "4 accepted, 2 rejected, 0 duplicate, 0 pending, 6 re-scored" in captured.out
    assert sum("rejected" in line for line in captured.err.splitlines()) == 2
    cached = sorted(p.name for p in (site / ".cache").glob("*.json"))
    checked = [n for n in cached if len(n) == 69 and n.endswith(".json")]  # <sha256>.json: one per file read
    assert (site / "index.html").is_file() and len(checked) == 6, cached
    assert len([n for n in cached if n.endswith(".cells.json")]) == 4  # each accepted row's cells, for the next build
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    assert "alpha-vl" in json.dumps(board) and "fake-judge-b" in json.dumps(board)
    assert main(["leaderboard", "build", folder, "--out", str(site)]) == 0
    assert "0 re-scored" in capsys.readouterr().out  # the second build reads every file from the cache


@pytest.mark.slow
def test_changed_scorer_code_rescores_every_cached_file(leaderboard_submissions, tmp_path, monkeypatch):
    from hanyi.leaderboard import intake as intake_mod

    paths = [leaderboard_submissions["alpha"], leaderboard_submissions["limit"]]
    assert intake_mod.intake(paths, str(tmp_path / "cache")).rescored == paths
    assert intake_mod.intake(paths, str(tmp_path / "cache")).rescored == []
    monkeypatch.setattr(intake_mod, "scorer_code_hash", lambda: "a task or scorer changed")
    assert intake_mod.intake(paths, str(tmp_path / "cache")).rescored == paths


@pytest.mark.slow
def test_a_rescore_that_fails_is_one_line_not_a_traceback(leaderboard_submissions, monkeypatch, capsys):
    from hanyi.cli import main
    from hanyi.leaderboard import intake as intake_mod

    def refuse(doc, tasks, work):
        raise KeyError("answer")

    monkeypatch.setattr(intake_mod, "rescore", refuse)
    path = leaderboard_submissions["beta"]
    assert main(["leaderboard", "check", path]) == 3  # the board failed, not the file: pending
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: pending: the board's own data, scorer or judge failed; nothing is decided and the next build "
        "retries (the re-score failed: KeyError: 'answer')"
    ]


@pytest.mark.slow
def test_clusters_come_from_the_tasks_cluster_key_as_in_the_report(replay, tmp_path):
    """Pun Rebus matching sets ``cluster_key: story``: the board's clusters are the report's (one per-doc layer)."""
    import datasets

    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.leaderboard.intake import check_file
    from hanyi.results.lmms_output import save_like_cli
    from hanyi.results.perdoc import doc_clusters
    from hanyi.results.runs import load_runs
    from hanyi.submit import main as submit

    images = datasets.load_dataset(f"{SAMPLE_DIR}/punrebus", "images", split="test")
    results = replay([{"task": "punrebus_matching", "doc_id": i, "response": "B"} for i in range(len(images))],
                     ["punrebus_matching"])  # fmt: skip
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay")
    assert (
        submit([str(tmp_path / "out"), "--benchmark", "punrebus", "--out", str(tmp_path / "sub"), "--allow-sample"])
        == 0
    )
    entry = check_file(str(tmp_path / "sub" / "punrebus_submission.json"))
    clusters = entry.clusters["punrebus_matching"]
    assert sorted(clusters) == list(range(len(images)))
    assert set(clusters.values()) == set(images["story_zh"]) and len(set(clusters.values())) < len(images)
    (run,) = load_runs([str(tmp_path / "out")])
    _key, report = doc_clusters(run, "punrebus_matching", "accuracy")
    assert clusters == {d: label for (_, d), label in report.items()}


@pytest.mark.slow
def test_a_cvlue_submission_with_choice_loglikelihoods_is_rescored(replay, tmp_path):
    """hanyi submit writes cvlue_submission.json beside CVLUE's official files; its dialog task (multiple choice,
    scored from the choices' log-likelihoods) is re-scored from the logged log-likelihoods through the replay model."""
    import datasets

    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.leaderboard.intake import check_file
    from hanyi.results.lmms_output import save_like_cli
    from hanyi.submit import main as submit

    vd = datasets.load_dataset(f"{SAMPLE_DIR}/cvlue", "vd", split="test")
    records = [
        {"task": "cvlue_vqa", "doc_id": i, "response": a} for i, a in enumerate(["2", "是", "右手边", "否", "3个", ""])
    ]
    records += [{"task": "cvlue_vg", "doc_id": i, "response": "[0.1, 0.2, 0.5, 0.6]"} for i in range(6)]
    records += [{"task": "cvlue_vd", "doc_id": i, "loglikelihoods": [[float((j * 7 + i) % 5), False] for j in range(len(d["answer_options"]))]}
                for i, d in enumerate(vd)]  # fmt: skip
    results = replay(records, ["cvlue_vqa", "cvlue_vg", "cvlue_vd"])
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay")
    assert (
        submit([str(tmp_path / "out"), "--benchmark", "cvlue", "--out", str(tmp_path / "sub"), "--allow-sample"]) == 0
    )
    path = tmp_path / "sub" / "cvlue_submission.json"
    doc = _load(path)
    assert sorted(doc["tasks"]) == ["cvlue_vd", "cvlue_vg", "cvlue_vqa"]
    assert doc["tasks"]["cvlue_vd"]["predictions"][0]["loglikelihoods"] == records[12]["loglikelihoods"]
    entry = check_file(str(path))
    assert getattr(entry, "benchmark", None) == "cvlue", getattr(entry, "reasons", None)
    for task, sub in doc["tasks"].items():  # exactly: no backbone value here
        assert {m: entry.values[task].get(m) for m in sub["metrics"]} == sub["metrics"], task
    # the log-likelihoods decide the dialog's ranks: the choices' scores reversed, the claimed values rejected
    for p in doc["tasks"]["cvlue_vd"]["predictions"]:
        p["loglikelihoods"] = p["loglikelihoods"][::-1]
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    reasons = check_file(str(path)).reasons
    assert reasons and all(r.startswith("cvlue_vd/") and "claimed" in r for r in reasons), reasons


@pytest.mark.slow
def test_vulca_rubric_levels_are_reaggregated_by_the_reports_breakdown():
    """VULCA's rubric levels (``vulca_rubric``, no judge model in the item) give ``rubric_*`` through the report's own
    breakdown of the sample log; a file whose provenance names no judge for them is refused."""
    from hanyi.leaderboard.intake import _judged
    from hanyi.metrics.critique_rubric import RUBRICS, metric_values

    names = list(RUBRICS)[:2]
    levels = [{names[0]: 4, names[1]: None}, {names[0]: 2, names[1]: 3}, {names[0]: 5, names[1]: 1}]
    sub = {"predictions": [{"doc_id": i, "verdicts": {"vulca_rubric": lv}} for i, lv in enumerate(levels)]}
    out, judge, reasons = _judged("vulca_baseline", sub, {"judge_model": "qwen-judge"})
    assert reasons == [] and judge == "qwen-judge"
    expected = metric_values(levels)
    assert {m: rec["value"] for m, rec in out.items()} == expected and expected[names[0]] == pytest.approx(11 / 3)
    assert _judged("vulca_baseline", sub, {})[2] == [
        "judged metrics without a judge model in the provenance or the verdicts"
    ]
    named = {"predictions": [{"doc_id": i, "verdicts": {"vulca_rubric": lv | {"judge_model": "qwen-judge"}}}
                             for i, lv in enumerate(levels)]}  # fmt: skip
    out, judge, reasons = _judged("vulca_baseline", named, {})  # as VULCA 0.8 logs them: the judge named in the item
    assert reasons == [] and judge == "qwen-judge" and {m: rec["value"] for m, rec in out.items()} == expected
