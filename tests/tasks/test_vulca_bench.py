"""VULCA-Bench: the group's contract, the prompt, data checks, `hanyi prepare vulca_bench`, and one end-to-end run of
the whole group on the bundled sample through the real evaluator (replay model), read back by `hanyi report`."""

from __future__ import annotations

import argparse
import json
import math
import os

import pytest

from hanyi.data import vulca_bench as data
from hanyi.metrics import vulca_bench as vb

CULTURES = ("western", "chinese", "japanese", "islamic", "mural", "hermitage", "indian", "korean")
TASKS = tuple(f"vulca_bench_{c}" for c in CULTURES)


def _sample_rows():
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    return datasets.load_dataset(os.path.join(SAMPLE_DIR, "vulca_bench"), split="test")


def test_group_is_one_generate_until_task_per_culture(task_manager):
    from lmms_eval.tasks import get_task_dict

    assert set(TASKS) <= set(task_manager.all_tasks) and "vulca_bench" in task_manager.all_tasks
    assert set(CULTURES) == set(vb.CULTURES) == set(data.RELEASE_SIZES)
    tasks = get_task_dict(["vulca_bench_korean"], task_manager)
    assert tasks["vulca_bench_korean"].OUTPUT_TYPE == "generate_until"


def test_prompt_is_the_releases_critique_prompt(task_manager, snapshot):
    from lmms_eval.tasks import get_task_dict

    obj = get_task_dict(["vulca_bench_japanese"], task_manager)["vulca_bench_japanese"]
    doc = obj.test_docs()[0]
    text = obj.doc_to_text(doc)
    assert text.startswith("As an art historian, provide a comprehensive critique of this artwork.\n\nAnalyze")
    assert text.endswith("using appropriate art historical terminology.\n")
    assert {d["culture"] for d in obj.test_docs()} == {"japanese"}
    snapshot(f"vulca_bench_japanese__{doc['pair_id']}", text)


def test_sample_has_every_culture_in_the_release_schema():
    rows = _sample_rows()
    assert sorted(set(rows["culture"])) == sorted(CULTURES)
    for row in rows:
        assert data.check_row({**row, "image": None}, "sample")["covered_dimensions"] == row["covered_dimensions"]


def test_full_size_gives_the_release_culture_counts():
    assert data.sample_sizes(data.FULL_SIZE) == data.RELEASE_SIZES and data.FULL_SIZE == 7408


@pytest.mark.parametrize(
    "change, message",
    [
        ({"culture": "thai"}, "unknown culture 'thai'"),
        ({"covered_dimensions": '["JP_L1_D1"]'}, "are not KR_L<1-5>_D<n>"),
        ({"covered_dimensions": '["KR_L6_D1"]'}, "are not KR_L<1-5>_D<n>"),
        ({"covered_dimensions": "not json"}, "covered_dimensions"),
        ({"critique_en": None}, "missing field(s) critique_en"),
        ({"title": 3}, "title must be text"),
        ({"quality_score": "high"}, "quality_score must be a number"),
    ],
)
def test_a_bad_release_row_is_refused_naming_the_file_line_and_pair(change, message):
    row = {"pair_id": "PAIR_1", "culture": "korean", "image_path": "/mnt/x/korean/a.jpg", "critique_zh": "",
           "critique_en": "x", "covered_dimensions": '["KR_L1_D1"]', **change}  # fmt: skip
    with pytest.raises(ValueError, match="f.jsonl:7 \\(pair_id PAIR_1\\)") as err:
        data.check_row(row, "f.jsonl:7")
    assert message in str(err.value)


def _release(tmp_path, rows):
    from hanyi.data.images import synthetic_image

    images = tmp_path / "imgs" / "korean"
    images.mkdir(parents=True)
    for name in ("kr-a.jpg", "kr-b.jpg"):
        synthetic_image(name, 24).save(images / name)
    path = tmp_path / "korean.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n\n", encoding="utf-8")
    return path


