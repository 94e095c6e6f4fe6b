"""CVLUE tasks: prompts (snapshots), end-to-end scoring through the real evaluator, data builder, submissions."""

import argparse
import json
import math
import os
import shutil
import subprocess

import pytest

from hanyi.data import cvlue as cvlue_data
from hanyi.data.cvlue_sample import write_synthetic_release
from hanyi.metrics.bbox import iou_official
from hanyi.metrics.ranking import parse_loglikelihood, vd_recall_official
from hanyi.report.cvlue_breakdown import category_rows
from hanyi.report.cvlue_breakdown import main as breakdown_main
from hanyi.submit.cvlue import itr_submission, predictions_from_samples, vd_submission, vqa_submission

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "cvlue")
GENERATE_TASKS = ("cvlue_vqa", "cvlue_vg", "cvlue_vg_qwen", "cvlue_vg_qwen_chat")
ALL_TASKS = (
    "cvlue_vqa", "cvlue_vqa_val", "cvlue_vqa_lite", "cvlue_vg", "cvlue_vg_val", "cvlue_vg_lite", "cvlue_vg_qwen",
    "cvlue_vg_qwen_chat",
    "cvlue_vd", "cvlue_vd_val", "cvlue_vd_lite", "cvlue_tr_rerank", "cvlue_ir_rerank", "cvlue_tr_mc10", "cvlue_ir_mc10",
)  # fmt: skip


def _res(results, task):
    return {k.split(",")[0]: v for k, v in results["results"][task].items() if not k.endswith("_stderr,none")}


def _emitted(r):
    return {k for k in r if k != "alias" and "_stderr" not in k}


def _from_samples(results, task):
    """The culture-group and semantic-field breakdowns ``hanyi report`` computes from the task's sample log."""
    from hanyi.metrics.from_samples import derive

    return {name: value for name, (value, _) in derive(task, results["samples"][task]).items()}


@pytest.fixture(scope="module")
def tasks(task_manager):
    from lmms_eval.tasks import get_task_dict

    return get_task_dict(list(ALL_TASKS), task_manager)


def test_every_task_is_registered_versioned_and_groups_hold_the_right_output_types(task_manager, tasks):
    assert set(ALL_TASKS) <= set(task_manager.all_tasks)
    for name in ALL_TASKS:
        # 0.4: groups and fields from the sample log; 0.5 (VQA, VG): their diagnostics too
        # 0.5 / 0.6 (VQA, VG): score_key v, cluster_key image_path
        assert tasks[name].config.metadata["version"] == (0.6 if name.startswith(("cvlue_vqa", "cvlue_vg")) else 0.5)
    for name in GENERATE_TASKS:
        assert tasks[name].config.output_type == "generate_until"
    assert tasks["cvlue_vd"].config.output_type == "multiple_choice"
    assert tasks["cvlue_vd"].config.target_delimiter == ""
    assert tasks["cvlue_tr_rerank"].config.output_type == "loglikelihood"


@pytest.mark.parametrize(
    ("task", "doc_id"),
    [("cvlue_vqa", 0), ("cvlue_vg", 0), ("cvlue_vg_qwen", 0), ("cvlue_vg_qwen_chat", 0), ("cvlue_vd", 1)]
    + [("cvlue_tr_rerank", 0)],
)
def test_prompt_snapshots(tasks, snapshot, task, doc_id):
    t = tasks[task]
    snapshot(f"{task}__{doc_id}", t.doc_to_text(t.test_docs()[doc_id]))


@pytest.mark.parametrize(
    ("template", "field", "expected"),
    [
        ("vqa_qwen_vl.jinja", "question", "图中有几个唢呐？ 答案："),
        ("vg_qwen_vl.jinja", "text", "<ref>左边那个人手里的唢呐</ref><box>"),
    ],
)
def test_per_model_templates_come_from_kwargs(tasks, template, field, expected):
    from hanyi.tasks.cvlue import utils

    doc = tasks["cvlue_vqa" if field == "question" else "cvlue_vg"].test_docs()[0]
    assert utils.cvlue_doc_to_text(doc, {"template": template}) == expected


