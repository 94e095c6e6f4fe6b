"""UNPIE breakdowns computed by ``hanyi report`` from the sample log (:mod:`hanyi.metrics.from_samples`).

The tasks that score both splits (``unpie_grounding``, ``unpie_disambiguation_<lang>``, ``unpie_reconstruction_<lang>``
and their ``_sm`` / ``_text`` twins) emit the paper's All (the unweighted mean of Homo and Hetero, §4) of their
table's columns and the ``_robust`` twins. Each logged item names its doc's split (``category``) and holds the doc's
diagnostics, so the report computes, with the arithmetic of the one-split tasks (the same values, bit for bit):

* ``<metric>_homo`` / ``<metric>_hetero``: every metric's value on one split, as ``unpie_<...>_homo`` /
  ``unpie_<...>_hetero`` emitted it (Tables 4-6 print Homo and Hetero beside All);
* the diagnostics, under the names the one-split tasks emit: ``answer_rate``, ``exact_match_strict``,
  ``exact_match_lenient`` (grounding), ``image_unresolved`` (VLM disambiguation), ``caption_missing`` (caption
  tasks), each with its ``_homo`` / ``_hetero`` values. A rate's All is the mean of its two split values (what the
  groups of the two one-split tasks gave); a count's All is the sum;
* ``pun_word_recovered`` (and ``_robust``) on a run that emitted ``correct_custom_judge`` instead.

A caption task's doc without a caption (``caption_missing``) is left out of every score, as in the one-split tasks;
a split none of whose docs is scored (a ``--limit`` run) has NaN (its one-split task emitted nothing).
"""

from __future__ import annotations

import math

from hanyi.metrics.from_samples import breakdown
from hanyi.metrics.resample import decomposed
from hanyi.metrics.unpie_aggregations import (
    SPLIT_CODES,
    unpie_bleu4,
    unpie_bleu4_all,
    unpie_correct,
    unpie_correct_all,
    unpie_disamb_acc_all,
    unpie_disamb_acc_bertscore,
    unpie_mean_correct,
    unpie_mean_correct_all,
    unpie_meteor,
    unpie_meteor_all,
    unpie_word_recovered,
    unpie_word_recovered_all,
)

#: Split -> metric-name suffix, in the order of the paper's tables.
SUFFIX = {"homographic": "homo", "heterographic": "hetero"}
COUNTS = ("image_unresolved", "caption_missing")
GROUNDING = r"unpie_grounding(_sm|_text)?"
DISAMBIGUATION = r"unpie_disambiguation(_sm)?_(de|fr|ko)"
RECONSTRUCTION = r"unpie_reconstruction(_sm|_text)?_(de|fr|ko)"
#: The disambiguation key a run emits: the paper's BERTScore decision, or a fallback that replaces it.
DISAMB_KEYS = ("disamb_acc_bertscore", "disamb_acc_custom_model", "disamb_acc_chrf")
LOWER_IS_BETTER = [f"{c}{s}" for c in COUNTS for s in ("", "_homo", "_hetero")]
#: One-split aggregation -> the both-splits tasks' aggregation built from it (its per-doc statistics lead with the split).
ALL_SPLITS = {
    unpie_mean_correct: unpie_mean_correct_all,
    unpie_disamb_acc_bertscore: unpie_disamb_acc_all,
    unpie_bleu4: unpie_bleu4_all,
    unpie_meteor: unpie_meteor_all,
    unpie_word_recovered: unpie_word_recovered_all,
    unpie_correct: unpie_correct_all,
}


def one_split(agg, split: str):
    """``agg`` (a one-split aggregation) on the docs of one ``split`` of a both-splits task's items (a
    ``<metric>_homo`` / ``_hetero`` value), decomposed so that the report gives it an interval: the split-tagged
    statistics of the task's own aggregation (:func:`~hanyi.metrics.unpie_aggregations.all_splits`), of which the
    combine keeps the split's rows; NaN when the split has no scored doc."""
    code = SPLIT_CODES[split]

    def combine(stats) -> float:
        rows = stats[stats[:, 0] == code, 1:] if len(stats) else stats
        if not len(rows):
            return math.nan
        return float(agg.combine(rows[:, 0] if rows.shape[1] == 1 else rows))

    def doc_values(items: list[dict]) -> list[float]:
        """Per item, its doc's statistic on this split: NaN for a doc of the other split, one without a caption, or
        a statistic that is not one number (BLEU's counts). The report's paired comparison of two runs reads it."""
        out = []
        for it in items:
            stat = agg.per_doc([it])[0] if it["category"] == split and not it.get("caption_missing") else math.nan
            out.append(math.nan if isinstance(stat, tuple) else float(stat))
        return out

    name = f"{agg.__name__}_{SUFFIX[split]}"
    aggregate = decomposed(combine, light=agg.light, name=name)(ALL_SPLITS[agg].per_doc)
    aggregate.doc_values = doc_values
    return aggregate