def _row(pair_id, image_path, **extra):
    return {"pair_id": pair_id, "ulid": "U" + pair_id, "culture": "korean", "image_path": image_path, "artist": "Unknown",
            "title": "T", "critique_zh": "构图", "critique_en": "color", "covered_dimensions": '["KR_L1_D1", "KR_L5_D6"]',
            "quality_score": 90.0, "art_form": "painting", "art_style": "unknown", "art_genre": "figure",
            "medium": "silk", **extra}  # fmt: skip


def _prepare(tmp_path, jsonl, skip=False):
    args = argparse.Namespace(jsonl=[str(jsonl)], images=str(tmp_path / "imgs"), out_dir=str(tmp_path / "out"),
                              skip_missing=skip)  # fmt: skip
    return data.run_prepare(args)


def test_prepare_maps_the_authors_paths_by_file_name_and_two_rows_may_share_an_image(tmp_path):
    import datasets

    jsonl = _release(tmp_path, [
        _row("PAIR_2", "/mnt/i/VULCA 2.0/VULCA2.0_Project/data/optimized_images/korean/kr-a.jpg"),
        _row("PAIR_1", "data/optimized_images/korean/kr-a.jpg"),  # the same artwork annotated twice
        _row("PAIR_3", "C:\\VULCA\\korean\\kr-b.jpg"),
    ])  # fmt: skip
    counts = _prepare(tmp_path, jsonl)
    assert counts["rows"] == 3 and counts["images"] == 2 and counts["korean"] == 3
    ds = datasets.load_dataset(str(tmp_path / "out"), split="test")
    assert ds["pair_id"] == ["PAIR_1", "PAIR_2", "PAIR_3"]  # sorted: deterministic
    assert ds[0]["covered_dimensions"] == ["KR_L1_D1", "KR_L5_D6"] and ds[0]["image"].size == (24, 24)


def test_prepare_picks_the_image_in_the_rows_culture_folder_when_two_folders_hold_its_name(tmp_path):
    import datasets

    from hanyi.data.images import synthetic_image

    jsonl = _release(tmp_path, [_row("PAIR_1", "/mnt/x/optimized_images/korean/kr-a.jpg")])
    (tmp_path / "imgs" / "mural").mkdir()
    synthetic_image("other", 40).save(tmp_path / "imgs" / "mural" / "kr-a.jpg")
    _prepare(tmp_path, jsonl)
    assert datasets.load_dataset(str(tmp_path / "out"), split="test")[0]["image"].size == (24, 24)
    jsonl.write_text(json.dumps(_row("PAIR_1", "/mnt/x/elsewhere/kr-a.jpg")) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="2 images named 'kr-a.jpg'.*folder 'elsewhere' does not pick one"):
        _prepare(tmp_path, jsonl)


def test_prepare_names_rows_without_an_image_unless_told_to_skip_them(tmp_path):
    jsonl = _release(tmp_path, [_row("PAIR_1", "x/kr-a.jpg"), _row("PAIR_9", "x/kr-missing.jpg")])
    with pytest.raises(FileNotFoundError, match="PAIR_9: kr-missing.jpg"):
        _prepare(tmp_path, jsonl)
    assert _prepare(tmp_path, jsonl, skip=True)["skipped_no_image"] == 1


def test_prepare_refuses_a_duplicate_pair_id_naming_both_lines(tmp_path):
    jsonl = _release(tmp_path, [_row("PAIR_1", "x/kr-a.jpg"), _row("PAIR_1", "x/kr-b.jpg")])
    with pytest.raises(ValueError, match=r"korean.jsonl:2: pair_id PAIR_1 also at .*korean.jsonl:1"):
        _prepare(tmp_path, jsonl)


def test_a_culture_absent_from_the_data_stops_its_task_with_one_line():
    from hanyi.tasks.vulca_bench import utils

    rows = _sample_rows().filter(lambda c: c == "korean", input_columns=["culture"])
    assert len(utils.vulca_bench_korean_docs(rows)) == 3
    with pytest.raises(ValueError, match="vulca_bench_chinese: the data has no chinese rows"):
        utils.vulca_bench_chinese_docs(rows)