def test_vqa_end_to_end_official_strict_robust_and_groups(replay):
    responses = ["2个", "是的", "躺着", "3", "不是", "答案：地上\n因为"]
    records = [{"task": "cvlue_vqa", "doc_id": i, "response": r} for i, r in enumerate(responses)]
    out = replay(records, ["cvlue_vqa"])
    r = _res(out, "cvlue_vqa")
    assert r["accuracy"] == pytest.approx(4 / 6)
    assert r["accuracy_robust"] == pytest.approx(5 / 6)
    assert _emitted(r) == {"accuracy", "accuracy_robust"}
    b = _from_samples(
        out, "cvlue_vqa"
    )  # culture groups, Table 3 fields, diagnostics: hanyi report, from the sample log
    assert b.pop("accuracy_strict") == pytest.approx(2 / 6)
    assert (b.pop("empty_rate"), b.pop("english_rate")) == (0.0, 0.0)
    assert (b["accuracy_non_wordnet"], b["accuracy_coco"], b["accuracy_moderate"]) == (1.0, 0.5, 0.5)
    assert (b["accuracy_non_wordnet_macro"], b["accuracy_coco_macro"], b["accuracy_moderate_macro"]) == (1.0, 0.5, 0.5)
    # Table 3 semantic fields: suona -> instruments (docs 0-1); cow and panda -> animal (docs 2-5: 2 of 4 right)
    assert (b["accuracy_field_instruments"], b["accuracy_field_animal"]) == (1.0, 0.5)
    assert b["accuracy_field_food"] is None  # no item of that field: N/A (JSON null), not a zero
    assert sum(k.startswith("accuracy_field_") for k in b) == 15 and len(b) == 21
    rows = category_rows(out["samples"]["cvlue_vqa"])  # the 92-category view, from the sample log (Table 3 order)
    assert [(x["category"], x["n"], x["mean"]) for x in rows] == [("1-panda", 2, 0.5), ("2-cow", 2, 0.5)] + [
        ("84-suona", 2, 1.0)
    ]


def test_vg_end_to_end_miou_parse_failures_and_no_gold_peeking(replay):
    s = 48.0
    responses = [
        f"[{2.5 / s}, {10 / s}, {16.5 / s}, {16 / s}]",  # the gold box in [0, 1] units
        "不知道",  # unparsed -> IoU 0
        "[0, 0, 1, 1]",  # the whole image
        "(10,10),(20,20)",  # Qwen-style ints read under the default norm1 convention: clipped, IoU 0
        "",
        "[1, 1, 1, 1]",  # a zero-size box in the corner: the +1 rule still gives 1 px^2 of overlap
    ]
    records = [{"task": "cvlue_vg", "doc_id": i, "response": x} for i, x in enumerate(responses)]
    out = replay(records, ["cvlue_vg"])
    r = {**_res(out, "cvlue_vg"), **_from_samples(out, "cvlue_vg")}  # acc_iou_0_5 and the rates: hanyi report
    assert _emitted(_res(out, "cvlue_vg")) == {"miou"}
    whole = iou_official([0, 0, 48, 48], [5.0, 4.0, 20.0, 30.0])
    assert whole == pytest.approx(651 / 2401)
    corner = 1 / (25 * 19)  # doc 5: gold [24, 30, 24, 18] ends exactly at the corner (48, 48)
    assert r["miou"] == pytest.approx((1.0 + whole + corner) / 6)
    assert r["acc_iou_0_5"] == pytest.approx(1 / 6)
    assert r["parse_failure_rate"] == pytest.approx(2 / 6)
    assert r["off_scale_rate"] == pytest.approx(1 / 6)  # the Qwen-style ints: flagged as the wrong convention