def _split_intervals(metrics: dict) -> dict:
    """``{<name>_<suffix>: the one-split aggregation}`` for every ``name: aggregation`` and both splits: the report's
    intervals of the Homo / Hetero values (:func:`hanyi.metrics.unpie_aggregations.one_split`)."""
    return {
        f"{name}_{suffix}": one_split(agg, split) for name, agg in metrics.items() for split, suffix in SUFFIX.items()
    }


def _mean(values: list[float]) -> float:
    """lmms-eval's ``mean`` (``sum(arr) / len(arr)``, left to right): a one-split task's mean of per-doc floats, and
    a group's unweighted mean of its tasks' values (``(homo * 1 + hetero * 1) / 2``)."""
    return sum(values) / len(values)


def _by_split(items: list[dict]) -> dict[str, list[dict]]:
    """``{suffix: items of that split}`` for the splits that have a doc, in table order."""
    out: dict[str, list[dict]] = {}
    for split, suffix in SUFFIX.items():
        rows = [it for it in items if it["category"] == split]
        if rows:
            out[suffix] = rows
    return out


def _per_split(items: list[dict], metrics: dict) -> dict:
    """``{<name>_<suffix>: fn(scored items of the split)}`` for every ``name: fn`` of ``metrics`` and both splits, over
    the docs that were scored (not ``caption_missing``); NaN for a split with none."""
    out = {}
    groups = _by_split(items)
    for suffix in SUFFIX.values():
        scored = [it for it in groups.get(suffix, []) if not it.get("caption_missing")]
        out |= {f"{name}_{suffix}": fn(scored) if scored else math.nan for name, fn in metrics.items()}
    return out


def _all_of(out: dict, names) -> dict:
    """The All of each rate in ``names`` (never NaN on a scored split): the mean of its values on the splits scored,
    NaN for none."""
    found = {}
    for name in names:
        values = [out[f"{name}_{suffix}"] for suffix in SUFFIX.values()]
        values = [v for v in values if not math.isnan(v)]
        found[name] = _mean(values) if values else math.nan
    return found


def _counts(items: list[dict], field: str, per_doc) -> dict:
    """A count (``image_unresolved``, ``caption_missing``) per split and in all (a sum of per-doc 0/1 values, as the
    one-split tasks' ``unpie_sum``), over the docs whose items carry it."""
    out = {}
    for suffix, rows in _by_split(items).items():
        out[f"{field}_{suffix}"] = float(sum(per_doc(it) for it in rows))
    if out:
        out[field] = float(sum(out.values()))
    return out


def _answered(items: list[dict]) -> float:
    return _mean([float(bool(it["prediction"])) for it in items])


def _captions(items: list[dict]) -> dict:
    """``caption_missing`` of a caption task (its items carry the flag); nothing for the others."""
    if not all("caption_missing" in it for it in items):
        return {}
    return _counts(items, "caption_missing", lambda it: float(it["caption_missing"]))


@breakdown(
    GROUNDING,
    "exact_match",
    lower_is_better=LOWER_IS_BETTER,
    intervals=_split_intervals({"exact_match": unpie_mean_correct}),
)
def grounding(items: list[dict]) -> dict:
    """Per split: ``exact_match``, ``answer_rate``, ``exact_match_strict``, ``exact_match_lenient``; the All of the
    three diagnostics; ``caption_missing`` (caption task)."""
    out = _per_split(
        items,
        {
            "exact_match": unpie_mean_correct,
            "answer_rate": _answered,
            "exact_match_strict": lambda rows: _mean([it["exact_match_strict"] for it in rows]),
            "exact_match_lenient": lambda rows: _mean([it["exact_match_lenient"] for it in rows]),
        },
    )
    return out | _all_of(out, ("answer_rate", "exact_match_strict", "exact_match_lenient")) | _captions(items)


