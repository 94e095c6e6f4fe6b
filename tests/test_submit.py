"""``hanyi submit``: one test per format (CVLUE official files, hanyi-submission JSON) on real replay runs written by
lmms-eval's own tracker, plus the validators' rejections."""

from __future__ import annotations

import json
import os

import pytest

from hanyi.results.lmms_output import save_like_cli
from hanyi.submit import SubmissionError, main, validate_cvlue, validate_hanyi_submission


@pytest.mark.parametrize(
    "kind, data, message",
    [
        ("vqa_submit.json", {"question_id": 1}, "must be a JSON list"),
        ("vqa_submit.json", [{"question_id": 1, "image": "a.png"}], "needs string 'image' and 'answer'"),
        (
            "vqa_submit.json",
            [{"question_id": 1, "image": "a", "answer": "2"}, {"question_id": 1, "image": "a", "answer": "3"}],
            "appears twice",
        ),
        ("vg_submit.json", [{"ref_id": 1, "image": "a", "bbox": ["1", 2, 3, 4]}], "bbox must be"),
        ("vd_submit.json", [{"question": 3, "answer_sort": [1, 1, 2]}], "without repeats"),
        ("i2t_submit.json", {"a.png": ["c"] * 11}, "at most 10"),
        ("t2i_submit.json", {"cap": [1, 2]}, "list of candidate strings"),
    ],
)
def test_cvlue_validator_rejects_malformed_records(kind, data, message):
    with pytest.raises(SubmissionError, match=message):
        validate_cvlue(kind, data)


def test_cvlue_validator_accepts_the_official_shapes():
    validate_cvlue(
        "vqa_submit.json", [{"image": "images/test/A/1-panda/A-1-1.png", "question_id": 66376, "answer": "是"}]
    )
    validate_cvlue(
        "vg_submit.json",
        [
            {"ref_id": 2649, "image": "x.png", "bbox": [2.954, 255.784, 127.901, 75.161]},
            {"ref_id": 2650, "image": "x.png", "bbox": []},
        ],
    )
    validate_cvlue("vd_submit.json", [{"image_id": 403, "dialog_id": 7, "question": 3768, "answer_sort": [3973, 3966]}])
    validate_cvlue("i2t_submit.json", {"a.png": ["四只熊猫在地上玩耍"]})


@pytest.mark.parametrize(
    "doc, message",
    [
        ({"format": "other", "version": 1}, "format/version"),
        (
            {"format": "hanyi-submission", "version": 1, "benchmark": "mmmu", "model": "m", "tasks": {"t": {}}},
            "unknown benchmark",
        ),
        (
            {
                "format": "hanyi-submission",
                "version": 1,
                "benchmark": "cii",
                "model": "m",
                "tasks": {"t": {"metrics": {"acc": "high"}}},
            },
            "map names to numbers",
        ),
        (
            {
                "format": "hanyi-submission",
                "version": 1,
                "benchmark": "cii",
                "model": "m",
                "tasks": {"t": {"metrics": {}, "predictions": [{"doc_id": "0", "response": ""}]}},
            },
            "integer doc_id",
        ),
    ],
)
def test_hanyi_submission_validator_rejects(doc, message):
    with pytest.raises(SubmissionError, match=message):
        validate_hanyi_submission(doc)


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.slow
def test_cvlue_official_files_from_a_replay_run(replay, tmp_path):
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    vd = datasets.load_dataset(os.path.join(SAMPLE_DIR, "cvlue"), "vd", split="test")
    vqa_answers = ["2", "是", "右手边", "否", "3个", ""]
    records = [{"task": "cvlue_vqa", "doc_id": i, "response": a} for i, a in enumerate(vqa_answers)]
    records += [{"task": "cvlue_vg", "doc_id": i, "response": "[0.1, 0.2, 0.5, 0.6]"} for i in range(5)]
    records += [{"task": "cvlue_vg", "doc_id": 5, "response": "no box here"}]
    # mean NLL per option (the cvlue default `loglik: nll`): lower is better, so the file order is the ranking
    records += [
        {
            "task": "cvlue_vd",
            "doc_id": i,
            "loglikelihoods": [[float(j), False] for j in range(len(d["answer_options"]))],
        }
        for i, d in enumerate(vd)
    ]
    results = replay(records, ["cvlue_vqa", "cvlue_vg", "cvlue_vd"])
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay")
    assert main([str(tmp_path / "out"), "--benchmark", "cvlue", "--out", str(tmp_path / "sub"), "--allow-sample"]) == 0
    assert _load(tmp_path / "sub" / "SAMPLE.json")["sample"] == ["cvlue_vd", "cvlue_vg", "cvlue_vqa"]

    vqa_gold = datasets.load_dataset(os.path.join(SAMPLE_DIR, "cvlue"), "vqa", split="test")
    vqa = _load(tmp_path / "sub" / "vqa_submit.json")
    assert [r["question_id"] for r in vqa] == list(
        vqa_gold["question_id"]
    )  # dataset order, as the official merge needs
    assert [r["answer"] for r in vqa] == vqa_answers
    vg = _load(tmp_path / "sub" / "vg_submit.json")
    assert len(vg) == 6 and vg[5]["bbox"] == []  # unparsed box -> empty bbox (official: IoU 0)
    # norm1 [x1, y1, x2, y2] on the 48x48 sample images -> pixel [x, y, w, h] = [4.8, 9.6, 19.2, 19.2]
    assert vg[0]["bbox"] == pytest.approx([4.8, 9.6, 19.2, 19.2])
    vd_sub = _load(tmp_path / "sub" / "vd_submit.json")
    assert [r["answer_sort"] for r in vd_sub] == [list(d["answer_option_ids"]) for d in vd]
    assert [r["question"] for r in vd_sub] == list(vd["question_id"])


