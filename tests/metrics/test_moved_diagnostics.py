"""Numbers that CII, CVLUE, Pun Rebus and VULCA no longer emit (the five groups' table fits a
terminal) are computed by ``hanyi report`` from a field logged inside an item the task still emits, under the same
name and with the same value as the former aggregation.

Each test scores varied answers with the task's own ``process_results``, keeps what the sample log keeps (a JSON
round trip, doc ids, a shuffled file order), and compares the report's breakdown with the former aggregation
computed from the answers themselves; then it corrupts the logged field of one doc and sees the breakdown change.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from hanyi.metrics import from_samples


def _log(process_results, docs, responses, seed=0):
    """The sample log's lines: ``process_results`` of each doc as JSON, with its doc id, in shuffled file order."""
    lines = [
        {"doc_id": i, **json.loads(json.dumps(process_results(doc, [r]), allow_nan=False))}
        for i, (doc, r) in enumerate(zip(docs, responses))
    ]
    random.Random(seed).shuffle(lines)
    return lines


def _report(task, lines) -> dict:
    """``{metric: (value, higher_is_better)}`` the report computes from the sample log of ``task``."""
    return from_samples.derive(task, lines)


def _mean(values) -> float:
    """lmms-eval's ``mean``, the aggregation most moved diagnostics had."""
    return sum(values) / len(values)


def _corrupt(lines, metric, field):
    """A copy of ``lines`` where the first doc's logged ``metric[field]`` is flipped."""
    out = json.loads(json.dumps(lines))
    first = min(out, key=lambda line: line["doc_id"])
    first[metric][field] = not first[metric][field]
    return out


# ---- CII: miss_rate ------------------------------------------------------------------------------------------------

CII_ANSWERS = ["答案：B", "", "I think it is C.", "none of them", "F", "答案是A和B", "   ", "选项E", "(D)", "G"]


def _cii_doc(i):
    return {
        "id": f"q{i}",
        "answer": "ABCDEF"[i % 6],
        **{f"option{k}": f"选项{k}" for k in range(1, 7)},
        "domain": "生活",
        "emotion": "积极",
        "difficulty": "简单",
        "image_type": "插画(Illustration)",
        "rhetoric": "{'choices': ['隐喻', '象征']}",
    }


@pytest.mark.parametrize("task", ["cii_none", "cii_cot", "cii_3shot", "cii_test", "cii_textonly"])
def test_cii_miss_rate_is_the_former_aggregation_from_the_logged_acc_items(task):
    from hanyi.metrics.cii_extract import score_response
    from hanyi.tasks.cii import utils

    docs = [_cii_doc(i) for i in range(len(CII_ANSWERS))]
    fn = (
        utils.cii_table1_process_results
        if task in ("cii_none", "cii_test", "cii_textonly")
        else utils.cii_process_results
    )
    lines = _log(fn, docs, CII_ANSWERS)
    assert all("miss_rate" not in line for line in lines)  # no longer emitted
    scored = [score_response(r, [d[f"option{k}"] for k in range(1, 7)], d["answer"]) for d, r in zip(docs, CII_ANSWERS)]
    # the official eval_cii.py: a blank answer is no miss ("" is skipped, whitespace extracts F)
    misses = [s["miss"] and not s["blank"] for s in scored]
    former = 100.0 * sum(misses) / len(misses) / 100  # cii_miss_rate (official eval_cii.py, percentage / 100)
    assert 0 < sum(misses) < sum(s["miss"] for s in scored)
    assert _report(task, lines)["miss_rate"] == (former, False)  # lower is better
    assert _report(task, lines)["blank_rate"] == (0.2, False)  # ours: "" and "   "
    assert _report(task, _corrupt(lines, "acc", "miss"))["miss_rate"][0] != former


# ---- CVLUE: VQA accuracy_strict, english_rate, empty_rate; VG acc_iou_0_5, parse_failure_rate, off_scale_rate ------

VQA = [
    ("猫", "一只猫"),
    ("猫", "猫"),
    ("猫", "cat"),
    ("狗", ""),
    ("狗", "狗。"),
    ("鸟", "A bird"),
    ("鸟", "鸟 "),
    ("鱼", None),
]


def _vqa_doc(i, gold):
    return {"question_id": i, "image_path": f"{i}.jpg", "answer": gold, "category": "cat", "culture_group": "coco"}


