"""The per-doc items a task logs: the doc's evidence once, under the paper key; a ``_robust`` item repeats only what
its own aggregation, ``hanyi report`` and lmms-eval's standard errors read.

lmms-eval keeps every item of every doc until the run ends (and writes each to the sample log), so a second copy of
the whole record under the robust key doubled what a task keeps per doc on a long served run
(benchmarks/served_memory.py). These tests pin the slim robust items and check that everything that reads them
still gets the same numbers.
"""

from __future__ import annotations

import math

import pytest

from hanyi.results.perdoc import per_doc_scores
from hanyi.results.samples import image_digests

SHA = "ab" * 32


def _cii_doc(answer="B"):
    return {
        "id": "test-1",
        "answer": answer,
        **{f"option{i}": f"选项{i}" for i in range(1, 7)},
        "domain": "生活",
        "emotion": "积极",
        "difficulty": "中等",
        "image_type": "{'choices': ['插画(Illustration)', '海报(Poster)']}",
        "rhetoric": "{'choices': ['隐喻', '象征']}",
        "image_sha256": SHA,
    }


def test_cii_acc_item_is_the_whole_record_and_acc_robust_the_robust_parse_only():
    from hanyi.tasks.cii.utils import cii_process_results, cii_table1_process_results

    for fn in (cii_process_results, cii_table1_process_results):
        out = fn(_cii_doc(), ["我想答案是B"])
        acc, robust = out["acc"], out["acc_robust"]
        evidence = {"id", "answer", "response", "pred", "correct", "miss", "blank", "pred_robust", "correct_robust"}
        labels = {"domain", "emotion", "difficulty", "image_types", "rhetorics", "image_sha256", "score"}
        assert set(acc) == evidence | labels
        assert robust == {"pred_robust": acc["pred_robust"], "correct_robust": acc["correct_robust"], "score": 1.0}
        assert acc["image_types"] == ["插画", "海报"] and acc["rhetorics"] == ["隐喻", "象征"]


@pytest.mark.parametrize("response", ["答案：B", "B", "", "  ", "我想答案是B", "(C)"])
def test_cii_aggregations_and_report_readings_unchanged_by_the_slim_robust_item(response):
    from hanyi.metrics.cii_aggregations import cii_acc, cii_acc_robust
    from hanyi.tasks.cii.utils import cii_process_results

    out = cii_process_results(_cii_doc(), [response])
    full = {**out["acc"], "score": float(out["acc"]["correct_robust"])}  # the record the robust key logged before
    assert cii_acc_robust([out["acc_robust"]]) == cii_acc_robust([full])
    assert cii_acc([out["acc"]]) == cii_acc([out["acc"]])
    line = {"doc_id": 0, **out}
    assert image_digests(line) == [SHA]  # the picture's digest, from the acc item
    vals, scale = per_doc_scores([line], "acc_robust", float(full["correct_robust"]))
    assert vals == {0: float(full["correct_robust"])} and scale == 1.0


def _cvlue_doc():
    return {
        "question_id": 7,
        "image_path": "images/0007.jpg",
        "answer": "地上",
        "category": "筷子",
        "culture_group": "non_wordnet",
        "image_sha256": SHA,
    }


@pytest.mark.parametrize("response", ["地上", "答案：地上\n因为", "", "on the floor"])
def test_cvlue_vqa_robust_item_carries_its_value_and_cluster_key_only(response):
    from hanyi.metrics.cvlue_breakdowns import vqa_diagnostics, vqa_groups
    from hanyi.task_yaml import read
    from hanyi.tasks.cvlue import utils

    out = utils.cvlue_vqa_process_results(_cvlue_doc(), [response])
    acc, robust = out["accuracy"], out["accuracy_robust"]
    assert set(robust) == {"v", "image_path", "cleaned"}
    evidence = {"v", "category", "culture_group", "question_id", "image_path", "pred", "gold", "image_sha256"}
    assert set(acc) == evidence | {"strict", "english", "empty"}
    # lmms-eval's Stderr_CLT / Stderr_Clustered read the task's score_key and cluster_key from every item
    from hanyi.results.aggregations import task_files

    config = {**read(task_files()["cvlue_vqa"]), "score_key": "v"}  # score_key: the included defaults
    assert config["cluster_key"] == "image_path" and robust[config["cluster_key"]] == acc["image_path"]
    assert robust["v"] in (0.0, 1.0)
    assert vqa_groups([acc]) == vqa_groups([acc]) and vqa_diagnostics([acc])  # the breakdowns read accuracy only


def _unpie_doc(**extra):
    return {
        "unpie_id": "p1",
        "meaning_idx": 0,
        "lang": "en",
        "category": "homographic",
        "pun_phrase": "cut",
        "pun_sentence": "The barber had a cut above the rest.",
        "image_sha256": SHA,
        **extra,
    }


@pytest.mark.parametrize("response", ["cut", "The word that creates the pun is:\ncut", "", "Answer: rest"])
def test_unpie_grounding_robust_item_repeats_only_pun_split_and_caption_flag(response):
    from hanyi.metrics.unpie_aggregations import unpie_mean_correct
    from hanyi.metrics.unpie_breakdowns import grounding_robust
    from hanyi.tasks.unpie import both_splits, utils

    out = utils.unpie_grounding_process_results(_unpie_doc(), [response])
    paper, robust = out["exact_match"], out["exact_match_robust"]
    assert set(robust) == {"unpie_id", "category", "prediction", "correct"}
    assert {"response", "prediction", "gold", "image_sha256", "lang", "meaning_idx"} <= set(paper)
    full = {**paper, "prediction": robust["prediction"], "correct": robust["correct"]}  # what was logged before
    assert unpie_mean_correct([robust]) == unpie_mean_correct([full])
    assert grounding_robust([robust]) == grounding_robust([full])
    both = both_splits.unpie_grounding_all_process_results(_unpie_doc(), [response])
    assert both["exact_match_robust"] == robust and both["exact_match_robust"] is not both["exact_match"]


def test_unpie_caption_task_robust_item_keeps_the_caption_flag():
    from hanyi.tasks.unpie import utils

    out = utils.unpie_grounding_process_results(_unpie_doc(caption="A barber with scissors."), ["cut"])
    assert out["exact_match_robust"]["caption_missing"] == 0.0
    assert set(out["exact_match_robust"]) == {"unpie_id", "category", "caption_missing", "prediction", "correct"}


def test_unpie_both_split_aggregation_writes_its_score_into_the_slim_items():
    from hanyi.tasks.unpie import both_splits
    from hanyi.tasks.unpie.utils import unpie_mean_correct_all

    docs = [_unpie_doc(unpie_id=f"p{i}", category=c) for i, c in enumerate(["homographic"] * 3 + ["heterographic"] * 2)]
    items = [both_splits.unpie_grounding_all_process_results(d, [r])["exact_match_robust"] for d, r in
             zip(docs, ["cut", "no", "cut", "cut", "no"], strict=True)]  # fmt: skip
    value = unpie_mean_correct_all(items)
    assert value == pytest.approx((2 / 3 + 1 / 2) / 2)
    scores = [it["all_splits_score"] for it in items]
    assert math.isclose(sum(scores) / len(scores), value)
