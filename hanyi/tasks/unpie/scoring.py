"""UNPIE scoring glue called by ``utils.py``'s ``process_results``: metric-model settings, per-doc decisions and
judge verdicts.

Settings are validated when the task loads (:mod:`hanyi.settings`) and the BERTScore backbone is resolved then, once
per process (:mod:`hanyi.backbones`): ``HANYI_UNPIE_BERTSCORE_MODEL`` (local path or hub id, default
``bert-base-multilingual-cased``), ``HANYI_UNPIE_BERTSCORE_LAYERS`` (default 9 for the default model, else bert-score's
table), ``HANYI_UNPIE_BERTSCORE_BATCH`` (default 64); the judge comes from ``HANYI_JUDGE_*`` (docs/judge.md).
"""

from __future__ import annotations

import math
import re

from hanyi.metrics import judge
from hanyi.metrics import reference_choice as rc
from hanyi.metrics.reference_choice import BATCH_ENV, LAYERS_ENV, MODEL_ENV, bertscore_settings  # noqa: F401
from hanyi.tasks._common import render

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def response_text(results) -> str:
    """The model's answer as text: a missing or non-text answer is the empty answer (unanswered, never an error), and
    a lone surrogate (half a UTF-16 pair, which no tokenizer takes) is U+FFFD, as the task's response filter makes it."""
    response = results[0] if results else ""
    return _LONE_SURROGATE.sub("\ufffd", response) if isinstance(response, str) else ""


def caption_count(doc) -> dict:
    """``caption_missing`` of a caption-task doc (1.0: no caption, so it is left out of every score); else ``{}``."""
    return {"caption_missing": float(not doc["caption"])} if "caption" in doc else {}


def judge_prompt(doc, prediction) -> str:
    """Our "same pun?" judge prompt for a reconstruction (templates/judge_same_pun.jinja)."""
    return render("unpie", "judge_same_pun.jinja", pun_sentence=doc["target"], prediction=prediction)


def bertscore_scorer():
    """The configured BERTScore-F1 pair scorer, or ``None`` when the ``bertscore`` backbone is missing.

    Whether it is usable is decided once per process and configuration by :mod:`hanyi.backbones` (at task load, a
    failure cached too, so an unreachable hub is never retried per doc); the model itself is loaded once.
    """
    from hanyi import backbones

    if not backbones.available("bertscore"):
        return None
    model, num_layers, batch_size = bertscore_settings()
    return rc.bertscore_f1_scorer(model, num_layers, batch_size)


#: Backbones each task kind needs (hanyi.backbones), resolved when the task loads.
BACKBONES = {"grounding": (), "disambiguation": ("bertscore",), "reconstruction": ("wordnet", "judge")}


def require_backbones(kind: str) -> None:
    """Resolve the backbones of task ``kind`` now (task load time); a missing one is announced in one line."""
    from hanyi import backbones

    backbones.require(*BACKBONES[kind])


def pair_scorer(name: str):
    """The pair scorer behind disambiguation key ``name``: chrF for ``disamb_acc_chrf*`` only, else BERTScore-F1 with
    the configured model (``disamb_acc_bertscore*``, ``disamb_acc_custom_model*``)."""
    if name.startswith("disamb_acc_chrf"):
        return rc.chrf_scores
    if (scorer := bertscore_scorer()) is None:
        raise RuntimeError(f"{name}: BERTScore became unavailable after the task loaded")
    return scorer


def decisions(predictions: list[str], target: str, distractor: str, name: str) -> list[dict]:
    """The closer-reference decision of one doc's answers (the paper extraction and the robust one): one scorer call
    on this doc's distinct pairs, sent sorted, so a doc's scores depend on its own answers only (any order, any rank).
    Each dict: ``target_score``, ``distractor_score``, ``correct``."""
    n = len(predictions)
    return rc.decide(predictions, [target] * n, [distractor] * n, pair_scorer(name))


def judge_same_pun(config, prompt: str, prediction: str) -> dict:
    """The "same pun?" verdict (``judge_raw``, ``judge_verdict``) and ``judge_score`` (= ``score``, for Stderr_CLT):
    1.0 yes; 0.0 no, an unparseable verdict or an empty prediction (not sent); NaN a failed request (left out, no score)."""
    if not prediction.strip():
        return {"judge_score": 0.0, "score": 0.0}
    (res,) = judge.get_judge_client(config).judge_many([prompt], parse=judge.parse_yes_no)  # a failure: logged there
    return {
        "judge_score": math.nan if res.request_failed else float(res.value is True),
        "judge_raw": res.raw,
        "judge_verdict": res.value,
        **({} if res.request_failed else {"score": float(res.value is True)}),  # a failed request: none
    }