@pytest.mark.slow
def test_hanyi_submission_json_from_a_replay_run(replay, tmp_path):
    records = [
        {"task": "punrebus_matching", "doc_id": i, "response": "C" if i % 2 else "Based on it, C"}
        for i in range(_punrebus_docs())
    ]
    results = replay(records, ["punrebus_matching"])
    save_like_cli(results, str(tmp_path / "out"), model_args="path=replay")
    argv = [str(tmp_path / "out"), "--benchmark", "punrebus", "--out", str(tmp_path / "sub")]
    assert main(argv) == 2 and not (tmp_path / "sub").exists()  # the bundled sample is no submission
    assert main([*argv, "--allow-sample"]) == 0
    doc = _load(tmp_path / "sub" / "punrebus_submission.json")
    assert doc["sample"] == ["punrebus_matching"]
    validate_hanyi_submission(doc)
    task = doc["tasks"]["punrebus_matching"]
    assert [p["doc_id"] for p in task["predictions"]] == list(range(_punrebus_docs()))
    assert task["predictions"][0]["response"] == "Based on it, C" and task["predictions"][1]["response"] == "C"
    assert task["predictions"][0]["evidence"]["pred"] == "B"  # the paper parser's first-letter quirk, kept as evidence
    assert task["metrics"]["accuracy"] == results["results"]["punrebus_matching"]["accuracy,none"]


def test_submit_explains_missing_benchmark_and_sample_logs(tmp_path, capsys):
    run = tmp_path / "out" / "m"
    run.mkdir(parents=True)
    (run / "20250101_000000_results.json").write_text(
        json.dumps(
            {"results": {"cvlue_vqa": {"accuracy,none": 0.5}}, "config": {"model": "x", "model_args": "pretrained=m"}}
        )
    )
    assert main([str(tmp_path / "out"), "--benchmark", "cii"]) == 2
    assert "no cii task" in capsys.readouterr().err
    assert main([str(tmp_path / "out"), "--benchmark", "cvlue"]) == 2
    assert "--log_samples" in capsys.readouterr().err


def _results_on(tmp_path, dataset_path):
    run = tmp_path / "out" / "m"
    run.mkdir(parents=True)
    n = {"original": 2, "effective": 2}
    data = {"results": {"cii_none": {"alias": "cii_none", "acc,none": 50.0}}, "n-samples": {"cii_none": n},
            "configs": {"cii_none": {"task": "cii_none", "dataset_path": dataset_path}},
            "config": {"model": "replay", "model_args": "path=r"}, "lmms_eval_version": "0.7.3"}  # fmt: skip
    (run / "20250101_000000_results.json").write_text(json.dumps(data))
    rows = [{"doc_id": i, "target": "A", "resps": [["A"]], "filtered_resps": ["A"]} for i in range(2)]
    (run / "20250101_000000_samples_cii_none.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(tmp_path / "out")


def test_submit_refuses_a_run_on_the_bundled_sample_unless_allow_sample(tmp_path, capsys):
    """`hanyi submit` on the synthetic sample wrote submission files without a word."""
    from hanyi.data.sources import SAMPLE_DIR

    out = _results_on(tmp_path, os.path.join(SAMPLE_DIR, "cii"))
    argv = [out, "--benchmark", "cii", "--out", str(tmp_path / "sub")]
    assert main(argv) == 2 and not (tmp_path / "sub").exists()
    err = capsys.readouterr().err
    assert "bundled synthetic sample" in err and "cii_none" in err and "--allow-sample" in err
    assert main([*argv, "--allow-sample"]) == 0
    assert "bundled synthetic sample" in capsys.readouterr().err  # said again when written
    assert _load(tmp_path / "sub" / "cii_submission.json")["sample"] == ["cii_none"]
    assert _load(tmp_path / "sub" / "SAMPLE.json")["sample"] == ["cii_none"]


def test_submit_writes_a_run_on_prepared_data_without_a_sample_mark(tmp_path, capsys):
    out = _results_on(tmp_path, str(tmp_path / "prepared" / "cii"))
    assert main([out, "--benchmark", "cii", "--out", str(tmp_path / "sub")]) == 0
    assert capsys.readouterr().err == ""
    assert sorted(os.listdir(tmp_path / "sub")) == ["cii_submission.json"]
    assert "sample" not in _load(tmp_path / "sub" / "cii_submission.json")


def _punrebus_docs() -> int:
    import datasets

    from hanyi.data.sources import SAMPLE_DIR

    return len(datasets.load_dataset(os.path.join(SAMPLE_DIR, "punrebus"), "images", split="test"))


@pytest.mark.parametrize("failed", [True, False])
def test_a_doc_without_its_prediction_says_what_happened_not_rerun_with_log_samples(failed):
    """after a scoring failure, submit said "re-run with --log_samples" (the run had it)."""
    from hanyi.submit.cvlue import cvlue_vqa

    line = {"doc_id": 4, "filtered_resps": ["猫"], "resps": [["猫"]]}
    if failed:
        line["hanyi_error"] = "KeyError: 'answer'"
    with pytest.raises(SubmissionError) as err:
        cvlue_vqa([line])
    message = str(err.value)
    assert "cvlue_vqa doc 4" in message and "--log_samples" not in message and "replay" in message
    assert ("scoring failed in the run (KeyError: 'answer')" in message) == failed
