"""CII-Bench CTC glue: the 130 painting docs, the neutral description prompt, one batched judge call per set of
descriptions shared by the CTC aggregations. See docs/cii.md ("CTC").

Every ``ctc_*`` metric aggregates the same items; the first one judges them (through the shared client in
``hanyi.metrics.judge``, whose disk cache also survives the process) and the others reuse the in-process result.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading

from hanyi import backbones
from hanyi.metrics.cii_ctc import ctc_group_mean, ctc_human_answer, ctc_mean, ctc_scores, parse_ctc_score
from hanyi.tasks._common import prompt_kwargs, render
from hanyi.tasks.cii.constants import CTC_DOMAIN, CTC_METRICS
from hanyi.tasks.cii.loading import with_images

log = logging.getLogger("hanyi.cii")
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
    backbones.require("judge")
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
    from hanyi.metrics.judge import JudgeConfig, warn_judge_disabled

    description = results[0] if results else ""
    out = {"ctc_blank_rate": float(not str(description).strip())}
    judge = JudgeConfig.from_env()
    if judge is None:
        warn_judge_disabled([*CTC_METRICS, CTC_FAILURES])
        return out
    human = ctc_human_answer(doc["explanation"], doc["metaphorical_meaning"], doc.get("title") or "")
    user = render("cii", "ctc_judge_user.jinja", human_answer=human, description=description)
    item = {"id": doc["id"], "difficulty": doc["difficulty"], "emotion": doc["emotion"], "judge_user": user}
    item["judge_model"] = judge.model  # provenance: the report compares it with the paper's judge
    return {**out, **dict.fromkeys([*CTC_METRICS, CTC_FAILURES], item)}


def ctc_aggregation(name: str):
    """The aggregation of CTC metric ``name``: the judge failure count, the overall mean or a group mean."""
    field, label = CTC_METRICS.get(name, (None, None))

    def agg(items):
        judged = judge_batch(items, render("cii", "ctc_judge_system.jinja"))
        if name == CTC_FAILURES:
            return float(judged["failures"])
        if judged["request_failures"]:  # a failed request is no judgement: never a silent 0 (docs/judge.md)
            _say_failures(items, judged)
            return math.nan
        scores = judged["scores"]
        if name == "ctc_score":
            from hanyi.metrics.judge import JudgeConfig

            log.warning(_NOT_COMPARABLE, getattr(JudgeConfig.from_env(), "model", None))
        return ctc_mean(scores) if field is None else ctc_group_mean(scores, [it[field] for it in items], label)

    agg.__name__ = agg.__qualname__ = f"cii_{name}"
    return agg


cii_ctc_judge_failures = ctc_aggregation(CTC_FAILURES)
cii_ctc_score = ctc_aggregation("ctc_score")
cii_ctc_score_difficulty_easy = ctc_aggregation("ctc_score_difficulty_easy")
cii_ctc_score_difficulty_medium = ctc_aggregation("ctc_score_difficulty_medium")
cii_ctc_score_difficulty_hard = ctc_aggregation("ctc_score_difficulty_hard")
cii_ctc_score_emotion_positive = ctc_aggregation("ctc_score_emotion_positive")
cii_ctc_score_emotion_negative = ctc_aggregation("ctc_score_emotion_negative")
cii_ctc_score_emotion_neutral = ctc_aggregation("ctc_score_emotion_neutral")

_SAID: set[str] = set()


def _say_failures(items, judged) -> None:
    """One error line per judged batch: how many requests failed, the first error, and that ctc_* are NaN."""
    key = _batch_key(items)
    with _LOCK:
        if key in _SAID:
            return
        _SAID.add(key)
    log.error(
        "hanyi cii_ctc: %d of %d judge requests failed (first: %s); ctc_score and its breakdowns are NaN, never a "
        "silent 0 (the official notebook would count each failure as 0). Judged answers are cached: re-run with the "
        "judge reachable to fill in the rest.",
        judged["request_failures"],
        len(items),
        judged["first_error"],
    )


_MEMO: dict[str, dict] = {}
_LOCK = threading.Lock()


def _batch_key(items) -> str:
    h = hashlib.sha256()
    for it in items:
        h.update(it["judge_user"].encode("utf-8") + b"\0")
    return h.hexdigest()


#: ``top_p`` of the official CTC judge requests (``CTC_Evaluation.ipynb``).
OFFICIAL_JUDGE_TOP_P = 0.95


def judge_batch(items: list[dict], system: str, client=None) -> dict:
    """``{"scores": [official per-item scores], "raw": [...], "failures": n}`` for ``items`` (memoised).

    ``client`` defaults to the process-wide judge client of ``JudgeConfig.from_env()``; tests inject a fake with a
    ``judge_many(prompts, parse, system=...)`` method.
    """
    key = _batch_key(items)
    if client is None:
        import dataclasses

        from hanyi.metrics.judge import JudgeConfig, get_judge_client

        config = JudgeConfig.from_env()
        if (
            config is not None and config.top_p is None
        ):  # the official notebook sends top_p=0.95; HANYI_JUDGE_TOP_P overrides
            config = dataclasses.replace(config, top_p=OFFICIAL_JUDGE_TOP_P)
        client = get_judge_client(config)
        key += f"\0{getattr(config, 'model', None)}\0{getattr(config, 'endpoint', None)}"  # another judge: not reused
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
    from hanyi.metrics.judge.results import REQUEST_FAILED

    results = client.judge_many([it["judge_user"] for it in items], parse=parse_ctc_score, system=system)
    out = {
        "scores": ctc_scores(r.value for r in results),
        "raw": [r.raw for r in results],
        "failures": sum(r.error is not None for r in results),  # unparsed answers (official 0) and failed requests
        "request_failures": sum(r.error is not None and r.error.startswith(REQUEST_FAILED) for r in results),
        "first_error": next((r.error for r in results if r.error and r.error.startswith(REQUEST_FAILED)), None),
    }
    with _LOCK:  # once per batch and judge: the eight ctc_* aggregations share one judging
        _MEMO[key] = out
    return out
