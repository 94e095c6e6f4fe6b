"""Pun Rebus Art glue: prompts from templates/, scoring from hanyi.metrics. See docs/punrebus.md."""

import functools
import logging

from hanyi import backbones
from hanyi.metrics import choice_punrebus as cp
from hanyi.metrics import elements as el
from hanyi.metrics.choice import accuracy_over_all, accuracy_over_parsed, extract_leading_letter, is_correct_choice
from hanyi.metrics.choice_delimited import extract_choice_delimited
from hanyi.tasks._common import prompt_kwargs, render, require_images, visuals
from hanyi.tasks.punrebus.constants import FIVE_SHOT_STORIES, JUDGE_METRIC, JUDGE_SCALE, LETTERS, OPTIONS

log = logging.getLogger(__name__)


def _template(kw):
    variant = kw["prompt_variant"]
    return f"{kw['prompt']}.jinja" if variant == "paper" else f"{kw['prompt']}_{variant}.jinja"


def punrebus_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("image_id",))


def punrebus_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    return render("punrebus", _template(kw), options=OPTIONS, doc=doc)


def _choice_items(doc, response, paper_parser):
    gold = list(doc["categories"])
    paper, robust = paper_parser(response), extract_choice_delimited(response, OPTIONS)
    item = {"parsed": paper is not None, "correct": is_correct_choice(paper, gold), "pred": paper, "gold": gold}
    robust_item = {
        "parsed": robust is not None,
        "correct": is_correct_choice(robust, gold),
        "pred": robust,
        "gold": gold,
    }
    out = {"accuracy": item, "accuracy_robust": robust_item, "parse_rate": float(item["parsed"])}
    out.update({f"accuracy_cat_{c}": item for c in LETTERS}, **{f"wrong_answer_confusion_{c}": item for c in LETTERS})
    return out | {"parse_rate_robust": float(robust_item["parsed"])}


def punrebus_matching_process_results(doc, results):
    return _choice_items(doc, results[0] if results else "", lambda r: extract_leading_letter(r, LETTERS))


def punrebus_textonly_process_results(doc, results):
    out = _choice_items(doc, results[0] if results else "", lambda r: cp.extract_first_char_letter(r, LETTERS))
    return {k: out[k] for k in ("accuracy", "accuracy_robust", "parse_rate", "parse_rate_robust")}


def punrebus_expression_process_results(doc, results):
    response = results[0] if results else ""
    out = punrebus_textonly_process_results(doc, results)
    out["accuracy"] = _choice_items(doc, response, lambda r: extract_leading_letter(r, LETTERS))["accuracy"]
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    if JudgeConfig.from_env(None) is None:
        warn_judge_disabled([JUDGE_METRIC])
    else:
        prompt = render("punrebus", "judge_expression.jinja", options=OPTIONS, doc=doc, response=response)
        out[JUDGE_METRIC] = {"prompt": prompt, "image_id": doc.get("image_id")}
    return out


def punrebus_judge_score(items):
    from hanyi.metrics.judge import JudgeConfig, get_judge_client, parse_integer_score, summarize_judgements

    client = get_judge_client(JudgeConfig.from_env(None))
    results = client.judge_many([it["prompt"] for it in items], lambda t: parse_integer_score(t, *JUDGE_SCALE))
    summary = summarize_judgements(results)
    log.info("hanyi punrebus judge: %s", summary)
    return summary["mean"]


def punrebus_elements_process_results(doc, results):
    response = results[0] if results else ""
    gold, pred = list(doc["elements_en"]), el.parse_elements_official(response)
    item = {"gold": gold, "pred": pred, "parsed": pred is not None, "lemmatizer": el.lemmatizer_backend()}
    out = {  # the paper's keys only with WordNet; else element_abs_rule_lemma, ... (hanyi.backbones, once per process)
        backbones.metric_key("wordnet", "element_abs"): {
            **item,
            "instance_score": el.element_abs(gold, pred) if pred is not None else None,
        },
        backbones.metric_key("wordnet", "element_abs_capped"): {
            **item,
            "instance_score": el.element_abs_capped(gold, pred) if pred is not None else None,
        },
        "element_zh_rate": float(el.has_cjk(response)),
        "element_parse_rate": float(pred is not None),
    }
    sim_key = backbones.metric_key("sbert", "element_sim")  # element_sim_custom_model for another embedder
    if sim_key is not None:
        out[sim_key] = item
    return out


