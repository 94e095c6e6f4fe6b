"""VULCA-Bench on the board: ``hanyi submit --benchmark vulca_bench`` of a replay run of the whole group on the bundled
sample (3 docs per culture) is accepted by ``hanyi leaderboard check``; three models (one with a fake judge's verdicts)
are ranked in one section by the group's all-sample ``dcr`` (the paper's headline) with intervals; a file of fewer
cultures is ranked apart by a culture's ``dcr``; and a raised claim is refused."""

from __future__ import annotations

import json
import math
import os

import pytest

CULTURES = ("western", "chinese", "japanese", "islamic", "mural", "hermitage", "indian", "korean")
TASKS = tuple(f"vulca_bench_{c}" for c in CULTURES)
#: name -> which reference each doc's answer is, by position (the English one, the Chinese one, or nothing)
RUNS = {"full": ("en", "en", "en"), "weak": ("en", "", "zh"), "judged": ("zh", "", "")}
#: The run scored with a judge (tests/judge_server.py's fake one): its verdicts travel in the submission.
JUDGED = "judged"
JUDGE_ENV = ("HANYI_JUDGE_BASE_URL", "HANYI_JUDGE_MODEL", "HANYI_JUDGE_CACHE_DIR")


def _sample_rows():
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    return datasets.load_dataset(os.path.join(SAMPLE_DIR, "vulca_bench"), split="test")


def _records(name: str, rows) -> list[dict]:
    out, seen = [], {}
    for row in rows:
        i = seen[row["culture"]] = seen.get(row["culture"], -1) + 1
        kind = RUNS[name][i % 3]
        answer = {"en": row["critique_en"], "zh": row["critique_zh"], "": ""}[kind]
        out.append({"task": f"vulca_bench_{row['culture']}", "key": {"pair_id": row["pair_id"]}, "response": answer})
    return out