def test_two_box_conventions_score_side_by_side_in_one_run(replay):
    """cvlue_vg (norm1) and cvlue_vg_qwen (qwen1000) in one evaluator call, scored by lmms-eval's worker threads:
    the convention is part of each task, so neither can leak into the other (the old process-wide record did)."""
    same_box = {"cvlue_vg": "[0.125, 0.25, 0.5, 0.75]", "cvlue_vg_qwen": "<box>(125,250),(500,750)</box>"}
    swapped = {"cvlue_vg": same_box["cvlue_vg_qwen"], "cvlue_vg_qwen": same_box["cvlue_vg"]}
    records = [
        {"task": t, "doc_id": i, "response": {2: same_box[t], 3: swapped[t]}.get(i, "")}
        for t in same_box
        for i in range(6)
    ]
    out = replay(records, list(same_box), process_docs_parallel=4)
    expected = iou_official([6, 12, 18, 24], [5.0, 4.0, 20.0, 30.0])  # both answers = pixels (6, 12)-(24, 36)
    for task, fmt in (("cvlue_vg", "norm1"), ("cvlue_vg_qwen", "qwen1000")):
        r = _res(out, task)
        assert r["miou"] == pytest.approx(expected / 6)
        assert {s["miou"]["coord_format"] for s in out["samples"][task]} == {fmt}
    assert _from_samples(out, "cvlue_vg")["off_scale_rate"] == pytest.approx(1 / 6)
    assert _from_samples(out, "cvlue_vg_qwen")["off_scale_rate"] == 0.0  # [0, 1] floats read as /1000: tiny box


VD_NLL = [
    [3, 0.5, 2, 2, 2, 2],
    [1.0, 0.2, 0.3, 2, 2, 2],
    [0.1, 2, 0.9, 2, 2, 2],
    [1, 1, 5, 1, 1, 1],
]  # gold ranks 1, 3, 2, 6


def _vd_records(sign=1.0):
    return [
        {"task": "cvlue_vd", "doc_id": i, "loglikelihoods": [[sign * v, False] for v in values]}
        for i, values in enumerate(VD_NLL)
    ]


def test_vd_ranking_end_to_end_with_replay_loglikelihoods(replay):
    """Fails if 0.7.3's stringified tuples are not parsed back or if the NLL ranking direction flips."""
    out = replay(_vd_records(), ["cvlue_vd"])
    r = _res(out, "cvlue_vd")
    assert (r["r1"], r["r5"], r["r10"]) == (0.25, 0.75, 1.0)
    assert r["mrr"] == pytest.approx(0.5)
    assert r["mean_rank"] == pytest.approx(3.0)
    assert r["parse_failure_rate"] == 0.0
    assert _emitted(r) == {"r1", "r5", "r10", "mrr", "mean_rank", "parse_failure_rate"}
    b = _from_samples(out, "cvlue_vd")
    assert (b["r1_moderate"], b["r1_coco"], b["r1_field_animal"], b["r1_field_furniture"]) == (0.5, 0.0, 0.5, 0.0)
    assert not any(k.endswith("_macro") for k in b)
    # submission: the logged rankings written in the official format re-score to the same R@1 officially
    preds = predictions_from_samples(out["samples"]["cvlue_vd"], "vd")
    assert preds[0]["answer_sort"][0] == 1  # doc 0: gold answer id 1 ranked first
    release = {
        "dialogs": [
            {"image_id": p["image_id"], "image": "x", "dialog": [{"question": p["question"], "answer_options": []}]}
            for p in preds
        ]
    }
    sub, missing = vd_submission(release, preds)
    golds = [{"question": p["question"], "answer": a} for p, a in zip(preds, (1, 2, 3, 4))]
    assert missing == 0 and vd_recall_official(sub, golds)["r1"] == 0.25


def test_vd_log_probs_rank_the_same_without_any_setting(replay):
    """A backend returning log-probs (<= 0) needs no flag: the default scores -|value| for losses and log-probs."""
    r = _res(replay(_vd_records(sign=-1.0), ["cvlue_vd"]), "cvlue_vd")
    assert (r["r1"], r["mean_rank"]) == (0.25, 3.0)


@pytest.mark.parametrize(
    ("kind", "sign", "mean_rank"),
    # forced nll on log-probs: ranks 6, 4, 5, 1; any case (NLL validated, then NaN R@k)
    [("logprob", -1.0, 3.0), ("nll", 1.0, 3.0), ("nll", -1.0, 4.0), ("NLL", -1.0, 4.0), (" LogProb ", -1.0, 3.0)],
)
def test_vd_direction_forced_via_env(replay, monkeypatch, kind, sign, mean_rank):
    monkeypatch.setenv("HANYI_CVLUE_LOGLIK", kind)
    assert _res(replay(_vd_records(sign=sign), ["cvlue_vd"]), "cvlue_vd")["mean_rank"] == mean_rank


