"""UNPIE glue: docs from hanyi.data.unpie, prompts from templates/, scoring from hanyi.metrics. See docs/unpie.md."""

from hanyi import backbones
from hanyi.data import unpie as data
from hanyi.metrics import free_text, mt_overlap
from hanyi.metrics.unpie_aggregations import (  # noqa: F401  (named by the YAMLs as utils.*)
    unpie_bleu4,
    unpie_bleu4_all,
    unpie_correct,
    unpie_correct_all,
    unpie_disamb_acc_all,
    unpie_disamb_acc_bertscore,
    unpie_disamb_acc_chrf,
    unpie_disamb_acc_custom_model,
    unpie_mean_correct,
    unpie_mean_correct_all,
    unpie_meteor,
    unpie_meteor_all,
    unpie_sum,
    unpie_word_recovered,
    unpie_word_recovered_all,
)
from hanyi.tasks import _common
from hanyi.tasks._common import prompt_kwargs, prompt_setting, render_once, signature_once, visuals
from hanyi.tasks.unpie import scoring
from hanyi.tasks.unpie.constants import ANSWER_LABELS, JUDGE_METRIC, LANGUAGE_NAMES
from hanyi.tasks.unpie.scoring import caption_count, judge_prompt, response_text

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names
_LANGUAGE = dict(LANGUAGE_NAMES)  # built once: a prompt asks for it twice per doc


@signature_once
def unpie_doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    if prompt_setting(lmms_eval_specific_kwargs, "mode", "vlm") != "vlm":
        return []
    if "disamb_image" not in doc:
        return visuals(doc, "pun_exp_image", id_fields=("unpie_id",))
    if doc["image_status"] != data.IMAGE_OK:  # left out at load (process_docs), so never reached
        raise ValueError(f"unpie_id={doc['unpie_id']} meaning_idx={doc['meaning_idx']}: {doc['image_status']}")
    hint = f"unpie_id={doc['unpie_id']} meaning_idx={doc['meaning_idx']}"
    return [data.load_disamb_image(doc["disamb_image"], doc_hint=hint)]


def unpie_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, mode="vlm", image_slot="")
    context = doc.get("caption", "") if kw["mode"] == "sm" else kw["image_slot"]  # attached at load (loading.py)
    language = _LANGUAGE.get(doc.get("lang"), "")
    return render_once("unpie", kw["template"], image_context=context, language=language, **doc)


def _evidence(doc, response, prediction, **more):
    keys = ("unpie_id", "meaning_idx", "lang", "category")  # category: the doc's split
    found = {k: doc[k] for k in keys if k in doc} | caption_count(doc)
    return {**found, "response": response, "prediction": prediction, "image_sha256": doc.get("image_sha256"), **more}


def _keys(item):
    """What a robust item repeats of the paper key's item: the doc's pun (the ``cluster_key``), split and caption flag,
    which its aggregation and the sample-log breakdowns read; the rest of the evidence is logged once, under the paper key
    (lmms-eval keeps every item of every doc until the run ends)."""
    return {k: item[k] for k in ("unpie_id", "category", "caption_missing") if k in item}


def _overlap_item(item, reference):
    """A reconstruction item with this doc's BLEU-4 sufficient statistics and sentence METEOR (0-1) of its
    ``prediction`` against ``reference``, so the aggregations only sum logged numbers."""
    matcher = mt_overlap.meteor_matcher()
    pred = item["prediction"]
    return {
        **item,
        "reference": reference,
        "meteor_matcher": matcher,
        "bleu_stats": list(mt_overlap.bleu_sentence_stats(pred, reference)),
        "meteor_score": mt_overlap.sentence_meteor(pred, reference, matcher == "exact+stem+wordnet"),
    }


