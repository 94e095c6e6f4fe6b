"""Circular evaluation of multiple-choice answers (not in any of the five papers; ``*_circular`` tasks).

CircularEval (Liu et al., "MMBench: Is Your Multi-modal Model an All-around Player?", ECCV 2024, §3.2) asks each
question once per rotation of its options and counts the question as solved only if every rotation is answered
correctly. hanyi uses all N cyclic rotations of N options (MMBench uses the same shifts):

* rotation ``k`` (``k = 0 .. N-1``) shows, at displayed position ``i``, the original option ``(i + k) mod N``;
  rotation 0 is the original order. So a displayed letter ``d`` means the original option ``(index(d) + k) mod N``,
  and an original gold ``g`` is displayed at ``(g - k) mod N``: over the N rotations every gold sits once at every
  position, and a model that always answers one position solves no question.
* multi-label gold (Pun Rebus: a story may belong to several categories): a rotation is correct when the original
  option it maps back to is one of the gold options (the paper's any-one-counts rule, applied per rotation).

Per question (items of one ``qid``, one per rotation): ``circular_acc`` = every rotation correct; ``rotation_acc`` =
share of correct rotations; ``consistency_rate`` = the same original option chosen (and parsed) in every rotation,
right or wrong. Unparsed answers are wrong and inconsistent. All three are fractions in [0, 1].

Also here, for the report (:mod:`hanyi.report.bias`): answered vs gold letter distributions with total variation and
chi-square (position bias), and the seeded bootstrap of the accuracy spread across prompt configurations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hanyi.logs import get_logger

log = get_logger(__name__)


def rotate(options: Sequence, k: int) -> list:
    """The options as displayed in rotation ``k``: position ``i`` shows ``options[(i + k) % N]``.

    >>> rotate(["a", "b", "c", "d"], 1)
    ['b', 'c', 'd', 'a']
    >>> rotate(["a", "b", "c"], 0)
    ['a', 'b', 'c']
    """
    n = len(options)
    return [options[(i + k) % n] for i in range(n)]


def to_original(shown: str | None, k: int, letters: str) -> str | None:
    """The original letter of displayed letter ``shown`` in rotation ``k``; ``None`` when it is not an option letter.

    >>> to_original("A", 1, "ABCD"), to_original("D", 1, "ABCD"), to_original("G", 1, "ABCD"), to_original(None, 0, "AB")
    ('B', 'A', None, None)
    """
    if not isinstance(shown, str) or len(shown) != 1 or shown not in letters:
        return None
    return letters[(letters.index(shown) + k) % len(letters)]


def to_shown(original: str, k: int, letters: str) -> str:
    """The displayed letter of original option ``original`` in rotation ``k`` (inverse of :func:`to_original`).

    >>> [to_shown("B", k, "ABCD") for k in range(4)]
    ['B', 'A', 'D', 'C']
    """
    return letters[(letters.index(original) - k) % len(letters)]


def rotation_item(qid, k: int, n_rotations: int, gold: Sequence[str], shown_pred: str | None, letters: str) -> dict:
    """One rotation's evidence: displayed and original prediction and gold, and the verdict.

    >>> it = rotation_item("q1", 2, 4, ["A"], "C", "ABCD")
    >>> it["pred"], it["gold_shown"], it["correct"]
    ('A', ['C'], True)
    """
    pred = to_original(shown_pred, k, letters)
    return {
        "qid": qid,
        "rotation": k,
        "n_rotations": n_rotations,
        "gold": list(gold),
        "gold_shown": [to_shown(g, k, letters) for g in gold],
        "pred_shown": shown_pred,
        "pred": pred,
        "correct": pred is not None and pred in set(gold),
    }


def group_rotations(items: Sequence[dict]) -> tuple[dict, list]:
    """``({qid: [items, by rotation]}, [incomplete qids])``; a question is complete with all its rotations once each.

    >>> full, partial = group_rotations([rotation_item("a", 0, 2, ["A"], "A", "AB"), rotation_item("b", 0, 2, ["A"], "A", "AB")])
    >>> full, partial
    ({}, ['a', 'b'])
    """
    by_q: dict = {}
    for it in items:
        by_q.setdefault(it["qid"], []).append(it)
    complete, incomplete = {}, []
    for qid, rows in by_q.items():
        if sorted(r["rotation"] for r in rows) == list(range(rows[0]["n_rotations"])):
            complete[qid] = sorted(rows, key=lambda r: r["rotation"])
        else:
            incomplete.append(qid)
    return complete, incomplete


def complete_questions(items: Sequence[dict], warn: bool = False) -> list[list[dict]]:
    """The rotation items of each complete question (:func:`group_rotations`); with ``warn``, one warning counting the
    questions a ``--limit`` cut (they are left out)."""
    complete, incomplete = group_rotations(items)
    if warn and incomplete:
        log.warning(
            "hanyi circular: %d question(s) lack some rotations (--limit?) and are left out; %d scored",
            len(incomplete),
            len(complete),
        )
    return list(complete.values())


def ratio_of_sums(stats):
    """``combine`` for (numerator, denominator) rows: the ratio of their sums; NaN for none (integer counts: exact)."""
    return float(stats[:, 0].sum()) / float(stats[:, 1].sum()) if len(stats) else math.nan


def aggregations(prefix: str) -> dict:
    """The six CircularEval aggregations of a benchmark, decomposed and light (:mod:`hanyi.metrics.resample`), named
    ``<prefix>_circular_acc`` (share of questions right under every rotation), ``<prefix>_rotation_acc`` (share of
    right (question, rotation) answers), ``<prefix>_consistency_rate`` (share of questions whose answers map back to
    one option under every rotation) and their ``_robust`` twins, which see the robust parser's items. A unit is a
    complete question; NaN when there is none.

    >>> aggs = aggregations("toy")
    >>> always_a = [rotation_item("q", k, 3, ["B"], "A", "ABC") for k in range(3)]
    >>> aggs["toy_circular_acc"](always_a), round(aggs["toy_rotation_acc"](always_a), 4), aggs["toy_consistency_rate"](always_a)
    (0.0, 0.3333, 0.0)
    >>> right = [rotation_item("q", k, 3, ["B"], to_shown("B", k, "ABC"), "ABC") for k in range(3)]
    >>> aggs["toy_circular_acc_robust"](right), aggs["toy_consistency_rate_robust"](right)
    (1.0, 1.0)
    """
    from hanyi.metrics.resample import decomposed, rate

    def solved(items, warn=False):
        return [all(r["correct"] for r in rows) for rows in complete_questions(items, warn)]

    def solved_noting_cut_questions(items):
        return solved(items, warn=True)

    def rotations(items):
        return [(sum(bool(r["correct"]) for r in rows), len(rows)) for rows in complete_questions(items)]

    def consistent(items):
        return [len(p := {r["pred"] for r in rows}) == 1 and None not in p for rows in complete_questions(items)]

    table = {
        "circular_acc": (rate, solved_noting_cut_questions),
        "circular_acc_robust": (rate, solved),
        "rotation_acc": (ratio_of_sums, rotations),
        "rotation_acc_robust": (ratio_of_sums, rotations),
        "consistency_rate": (rate, consistent),
        "consistency_rate_robust": (rate, consistent),
    }
    return {f"{prefix}_{m}": decomposed(c, light=True, name=f"{prefix}_{m}")(fn) for m, (c, fn) in table.items()}


def letter_distribution(preds: Sequence[str | None], golds: Sequence[Sequence[str]], letters: str) -> dict:
    """Counts of answered letters (parsed answers only) and of gold letters (a k-label gold adds 1/k to each).

    >>> d = letter_distribution(["A", "A", None], [["A"], ["B", "C"], ["C"]], "ABC")
    >>> d["answered"], d["gold"], d["unparsed"]
    ({'A': 2, 'B': 0, 'C': 0}, {'A': 1.0, 'B': 0.5, 'C': 1.5}, 1)
    """
    answered = dict.fromkeys(letters, 0)
    gold = dict.fromkeys(letters, 0.0)
    unparsed = 0
    for p, g in zip(preds, golds):
        if p in answered:
            answered[p] += 1
        else:
            unparsed += 1
        labels = [x for x in dict.fromkeys(g) if x in gold]
        for x in labels:
            gold[x] += 1 / len(labels)
    return {"answered": answered, "gold": gold, "unparsed": unparsed}


def total_variation(p: dict, q: dict) -> float:
    """Total-variation distance ``0.5 * sum |p_i - q_i|`` between two count tables, each normalised (0 = same).

    >>> total_variation({"A": 3, "B": 1}, {"A": 1, "B": 1})
    0.25
    """
    sp, sq = sum(p.values()), sum(q.values())
    if not sp or not sq:
        return math.nan
    return 0.5 * sum(abs(p[k] / sp - q.get(k, 0) / sq) for k in p)


def chi_square(observed: dict, reference: dict) -> tuple[float, int, float | None]:
    """Pearson goodness-of-fit of the answered letters against the gold-letter shares: ``(chi2, df, p)``.

    Expected count of letter L = (answered total) x (gold share of L); letters with no gold are left out. ``p`` is
    ``None`` when SciPy is absent.

    >>> chi, df, p = chi_square({"A": 30, "B": 10}, {"A": 20, "B": 20})
    >>> chi, df, round(p, 4)
    (10.0, 1, 0.0016)
    """
    n, total_ref = sum(observed.values()), sum(reference.values())
    cells = [(observed.get(k, 0), n * v / total_ref) for k, v in reference.items() if v > 0] if n and total_ref else []
    if len(cells) < 2:
        return math.nan, 0, None
    chi = sum((o - e) ** 2 / e for o, e in cells)
    df = len(cells) - 1
    try:
        from scipy.stats import chi2
    except ImportError:  # pragma: no cover - scipy comes with sentence-transformers
        return chi, df, None
    return chi, df, float(chi2.sf(chi, df))


def bootstrap_spread(correct_by_config: dict[str, dict], iters: int = 1000, seed: int = 0, level: float = 0.95):
    """Min, max and spread (max - min) of accuracy across prompt configurations, with a seeded paired bootstrap CI.

    ``correct_by_config`` maps a configuration to ``{question id: correct (bool)}``. Accuracies are fractions over each
    configuration's own questions. The bootstrap resamples, ``iters`` times with NumPy's ``default_rng(seed)``, the
    question ids shared by every configuration (paired: one draw serves all configurations) and returns the
    ``level`` percentile interval of the spread.

    >>> r = bootstrap_spread({"a": {1: True, 2: True}, "b": {1: False, 2: True}}, iters=200)
    >>> r["min_config"], r["max_config"], r["spread"], r["n_shared"]
    ('b', 'a', 0.5, 2)
    >>> r == bootstrap_spread({"a": {1: True, 2: True}, "b": {1: False, 2: True}}, iters=200)
    True
    """
    import numpy as np

    accs = {c: sum(map(bool, v.values())) / len(v) for c, v in correct_by_config.items() if v}
    if len(accs) < 2:
        raise ValueError("prompt spread needs at least two configurations with scored questions")
    lo_c, hi_c = min(accs, key=accs.get), max(accs, key=accs.get)
    shared = sorted(set.intersection(*(set(v) for v in correct_by_config.values())), key=str)
    out = {"min_config": lo_c, "min": accs[lo_c], "max_config": hi_c, "max": accs[hi_c],
           "spread": accs[hi_c] - accs[lo_c], "n_shared": len(shared), "ci": None, "iters": iters, "seed": seed}  # fmt: skip
    if not shared or iters <= 0:
        return out
    table = np.array([[bool(v[q]) for v in correct_by_config.values()] for q in shared], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(shared), size=(iters, len(shared)))
    means = table[draws].mean(axis=1)  # (iters, configurations)
    spreads = means.max(axis=1) - means.min(axis=1)
    tail = (1 - level) / 2
    out["ci"] = (float(np.quantile(spreads, tail)), float(np.quantile(spreads, 1 - tail)))
    return out