def test_itr_rerank_end_to_end_direction_and_stage1_ceiling(replay, tasks):
    docs = tasks["cvlue_ir_rerank"].test_docs()
    records = [
        {"task": "cvlue_ir_rerank", "doc_id": i, "loglikelihoods": [[2.0 if d["stage1_rank"] == 1 else 1.0, False]]}
        for i, d in enumerate(docs)
    ]
    out = replay(records, ["cvlue_ir_rerank"])
    r = _res(out, "cvlue_ir_rerank")
    assert r["r1"] == pytest.approx(6 / 15)  # the stage-1 second place wins wherever it is the gold
    assert r["r5"] == pytest.approx(14 / 15)
    assert r["stage1_ceiling"] == pytest.approx(14 / 15)
    sub = itr_submission(predictions_from_samples(out["samples"]["cvlue_ir_rerank"], "itr"), "ir")
    assert len(sub) == 15 and all(len(v) == 2 for v in sub.values())


def test_itr_culture_group_and_field_breakdown_per_query(replay, tasks, tmp_path):
    """The gold wins for suona captions; elsewhere stage-1 order holds (cow 2/5 at rank 1, fish 3/5)."""
    docs = tasks["cvlue_ir_rerank"].test_docs()
    value = lambda d: (0.5 if d["is_gold"] else 3.0) if d["category"] == "84-suona" else float(d["stage1_rank"])  # noqa: E731
    records = [
        {"task": "cvlue_ir_rerank", "doc_id": i, "loglikelihoods": [[value(d), False]]} for i, d in enumerate(docs)
    ]
    out = replay(records, ["cvlue_ir_rerank"])
    r = _res(out, "cvlue_ir_rerank")
    assert r["r1"] == pytest.approx(10 / 15)
    b = _from_samples(out, "cvlue_ir_rerank")
    assert (b["r1_non_wordnet"], b["r1_coco"], b["r1_moderate"]) == (1.0, 0.4, 0.6)
    assert (b["r1_field_instruments"], b["r1_field_animal"]) == (1.0, 0.5)
    assert b["r1_field_arts"] is None
    path = tmp_path / "samples_cvlue_ir_rerank.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out["samples"]["cvlue_ir_rerank"]))
    assert breakdown_main([str(path), "--json", str(tmp_path / "cat.json")]) == 0
    rows = json.loads((tmp_path / "cat.json").read_text(encoding="utf-8"))
    assert [(x["category"], x["n"], x["mean"]) for x in rows] == [("2-cow", 5, 0.4), ("3-fish", 5, 0.6)] + [
        ("84-suona", 5, 1.0)
    ]


def test_llava_hf_loglikelihood_is_unusable_with_transformers_5(evaluate, tiny_llava):
    """Documented in docs/cvlue.md: lmms-eval 0.7.3 ``llava_hf.loglikelihood`` tokenises the context through the
    processor without the image, which transformers 5 rejects. If this starts passing, update the docs."""
    with pytest.raises(ValueError, match="no images were passed"):
        evaluate(
            ["cvlue_vd_lite"],
            "llava_hf",
            model_args=f"pretrained={tiny_llava},device_map=cpu,dtype=float32",
            device="cpu",
            force_simple=True,
        )


def _patched_copy(tmp_path, patch, *rels):
    """The files ``lmms_eval/<rel>`` of the installed package, copied under tmp_path and patched with
    docs/upstream/<patch>; returns the first."""
    import lmms_eval

    for rel in rels:
        dst = tmp_path / "lmms_eval" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(os.path.dirname(lmms_eval.__file__), rel), dst)
    patch_file = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "upstream", patch)
    subprocess.run(["patch", "-p1", "-s", "-i", os.path.abspath(patch_file)], cwd=tmp_path, check=True)
    return tmp_path / "lmms_eval" / rels[0]


