"""UNPIE aggregations: every aggregation function the UNPIE task YAMLs name, imported by name into
``hanyi/tasks/unpie/utils.py`` (Chung et al., "Can visual language models resolve textual ambiguity with visual
cues? Let visual puns tell you!", EMNLP 2024, §3-4; docs/unpie.md).

``process_results`` scores each doc (its BERTScore/chrF decision, sentence METEOR, BLEU-4 sufficient statistics) and
logs the numbers in the per-doc item; each aggregation here combines those numbers. So they are cheap, need no
backbone, give the same value whatever the order of their items (2 processes == 1), and ``hanyi report`` recomputes
their intervals from a plain run's sample log (``light=True``, :mod:`hanyi.metrics.resample`). Only the judge's
``unpie_correct`` asks a service at aggregation time. Nothing here imports ``hanyi.tasks``.

The ``unpie_all_*`` aggregations belong to the tasks that score both splits (``unpie_grounding``, ...): the paper's
All, the unweighted mean of the Homo and Hetero values (§4). Each doc's statistic is tagged with its split
(:func:`split_code`), and the combine is :func:`mean_over_splits` of the one-split combine, which gives the value
lmms-eval's group of the two one-split tasks gave (``(homo * 1 + hetero * 1) / 2``), bit for bit.
"""

from __future__ import annotations

import logging
import math

from hanyi.metrics import mt_overlap
from hanyi.metrics.resample import decomposed, rate

log = logging.getLogger("hanyi.unpie")


def _decisions(items: list[dict]) -> list[float]:
    """Per doc 1.0/0.0 for its logged closer-reference decision, NaN when its image did not resolve (left out)."""
    return [float(bool(it["correct"])) if it["image_ok"] else math.nan for it in items]


@decomposed(rate, light=True)
def unpie_disamb_acc_bertscore(items: list[dict]) -> list[float]:
    """Pun disambiguation accuracy (§3 Task 2, Table 5): the share of translations whose BERTScore-F1 to the gold
    translation of the depicted meaning is strictly higher than to the other meaning's,

        correct_{i,j} = 1[BERTScore(ȳ^{i,j}, y^{i,j}) > BERTScore(ȳ^{i,j}, y^{i,1-j})],

    over the docs whose image resolved. The decision is made per doc in ``process_results`` (mBERT layer 9)."""
    return _decisions(items)


@decomposed(rate, light=True)
def unpie_disamb_acc_bertscore_custom_model(items: list[dict]) -> list[float]:
    """:func:`unpie_disamb_acc_bertscore` with another BERTScore model or layer (``HANYI_UNPIE_BERTSCORE_*``)."""
    return _decisions(items)


@decomposed(rate, light=True)
def unpie_disamb_acc_chrf(items: list[dict]) -> list[float]:
    """:func:`unpie_disamb_acc_bertscore`'s decision with sentence chrF (ours: when BERTScore weights are missing)."""
    return _decisions(items)


@decomposed(mt_overlap.bleu4_from_stats, light=True)
def unpie_bleu4(items: list[dict]) -> list[tuple[int, ...]]:
    """Corpus BLEU-4 ×100 (§3 Task 3, Table 6; Papineni et al. 2002) from each sentence's logged sufficient statistics
    (``bleu_stats``: lengths, n-gram matches and totals), re-summed by the combine, so a bootstrap over docs is
    Koehn's (2004) bootstrap over sentences."""
    return [tuple(it["bleu_stats"]) for it in items]


@decomposed(mt_overlap.meteor_from_scores, light=True)
def unpie_meteor(items: list[dict]) -> list[float]:
    """Mean sentence METEOR ×100 (§3 Task 3, Table 6; Banerjee and Lavie 2005) of the logged ``meteor_score`` values;
    ``meteor`` with WordNet synonyms, ``meteor_exact_stem`` without, never mixed (the items name their matcher)."""
    matchers = {it["meteor_matcher"] for it in items}
    if len(matchers) > 1:
        raise ValueError(f"unpie meteor: items scored with different matchers {sorted(matchers)}")
    return [it["meteor_score"] for it in items]


@decomposed(rate, light=True)
def unpie_mean_correct(items: list[dict]) -> list[float]:
    """Pun grounding exact-match accuracy (§3 Task 1, Table 4): the share of docs whose answer is the pun phrase."""
    return [float(bool(it["correct"])) for it in items]


def unpie_sum(items: list[float]) -> float:
    """A count (``image_unresolved``, ``caption_missing``): the sum of the per-doc 0/1 values."""
    return float(sum(items))


@decomposed(rate)
def unpie_correct(items: list[dict]) -> list[float]:
    """Reconstruction ``correct_custom_judge`` (ours; the paper's Table 6 "Correct" is GPT-4 with an unpublished
    prompt): per doc 1.0 for a "Yes, the same pun" verdict, 0.0 for "No", an unparseable verdict or an empty
    prediction (not sent), NaN for a failed request (left out) or when no judge is configured. The prompts were
    rendered by ``process_results`` (``judge_prompt``); the judge is asked here, in one batch."""
    return judge_correct_per_doc(items, [it["judge_prompt"] for it in items])