@breakdown(GROUNDING, "exact_match_robust", intervals=_split_intervals({"exact_match_robust": unpie_mean_correct}))
def grounding_robust(items: list[dict]) -> dict:
    return _per_split(items, {"exact_match_robust": unpie_mean_correct})


def _disambiguation(name: str):
    def paper(items: list[dict]) -> dict:
        """Per split: the decision's accuracy, ``answer_rate``; ``image_unresolved`` (VLM task) or
        ``caption_missing`` (caption task), per split and in all."""
        out = _per_split(items, {name: unpie_disamb_acc_bertscore, "answer_rate": _answered})
        out |= _all_of(out, ("answer_rate",)) | _captions(items)
        if not any("caption_missing" in it for it in items):
            out |= _counts(items, "image_unresolved", lambda it: float(not it["image_ok"]))
        return out

    def robust(items: list[dict]) -> dict:
        return _per_split(items, {f"{name}_robust": unpie_disamb_acc_bertscore})

    decision = unpie_disamb_acc_bertscore  # any scorer's logged decisions
    breakdown(DISAMBIGUATION, name, lower_is_better=LOWER_IS_BETTER, intervals=_split_intervals({name: decision}))(
        paper
    )
    breakdown(DISAMBIGUATION, f"{name}_robust", intervals=_split_intervals({f"{name}_robust": decision}))(robust)


for _name in DISAMB_KEYS:
    _disambiguation(_name)


def _meteor_name(items: list[dict]) -> str:
    """``meteor`` (WordNet synonyms) or its fallback ``meteor_exact_stem``, as the items' matcher says."""
    matchers = {it["meteor_matcher"] for it in items if not it.get("caption_missing")}
    return "meteor_exact_stem" if matchers - {"exact+stem+wordnet"} else "meteor"


def _reconstruction(items: list[dict], suffix: str = "") -> dict:
    meteor = _meteor_name(items)
    metrics = {
        f"bleu4{suffix}": unpie_bleu4,
        f"{meteor}{suffix}": unpie_meteor,
        f"pun_word_recovered{suffix}": lambda rows: _mean([it["pun_word_recovered"] for it in rows]),
    }
    if not suffix:
        metrics["answer_rate"] = _answered
    out = _per_split(items, metrics)
    return out | _all_of(out, [name for name in metrics if name.startswith(("pun_word", "answer_rate"))])


def _reconstruction_intervals(suffix: str = "") -> dict:
    return _split_intervals(
        {
            f"bleu4{suffix}": unpie_bleu4,
            f"meteor{suffix}": unpie_meteor,
            f"meteor_exact_stem{suffix}": unpie_meteor,
            f"pun_word_recovered{suffix}": unpie_word_recovered,
        }
    )


@breakdown(RECONSTRUCTION, "bleu4", lower_is_better=LOWER_IS_BETTER, intervals=_reconstruction_intervals())
def reconstruction(items: list[dict]) -> dict:
    """Per split: ``bleu4``, ``meteor`` (or ``meteor_exact_stem``), ``pun_word_recovered``, ``answer_rate``; the All
    of the last two; ``caption_missing`` (caption task)."""
    return _reconstruction(items) | _captions(items)


@breakdown(RECONSTRUCTION, "bleu4_robust", intervals=_reconstruction_intervals("_robust"))
def reconstruction_robust(items: list[dict]) -> dict:
    return _reconstruction(items, "_robust")


@breakdown(RECONSTRUCTION, "correct_custom_judge", intervals=_split_intervals({"correct_custom_judge": unpie_correct}))
def judge(items: list[dict]) -> dict:
    """Per split: the judge's ``correct_custom_judge`` from each doc's logged ``judge_score`` (1 same pun, 0 not, NaN
    for a failed request, left out): the share over the docs judged."""

    def share(rows: list[dict]) -> float:
        kept = [it["judge_score"] for it in rows if it["judge_score"] == it["judge_score"]]  # NaN != NaN
        return sum(kept) / len(kept) if kept else float("nan")

    return _per_split(items, {"correct_custom_judge": share})