def _load(path, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_vd_ranking_with_a_real_vlm_once_upstream_patches_0002_0003_land(evaluate, tiny_llava, tmp_path, monkeypatch):
    """The ranking path end to end with lmms-eval's own llava_hf (tiny random LLaVA): 0002 keeps loglikelihood
    tuples, 0003 fixes llava_hf.loglikelihood under transformers 5. Both applied to temporary copies only."""
    import lmms_eval.api.instance
    import lmms_eval.evaluator

    instance = _load(_patched_copy(tmp_path, "0002-unwrap-loglikelihood-tuples.patch", "api/instance.py"), "_p0002")
    patch = "0003-llava-hf-text-only-and-loglikelihood.patch"
    simple = _patched_copy(tmp_path, patch, "models/simple/llava_hf.py", "models/chat/llava_hf.py")
    for module in (lmms_eval.api.instance, lmms_eval.evaluator):
        monkeypatch.setattr(module, "unwrap_generation_output", instance.unwrap_generation_output)
    model = _load(simple, "_p0003_llava_hf").LlavaHf(
        pretrained=tiny_llava, device="cpu", device_map="cpu", dtype="float32"
    )
    out = evaluate(["cvlue_vd_lite"], model)
    r = _res(out, "cvlue_vd_lite")
    assert all(math.isfinite(r[k]) for k in ("r1", "r5", "r10", "mrr", "mean_rank"))
    assert r["parse_failure_rate"] == 0.0
    samples = out["samples"]["cvlue_vd_lite"]
    assert len(samples) == 4
    for s in samples:
        values = [parse_loglikelihood(v) for v in s["filtered_resps"]]
        assert len(values) == len(s["doc"]["answer_options"]) == 6
        assert all(v is not None and math.isfinite(v[0]) and v[0] >= 0 for v in values)  # mean NLL: a loss


def test_cvlue_group_runs_in_the_shared_tiny_llava_chat_run(llava_run):
    for task, key in (("cvlue_vqa", "accuracy"), ("cvlue_vg", "miou")):
        r = _res(llava_run, task)
        assert 0.0 <= r[key] <= 1.0
    assert len(llava_run["samples"]["cvlue_vqa"]) == 6


# ---- data builder ---------------------------------------------------------------------------------------------------
def _prepare(root, out, **kw):
    ns = argparse.Namespace(root=root, out_dir=out, itr_shortlist=kw.get("shortlist"), rerank_k=kw.get("k", 16))
    return cvlue_data.run_prepare(ns)


def test_prepare_converts_an_official_layout_release(tmp_path):
    shortlist = write_synthetic_release(str(tmp_path / "rel"))
    (tmp_path / "sl.json").write_text(json.dumps(shortlist, ensure_ascii=False), encoding="utf-8")
    counts = _prepare(str(tmp_path / "rel"), str(tmp_path / "out"), shortlist=str(tmp_path / "sl.json"), k=2)
    assert counts["vqa/test"] == 6 and counts["vg/validation"] == 2 and counts["vd/test"] == 4
    assert counts["itr_tr_rerank/test"] == 6 and counts["itr_ir_rerank/test"] == 30
    assert counts["anomalies"] == 5  # the synthetic VD has 6 options, not 100: reported, not dropped
    import datasets

    vd = datasets.load_dataset(str(tmp_path / "out"), "vd", split="test")
    assert vd[1]["history_questions"] == ["鱼缸里有几条鱼？", "鱼是什么颜色的？"]
    assert vd[1]["answer_options"][vd[1]["gold_index"]] == "鱼缸放在白色的柜子上。"
    assert (vd[1]["category"], vd[1]["culture_group"], vd[1]["dialog_id"]) == ("3-fish", "moderate", 3)


def test_prepare_names_missing_task_files_and_images(tmp_path):
    write_synthetic_release(str(tmp_path / "rel"))
    shutil.rmtree(tmp_path / "rel" / "VG")
    os.remove(tmp_path / "rel" / "images" / "test" / "A" / "2-cow" / "A-2-1.png")
    with pytest.raises(cvlue_data.CvlueReleaseError) as err:
        _prepare(str(tmp_path / "rel"), str(tmp_path / "out"))
    msg = str(err.value)
    assert "task VG: no VG/<val|test>.json" in msg
    assert "image missing: images/test/A/2-cow/A-2-1.png" in msg
    assert "WangYuxuan93/CVLUE" in msg


def test_vqa_submission_matches_the_official_example_format():
    path = os.path.join(SHARED, "test_example__VQA__test_VQA.json")
    if not os.path.isfile(path):
        pytest.skip("shared CVLUE example not present")
    test_items = json.load(open(path, encoding="utf-8"))
    official = json.load(open(os.path.join(SHARED, "test_example__VQA__submit_VQA.json"), encoding="utf-8"))
    preds = [{"question_id": x["question_id"], "answer": x["answer"]} for x in official[1:]]
    sub, missing = vqa_submission(test_items, preds)
    assert missing == 1 and sub[0]["answer"] == ""
    assert sub[1:] == official[1:]


def test_missing_images_stop_the_task_at_load_time(tmp_path, monkeypatch):
    """Embedded images (VQA) and retrieval's image files are both checked before any model call."""
    import datasets

    from hanyi.data.images import ImageUnavailableError
    from hanyi.data.sources import SAMPLE_DIR
    from hanyi.tasks.cvlue import utils

    sample = os.path.join(SAMPLE_DIR, "cvlue")
    vqa = datasets.load_dataset(sample, "vqa", split="test", cache_dir=str(tmp_path / "c"))
    assert len(utils.cvlue_process_docs(vqa)) == len(vqa)
    raw = vqa.cast_column("image", datasets.Image(decode=False))
    broken = raw.map(lambda r, i: {"image": None if i == 1 else r["image"]}, with_indices=True)
    with pytest.raises(ImageUnavailableError, match=rf"question_id: {vqa[1]['question_id']}\)"):
        utils.cvlue_process_docs(broken.cast_column("image", datasets.Image()))
    itr = datasets.load_dataset(sample, "itr_tr_mc", split="test", cache_dir=str(tmp_path / "c"))
    monkeypatch.setenv("HANYI_DATA_ROOT", "sample")
    assert len(utils.cvlue_process_docs(itr)) == len(itr)
    elsewhere = tmp_path / "elsewhere" / "cvlue"
    elsewhere.mkdir(parents=True)
    (elsewhere / "README.md").write_text("---\nconfigs: []\n---\n")
    monkeypatch.setenv("HANYI_CVLUE_DATA", str(elsewhere))  # a prepared root without the image files
    with pytest.raises(ImageUnavailableError, match=r"image file\(s\) missing under"):
        utils.cvlue_process_docs(itr)
    import shutil  # the image files there, one of them truncated (e.g. one ITR stage 1 skipped): named at load

    shutil.copytree(os.path.join(sample, "images"), elsewhere / "images")
    victim = elsewhere / sorted(set(itr["image_path"]))[0]
    victim.write_bytes(victim.read_bytes()[:-40])
    with pytest.raises(
        ImageUnavailableError, match=r"1 image file\(s\) under .* do not decode \(" + sorted(set(itr["image_path"]))[0]
    ):
        utils.cvlue_process_docs(itr)


# ---- gold is always used; retrieval is over all queries ----------------------------------------
def _blind(path, field, blank):
    items = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps([{**it, field: blank} for it in items], ensure_ascii=False), encoding="utf-8")