@pytest.mark.parametrize("task", ["cvlue_vqa", "cvlue_vqa_val", "cvlue_vqa_lite"])
def test_cvlue_vqa_diagnostics_are_the_former_aggregations_from_the_logged_accuracy_items(task):
    from hanyi.metrics import short_answer_zh as sa
    from hanyi.metrics.cvlue_aggregations import cvlue_mean
    from hanyi.tasks.cvlue import utils

    docs = [_vqa_doc(i, gold) for i, (gold, _) in enumerate(VQA)]
    answers = [a for _, a in VQA]
    lines = _log(utils.cvlue_vqa_process_results, docs, answers)
    assert all(set(line) == {"doc_id", "accuracy", "accuracy_robust"} for line in lines)

    def former(values):  # cvlue_mean of the former per-doc items
        return cvlue_mean([{"v": float(v)} for v in values])

    expected = {
        "accuracy_strict": former(sa.vqa_correct_official(a, g, strict=True) for g, a in VQA),
        "english_rate": former(sa.is_english_only(a) for _, a in VQA),
        "empty_rate": former(not sa.clean_answer(a) for _, a in VQA),
    }
    assert all(0 < v < 1 for v in expected.values())  # varied
    got = _report(task, lines)
    assert {k: got[k] for k in expected} == {
        "accuracy_strict": (expected["accuracy_strict"], True),
        "english_rate": (expected["english_rate"], False),
        "empty_rate": (expected["empty_rate"], False),
    }
    for name, field in (("accuracy_strict", "strict"), ("english_rate", "english"), ("empty_rate", "empty")):
        assert _report(task, _corrupt(lines, "accuracy", field))[name][0] != expected[name]


VG = [
    "[0.1, 0.1, 0.5, 0.5]",
    "no box here",
    "[0.12, 0.1, 0.52, 0.48]",
    "[10, 10, 500, 500]",
    "[0.6, 0.6, 0.9, 0.9]",
    "",
]


@pytest.mark.parametrize("task", ["cvlue_vg", "cvlue_vg_lite", "cvlue_vg_qwen"])
def test_cvlue_vg_diagnostics_are_the_former_aggregations_from_the_logged_miou_items(task):
    from hanyi.metrics import bbox
    from hanyi.metrics.cvlue_aggregations import cvlue_mean
    from hanyi.tasks.cvlue import utils

    fn, fmt = (
        (utils.cvlue_vg_qwen_process_results, "qwen1000")
        if "qwen" in task
        else (utils.cvlue_vg_process_results, "norm1")
    )
    docs = [
        {"ref_id": i, "image_path": f"{i}.jpg", "bbox": [100, 100, 400, 400], "width": 1000, "height": 1000,
         "category": "cat", "culture_group": "coco"}
        for i in range(len(VG))
    ]  # fmt: skip
    lines = _log(fn, docs, VG)
    assert all(set(line) == {"doc_id", "miou"} for line in lines)
    boxes = [bbox.parse_box(r) for r in VG]
    ious = [
        bbox.iou_official(bbox.to_pixel_xywh(b, fmt, 1000, 1000), [100, 100, 400, 400]) if b else 0.0 for b in boxes
    ]
    expected = {
        "acc_iou_0_5": cvlue_mean([{"v": float(iou > 0.5)} for iou in ious]),
        "parse_failure_rate": cvlue_mean([{"v": float(b is None)} for b in boxes]),
        "off_scale_rate": cvlue_mean([{"v": float(b is not None and max(b) > bbox.COORD_FORMATS[fmt])} for b in boxes]),
    }
    assert 0 < expected["parse_failure_rate"] < 1 and 0 < expected["acc_iou_0_5"] < 1
    got = _report(task, lines)
    assert {k: got[k][0] for k in expected} == expected
    assert not got["parse_failure_rate"][1] and not got["off_scale_rate"][1] and got["acc_iou_0_5"][1]
    assert (
        _report(task, _corrupt(lines, "miou", "parse_failure"))["parse_failure_rate"][0]
        != expected["parse_failure_rate"]
    )
    assert _report(task, _corrupt(lines, "miou", "off_scale"))["off_scale_rate"][0] != expected["off_scale_rate"]
    wrong_iou = json.loads(json.dumps(lines))
    for line in wrong_iou:
        line["miou"]["v"] = 1.0 - line["miou"]["v"]
    assert _report(task, wrong_iou)["acc_iou_0_5"][0] != expected["acc_iou_0_5"]


# ---- Pun Rebus: parse_rate(_robust); element_abs_capped*, element_zh_rate, element_parse_rate ----------------------

LETTER_ANSWERS = ["C", "**B**", "Option A", "The answer is D", "", "G. Peace", "Based on the bats, A", "(E)", "x"]