def judge_correct_per_doc(items: list[dict], prompts: list[str], judge_many=None) -> list[float]:
    """:func:`unpie_correct`'s statistics: one batched judge call; each asked item gets ``judge_raw`` and
    ``judge_verdict``."""
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


# --- both splits in one task: All = mean of Homo and Hetero ----------------------------------------------------

#: The statistic's first column: the doc's split (0 homographic, 1 heterographic; the order of the paper's tables).
SPLIT_CODES = {"homographic": 0.0, "heterographic": 1.0}


def split_code(item: dict) -> float:
    """The split column of a doc's statistic: its split's code, or NaN for a doc left out of every score (a caption
    task's doc without a caption), which so belongs to no split."""
    return math.nan if item.get("caption_missing") else SPLIT_CODES[item["split"]]


def mean_over_splits(combine):
    """The combine of a both-splits task: ``combine`` on each split's statistics (the columns after the split code),
    then the unweighted mean over the splits that have a doc, summed in the tables' order (Homo, Hetero), as
    lmms-eval's group mean (``weight_by_size: false``) computed it from the two one-split tasks. NaN for no doc.

    >>> import numpy as np
    >>> mean_over_splits(rate)(np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0], [np.nan, 0.0]]))
    0.75
    """

    def combine_all(stats) -> float:
        if len(stats) == 0:
            return math.nan
        values = []
        for code in SPLIT_CODES.values():
            rows = stats[stats[:, 0] == code, 1:]
            if len(rows):
                values.append(float(combine(rows[:, 0] if rows.shape[1] == 1 else rows)))
        return sum(values) / len(values) if values else math.nan

    combine_all.__name__ = combine_all.__qualname__ = f"mean_over_splits_of_{combine.__name__}"
    return combine_all


#: The combines of the ``unpie_all_*`` aggregations (one object each, so the report finds them by identity).
ALL_RATE = mean_over_splits(rate)
ALL_BLEU4 = mean_over_splits(mt_overlap.bleu4_from_stats)
ALL_METEOR = mean_over_splits(mt_overlap.meteor_from_scores)


@decomposed(ALL_RATE, light=True)
def unpie_all_exact_match(items: list[dict]) -> list[tuple[float, float]]:
    """Grounding All (Table 4): :func:`unpie_mean_correct` per split, averaged over the splits."""
    return [(split_code(it), math.nan if it.get("caption_missing") else float(bool(it["correct"]))) for it in items]


@decomposed(ALL_RATE, light=True)
def unpie_all_disamb_acc(items: list[dict]) -> list[tuple[float, float]]:
    """Disambiguation All (Table 5): the per-split share of closer-reference decisions (:func:`unpie_disamb_acc_bertscore`,
    whichever scorer the key names), averaged over the splits; a doc whose image did not resolve is left out."""
    return [(split_code(it), math.nan if it.get("caption_missing") else _decisions([it])[0]) for it in items]


@decomposed(ALL_RATE, light=True)
def unpie_all_pun_word_recovered(items: list[dict]) -> list[tuple[float, float]]:
    """Reconstruction ``pun_word_recovered`` All (ours, offline stand-in for Table 6 Correct): the per-split share of
    predictions containing the pun word (logged per doc as ``pun_word_recovered``), averaged over the splits."""
    return [
        (split_code(it), math.nan if it.get("caption_missing") else float(it["pun_word_recovered"])) for it in items
    ]


@decomposed(ALL_BLEU4, light=True)
def unpie_all_bleu4(items: list[dict]) -> list[tuple[float, ...]]:
    """Reconstruction BLEU-4 All (Table 6): corpus BLEU-4 of each split (:func:`unpie_bleu4`), averaged."""
    return [(split_code(it), *(it.get("bleu_stats") or [math.nan] * 10)) for it in items]


@decomposed(ALL_METEOR, light=True)
def unpie_all_meteor(items: list[dict]) -> list[tuple[float, float]]:
    """Reconstruction METEOR All (Table 6): mean sentence METEOR of each split (:func:`unpie_meteor`), averaged."""
    scored = [it for it in items if not it.get("caption_missing")]
    unpie_meteor.per_doc(scored)  # the matcher check: one matcher for every doc
    return [(split_code(it), it.get("meteor_score", math.nan)) for it in items]


@decomposed(ALL_RATE)
def unpie_all_correct(items: list[dict]) -> list[tuple[float, float]]:
    """Reconstruction ``correct_custom_judge`` All (ours; Table 6 Correct is GPT-4 with an unpublished prompt): the
    judge's per-split share of "same pun" verdicts (:func:`unpie_correct`), averaged over the splits."""
    scored = [it for it in items if not it.get("caption_missing")]
    verdicts = iter(judge_correct_per_doc(scored, [it["judge_prompt"] for it in scored]))
    return [(split_code(it), math.nan if it.get("caption_missing") else next(verdicts)) for it in items]
