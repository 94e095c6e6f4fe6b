"""Pun Rebus per-doc scoring helpers called by the ``process_results`` hooks (utils.py, circular.py): the answer as
text, the choice items of the paper and robust parsers, and one judge request. See docs/punrebus.md."""

import re

from hanyi.metrics.choice import is_correct_choice
from hanyi.metrics.choice_delimited import extract_choice_delimited
from hanyi.metrics.punrebus_aggregations import JUDGE_SCALE
from hanyi.tasks.punrebus.constants import OPTIONS

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def response_text(results) -> str:
    """The model's answer as text: a missing or non-text answer is the empty answer (unparsed, never an error), and
    a lone surrogate (half a UTF-16 pair, which no tokenizer takes) is U+FFFD, as the task's response filter makes it."""
    response = results[0] if results else ""
    return _LONE_SURROGATE.sub("\ufffd", response) if isinstance(response, str) else ""


def choice_items(doc, response, paper_parser):
    """Per doc: the paper parser's item under ``accuracy`` (what ``parse_rate``, the
    per-category accuracies and the confusion rows are computed from), the robust parser's under
    ``accuracy_robust`` (``parse_rate_robust``)."""
    gold, rows = list(doc["categories"]), doc.get("category_rows")
    paper, robust = paper_parser(response), extract_choice_delimited(response, OPTIONS)
    item = {"parsed": paper is not None, "correct": is_correct_choice(paper, gold), "pred": paper, "gold": gold}
    item |= {"gold_rows": None if rows is None else list(rows), "story": doc.get("story_zh")}  # story: the cluster_key
    item["image_sha256"] = doc.get("image_sha256")  # the picture's bytes: paired runs are matched on them
    rob = {"parsed": robust is not None, "correct": is_correct_choice(robust, gold), "pred": robust, "gold": gold}
    return {
        "accuracy": item | ({"score": float(item["correct"])} if paper is not None else {}),
        "accuracy_robust": rob | {"score": float(rob["correct"]), "story": item["story"]},  # score: for Stderr_CLT
    }


def judge_expression(prompt, config) -> dict:
    """One judgement: ``verdict`` (the judge's integer 1-10, None when unparsed or the request failed; not named
    ``score``, which lmms-eval 0.7.3 reads as a number for its CLT standard error: the caller adds ``score`` for a
    scored answer only), ``judge_raw`` (its answer, None
    when the request failed), ``judge_error`` (None when scored) and the ``prompt``."""
    from hanyi.metrics.judge import get_judge_client, parse_integer_score

    (result,) = get_judge_client(config).judge_many([prompt], lambda t: parse_integer_score(t, *JUDGE_SCALE))
    return {"verdict": result.value, "judge_raw": result.raw, "judge_error": result.error, "prompt": prompt}