def _pun_doc(i):
    return {"image_id": f"story{i}_1.jpg", "categories": ["ABCDEFG"[i % 7]], "category_rows": ["ABCDEFG"[i % 7]]}


@pytest.mark.parametrize("task", ["punrebus_matching", "punrebus_matching_5shot", "punrebus_expression"])
def test_punrebus_parse_rates_are_the_former_aggregations_from_the_logged_accuracy_items(task, monkeypatch):
    from hanyi.metrics.choice import extract_leading_letter
    from hanyi.metrics.choice_delimited import extract_choice_delimited
    from hanyi.metrics.judge import JudgeConfig
    from hanyi.tasks.punrebus import utils
    from hanyi.tasks.punrebus.constants import LETTERS, OPTIONS

    monkeypatch.setattr(JudgeConfig, "from_env", classmethod(lambda cls, *a, **k: None))  # no judge
    fn = (
        utils.punrebus_expression_process_results
        if task == "punrebus_expression"
        else utils.punrebus_matching_process_results
    )
    docs = [_pun_doc(i) for i in range(len(LETTER_ANSWERS))]
    lines = _log(fn, docs, LETTER_ANSWERS)
    assert all(set(line) == {"doc_id", "accuracy", "accuracy_robust"} for line in lines)
    expected = {
        "parse_rate": _mean([float(extract_leading_letter(r, LETTERS) is not None) for r in LETTER_ANSWERS]),
        "parse_rate_robust": _mean([float(extract_choice_delimited(r, OPTIONS) is not None) for r in LETTER_ANSWERS]),
    }
    assert 0 < expected["parse_rate"] < expected["parse_rate_robust"] < 1
    got = _report(task, lines)
    assert {k: got[k] for k in expected} == {k: (v, True) for k, v in expected.items()}
    assert _report(task, _corrupt(lines, "accuracy", "parsed"))["parse_rate"][0] != expected["parse_rate"]
    corrupted = _corrupt(lines, "accuracy_robust", "parsed")
    assert _report(task, corrupted)["parse_rate_robust"][0] != expected["parse_rate_robust"]


ELEMENT_ANSWERS = [
    "Bat, Peach, Deer",
    "bats, peaches",
    "\nBat",  # unparsed (the official parser skips an answer that starts with a newline)
    "蝙蝠, 桃子",
    "Peach blossom, peach, Peach tree",
    "",
    "Crane, Pine",
]


@pytest.mark.parametrize("wordnet", [True, False])
@pytest.mark.parametrize("task", ["punrebus_elements", "punrebus_elements_5shot"])
def test_punrebus_element_diagnostics_are_the_former_aggregations_from_the_logged_element_abs_items(
    task, wordnet, monkeypatch
):
    from hanyi import backbones
    from hanyi.metrics import elements as el
    from hanyi.tasks.punrebus import utils

    def key(backbone, paper_key):  # no Sentence-BERT here; WordNet found or not (its fallback family)
        if backbone == "sbert":
            return None
        return paper_key if wordnet else backbones.BACKBONES["wordnet"].fallbacks[paper_key]

    monkeypatch.setattr(utils.backbones, "metric_key", key)
    suffix = "" if wordnet else "_rule_lemma"
    docs = [{"image_id": f"s{i}_1.jpg", "elements_en": ["bat", "peach"]} for i in range(len(ELEMENT_ANSWERS))]
    lines = _log(utils.punrebus_elements_process_results, docs, ELEMENT_ANSWERS)
    assert all(set(line) == {"doc_id", "element_abs" + suffix} for line in lines)
    preds = [el.parse_elements_official(r) for r in ELEMENT_ANSWERS]
    capped = [el.element_abs_capped(["bat", "peach"], p) for p in preds if p is not None]
    expected = {
        "element_abs_capped" + suffix: math.fsum(capped) / len(capped),  # punrebus_mean_over_parsed
        "element_zh_rate": _mean([float(el.has_cjk(r)) for r in ELEMENT_ANSWERS]),
        "element_parse_rate": _mean([float(p is not None) for p in preds]),
    }
    assert 0 < expected["element_parse_rate"] < 1 and 0 < expected["element_zh_rate"] < 1
    got = _report(task, lines)
    assert {k: got[k][0] for k in expected} == expected
    assert not got["element_zh_rate"][1] and got["element_parse_rate"][1] and got["element_abs_capped" + suffix][1]
    assert ("element_abs_capped_rule_lemma" in got) != wordnet  # one family, never both
    source = "element_abs" + suffix
    assert _report(task, _corrupt(lines, source, "zh"))["element_zh_rate"][0] != expected["element_zh_rate"]
    assert _report(task, _corrupt(lines, source, "parsed"))["element_parse_rate"][0] != expected["element_parse_rate"]
    wrong = json.loads(json.dumps(lines))
    for line in wrong:
        if line[source]["parsed"]:
            line[source]["instance_score_capped"] = 0.0
    assert _report(task, wrong)["element_abs_capped" + suffix][0] != expected["element_abs_capped" + suffix]


