"""UNPIE scoring glue called by ``utils.py`` aggregations: metric-model settings, batched decisions, the judge.

Settings are validated when the task loads (:mod:`hanyi.settings`) and the BERTScore backbone is resolved then, once
per process (:mod:`hanyi.backbones`): ``HANYI_UNPIE_BERTSCORE_MODEL`` (local path or hub id, default
``bert-base-multilingual-cased``), ``HANYI_UNPIE_BERTSCORE_LAYERS`` (default 9 for the default model, else bert-score's
table), ``HANYI_UNPIE_BERTSCORE_BATCH`` (default 64); the judge comes from ``HANYI_JUDGE_*`` (docs/judge.md).
"""

from __future__ import annotations

import logging
import math

from hanyi.metrics import reference_choice as rc
from hanyi.metrics.reference_choice import BATCH_ENV, LAYERS_ENV, MODEL_ENV, bertscore_settings  # noqa: F401

log = logging.getLogger("hanyi.unpie")


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


def bertscore_accuracy(items: list[dict], name: str) -> float:
    """Aggregation of ``disamb_acc_bertscore`` (and ``_custom_model``): the BERTScore decision over ``items``."""
    scorer = bertscore_scorer()
    if scorer is None:
        raise RuntimeError("BERTScore became unavailable between process_results and aggregation")
    return disambiguation_accuracy(items, scorer, name)


def meteor(items: list[dict]) -> float:
    """``meteor`` (WordNet synonyms on) or ``meteor_exact_stem``: the matcher the items were keyed with, never mixed."""
    from hanyi.metrics import mt_overlap

    matchers = {it["meteor_matcher"] for it in items}
    if len(matchers) > 1:
        raise RuntimeError(f"unpie meteor: items scored with different matchers {sorted(matchers)}")
    use_wordnet = "exact+stem+wordnet" in matchers
    log.info("unpie meteor: matcher %s", "exact+stem+wordnet" if use_wordnet else "exact+stem")
    return mt_overlap.mean_meteor([it["prediction"] for it in items], [it["reference"] for it in items], use_wordnet)


def disambiguation_accuracy(items: list[dict], scorer, name: str) -> float:
    """Accuracy of the closer-reference decision over docs whose image resolved, scored in one batch; logs N."""
    scored = [it for it in items if it["image_ok"]]
    decisions = rc.decide(
        [it["prediction"] for it in scored],
        [it["target"] for it in scored],
        [it["distractor"] for it in scored],
        scorer,
    )
    for it, d in zip(scored, decisions):
        it.update(d)
    n_empty = sum(1 for it in scored if not it["prediction"].strip())
    log.info(
        "unpie %s: N=%d scored, %d unresolved images excluded, %d empty answers (wrong)",
        name,
        len(scored),
        len(items) - len(scored),
        n_empty,
    )
    return sum(d["correct"] for d in decisions) / len(decisions) if decisions else math.nan


def judged_correct_rate(verdicts: list, request_failed: list[bool]) -> float:
    """Share of "Yes" verdicts (spec §6.7): unparseable or missing verdicts count 0, failed requests are left out.

    >>> judged_correct_rate([True, False, None, True], [False, False, False, True])
    0.3333333333333333
    """
    kept = [v for v, failed in zip(verdicts, request_failed) if not failed]
    return sum(v is True for v in kept) / len(kept) if kept else math.nan


def judge_correct(items: list[dict], prompts: list[str], judge_many=None) -> float:
    """The reconstruction ``correct`` metric: one batched judge call; empty predictions are 0 without a call."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client, parse_yes_no, summarize_judgements

    if judge_many is None:
        config = JudgeConfig.from_env()
        if config is None:
            return math.nan
        judge_many = get_judge_client(config).judge_many
    asked = [i for i, it in enumerate(items) if it["prediction"].strip()]
    results = judge_many([prompts[i] for i in asked], parse=parse_yes_no)
    verdicts, failed = [False] * len(items), [False] * len(items)
    for i, res in zip(asked, results):
        verdicts[i], failed[i] = res.value, res.request_failed
        items[i]["judge_raw"], items[i]["judge_verdict"] = res.raw, res.value
    log.info("unpie correct: %s, %d empty answers counted 0", summarize_judgements(results), len(items) - len(asked))
    return judged_correct_rate(verdicts, failed)