@pytest.fixture(scope="module")
def vulca_bench_submissions(replay, fake_judge, tmp_path_factory) -> dict[str, str]:
    from hanyi.results.lmms_output import save_like_cli
    from hanyi.submit import main as submit

    root = tmp_path_factory.mktemp("vulca_bench_board")
    rows = _sample_rows()
    out = {}
    saved = {k: os.environ.get(k) for k in JUDGE_ENV}
    for name in RUNS:
        try:
            with fake_judge() as judge:
                if name == JUDGED:
                    os.environ.update(
                        HANYI_JUDGE_BASE_URL=judge.base_url,
                        HANYI_JUDGE_MODEL="fake-judge-a",
                        HANYI_JUDGE_CACHE_DIR=str(root / "judge-cache"),
                    )
                results = replay(_records(name, rows), ["vulca_bench"])
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        results["config"]["model"] = f"{name}-vl"
        run_dir = str(root / "runs" / name)
        save_like_cli(results, run_dir, model_args=f"path=replay-{name}.jsonl")
        sub_dir = str(root / "submissions" / name)
        assert submit([run_dir, "--benchmark", "vulca_bench", "--out", sub_dir, "--allow-sample"]) == 0
        (found,) = [f for f in os.listdir(sub_dir) if f.endswith("_submission.json")]
        out[name] = os.path.join(sub_dir, found)
    with open(out["full"], encoding="utf-8") as f:
        doc = json.load(f)
    claimed = doc["tasks"]["vulca_bench_korean"]["metrics"]
    claimed["dcr"] = claimed["dcr"] + 0.2 if claimed["dcr"] < 0.5 else claimed["dcr"] - 0.2
    os.makedirs(root / "submissions" / "tampered")
    out["tampered"] = str(root / "submissions" / "tampered" / "vulca_bench_submission.json")
    with open(out["tampered"], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    with open(out["weak"], encoding="utf-8") as f:
        doc = json.load(f)
    del doc["tasks"]["vulca_bench_chinese"]  # a file of seven cultures: no group
    os.makedirs(root / "submissions" / "partial")
    out["partial"] = str(root / "submissions" / "partial" / "vulca_bench_submission.json")
    with open(out["partial"], "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return out


@pytest.fixture(scope="module")
def checked(vulca_bench_submissions):
    from hanyi.leaderboard.intake import check_file

    return {name: check_file(path) for name, path in vulca_bench_submissions.items()}


@pytest.mark.slow
def test_a_submission_of_the_group_is_accepted_with_the_group_scored(checked, vulca_bench_submissions, capsys):
    from hanyi.leaderboard import main as leaderboard
    from hanyi.leaderboard.entries import Entry

    assert leaderboard(["check", vulca_bench_submissions["full"]]) == 0
    assert "accepted (vulca_bench, 9 task(s) re-scored)" in capsys.readouterr().out

    for name in RUNS:
        entry = checked[name]
        assert isinstance(entry, Entry), getattr(entry, "reasons", entry)
        assert set(TASKS) <= set(entry.values)
        every = [v for t in TASKS for v in entry.per_doc[t]["dcr"].values()]
        assert len(every) == 24
        group = entry.values["vulca_bench"]["dcr"]
        assert math.isclose(group, sum(every) / len(every), abs_tol=1e-12)
        assert len(entry.per_doc["vulca_bench"]["dcr"]) == 24  # eight cultures' docs 0-2: no collision
        assert entry.clusters["vulca_bench"]  # the artwork
        assert set(entry.clusters["vulca_bench"].values()) == {
            c for t in TASKS for c in entry.clusters[t].values()
        }  # fmt: skip


@pytest.mark.slow
def test_the_judged_score_travels_as_the_submitters_verdicts_and_never_touches_the_group(checked):
    entry = checked[JUDGED]
    column = "vulca_bench_korean/judge_score_uncalibrated"
    assert column in entry.unverified and entry.judged[column] == "re-aggregated"  # the board has no judge
    assert 1.0 <= entry.values["vulca_bench_korean"]["judge_score_uncalibrated"] <= 5.0
    assert entry.protocol["vulca_bench_korean"]["judge_model"] == "fake-judge-a"
    assert "judge_score_uncalibrated" not in entry.values["vulca_bench"]
    from hanyi.leaderboard.ranking import section_key

    assert section_key("vulca_bench", entry) == section_key("vulca_bench", checked["full"])  # ranked with the others


@pytest.mark.slow
def test_a_raised_claim_is_refused(checked):
    from hanyi.leaderboard.entries import Rejected

    rejected = checked["tampered"]
    assert isinstance(rejected, Rejected)
    assert any(r.startswith("vulca_bench_korean/dcr: claimed") for r in rejected.reasons), rejected.reasons


@pytest.mark.slow
def test_two_models_are_ranked_in_one_section_by_the_groups_dcr(checked, tmp_path):
    from hanyi.leaderboard import ranking

    anchors = tmp_path / "anchors"
    anchors.mkdir()
    board = ranking.rank([checked[name] for name in RUNS], [], str(anchors))
    (section,) = [s for s in board.sections if s.benchmark == "vulca_bench"]
    assert section.ranking_column == "vulca_bench/dcr"
    rows = [r for r in section.rows if not r.reference]
    by_value = sorted(RUNS, key=lambda n: -checked[n].values["vulca_bench"]["dcr"])
    assert [r.label for r in rows] == [f"{n}-vl" for n in by_value] and len(rows) == 3
    for row in rows:
        cell = row.cells["vulca_bench/dcr"]
        assert cell.value == row.entry.values["vulca_bench"]["dcr"] and cell.n == 24
        assert cell.low is not None and cell.low <= cell.value <= cell.high
        assert row.rank is not None and row.rank_low is not None and row.rank_high is not None
    from hanyi.leaderboard.site import page_name, write_site

    write_site(board, str(tmp_path / "site"))
    with open(tmp_path / "site" / page_name("vulca_bench"), encoding="utf-8") as f:
        html = f.read()
    assert "vulca_bench/dcr" in html and all(f"{n}-vl" in html for n in RUNS)
    from hanyi.leaderboard import eee

    for row in rows:  # the Every Eval Ever record of each row, the group's column in it, is valid
        rec = eee.record(section, row, "2026-12-07T00:00:00Z")
        assert rec is not None and eee.check(rec) == []


@pytest.mark.slow
def test_a_file_without_every_culture_has_no_group_and_is_ranked_apart_by_a_culture(checked, tmp_path):
    from hanyi.leaderboard import ranking

    partial = checked["partial"]
    assert "vulca_bench" not in partial.values and "vulca_bench_chinese" not in partial.values
    # the release's culture order (western first), not the columns' name order (hermitage first)
    assert ranking.entry_column("vulca_bench", partial) == "vulca_bench_western/dcr"
    board = ranking.rank([checked["full"], checked["weak"], partial], [], str(tmp_path))
    sections = {s.ranking_column: s for s in board.sections if s.benchmark == "vulca_bench"}
    assert set(sections) == {"vulca_bench/dcr", "vulca_bench_western/dcr"}
    assert sections["vulca_bench_western/dcr"].apart  # not the main section