# ---- VULCA: expert_alignment_chance (+ _custom_model), empty_response_rate -----------------------------------------

CRITIQUES = ["", '{"a": 1}', "A fine painting.", "   ", 'Text\n```json\n{"stance": 1}\n```', "\n"]


def _fake_logits(premises, hypotheses):
    return [[float(len(p) % 7 - 3 + len(h) % 3), 0.0] for p, h in zip(premises, hypotheses)]


@pytest.fixture
def vulca_docs():
    return [{"doc_id": i, "title_zh": f"画{i}"} for i in range(len(CRITIQUES))]


def test_vulca_empty_response_rate_is_the_former_aggregation_from_the_logged_json_valid_rate_items(
    vulca_docs, monkeypatch
):
    from hanyi.metrics.critique_json import split_critique
    from hanyi.tasks.vulca import utils

    monkeypatch.delenv("HANYI_VULCA_NLI_MODEL", raising=False)
    lines = _log(utils.vulca_process_results, vulca_docs, CRITIQUES)
    assert all("empty_response_rate" not in line and "expert_alignment_chance" not in line for line in lines)
    empty = _mean([float(not c.strip()) for c in CRITIQUES])
    assert 0 < empty < 1
    got = _report("vulca_baseline", lines)
    assert got["empty_response_rate"] == (empty, False)
    assert _report("vulca_baseline", _corrupt(lines, "json_valid_rate", "empty"))["empty_response_rate"][0] != empty
    # the emitted json_valid_rate keeps lmms-eval mean's value
    from hanyi.tasks.vulca import aggregate

    items = [line["json_valid_rate"] for line in sorted(lines, key=lambda x: x["doc_id"])]
    assert aggregate.vulca_json_valid_rate(items) == _mean([float(split_critique(c)["json_valid"]) for c in CRITIQUES])


def test_vulca_chance_level_is_the_former_aggregation_from_the_logged_expert_alignment_items(
    vulca_docs, monkeypatch, tmp_path
):
    from hanyi.data.vulca_reference import load_reference
    from hanyi.metrics import critique_scoring
    from hanyi.metrics.zeroshot_nli import register_logits_fn
    from hanyi.tasks.vulca import utils

    monkeypatch.setenv("HANYI_VULCA_NLI_MODEL", "fake-nli-moved")
    register_logits_fn("fake-nli-moved", _fake_logits)
    monkeypatch.setattr(critique_scoring, "_CACHE", {})
    try:
        lines = _log(utils.vulca_process_results, vulca_docs, CRITIQUES)
    finally:
        register_logits_fn("fake-nli-moved", None)
    name = "expert_alignment_chance_custom_model"  # a fake NLI model is not the paper's: the fallback family
    assert all(set(line["expert_alignment_custom_model"]) == {"score", "chance", "painting"} for line in lines)
    former = critique_scoring.chance(load_reference())  # vulca_chance: the constant every critique carried
    assert 0.5 < former < 1
    got = _report("vulca_persona_kb_su_shi", lines)
    assert got[name] == (former, True) and "expert_alignment_chance" not in got
    assert list(got)[0] == name  # registered first: the report shows it next to expert_alignment
    wrong = json.loads(json.dumps(lines))
    for line in wrong:
        line["expert_alignment_custom_model"]["chance"] = 0.5
    assert _report("vulca_persona_kb_su_shi", wrong)[name][0] != former

    # hanyi report's headline table shows the chance level on the row right after Expert Alignment
    from hanyi.tasks.vulca import aggregate
    from tests.test_report_honest import report, table, write_run

    task = "vulca_persona_kb_su_shi"
    emitted = {
        "json_valid_rate,none": aggregate.vulca_json_valid_rate([line["json_valid_rate"] for line in lines]),
        "expert_alignment_custom_model,none": aggregate.vulca_expert_alignment(
            [line["expert_alignment_custom_model"] for line in lines]
        ),
    }
    rep = report(tmp_path, write_run(tmp_path / "run", "pretrained=m", {task: emitted}, samples={task: lines}))
    rows = [row[1].split(" ")[0] for row in table(rep, "vulca", "Headline metrics")["rows"] if row[0] == task]
    assert rows[rows.index("expert_alignment_custom_model") + 1] == name, rows


