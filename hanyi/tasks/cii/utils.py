"""CII-Bench glue: prompts from templates/, scoring from hanyi.metrics.cii_extract; CTC: ctc.py. See docs/cii.md."""

import functools

from hanyi.data.cii import hint_text, label_zh, parse_multilabel
from hanyi.data.cii_categories import TABLE1_METRICS
from hanyi.logs import get_logger
from hanyi.metrics.cii_aggregations import (  # noqa: F401  (the aggregations the task YAMLs name)
    cii_acc,
    cii_acc_domain_art,
    cii_acc_domain_ctc,
    cii_acc_domain_environment,
    cii_acc_domain_life,
    cii_acc_domain_politics,
    cii_acc_domain_society,
    cii_acc_emotion_negative,
    cii_acc_emotion_neutral,
    cii_acc_emotion_positive,
    cii_acc_robust,
)
from hanyi.metrics.cii_extract import score_response
from hanyi.tasks import _common
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.cii import fewshot
from hanyi.tasks.cii.constants import LETTERS, OPTION_FIELDS
from hanyi.tasks.cii.loading import checked, cii_doc_to_visual, with_images

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names

log = get_logger("hanyi.cii")
OPTIONS = tuple(zip(LETTERS, OPTION_FIELDS, strict=True))


def cii_process_docs(dataset):
    return with_images(checked(dataset))


def cii_textonly_process_docs(dataset):
    return checked(dataset)


def cii_fewshot_process_docs(dataset):
    return fewshot.split_exemplars(with_images(checked(dataset)))


def cii_doc_to_visual_none(doc):
    return []


def cii_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, template="none.jinja", hint_field=None)
    hint = hint_text(doc[kw["hint_field"]]) if kw["hint_field"] else None
    return _prompt(kw["template"], doc["question"], tuple(doc[f] for f in OPTION_FIELDS), hint)


@functools.lru_cache(maxsize=1024)
def _prompt(template, question, options, hint):
    """A prompt from the only doc fields its templates read (a template reading another stops with StrictUndefined).
    Cached: lmms-eval's chat path renders each doc's prompt twice (the request's context, then its messages); the
    paper's 800 questions fit."""
    return render(
        "cii",
        template,
        doc={"question": question, **dict(zip(OPTION_FIELDS, options, strict=True))},
        options=OPTIONS,
        hint=hint,
    )


def _shots(kwargs):
    return int(prompt_kwargs(kwargs, shots=1)["shots"])


def cii_fewshot_doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    exemplars = fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs))
    return [img for ex in exemplars for img in cii_doc_to_visual(ex)] + cii_doc_to_visual(doc)


def cii_fewshot_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    exemplars = fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs))
    return render("cii", "fewshot_single.jinja", exemplars=exemplars, target=doc, options=OPTIONS)


def _user_turn(doc):
    text = render("cii", "none.jinja", doc=doc, options=OPTIONS)
    return {
        "role": "user",
        "content": [{"type": "image", "url": cii_doc_to_visual(doc)[0]}, {"type": "text", "text": text}],
    }


def cii_fewshot_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """Official multi-turn few-shot: per exemplar a user turn (image, none prompt) and the bare answer letter."""
    messages = []
    for ex in fewshot.exemplars_for(doc, _shots(lmms_eval_specific_kwargs)):
        messages += [_user_turn(ex), {"role": "assistant", "content": [{"type": "text", "text": ex["answer"]}]}]
    return messages + [_user_turn(doc)]


def _scored_item(doc, results):
    """The per-doc record every CII metric aggregates and the sample log keeps: the answer scored by both
    extractors plus the doc's labels, from which the per-category breakdowns are computed."""
    response = results[0] if results else ""
    scored = score_response(response, [doc[f] for f in OPTION_FIELDS], doc["answer"])
    labels = {
        "domain": doc["domain"],
        "emotion": doc["emotion"],
        "difficulty": doc["difficulty"],
        "image_types": [label_zh(x) for x in parse_multilabel(doc["image_type"])],
        "rhetorics": parse_multilabel(doc["rhetoric"]),
    }
    item = {"id": doc["id"], "answer": doc["answer"], "response": response, **scored, **labels}
    return {**item, "image_sha256": doc.get("image_sha256")}  # the picture's bytes: paired runs are matched on them


def cii_process_results(doc, results):
    """``acc`` and ``acc_robust``: the columns of Tables 2 and 3 (prompt and few-shot variants). The logged ``acc``
    item is the doc's whole scored record (both parses, ``miss``, the labels, the picture's sha256): ``miss_rate``
    and the per-category accuracies are computed from it. The
    ``acc_robust`` item holds only what its aggregation and interval read, the robust parse and its 0/1 ``score``:
    lmms-eval keeps every item of every doc until the run ends, and a second copy of the record doubled what CII
    keeps per doc."""
    item = _scored_item(doc, results)  # each key's item with its own 0/1 score: lmms-eval's Stderr_CLT reads it
    robust = {"pred_robust": item["pred_robust"], "correct_robust": item["correct_robust"]}
    return {
        "acc": {**item, "score": float(item["correct"])},
        "acc_robust": {**robust, "score": float(item["correct_robust"])},
    }


def cii_table1_process_results(doc, results):
    """Table 1's setting (``cii_none``, ``cii_test``, ``cii_textonly``): also its domain and emotion columns, each
    logged as the doc's ``correct`` and labels (and its 0/1 ``score`` where the doc has the label: Stderr_CLT)."""
    out = cii_process_results(doc, results)
    acc = out["acc"]
    cell = {"correct": acc["correct"], "domain": acc["domain"], "emotion": acc["emotion"]}
    scored = {**cell, "score": float(acc["correct"])}
    # two read-only dicts shared by the nine keys (the same values as one copy each; 10 -> 3 us a doc)
    return out | {m: scored if cell[f] == v else cell for m, (f, v) in TABLE1_METRICS.items()}
