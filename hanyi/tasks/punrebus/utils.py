"""Pun Rebus Art glue: prompts from templates/, scoring from hanyi.metrics. See docs/punrebus.md."""

from hanyi.metrics.choice import (
    accuracy_over_all,
    accuracy_over_parsed,
    extract_choice_robust,
    extract_leading_letter,
    is_correct_choice,
)
from hanyi.tasks._common import prompt_kwargs, render, visuals
from hanyi.tasks.punrebus.constants import LETTERS, OPTIONS


def punrebus_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("image_id",))


def punrebus_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, template="matching.jinja")
    return render("punrebus", kw["template"], options=OPTIONS, doc=doc)


def punrebus_matching_process_results(doc, results):
    response = results[0] if results else ""
    gold = list(doc["categories"])
    paper = extract_leading_letter(response, LETTERS)
    robust = extract_choice_robust(response, LETTERS)
    paper_item = {"parsed": paper is not None, "correct": is_correct_choice(paper, gold), "pred": paper, "gold": gold}
    robust_item = {"parsed": robust is not None, "correct": is_correct_choice(robust, gold), "pred": robust, "gold": gold}
    return {"accuracy": paper_item, "accuracy_robust": robust_item, "parse_rate": float(paper is not None)}


def punrebus_accuracy_over_parsed(items):
    return accuracy_over_parsed(items)


def punrebus_accuracy_over_all(items):
    return accuracy_over_all(items)