# ---- the report gives every moved diagnostic its interval, as it did when the task emitted it ----------------------


def test_the_report_gives_each_moved_diagnostic_an_interval_from_the_logged_items(tmp_path, monkeypatch):
    from hanyi.metrics import cii_aggregations, cvlue_aggregations
    from hanyi.tasks.cii import utils as cii
    from hanyi.tasks.cvlue import utils as cvlue
    from hanyi.tasks.punrebus import utils as pun
    from tests.test_report_honest import report, write_run

    monkeypatch.setattr(pun.backbones, "metric_key", lambda backbone, key: None if backbone == "sbert" else key)
    runs = {
        "cii_none": _log(cii.cii_table1_process_results, [_cii_doc(i) for i in range(10)], CII_ANSWERS),
        "cvlue_vqa": _log(cvlue.cvlue_vqa_process_results, [_vqa_doc(i, g) for i, (g, _) in enumerate(VQA)], [a for _, a in VQA]),
        "punrebus_matching": _log(pun.punrebus_matching_process_results, [_pun_doc(i) for i in range(9)], LETTER_ANSWERS),
        "punrebus_elements": _log(
            pun.punrebus_elements_process_results,
            [{"image_id": f"s{i}_1.jpg", "elements_en": ["bat", "peach"]} for i in range(len(ELEMENT_ANSWERS))],
            ELEMENT_ANSWERS,
        ),
    }  # fmt: skip
    emitted = {
        "cii_none": {"acc,none": cii_aggregations.cii_acc([line["acc"] for line in runs["cii_none"]])},
        "cvlue_vqa": {"accuracy,none": cvlue_aggregations.cvlue_mean([line["accuracy"] for line in runs["cvlue_vqa"]])},
        "punrebus_matching": {"accuracy_robust,none": 0.5},
        "punrebus_elements": {"element_abs,none": 0.5},
    }
    rep = report(tmp_path, write_run(tmp_path / "run", "pretrained=m", emitted, samples=runs))
    intervals = {(i["task"], i["metric"]): i for s in rep["sections"] for i in s["intervals"]}
    moved = [
        ("cii_none", "miss_rate"),
        ("cvlue_vqa", "accuracy_strict"),
        ("cvlue_vqa", "english_rate"),
        ("punrebus_matching", "parse_rate"),
        ("punrebus_matching", "parse_rate_robust"),
        ("punrebus_elements", "element_zh_rate"),
        ("punrebus_elements", "element_parse_rate"),
        ("punrebus_elements", "element_abs_capped"),
    ]
    for key in moved:
        rec = intervals[key]
        assert rec["ci_low"] is not None and rec["ci_low"] <= rec["value"] <= rec["ci_high"], (key, rec)
    assert intervals[("cii_none", "miss_rate")]["method"] == "exact (Clopper-Pearson)"
    assert intervals[("punrebus_elements", "element_abs_capped")]["method"].startswith("bootstrap")


def test_two_runs_get_a_paired_comparison_of_a_moved_diagnostic(tmp_path):
    """``hanyi report RUN_A RUN_B`` compares the moved diagnostics doc by doc, as it did when the task emitted them."""
    from hanyi.metrics import cii_aggregations
    from hanyi.tasks.cii import utils as cii
    from tests.test_report_honest import report, section, write_run

    docs = [_cii_doc(i) for i in range(40)]
    answers = {"a": [CII_ANSWERS[i % len(CII_ANSWERS)] for i in range(40)], "b": ["答案：A"] * 10 + [""] * 30}
    dirs = []
    misses = {}
    for name, responses in answers.items():
        lines = _log(cii.cii_table1_process_results, docs, responses)
        # the official miss: no option found in a non-blank answer (a blank answer is no miss in eval_cii.py)
        misses[name] = [
            line["acc"]["miss"] and not line["acc"].get("blank") for line in sorted(lines, key=lambda x: x["doc_id"])
        ]
        emitted = {"acc,none": cii_aggregations.cii_acc([line["acc"] for line in lines])}
        dirs.append(write_run(tmp_path / name, "pretrained=m", {"cii_none": emitted}, samples={"cii_none": lines}))
    rep = report(tmp_path, *dirs)
    (rec,) = [p for p in section(rep, "cii")["paired"] if p["metric"] == "miss_rate"]
    assert rec["n_pairs"] == 40 and rec["test"] == "McNemar exact (two-sided)"
    assert rec["difference"] == pytest.approx((sum(misses["b"]) - sum(misses["a"])) / 40) and rec["difference"] != 0
