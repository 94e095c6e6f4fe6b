"""CII-Bench CTC glue: the 130 painting docs, the neutral description prompt, and the judge's score of each
description in ``process_results``. See docs/cii.md ("CTC").

Each description is judged once, when it is scored (through the shared client in ``hanyi.metrics.judge``, whose disk
cache also survives the process), as lmms-eval's own judge tasks do; every ``ctc_*`` aggregation
(:mod:`hanyi.metrics.cii_aggregations`) then averages the logged scores.
"""

from __future__ import annotations

import os

from hanyi import backbones
from hanyi.logs import get_logger
from hanyi.metrics.cii_aggregations import (  # noqa: F401  (the aggregations cii_ctc.yaml names)
    CTC_METRICS,
    cii_ctc_judge_failures,
    cii_ctc_score,
    cii_ctc_score_difficulty_easy,
    cii_ctc_score_difficulty_hard,
    cii_ctc_score_difficulty_medium,
    cii_ctc_score_emotion_negative,
    cii_ctc_score_emotion_neutral,
    cii_ctc_score_emotion_positive,
)
from hanyi.metrics.cii_ctc import ctc_human_answer, ctc_scores, parse_ctc_score
from hanyi.tasks import _ahead
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.cii.constants import CTC_DOMAIN
from hanyi.tasks.cii.loading import with_images

log = get_logger("hanyi.cii")
ScoreAhead = _ahead.ScoreAhead  # cii_ctc.yaml's response filter: valid UTF-8, then cii_ctc_ahead
CTC_FAILURES = "ctc_judge_failures"
#: The official CTC records (``CTC_Evaluation/exp_CTC.json`` of the GitHub release) carry the painting titles the
#: hub dataset lacks: set this to that file, or point HANYI_CII_IMAGE_ROOT at a clone that has it.
ENV_CTC_JSON = "HANYI_CII_CTC_JSON"
_NOT_COMPARABLE = (
    "hanyi cii_ctc: ctc_score is comparable with Table 4 (2.71) only when the described model is GPT-4o and the judge "
    "is GPT-4o; the paper's description prompt is unpublished and ours is neutral (docs/cii.md). Judge here: %s."
)


def _titles_file() -> str | None:
    path = os.environ.get(ENV_CTC_JSON)
    if path and not os.path.isfile(path):
        raise FileNotFoundError(f"{ENV_CTC_JSON}={path!r} is not a file (expected CTC_Evaluation/exp_CTC.json)")
    root = os.environ.get("HANYI_CII_IMAGE_ROOT")
    clone = os.path.join(root, "CTC_Evaluation", "exp_CTC.json") if root else None
    return path or (clone if clone and os.path.isfile(clone) else None)


def cii_ctc_process_docs(dataset):
    """One doc per distinct CTC image: domain 中华传统文化, first question per ``explanation`` (spec §4.1), with its
    ``title`` from the data or from the official CTC records (keyed by ``explanation``) when available. The judge is
    resolved now, before any model call (without one, one line says ctc_score is not emitted)."""
    from hanyi.metrics.judge import JudgeConfig

    backbones.require("judge")
    judge = JudgeConfig.from_env()
    if judge is not None:
        log.warning(_NOT_COMPARABLE, judge.model)
    seen, keep = set(), []
    for i, (domain, expl) in enumerate(zip(dataset["domain"], dataset["explanation"])):
        if domain == CTC_DOMAIN and expl not in seen:
            seen.add(expl)
            keep.append(i)
    docs = with_images(dataset.select(keep))
    has_titles = "title" in docs.column_names and any(docs["title"])
    path = None if has_titles else _titles_file()
    if path:
        from hanyi.data.cii import ctc_titles

        titles = ctc_titles(path)
        docs = docs.remove_columns([c for c in ("title",) if c in docs.column_names])
        docs = docs.add_column("title", [titles.get(e, "") for e in docs["explanation"]])
        log.info("hanyi cii_ctc: titles of %d/%d paintings from %s", sum(map(bool, docs["title"])), len(docs), path)
    elif not has_titles:
        log.warning(
            "hanyi cii_ctc: no painting titles; the judge's human answer is explanation + meaning only (the official "
            "one starts with the title). Set %s to the release's CTC_Evaluation/exp_CTC.json.",
            ENV_CTC_JSON,
        )
    return docs


