"""Pun Rebus Art glue: prompts from templates/, scoring from hanyi.metrics. See docs/punrebus.md."""

import logging

from hanyi import backbones
from hanyi.metrics import choice_punrebus as cp
from hanyi.metrics import elements as el
from hanyi.metrics.choice import extract_leading_letter, is_correct_choice
from hanyi.metrics.choice_delimited import extract_choice_delimited
from hanyi.metrics.resample import decomposed, fsum_mean_of_finite, share_of_finite, sum_mean
from hanyi.tasks._common import prompt_kwargs, render, visuals
from hanyi.tasks.punrebus.constants import JUDGE_METRIC, JUDGE_SCALE, LETTERS, OPTIONS
from hanyi.tasks.punrebus.loading import (  # noqa: F401  (named by the YAMLs as utils.*)
    punrebus_elements_process_docs,
    punrebus_expression_process_docs,
    punrebus_process_docs,
)

log = logging.getLogger(__name__)


def _template(kw):
    variant = kw["prompt_variant"]
    return f"{kw['prompt']}.jinja" if variant == "paper" else f"{kw['prompt']}_{variant}.jinja"


def punrebus_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("image_id",))


def punrebus_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    return render("punrebus", _template(kw), options=OPTIONS, doc=doc)


def _choice_items(doc, response, paper_parser, keys=None):
    gold, rows = list(doc["categories"]), doc.get("category_rows")
    paper, robust = paper_parser(response), extract_choice_delimited(response, OPTIONS)
    item = {"parsed": paper is not None, "correct": is_correct_choice(paper, gold), "pred": paper, "gold": gold}
    item["gold_rows"] = list(rows) if rows is not None else None  # official per-category denominators
    robust_item = {
        "parsed": robust is not None,
        "correct": is_correct_choice(robust, gold),
        "pred": robust,
        "gold": gold,
    }
    out = {"accuracy": item, "accuracy_robust": robust_item, "parse_rate": float(item["parsed"])}
    out |= {
        f"{name}_{c}": item
        for c in LETTERS
        for name in ("accuracy_cat", "accuracy_cat_dedup", "wrong_answer_confusion")
    }
    out["parse_rate_robust"] = float(robust_item["parsed"])
    return {k: out[k] for k in keys} if keys else out


_PLAIN = ("accuracy", "accuracy_robust", "parse_rate", "parse_rate_robust")


def punrebus_matching_process_results(doc, results):
    return _choice_items(doc, results[0] if results else "", lambda r: extract_leading_letter(r, LETTERS))


def punrebus_textonly_process_results(doc, results):
    return _choice_items(doc, results[0] if results else "", lambda r: cp.extract_first_char_letter(r, LETTERS), _PLAIN)


def punrebus_expression_process_results(doc, results):
    response = results[0] if results else ""
    # an image answer: accuracy and parse_rate both use the image scorer's parser ("Option X" accepted)
    out = _choice_items(doc, response, lambda r: extract_leading_letter(r, LETTERS), _PLAIN)
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


# Decomposed aggregations (hanyi.metrics.resample): one statistic per doc, NaN for a doc left out of the mean
# (unparsed), combined exactly as before (mean_or_zero = fsum / n; accuracy_over_parsed / _all = sum / n).
_NAN = float("nan")


@decomposed(fsum_mean_of_finite, light=True)
def punrebus_mean_over_parsed(items):
    return [it["instance_score"] if it["parsed"] else _NAN for it in items]


@decomposed(fsum_mean_of_finite)
def punrebus_element_sim(items):
    parsed = [(it["gold"], it["pred"]) for it in items if it["parsed"]]
    scores = iter(el.element_sim_scores(parsed) if parsed else [])  # one SBERT batch, as before
    return [next(scores) if it["parsed"] else _NAN for it in items]


@decomposed(share_of_finite, light=True)
def punrebus_accuracy_over_parsed(items):
    return [float(bool(it["correct"])) if it["parsed"] else _NAN for it in items]


@decomposed(sum_mean, light=True)
def punrebus_accuracy_over_all(items):
    return [float(bool(it["correct"])) for it in items]


_PER_LETTER = {
    "punrebus_confusion_": lambda items, letter: cp.wrong_answer_confusion(items, LETTERS)[letter],
    "punrebus_cat_dedup_": cp.category_accuracy_dedup,
    "punrebus_cat_": cp.category_accuracy,
}


def __getattr__(name):
    """``utils.punrebus_cat_A`` (official per-category accuracy), ``punrebus_cat_dedup_A``, ``punrebus_confusion_A``
    (row A of the wrong-answer confusion matrix), ... : one aggregation per option letter."""
    for prefix, fn in _PER_LETTER.items():
        letter = name[len(prefix) :]
        if name.startswith(prefix) and len(letter) == 1 and letter in LETTERS:

            def agg(items, _fn=fn, _letter=letter):
                return _fn(items, _letter)

            agg.__name__ = agg.__qualname__ = name
            return agg
    raise AttributeError(name)
