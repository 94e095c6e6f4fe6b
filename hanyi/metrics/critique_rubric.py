"""VULCA capability rubrics scored by an optional LLM judge (paper §3.5, App. C.1; spec §3.6, §6 item 19).

The paper reports three rubric scores (Painting Element Recognition 1-5, Chinese Painting Understanding 1-7, Chinese
Language Usage 1-5) but releases no scoring procedure and does not say who assigned them. hanyi offers them as an
extension: one judge request per (critique, rubric), the rubric text verbatim from App. C.1, the instructions ours
(``templates/rubric_judge.jinja``). The answer is read with the shared strict parser (a level in range, else
unscored); the metric is the mean over scored critiques, and unscored ones are counted, never read as a score.
No composite score is formed (the paper's is undefined).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence

#: metric name -> (rubric name, top of the scale, description, level texts 1..top); texts verbatim from App. C.1.
RUBRICS = {
    "rubric_painting_elements_1_5": (
        "Painting Element Recognition",
        5,
        "Assesses accuracy in identifying visual elements, compositional features, and technical aspects.",
        (
            "Minimal recognition of basic elements, significant errors or omissions",
            "Basic recognition of major elements, but with notable inaccuracies",
            "Accurate identification of major compositional elements and techniques",
            "Detailed recognition of both major and minor elements with few errors",
            "Comprehensive and nuanced recognition of subtle visual elements and technical features",
        ),
    ),
    "rubric_cn_painting_understanding_1_7": (
        "Chinese Painting Understanding",
        7,
        "Evaluates depth of understanding cultural meanings, historical contexts, and symbolic references specific to "
        "Chinese painting traditions.",
        (
            "Minimal recognition of obvious symbols, significant cultural misinterpretations",
            "Basic recognition of common symbols but limited understanding of their significance",
            "Moderate understanding of major symbols with some contextual awareness",
            "Accurate interpretation of major cultural symbols with appropriate historical context",
            "Detailed understanding of both common and specialized symbolic elements",
            "Sophisticated analysis of symbolic relationships with strong historical contextualization",
            "Expert-level analysis of symbolic networks with nuanced cultural and historical insights",
        ),
    ),
    "rubric_cn_language_1_5": (
        "Chinese Language Usage",
        5,
        "Measures quality of language expression, including terminology accuracy, stylistic appropriateness, and "
        "fluency in Chinese art discourse.",
        (
            "Significant terminology errors, inappropriate style for art commentary",
            "Basic fluency but frequent terminology errors and stylistic inconsistencies",
            "Generally appropriate language with occasional specialized terminology errors",
            "Accurate terminology usage with appropriate stylistic features for art commentary",
            "Expert-level language usage with precise terminology and stylistically sophisticated expression",
        ),
    ),
}
#: Number of (critique, rubric) judgements that produced no score (unparseable answer or failed request).
UNSCORED = "rubric_judge_unscored"
RUBRIC_METRICS = (*RUBRICS, UNSCORED)


_MEMO: dict[tuple, object] = {}
_LOCK = threading.Lock()


def rubric_template_vars(metric: str) -> dict:
    """Variables of ``rubric_judge.jinja`` for one rubric.

    >>> v = rubric_template_vars("rubric_cn_painting_understanding_1_7")
    >>> v["name"], v["high"], len(v["levels"])
    ('Chinese Painting Understanding', 7, 7)
    """
    name, high, description, levels = RUBRICS[metric]
    return {"name": name, "high": high, "description": description, "levels": levels}


def judge_rubric(metric: str, prompts: Sequence[str], config) -> dict:
    """Judge ``prompts`` (rendered for rubric ``metric``) and summarise: ``mean`` over scored items plus counts.

    Results are memoised per (config, prompt) in the process, so the ``rubric_judge_unscored`` aggregation reuses
    the three rubric passes instead of sending (or, for failed requests, re-sending) them.
    """
    from hanyi.metrics.judge import summarize_judgements

    return summarize_judgements(judge_rubric_results(metric, prompts, config))


def judge_rubric_results(metric: str, prompts: Sequence[str], config) -> list:
    """The memoised judge result of each prompt (:func:`judge_rubric`), in order: one request per new prompt."""
    from hanyi.metrics.judge import get_judge_client, parse_integer_score

    high = RUBRICS[metric][1]
    with _LOCK:
        todo = [p for p in dict.fromkeys(prompts) if (config, p) not in _MEMO]
    if todo:
        judged = get_judge_client(config).judge_many(todo, lambda text: parse_integer_score(text, 1, high))
        with _LOCK:
            _MEMO.update({(config, p): r for p, r in zip(todo, judged)})
    return [_MEMO[(config, p)] for p in prompts]


def unscored_count(summaries: Sequence[dict]) -> float:
    """Judgements without a score over all rubrics.

    >>> unscored_count([{"n_parse_failures": 1, "n_request_failures": 0}, {"n_parse_failures": 0, "n_request_failures": 2}])
    3.0
    """
    return float(sum(s["n_parse_failures"] + s["n_request_failures"] for s in summaries))


def rubric_value(summary: dict) -> float:
    """The reported rubric score: mean over scored critiques, NaN when none was scored.

    >>> rubric_value({"mean": 4.5, "n_scored": 2}), math.isnan(rubric_value({"mean": math.nan, "n_scored": 0}))
    (4.5, True)
    """
    return float(summary["mean"]) if summary["n_scored"] else math.nan


def doc_levels(prompts: dict[str, str], config) -> dict[str, int | None]:
    """What ``process_results`` logs for one critique: ``{rubric metric: the judge's level, or None when unscored}``
    for ``prompts`` ``{rubric metric: rendered judge prompt}`` (one request each, memoised per prompt)."""
    return {metric: judge_rubric_results(metric, [prompt], config)[0].value for metric, prompt in prompts.items()}


def metric_values(levels) -> dict[str, float]:
    """The rubric metrics over the logged :func:`doc_levels` of each critique: per rubric the mean level over the
    scored critiques (NaN with none), and ``rubric_judge_unscored``, the judgements without a level.

    >>> metric_values([{"rubric_cn_language_1_5": 4}, {"rubric_cn_language_1_5": None}])
    {'rubric_cn_language_1_5': 4.0, 'rubric_judge_unscored': 1.0}
    """
    out = {}
    for metric in RUBRICS:
        if not all(metric in doc for doc in levels):
            continue
        scored = [doc[metric] for doc in levels if doc[metric] is not None]
        out[metric] = math.fsum(scored) / len(scored) if scored else math.nan
    out[UNSCORED] = float(sum(v is None for doc in levels for v in doc.values()))
    return out