def unpie_grounding_process_results(doc, results):
    if (captions := caption_count(doc)).get("caption_missing"):
        return captions
    response = response_text(results)
    pred_labels = ANSWER_LABELS["grounding"]
    pred, gold = free_text.extract_labelled_answer(response, pred_labels), doc["pun_phrase"]
    item = _evidence(doc, response, pred, gold=gold, correct=(correct := free_text.exact_match(pred, gold)))
    item["exact_match_strict"] = float(free_text.exact_match_strict(response, gold))  # logged for the breakdowns
    # lenient accepts every exact match; the same answer after a preamble scores the same
    item["exact_match_lenient"] = float(correct or free_text.exact_match_lenient(pred, gold, doc["pun_sentence"]))
    robust = free_text.extract_after_preamble(response, pred_labels)  # a plain line: the paper's reading, at once
    correct_robust = correct if robust == pred else free_text.exact_match(robust, gold)
    return {
        "exact_match": item,
        "exact_match_robust": {**_keys(item), "prediction": robust, "correct": correct_robust},
        "exact_match_strict": item["exact_match_strict"],
        "exact_match_lenient": item["exact_match_lenient"],
        "answer_rate": float(bool(pred)),
    } | captions


def unpie_disambiguation_process_results(doc, results):
    if caption_count(doc).get("caption_missing"):
        return caption_count(doc)
    response = response_text(results)
    pred = free_text.extract_labelled_answer(response, (_LANGUAGE[doc["lang"]],))
    item = {**_evidence(doc, response, pred), "target": doc["target"], "distractor": doc["distractor"]}
    item["image_ok"] = "caption" in doc or doc["image_status"] == data.IMAGE_OK  # a caption task needs no image
    name = backbones.metric_key("bertscore", "disamb_acc_bertscore")  # _chrf without it, _custom_model for others
    robust = free_text.extract_after_preamble(response, (_LANGUAGE[doc["lang"]],))
    # both extractions decided here, in one scorer call on this doc's pairs (an unresolved image: not scored)
    found = scoring.decisions([pred, robust], doc["target"], doc["distractor"], name) if item["image_ok"] else [{}] * 2
    out = {name: {**item, **found[0]}, f"{name}_robust": {**item, "prediction": robust, **found[1]}}
    out["answer_rate"] = float(bool(pred))
    return out | (caption_count(doc) or {"image_unresolved": float(not item["image_ok"])})


def unpie_reconstruction_process_results(doc, results):
    if caption_count(doc).get("caption_missing"):
        return caption_count(doc)
    response = response_text(results)
    pred = free_text.extract_labelled_answer(response, ANSWER_LABELS["reconstruction"])
    item = _overlap_item(_evidence(doc, response, pred), doc["target"])
    item["pun_word_recovered"] = float(free_text.word_recovered(pred, doc["pun_phrase"]))
    out = {"bleu4": item}  # corpus BLEU-4: no per-doc score
    robust_pred = free_text.extract_after_preamble(response, ANSWER_LABELS["reconstruction"])
    robust = _overlap_item({**item, "prediction": robust_pred}, doc["target"])
    robust["pun_word_recovered"] = float(free_text.word_recovered(robust["prediction"], doc["pun_phrase"]))
    out |= {"bleu4_robust": robust} | {
        backbones.metric_key("wordnet", "meteor") + s: {**it, "score": 100 * it["meteor_score"]}
        for s, it in (("", item), ("_robust", robust))  # meteor(_exact_stem): its score x100, for Stderr_CLT
    }
    out["answer_rate"] = float(bool(pred))
    out |= {  # dicts with their 0/1 score and pun (unpie_id): lmms-eval's Stderr_CLT and Stderr_Clustered
        "pun_word_recovered": {**item, "score": item["pun_word_recovered"]},
        "pun_word_recovered_robust": {**robust, "score": robust["pun_word_recovered"]},
    }
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    judge = JudgeConfig.from_env()
    if judge is None:
        warn_judge_disabled([JUDGE_METRIC])
    else:  # our prompt, any judge model: never the paper's "correct" (its GPT-4 prompt is unpublished)
        prompt = judge_prompt(doc, pred)
        verdict = scoring.judge_same_pun(judge, prompt, pred)  # asked here, per doc, and logged
        out[JUDGE_METRIC] = {**item, "judge_model": judge.model, "judge_prompt": prompt, **verdict}
    return out | caption_count(doc)