def test_prepare_refuses_blind_splits_without_gold(tmp_path):
    """A blind test file (answer "", bbox [], VD without gold) is never written as a scorable split."""
    write_synthetic_release(str(tmp_path / "rel"))
    _blind(tmp_path / "rel" / "VQA" / "test.json", "answer", "")
    _blind(tmp_path / "rel" / "VG" / "test.json", "bbox", [])
    os.remove(tmp_path / "rel" / "VD" / "test_gold.json")
    result = cvlue_data.convert_release(str(tmp_path / "rel"), str(tmp_path / "out"), tasks=("VQA", "VG", "VD"))
    assert set(result["counts"]["vqa"]) == {"validation"} and set(result["counts"]["vg"]) == {"validation"}
    assert set(result["counts"]["vd"]) == {"validation"}
    assert len(result["refused"]) == 3 and all(r in result["anomalies"] for r in result["refused"])
    assert any("VQA test" in r and "blind" in r for r in result["refused"])
    assert not cvlue_data._has_gold("IC", ["images/val/A/1-panda/A-1-34.png"])  # a blind image pool: refused, no crash
    shutil.rmtree(tmp_path / "out")
    _blind(tmp_path / "rel" / "VQA" / "val.json", "answer", "")  # now no split has gold: the task is an error
    with pytest.raises(cvlue_data.CvlueReleaseError, match="task VQA: no split with gold"):
        cvlue_data.convert_release(str(tmp_path / "rel"), str(tmp_path / "out"), tasks=("VQA",))


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data/cvlue (the repo's test_example/) not present")
def test_prepare_test_example_layout_scores_against_gold_json(tmp_path):
    """The repo's test_example/ has blind test_<T>.json beside gold.json: the gold must win for the test split."""
    from hanyi.data.images import synthetic_image

    root = tmp_path / "rel"
    for task, names in {"VQA": ("test_VQA", "gold"), "VG": ("test_VG", "gold"), "VD": ("test_VD", "gold")}.items():
        for name in names:
            (root / task).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(os.path.join(SHARED, f"test_example__{task}__{name}.json"), root / task / f"{name}.json")
    images = set()
    for task in ("VQA", "VG"):
        images |= {it["image"] for it in json.load(open(root / task / "gold.json", encoding="utf-8"))}
    images |= {d["image"] for d in json.load(open(root / "VD" / "test_VD.json", encoding="utf-8"))["dialogs"]}
    for rel in images:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        synthetic_image(rel, 32).save(root / rel)
    result = cvlue_data.convert_release(str(root), str(tmp_path / "out"), tasks=("VQA", "VG", "VD"))
    assert result["refused"] == []
    import datasets

    gold_vqa = json.load(open(root / "VQA" / "gold.json", encoding="utf-8"))
    vqa = datasets.load_dataset(str(tmp_path / "out"), "vqa", split="test")
    assert [d["answer"] for d in vqa] == [g["answer"] for g in gold_vqa] and all(d["answer"] for d in vqa)
    vg = datasets.load_dataset(str(tmp_path / "out"), "vg", split="test")
    assert all(len(d["bbox"]) == 4 for d in vg)
    vd = datasets.load_dataset(str(tmp_path / "out"), "vd", split="test")
    assert vd[0]["answer_id"] == 3973 and all(d["gold_index"] >= 0 for d in vd)


def test_itr_rerank_counts_queries_outside_the_shortlist_as_misses():
    from hanyi.tasks.cvlue import aggregate

    gallery = [{"image": f"images/test/A/1-panda/A-1-{i}.png", "caption": [f"cap{i}a", f"cap{i}b"]} for i in range(3)]
    shortlist = {
        "i2t": {g["image"]: [g["caption"][0], "other"] for g in gallery[:2]},  # image 2 not covered
        "t2i": {f"cap{i}a": [gallery[i]["image"]] for i in range(3)},  # the three "b" captions not covered
    }
    anomalies = []
    rows = cvlue_data.itr_rerank_rows(gallery, shortlist, 2, anomalies)
    assert sum("counted as a miss" in a for a in anomalies) == 4

    def scored(rs):  # stage-1 order kept: every covered query has its gold at rank 1
        return [{**r, "score": -float(r["stage1_rank"])} for r in rs]

    tr, ir = scored(rows["itr_tr_rerank"]), scored(rows["itr_ir_rerank"])
    assert aggregate.cvlue_itr_r1(tr) == pytest.approx(2 / 3)
    assert aggregate.cvlue_itr_stage1_ceiling(tr) == pytest.approx(2 / 3)
    assert aggregate.cvlue_itr_r1(ir) == pytest.approx(3 / 6) and aggregate.cvlue_itr_r10(ir) == pytest.approx(3 / 6)
    sub = itr_submission(tr, "tr")
    assert len(sub) == 3 and sub[gallery[2]["image"]] == [] and sub[gallery[0]["image"]][0] == "cap0a"