def test_a_row_of_unknown_culture_in_loaded_data_stops_every_task_rather_than_being_lost():
    from hanyi.tasks.vulca_bench import utils

    rows = _sample_rows().map(lambda r, i: {"culture": "Thai" if i == 5 else r["culture"]}, with_indices=True)
    with pytest.raises(ValueError, match=r"vulca_bench_korean: the data has rows of unknown culture\(s\) \['Thai'\]"):
        utils.vulca_bench_korean_docs(rows)


def test_a_wrong_dimension_prefix_in_loaded_data_stops_the_task():
    from hanyi.tasks.vulca_bench import utils

    rows = _sample_rows().filter(lambda c: c == "korean", input_columns=["culture"])
    bad = rows.map(lambda r: {"covered_dimensions": ["JP_L1_D1"]})
    with pytest.raises(ValueError, match="vulca_bench_korean: pair_id 'SYN_KOR_00000': dimension id"):
        utils.vulca_bench_korean_docs(bad)


def test_process_results_never_raises_and_scores_a_missing_answer_as_the_empty_critique():
    from hanyi.tasks.vulca_bench.utils import vulca_bench_process_results

    doc = {"pair_id": "P", "culture": "Korean", "image_path": "a/b.jpg", "image_sha256": None}
    for results in ([None], [], [3], ["\ud800 color"]):
        out = vulca_bench_process_results(doc, results)
        assert set(out) >= {"dcr", "layer_score", "dcr_bilingual_robust"} and out["dcr"]["artwork"] == "a/b.jpg"
    assert vulca_bench_process_results(doc, [None])["layer_score"]["score"] == 1.0


# --- one end-to-end run of the group on the sample ------------------------------------------------------------------


@pytest.fixture(scope="module")
def group_run(replay, tmp_path_factory):
    """The whole group on the bundled sample (24 docs) through the real evaluator: a row's own English reference
    (its doc_to_target), its Chinese reference, an empty answer, or none at all, by position; then `hanyi report`."""
    from hanyi.report import main as report_main
    from hanyi.results.lmms_output import save_like_cli

    rows = _sample_rows()
    answers = {}
    for i, row in enumerate(rows):
        answers[row["pair_id"]] = (row["critique_en"], row["critique_zh"], "", None)[i % 4]
    records = [
        {
            "task": f"vulca_bench_{row['culture']}",
            "key": {"pair_id": row["pair_id"]},
            "response": answers[row["pair_id"]],
        }
        for row in rows
    ]
    results = replay(records, ["vulca_bench"])
    root = tmp_path_factory.mktemp("vulca_bench")
    save_like_cli(results, str(root / "out"))
    assert report_main([str(root / "out"), "--out", str(root / "rep")]) == 0
    with open(root / "rep" / "report.json", encoding="utf-8") as f:
        report = json.load(f)
    return results, answers, {r["pair_id"]: r for r in rows}, report


@pytest.mark.slow
def test_the_group_runs_end_to_end_and_scores_as_the_release(group_run):
    results, answers, rows, _ = group_run
    res = results["results"]
    every = []
    for task in TASKS:
        lines = results["samples"][task]
        assert len(lines) == 3, task
        for line in lines:
            pair = line["dcr"]["pair_id"]
            text = answers[pair] or ""
            assert line["dcr"]["score"] == vb.dcr(text, rows[pair]["culture"])["dcr"]
            assert line["layer_score"]["score"] == vb.layer_scores(text)["overall_score"]
            assert len(line["dcr"]["image_sha256"]) == 64 == len(line["dcr"]["artwork"])  # pairing and clusters
            every.append(line["dcr"]["score"])
        mean = sum(line["dcr"]["score"] for line in lines) / 3
        assert math.isclose(res[task]["dcr,none"], mean, rel_tol=0, abs_tol=1e-12)
        assert 1.0 <= res[task]["layer_score,none"] <= 5.0 and "dcr_bilingual_robust,none" in res[task]
        assert "judge_score_uncalibrated,none" not in res[task]  # no judge configured
        assert sorted(k.split(",")[0] for k in res[task] if "stderr" not in k and k != "alias") == [
            "dcr", "dcr_bilingual_robust", "layer_score"
        ]  # fmt: skip
        assert res[task]["dcr_stderr_clustered,none"] != "N/A"  # two artworks, the first shown twice
    # the group: the mean over every critique (the release's all-sample mean)
    assert math.isclose(res["vulca_bench"]["dcr,none"], sum(every) / len(every), abs_tol=1e-12)