def punrebus_mean_over_parsed(items):
    return el.mean_or_zero([it["instance_score"] for it in items if it["parsed"]])


def punrebus_element_sim(items):
    parsed = [(it["gold"], it["pred"]) for it in items if it["parsed"]]
    return el.mean_or_zero(el.element_sim_scores(parsed)) if parsed else 0.0


def punrebus_accuracy_over_parsed(items):
    return accuracy_over_parsed(items)


def punrebus_accuracy_over_all(items):
    return accuracy_over_all(items)


def _confusion_row(items, letter):
    """Row ``letter`` (true category) of the wrong-answer confusion matrix: one short dict per table row."""
    return cp.wrong_answer_confusion(items, LETTERS)[letter]


punrebus_confusion_A = functools.partial(_confusion_row, letter="A")
punrebus_confusion_B = functools.partial(_confusion_row, letter="B")
punrebus_confusion_C = functools.partial(_confusion_row, letter="C")
punrebus_confusion_D = functools.partial(_confusion_row, letter="D")
punrebus_confusion_E = functools.partial(_confusion_row, letter="E")
punrebus_confusion_F = functools.partial(_confusion_row, letter="F")
punrebus_confusion_G = functools.partial(_confusion_row, letter="G")


punrebus_cat_A = functools.partial(cp.category_accuracy, letter="A")
punrebus_cat_B = functools.partial(cp.category_accuracy, letter="B")
punrebus_cat_C = functools.partial(cp.category_accuracy, letter="C")
punrebus_cat_D = functools.partial(cp.category_accuracy, letter="D")
punrebus_cat_E = functools.partial(cp.category_accuracy, letter="E")
punrebus_cat_F = functools.partial(cp.category_accuracy, letter="F")
punrebus_cat_G = functools.partial(cp.category_accuracy, letter="G")


_IMAGE_FIX = "Rebuild the data with `hanyi prepare punrebus`, which checks every image and reports the bad ones."


def punrebus_process_docs(dataset):
    """Image tasks: every doc must have its picture, checked at load time before any model call."""
    return require_images(dataset, "image", "image_id", _IMAGE_FIX)


def punrebus_drop_exemplar_stories(dataset):
    """5-shot: the exemplar stories' images are prompts, not test items (their own images are checked too)."""
    checked = punrebus_process_docs(dataset)
    return checked.filter(lambda p: p not in FIVE_SHOT_STORIES, input_columns="story_pinyin")


def punrebus_elements_process_docs(dataset):
    """Element tasks: WordNet and Sentence-BERT resolved now, before any model call (hanyi.backbones)."""
    backbones.require("wordnet", "sbert")
    return punrebus_process_docs(dataset)


def punrebus_elements_5shot_process_docs(dataset):
    backbones.require("wordnet", "sbert")
    return punrebus_drop_exemplar_stories(dataset)


def punrebus_expression_process_docs(dataset):
    """The judge is resolved now; without one, judge_score is not emitted (one warning before generation)."""
    backbones.require("judge")
    return punrebus_process_docs(dataset)


def _exemplars():
    from hanyi.data.punrebus import load_exemplar_docs
    from hanyi.data.sources import resolve

    return load_exemplar_docs(resolve("punrebus"), FIVE_SHOT_STORIES)


def _answer(doc, prompt):
    option = next(o for o in OPTIONS if o[0] == doc["categories"][0])
    return render("punrebus", "fewshot_answer.jinja", doc=doc, prompt=prompt, option=option)


def punrebus_5shot_doc_to_visual(doc):
    return [img for ex in _exemplars() for img in punrebus_doc_to_visual(ex)] + punrebus_doc_to_visual(doc)


def punrebus_5shot_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    return "\n".join([_answer(ex, kw["prompt"]) for ex in _exemplars()] + [punrebus_doc_to_text(doc, kw)])


def punrebus_5shot_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    content = []
    for ex in _exemplars():
        content += [
            {"type": "image", "url": punrebus_doc_to_visual(ex)[0]},
            {"type": "text", "text": _answer(ex, kw["prompt"])},
        ]
    content += [
        {"type": "image", "url": punrebus_doc_to_visual(doc)[0]},
        {"type": "text", "text": punrebus_doc_to_text(doc, kw)},
    ]
    return [{"role": "user", "content": content}]
