"""UNPIE scoring glue called by ``utils.py`` aggregations: metric-model settings, batched decisions, the judge.

Settings are validated when the task loads (:mod:`hanyi.settings`) and the BERTScore backbone is resolved then, once
per process (:mod:`hanyi.backbones`): ``HANYI_UNPIE_BERTSCORE_MODEL`` (local path or hub id, default
``bert-base-multilingual-cased``), ``HANYI_UNPIE_BERTSCORE_LAYERS`` (default 9 for the default model, else bert-score's
table), ``HANYI_UNPIE_BERTSCORE_BATCH`` (default 64); the judge comes from ``HANYI_JUDGE_*`` (docs/judge.md).
"""

from __future__ import annotations

import logging
import math

from hanyi.metrics import mt_overlap
from hanyi.metrics import reference_choice as rc
from hanyi.metrics.reference_choice import BATCH_ENV, LAYERS_ENV, MODEL_ENV, bertscore_settings  # noqa: F401
from hanyi.metrics.resample import decomposed, rate

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


def _bertscore_or_raise():
    scorer = bertscore_scorer()
    if scorer is None:
        raise RuntimeError("BERTScore became unavailable between process_results and aggregation")
    return scorer


def bertscore_aggregation(name: str):
    """The decomposed aggregation of ``name`` (``disamb_acc_bertscore`` or ``_custom_model``): per doc 1/0 correct
    under the BERTScore decision (NaN for a doc whose image did not resolve), combined by
    :func:`hanyi.metrics.resample.rate` (an exact Clopper–Pearson interval)."""

    @decomposed(rate, name=f"unpie_{name}")
    def per_doc(items: list[dict]) -> list[float]:
        return disambiguation_correct(items, _bertscore_or_raise(), name)

    return per_doc


def chrf_aggregation(name: str = "disamb_acc_chrf"):
    """:func:`bertscore_aggregation` with the chrF decision (no BERTScore weights)."""

    @decomposed(rate, name=f"unpie_{name}")
    def per_doc(items: list[dict]) -> list[float]:
        return disambiguation_correct(items, rc.chrf_scores, name)

    return per_doc


def _meteor_wordnet(items: list[dict]) -> bool:
    matchers = {it["meteor_matcher"] for it in items}
    if len(matchers) > 1:
        raise RuntimeError(f"unpie meteor: items scored with different matchers {sorted(matchers)}")
    use_wordnet = "exact+stem+wordnet" in matchers
    log.info("unpie meteor: matcher %s", "exact+stem+wordnet" if use_wordnet else "exact+stem")
    return use_wordnet


@decomposed(mt_overlap.meteor_from_scores, name="unpie_meteor")
def meteor_decomposed(items: list[dict]) -> list[float]:
    """``meteor`` (WordNet synonyms on) or ``meteor_exact_stem``, with the matcher the items were keyed with, never
    mixed: per doc its sentence METEOR (0-1); the mean ×100 (:func:`mt_overlap.mean_meteor`'s arithmetic) is the
    aggregate."""
    use_wordnet = _meteor_wordnet(items)
    return [mt_overlap.sentence_meteor(it["prediction"], it["reference"], use_wordnet) for it in items]


@decomposed(mt_overlap.bleu4_from_stats, name="unpie_bleu4")
def bleu4_decomposed(items: list[dict]) -> list[tuple[int, ...]]:
    """Decomposed corpus BLEU-4: per doc its sentence's sufficient statistics (lengths, n-gram matches and totals),
    re-summed by the combine, so a bootstrap over docs is Koehn's (2004) bootstrap over sentences."""
    return [mt_overlap.bleu_sentence_stats(it["prediction"], it["reference"]) for it in items]


def disambiguation_correct(items: list[dict], scorer, name: str) -> list[float]:
    """Per doc 1.0/0.0 for the closer-reference decision, NaN when its image did not resolve (left out)."""
    correct = iter([float(bool(d["correct"])) for d in _decide_scored(items, scorer, name)])
    return [next(correct) if it["image_ok"] else math.nan for it in items]


def _decide_scored(items: list[dict], scorer, name: str) -> list[dict]:
    """Decisions of the docs whose image resolved, their pairs scored in one batch (written into the items)."""
    scored = [it for it in items if it["image_ok"]]
    siblings = [it.get("sibling_prediction") for it in scored]
    decisions = rc.decide(
        [it["prediction"] for it in scored],
        [it["target"] for it in scored],
        [it["distractor"] for it in scored],
        scorer,
        siblings if scored and all(isinstance(p, str) for p in siblings) else None,  # the other key, same call
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
    return decisions


def judge_correct_per_doc(items: list[dict], prompts: list[str], judge_many=None) -> list[float]:
    """The reconstruction ``correct`` statistic per doc (spec §6.7): 1.0 for a "Yes" verdict, 0.0 for "No", an
    unparseable verdict or an empty prediction (not sent), NaN for a failed request (left out) or when no judge is
    configured; :func:`hanyi.metrics.resample.rate` of it is the metric. One batched judge call; each asked item gets
    its ``judge_raw`` and ``judge_verdict``."""
    from hanyi.metrics.judge import JudgeConfig, get_judge_client, parse_yes_no, summarize_judgements

    if judge_many is None:
        config = JudgeConfig.from_env()
        if config is None:
            return [math.nan] * len(items)
        judge_many = get_judge_client(config).judge_many
    asked = [i for i, it in enumerate(items) if it["prediction"].strip()]
    results = judge_many([prompts[i] for i in asked], parse=parse_yes_no)
    out = [0.0] * len(items)
    for i, res in zip(asked, results):
        out[i] = math.nan if res.request_failed else float(res.value is True)
        items[i]["judge_raw"], items[i]["judge_verdict"] = res.raw, res.value
    log.info("unpie correct: %s, %d empty answers counted 0", summarize_judgements(results), len(items) - len(asked))
    return out