@pytest.mark.slow
def test_the_report_breaks_the_group_down_by_culture_and_layer(group_run):
    _, _, _, report = group_run
    (section,) = [s for s in report["sections"] if s["benchmark"] == "vulca_bench"]
    intervals = {(r["task"], r["metric"]): r for r in section["intervals"]}
    titles = {t["title"]: t for t in section["tables"] if t["kind"] == "category"}
    for task in TASKS:  # per culture: the task's headline rows with intervals, and its per-layer tables
        for metric in ("dcr", "layer_score", "dcr_bilingual_robust", "cultural_bonus", "pyramid_inverted_rate"):
            assert (task, metric) in intervals, (task, metric)
        for base in ("dcr", "layer_score"):
            rows = titles[f"{task} · {base} by layer"]["rows"]
            assert [r[0] for r in rows] == [
                "L1 visual perception", "L2 technique", "L3 symbolism", "L4 historical context",
                "L5 philosophical aesthetics",
            ]  # fmt: skip
    r = intervals[("vulca_bench_korean", "dcr")]
    assert r["ci_low"] is None or r["ci_low"] <= r["value"] <= r["ci_high"]


def test_with_a_judge_the_uncalibrated_score_has_its_own_key_and_a_failed_verdict_is_not_a_score(
    monkeypatch, tmp_path, fake_judge
):
    from hanyi.tasks.vulca_bench.utils import vulca_bench_process_results

    seen = []

    def answer(messages):
        seen.append(messages[-1]["content"])
        return "Score: 4" if "brushwork" in messages[-1]["content"] else "I cannot rate this."

    doc = {"pair_id": "P", "culture": "korean", "title": "Amitabha", "image_path": "a/b.jpg", "image_sha256": "ab"}
    with fake_judge(answer=answer) as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
        good = vulca_bench_process_results(doc, ["Fine brushwork in ink."])["judge_score_uncalibrated"]
        bad = vulca_bench_process_results(doc, ["Nice."])["judge_score_uncalibrated"]
    assert good["score"] == 4.0 and good["judge_model"] == "fake-judge" and good["artwork"] == "ab"
    assert math.isnan(bad["score"]) and bad["error"] == "parse_failure"
    assert "korean art" in seen[0] and '"Amitabha"' in seen[0] and "Fine brushwork in ink." in seen[0]
    from hanyi.metrics.vulca_bench_aggregations import vulca_bench_judge_score

    assert vulca_bench_judge_score([good, bad]) == 4.0  # the failed verdict is left out, not scored 0


@pytest.mark.slow
def test_two_runs_are_compared_doc_by_doc_per_culture_clustered_on_the_artwork(group_run, replay, tmp_path):
    from hanyi.report import main as report_main
    from hanyi.results.lmms_output import save_like_cli

    results, _, rows, _ = group_run
    records = [
        {"task": f"vulca_bench_{r['culture']}", "key": {"pair_id": p}, "response": r["critique_en"]}
        for p, r in rows.items()
    ]
    other = replay(records, ["vulca_bench"])
    other["config"]["model_args"] = "second"
    save_like_cli(results, str(tmp_path / "a"))
    save_like_cli(other, str(tmp_path / "b"))
    assert report_main([str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "rep")]) == 0
    report = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    (section,) = [s for s in report["sections"] if s["benchmark"] == "vulca_bench"]
    paired = {(p["task"], p["metric"]): p for p in section["paired"]}
    for task in ("vulca_bench", *TASKS):
        assert (task, "dcr") in paired and (task, "layer_score") in paired, task
    assert paired[("vulca_bench", "dcr")]["n_pairs"] == 24 and paired[("vulca_bench", "dcr")]["clusters"] == 16
