"""CVLUE glue: prompts from templates/, scoring from hanyi.metrics. See docs/cvlue.md."""

from hanyi.data.cvlue_categories import CULTURE_GROUPS
from hanyi.metrics import bbox, ranking, short_answer_zh
from hanyi.metrics.breakdown import group_scores
from hanyi.tasks._common import prompt_kwargs, render, visuals
from hanyi.tasks.cvlue import conventions
from hanyi.tasks.cvlue.constants import DEFAULT_COORD_FORMAT, DEFAULT_LOGLIK, ITR_YES, LITE_DOCS, RECALL_KS


def cvlue_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("question_id", "ref_id", "image_id", "image_path"))


def cvlue_itr_doc_to_visual(doc):

    from hanyi.data.images import to_pil
    from hanyi.data.sources import resolve

    return [to_pil(doc["image_path"], doc_hint=f"image_path={doc['image_path']}", base_dir=resolve("cvlue"))]


def cvlue_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(
        lmms_eval_specific_kwargs, template="vqa.jinja", coord_format=DEFAULT_COORD_FORMAT, loglik=DEFAULT_LOGLIK
    )
    conventions.record(kw)
    history = list(zip(doc.get("history_questions") or [], doc.get("history_answers") or []))
    return render("cvlue", kw["template"], history=history, **doc)


def cvlue_itr_target(doc):
    return ITR_YES


def cvlue_lite_docs(dataset):
    return dataset.select(range(min(LITE_DOCS, len(dataset))))


def _tags(doc, value, **evidence):
    return {"v": float(value), "category": doc["category"], "culture_group": doc["culture_group"], **evidence}


def cvlue_vqa_process_results(doc, results):
    raw = results[0] if results else None
    cleaned = short_answer_zh.clean_answer(raw)
    ev = {"question_id": doc["question_id"], "image_path": doc["image_path"], "pred": raw, "gold": doc["answer"]}
    correct = short_answer_zh.vqa_correct_official(raw, doc["answer"])
    item = _tags(doc, correct, **ev)
    out = {
        "accuracy": item,
        "accuracy_strict": _tags(doc, short_answer_zh.vqa_correct_official(raw, doc["answer"], strict=True), **ev),
        "accuracy_robust": _tags(
            doc, short_answer_zh.vqa_correct_official(cleaned, doc["answer"]), **ev, cleaned=cleaned
        ),
        "english_rate": _tags(doc, short_answer_zh.is_english_only(raw)),
        "empty_rate": _tags(doc, not cleaned),
    }
    return out | {f"accuracy_{g}": item for g in CULTURE_GROUPS} | {f"accuracy_{g}_macro": item for g in CULTURE_GROUPS}


def cvlue_vg_process_results(doc, results):
    raw = results[0] if results else None
    fmt = conventions.coord_format()
    box = bbox.parse_box(raw)
    pred = bbox.to_pixel_xywh(box, fmt, doc["width"], doc["height"]) if box else []
    iou = bbox.iou_official(pred, list(doc["bbox"])) if doc["bbox"] else 0.0
    item = _tags(
        doc,
        iou,
        ref_id=doc["ref_id"],
        image_path=doc["image_path"],
        response=raw,
        pred_bbox=pred,
        gold_bbox=list(doc["bbox"]),
        coord_format=fmt,
    )
    out = {"miou": item, "acc_iou_0_5": _tags(doc, iou > 0.5), "parse_failure_rate": _tags(doc, box is None)}
    return out | {f"miou_{g}": item for g in CULTURE_GROUPS} | {f"miou_{g}_macro": item for g in CULTURE_GROUPS}


def cvlue_vd_process_results(doc, results):
    scores = [ranking.score_from_loglikelihood(r, conventions.loglik_kind()) for r in results]
    order = ranking.order_by_score(scores)
    gold = doc["gold_index"]
    rank = len(scores) if gold < 0 or scores[gold] is None else ranking.rank_of(order, gold)
    ids = list(doc["answer_option_ids"])
    ev = {
        "image_id": doc["image_id"],
        "question_id": doc["question_id"],
        "dialog_id": doc["dialog_id"],
        "rank": rank,
        "answer_sort": [ids[i] for i in order],
        "loglik": conventions.loglik_kind(),
    }
    out = {f"r{k}": _tags(doc, rank <= k, **ev) for k in RECALL_KS}
    out |= {
        "mrr": _tags(doc, 1.0 / rank),
        "mean_rank": _tags(doc, rank),
        "parse_failure_rate": _tags(doc, None in scores),
    }
    return out | {f"r1_{g}": out["r1"] for g in CULTURE_GROUPS}


def cvlue_itr_process_results(doc, results):
    score = ranking.score_from_loglikelihood(results[0] if results else None, conventions.loglik_kind())
    keep = ("query", "image_path", "caption", "stage1_rank", "is_gold", "protocol")
    item = {**{k: doc[k] for k in keep}, "score": score, "loglik": conventions.loglik_kind()}
    return {k: item for k in ("r1", "r5", "r10", "stage1_ceiling", "parse_failure_rate")}


# ---- aggregations -------------------------------------------------------------------------------------------------
def cvlue_mean(items):
    return sum(i["v"] for i in items) / len(items) if items else 0.0


def _group(items, group, kind):
    scores = group_scores(items, "v", "culture_group")
    return scores[group][kind] if group in scores else float("nan")


def cvlue_non_wordnet(items):
    return _group(items, "non_wordnet", "micro")


def cvlue_moderate(items):
    return _group(items, "moderate", "micro")


def cvlue_coco(items):
    return _group(items, "coco", "micro")


def cvlue_non_wordnet_macro(items):
    return _group(items, "non_wordnet", "macro")


def cvlue_moderate_macro(items):
    return _group(items, "moderate", "macro")


def cvlue_coco_macro(items):
    return _group(items, "coco", "macro")


def _itr(items):
    queries = {}
    for it in items:
        queries.setdefault(it["query"], []).append(it)
    return [ranking.rerank_query(rows) for _, rows in sorted(queries.items())]


def cvlue_itr_r1(items):
    return ranking.ranking_metrics([q["rank"] for q in _itr(items)], RECALL_KS)["r1"]


def cvlue_itr_r5(items):
    return ranking.ranking_metrics([q["rank"] for q in _itr(items)], RECALL_KS)["r5"]


def cvlue_itr_r10(items):
    return ranking.ranking_metrics([q["rank"] for q in _itr(items)], RECALL_KS)["r10"]


def cvlue_itr_stage1_ceiling(items):
    queries = _itr(items)
    return sum(q["in_shortlist"] for q in queries) / len(queries) if queries else 0.0


def cvlue_itr_parse_failure_rate(items):
    return sum(it["score"] is None for it in items) / len(items) if items else 0.0