def cii_ctc_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = prompt_kwargs(lmms_eval_specific_kwargs, ctc_prompt=None)
    return kw["ctc_prompt"] or render("cii", "ctc_describe.jinja")


def cii_ctc_process_results(doc, results):
    """``ctc_blank_rate``; with a judge configured, the description judged now (one request, cached on disk) and its
    official score logged in the item every ``ctc_*`` aggregation reads (:mod:`hanyi.metrics.cii_aggregations`)."""
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    description = results[0] if results else ""
    out = {"ctc_blank_rate": float(not str(description).strip())}
    judge = JudgeConfig.from_env()
    if judge is None:
        warn_judge_disabled([*CTC_METRICS, CTC_FAILURES])
        return out
    user = _judge_user(doc, description)
    item = {"id": doc["id"], "difficulty": doc["difficulty"], "emotion": doc["emotion"], "judge_user": user}
    item["judge_model"] = judge.model  # provenance: the report compares it with the paper's judge
    item |= judge_one(user, render("cii", "ctc_judge_system.jinja"))
    return {
        **out,
        **{
            m: {k: x for k, x in item.items() if k != "score" or f is None or item[f] == v}
            for m, (f, v) in [*CTC_METRICS.items(), (CTC_FAILURES, ("id", None))]
        },
    }  # a key's copy keeps the score (Stderr_CLT) where the key counts the doc; the failures count never does


def _judge_user(doc, description) -> str:
    human = ctc_human_answer(doc["explanation"], doc["metaphorical_meaning"], doc.get("title") or "")
    return render("cii", "ctc_judge_user.jinja", human_answer=human, description=description)


def cii_ctc_ahead(responses, docs):
    """Every description's judge request announced at once (:class:`ScoreAhead`): sent at the judge's concurrency
    when ``process_results`` asks for the first, whatever ``--process_docs_parallel``."""
    client = _client()
    if client is not None and docs is not None:
        users = [_judge_user(doc, r) for doc, r in zip(docs, responses)]
        client.expect(users, system=render("cii", "ctc_judge_system.jinja"))


def _client():
    """The judge client of ``JudgeConfig.from_env()`` with the official ``top_p`` unless set; ``None`` without one."""
    import dataclasses

    from hanyi.metrics.judge import JudgeConfig, get_judge_client

    config = JudgeConfig.from_env()
    if config is None:
        return None
    if config.top_p is None:  # the official notebook sends top_p=0.95; HANYI_JUDGE_TOP_P overrides
        config = dataclasses.replace(config, top_p=OFFICIAL_JUDGE_TOP_P)
    return get_judge_client(config)


#: ``top_p`` of the official CTC judge requests (``CTC_Evaluation.ipynb``).
OFFICIAL_JUDGE_TOP_P = 0.95


def judge_one(user: str, system: str, client=None) -> dict:
    """The judgement of one description: ``score`` (official: the answer's first integer, 0 when there is none or
    the request failed), ``judge_raw``, ``judge_error`` (None when scored) and ``judge_request_failed``.

    ``client`` defaults to the process-wide judge client of ``JudgeConfig.from_env()`` (its disk cache answers a
    repeated request); tests inject a fake with a ``judge_many(prompts, parse, system=...)`` method.
    """
    from hanyi.metrics.judge.results import REQUEST_FAILED

    (result,) = (client or _client()).judge_many([user], parse=parse_ctc_score, system=system)
    return {
        "score": ctc_scores([result.value])[0],
        "judge_raw": result.raw,
        "judge_error": result.error,
        "judge_request_failed": result.error is not None and result.error.startswith(REQUEST_FAILED),
    }
