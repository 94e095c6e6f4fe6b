"""CVLUE glue: prompts from templates/, scoring from hanyi.metrics. See docs/cvlue.md."""

import io

from hanyi import settings
from hanyi.metrics import bbox, ranking, short_answer_zh
from hanyi.tasks import _common
from hanyi.tasks._common import prompt_kwargs, signature_once, visuals
from hanyi.tasks.cvlue.constants import ITR_YES, LOGLIK_ENV, RECALL_KS
from hanyi.tasks.cvlue.loading import cvlue_lite_docs, cvlue_process_docs  # noqa: F401  (named by the YAMLs as utils.*)
from hanyi.tasks.cvlue.prompts import PROMPT_FIELDS, prompt


@signature_once
def cvlue_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("question_id", "ref_id", "image_id", "image_path"))


def cvlue_itr_doc_to_visual(doc):
    from hanyi.data.images import to_pil
    from hanyi.data.sources import resolve

    return [to_pil(doc["image_path"], doc_hint=f"image_path={doc['image_path']}", base_dir=resolve("cvlue"))]


def cvlue_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, template="vqa.jinja")
    history = tuple(zip(doc.get("history_questions") or [], doc.get("history_answers") or []))
    return prompt(kw["template"], tuple([(k, doc[k]) for k in PROMPT_FIELDS if k in doc]), history)


def cvlue_itr_target(doc):
    return ITR_YES


ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names


def _tags(doc, value, **evidence):
    tags = {"v": float(value), "category": doc["category"], "culture_group": doc["culture_group"], **evidence}
    return tags | {"image_sha256": doc.get("image_sha256")}  # the picture's bytes: paired runs are matched on them


def _loglik_kind():
    """``auto`` (-|value|, right for losses and log-probs alike) unless HANYI_CVLUE_LOGLIK forces nll/logprob."""
    return settings.value(LOGLIK_ENV, "auto")  # validated, lower case: NLL is nll


def cvlue_vqa_process_results(doc, results):
    raw = results[0] if results and isinstance(results[0], str) else None  # not text: no answer (always wrong)
    cleaned = short_answer_zh.clean_answer(raw)
    ev = {"question_id": doc["question_id"], "image_path": doc["image_path"], "pred": raw, "gold": doc["answer"]}
    correct = short_answer_zh.vqa_correct_official(raw, doc["answer"])
    # the doc's diagnostics, from which accuracy_strict, english_rate and empty_rate are computed
    flags = {
        "strict": correct and short_answer_zh.vqa_correct_official(raw, doc["answer"], strict=True),  # a narrower rule
        "english": short_answer_zh.is_english_only(raw),
        "empty": not cleaned,
    }
    # the robust item repeats only what its aggregation and lmms-eval's clustered SE read (v, the cluster_key); the
    # doc's evidence is logged once, under accuracy: lmms-eval keeps every item of every doc until the run ends
    robust = correct if cleaned == raw else short_answer_zh.vqa_correct_official(cleaned, doc["answer"])
    return {
        "accuracy": _tags(doc, correct, **ev, **flags),
        "accuracy_robust": {"v": float(robust), "image_path": ev["image_path"], "cleaned": cleaned},
    }


def cvlue_vg_process_results(doc, results):
    """VG under the ``norm1`` convention (the main task's prompt asks for [0, 1] floats)."""
    return _vg_results(doc, results, "norm1")


def cvlue_vg_qwen_process_results(doc, results):
    """VG under the ``qwen1000`` convention (Qwen-VL prompts: ints in [0, 1000), divided by 1000)."""
    return _vg_results(doc, results, "qwen1000")


def cvlue_vg_abs_process_results(doc, results):
    """Qwen2.5-VL's absolute pixels, mapped back from the size lmms-eval's qwen2_5_vl gave it (docs/cvlue.md)."""
    return _vg_results(doc, results, "qwen25_pixel", *_image_size(doc), key="miou_abs")


def cvlue_vg_abs_served_process_results(doc, results):
    """The same, from the size a serving engine gives the model (one resize, ``qwen25_served_pixel``)."""
    return _vg_results(doc, results, "qwen25_served_pixel", *_image_size(doc), key="miou_abs")


def _image_size(doc):
    """The size of the picture the model was given (the header only; no decode), else the release's width/height."""
    from PIL import Image

    from hanyi.data.images import image_source

    try:
        src = image_source(doc.get("image"), doc_hint=f"ref_id={doc.get('ref_id')}")
        if isinstance(src, Image.Image):
            return src.size
        with Image.open(io.BytesIO(src) if isinstance(src, (bytes, bytearray)) else src) as im:
            return im.size
    except Exception:  # noqa: BLE001 - checked at load time; a scorer never raises, the release's size stands in
        return doc["width"], doc["height"]


def _vg_results(doc, results, fmt, width=None, height=None, key="miou"):
    width, height = (doc["width"], doc["height"]) if width is None else (width, height)
    raw = results[0] if results else None
    box = bbox.parse_box(raw)
    pred = bbox.to_pixel_xywh(box, fmt, width, height) if box else []
    iou = bbox.iou_official(pred, list(doc["bbox"])) if doc["bbox"] else 0.0
    ev = {"ref_id": doc["ref_id"], "image_path": doc["image_path"], "response": raw, "pred_bbox": pred}
    # acc_iou_0_5 (from v), parse_failure_rate and off_scale_rate are computed from this item
    x_max, y_max = bbox.coord_range(fmt, width, height)
    off = box is not None and (max(box[0], box[2]) > x_max or max(box[1], box[3]) > y_max)
    flags = {"parse_failure": box is None, "off_scale": off}
    return {key: _tags(doc, iou, **ev, gold_bbox=list(doc["bbox"]), coord_format=fmt, **flags)}


def cvlue_vd_process_results(doc, results):
    n = len(doc["answer_options"])
    scores = [ranking.score_from_loglikelihood(r, _loglik_kind()) for r in list(results)[:n]]
    scores += [None] * (n - len(scores))  # a candidate without a result is unscored, never an IndexError
    order = ranking.order_by_score(scores)
    gold = doc["gold_index"]
    rank = n if not 0 <= gold < n or scores[gold] is None else ranking.rank_of(order, gold)
    ids = list(doc["answer_option_ids"])
    ev = {
        "image_id": doc["image_id"],
        "question_id": doc["question_id"],
        "dialog_id": doc["dialog_id"],
        "rank": rank,
        "answer_sort": [ids[i] for i in order],
        "loglik": _loglik_kind(),
    }
    out = {f"r{k}": _tags(doc, ranking.hit_at(rank, k), **ev) for k in RECALL_KS}
    out |= {
        "mrr": _tags(doc, 1.0 / rank),
        "mean_rank": _tags(doc, rank),
        "parse_failure_rate": _tags(doc, None in scores),
    }
    return out


def cvlue_itr_process_results(doc, results):
    score = ranking.score_from_loglikelihood(results[0] if results else None, _loglik_kind())
    keep = ("query", "image_path", "caption", "stage1_rank", "is_gold", "protocol", "category", "culture_group")
    item = {**{k: doc[k] for k in keep}, "score": score, "loglik": _loglik_kind()}
    item["image_sha256"] = doc.get("image_sha256")  # the picture's bytes: paired runs are matched on them
    return dict.fromkeys(("r1", "r5", "r10", "stage1_ceiling", "parse_failure_rate"), item)
