"""Pun Rebus Art glue: prompts from templates/, per-doc scoring from hanyi.metrics; the aggregations the YAMLs name
are in aggregate.py. See docs/punrebus.md."""

import functools

from hanyi import backbones
from hanyi.metrics import choice_punrebus as cp
from hanyi.metrics import elements as el
from hanyi.metrics.choice import extract_leading_letter
from hanyi.tasks import _ahead, _common
from hanyi.tasks._common import prompt_kwargs, render, visuals
from hanyi.tasks.punrebus.constants import JUDGE_METRIC, LETTERS, OPTIONS
from hanyi.tasks.punrebus.loading import (  # noqa: F401  (named by the YAMLs as utils.*)
    punrebus_elements_process_docs,
    punrebus_expression_process_docs,
    punrebus_process_docs,
)
from hanyi.tasks.punrebus.scoring import choice_items, judge_expression, response_text

ValidUtf8Responses = _common.ValidUtf8Responses  # the response filter every task YAML names
ScoreAhead = _ahead.ScoreAhead  # the same, then punrebus_expression_ahead (punrebus_expression.yaml)


def _template(kw):
    variant = kw["prompt_variant"]
    return f"{kw['prompt']}.jinja" if variant == "paper" else f"{kw['prompt']}_{variant}.jinja"


def punrebus_doc_to_visual(doc):
    return visuals(doc, "image", id_fields=("image_id",))


def punrebus_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, prompt="matching", prompt_variant="paper")
    template = _template(kw)
    reads_doc = "doc" in _common.template_reads("punrebus", template)
    return _prompt(template, doc.get("story_zh", _MISSING) if reads_doc else _MISSING)


_MISSING = object()  # no story: a template reading it stops as it did (StrictUndefined)


@functools.lru_cache(maxsize=4096)
def _prompt(template, story_zh):
    """A prompt from the only doc field its templates read (``story_zh``: the text-only ones; a template reading
    another stops with StrictUndefined). Cached: lmms-eval's chat path renders each doc's prompt twice (the request's
    context, then its messages); the picture tasks' prompt is one text, the paper's 1,011 stories fit."""
    return render("punrebus", template, options=OPTIONS, doc={} if story_zh is _MISSING else {"story_zh": story_zh})


def punrebus_matching_process_results(doc, results):
    return choice_items(doc, response_text(results), lambda r: extract_leading_letter(r, LETTERS))


def punrebus_textonly_process_results(doc, results):
    """Also the two parse rates, which the text-only task still emits (its own metric list; an lm-eval task too)."""
    out = choice_items(doc, response_text(results), lambda r: cp.extract_first_char_letter(r, LETTERS))
    out["parse_rate"] = float(out["accuracy"]["parsed"])
    out["parse_rate_robust"] = float(out["accuracy_robust"]["parsed"])
    return out


def punrebus_expression_process_results(doc, results):
    """The letter's items (as matching) and, with a judge configured, the judge's 1-10 score of the explanation,
    asked here for this doc (the client's disk cache answers a repeated request) and logged with its evidence."""
    response = response_text(results)
    # an image answer: accuracy and parse_rate both use the image scorer's parser ("Option X" accepted)
    out = choice_items(doc, response, lambda r: extract_leading_letter(r, LETTERS))
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    config = JudgeConfig.from_env(None)
    if config is None:
        warn_judge_disabled([JUDGE_METRIC])
    else:
        prompt = render("punrebus", "judge_expression.jinja", options=OPTIONS, doc=doc, response=response)
        # judge_model: provenance (the report's judge column, the leaderboard's intake); story: the cluster_key
        item = {"image_id": doc.get("image_id"), "judge_model": config.model, "story": doc.get("story_zh")}
        judged = item | judge_expression(prompt, config)
        out[JUDGE_METRIC] = judged | ({"score": float(judged["verdict"])} if judged["verdict"] is not None else {})
    return out


def punrebus_expression_ahead(responses, docs):
    """Every explanation's judge request announced at once (:class:`ScoreAhead`), sent at the judge's concurrency
    when ``process_results`` asks for the first, whatever ``--process_docs_parallel``."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client

    config = JudgeConfig.from_env(None)
    if config is not None and docs is not None:
        prompt = "judge_expression.jinja"
        docs_responses = zip(docs, map(response_text, ([r] for r in responses)))
        get_judge_client(config).expect(
            [render("punrebus", prompt, options=OPTIONS, doc=d, response=r) for d, r in docs_responses]
        )


def punrebus_elements_ahead(responses, docs):
    """Every gold and parsed element of the task encoded at once, each distinct string once, in batches
    (:class:`ScoreAhead`; ``process_results`` then reads the encodings): the official scorer encodes one string per
    call, which costs about 4x and changes a cosine by at most a few float32 units (docs/dev/contributing.md)."""
    if backbones.metric_key("sbert", "element_sim") is None:
        return
    preds = [el.parse_elements_official(response_text([r])) or [] for r in responses]
    golds = [list(d["elements_en"]) for d in docs] if docs is not None else []
    el.encode_distinct([s for elements in (*preds, *golds) for s in elements])


def punrebus_elements_process_results(doc, results):
    response = response_text(results)
    gold, pred = list(doc["elements_en"]), el.parse_elements_official(response)
    item = {"gold": gold, "pred": pred, "parsed": pred is not None, "lemmatizer": el.lemmatizer_backend()}
    item |= {"story": doc.get("story_zh"), "image_sha256": doc.get("image_sha256")}  # cluster_key; pairing on bytes
    out = {  # the paper's key only with WordNet; else element_abs_rule_lemma (hanyi.backbones, once per process)
        backbones.metric_key("wordnet", "element_abs"): {
            **item,
            "instance_score": el.element_abs(gold, pred) if pred is not None else None,
            # for the sample-log breakdowns: element_abs_capped[_rule_lemma], element_zh_rate
            "instance_score_capped": el.element_abs_capped(gold, pred) if pred is not None else None,
            "zh": el.has_cjk(response),
        },
    }
    sim_key = backbones.metric_key("sbert", "element_sim")  # element_sim_custom_model for another embedder
    if sim_key is not None:  # S_Sim of this doc from the cached encodings (punrebus_elements_ahead; missing ones now)
        out[sim_key] = {
            **item,
            "instance_score": el.element_sim_scores([(gold, pred)])[0] if pred is not None else None,
        }
    return {k: v | ({"score": v["instance_score"]} if v["parsed"] else {}) for k, v in out.items()}  # parsed: CLT
