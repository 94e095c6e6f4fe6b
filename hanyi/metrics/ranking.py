"""Ranking answers and retrieval: loglikelihood values -> scores -> ranks -> R@k, MRR, mean rank.

Used by CVLUE visual dialog (rank 100 candidate answers; Das et al. 2017 generative protocol) and image-text retrieval
(spec §2.1, §2.4, §3 of ``reference/cvlue.md``; official scorers ``evaluation/eval_vd.py`` and ``eval_itr.py`` of
WangYuxuan93/CVLUE @ 47e34aa). Definitions, ranks 1-based:

* R@k = (1/|Q|) sum_q 1[rank_q(gold) <= k];  MRR = (1/|Q|) sum_q 1/rank_q;  MeanRank = (1/|Q|) sum_q rank_q.
* Official ITR: the rank of the *first* gold item in the submitted top-N list; a query whose list holds no gold item
  is a miss; the denominator is the number of submitted queries.

Loglikelihood values: lmms-eval 0.7.3 stringifies ``(value, is_greedy)`` before ``process_results``
(:func:`parse_loglikelihood` undoes it). lmms-eval's ``llava``, ``llava_hf``, ``qwen_vl`` ... return the *mean token
NLL* (a loss, lower is better, >= 0); a backend returning a true log-probability gives values <= 0. Both measure
the distance of the probability from 1 in log space, so :func:`score_from_loglikelihood`'s default ``kind="auto"``
scores ``-|value|``, right for either convention without knowing the backend (``nll`` / ``logprob`` force one).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Mapping, Sequence

LOGLIK_KINDS = ("auto", "nll", "logprob")
_TUPLE_TEXT = re.compile(r"^\(\s*([^,]+?)\s*,\s*(True|False)\s*\)$")
#: The string form of ``(value, is_greedy)`` is short; longer text is garbage and is not handed to ``literal_eval``
#: (which can raise MemoryError/RecursionError on deep or long input).
_TUPLE_TEXT_MAX = 200


def parse_loglikelihood(value) -> tuple[float, bool] | None:
    """``(value, is_greedy)`` from a model output, a real tuple or lmms-eval 0.7.3's string form; ``None`` if garbage.

    >>> parse_loglikelihood("(-1.25, False)")
    (-1.25, False)
    >>> parse_loglikelihood((0.5, True))
    (0.5, True)
    >>> parse_loglikelihood("(inf, False)")
    (inf, False)
    >>> parse_loglikelihood("(nan, False)") is None, parse_loglikelihood("B") is None
    (True, True)
    """
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _TUPLE_TEXT_MAX:
            return None
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            m = _TUPLE_TEXT.match(text)  # repr of inf/-inf is not a literal
            if not m:
                return None
            try:
                value = (float(m.group(1)), m.group(2) == "True")
            except ValueError:
                return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = (value, False)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return None
    try:
        number = float(value[0])
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    return number, bool(value[1])


def score_from_loglikelihood(value, kind: str = "auto") -> float | None:
    """Higher-is-better score of one candidate: ``-value`` for a loss (``nll``), ``value`` for a log-prob.

    ``auto`` (default) scores ``-|value|``: a loss is never negative and a log-probability never positive, so this
    equals ``nll`` on a loss backend and ``logprob`` on a log-prob backend; no per-model setting (or state) needed.

    >>> score_from_loglikelihood("(2.5, False)", "nll"), score_from_loglikelihood("(-2.5, False)", "logprob")
    (-2.5, -2.5)
    >>> score_from_loglikelihood("(2.5, False)"), score_from_loglikelihood("(-2.5, False)")
    (-2.5, -2.5)
    >>> score_from_loglikelihood("oops") is None
    True
    """
    if kind not in LOGLIK_KINDS:
        raise ValueError(f"unknown loglikelihood kind {kind!r}; known: {', '.join(LOGLIK_KINDS)}")
    parsed = parse_loglikelihood(value)
    if parsed is None:
        return None
    if kind == "auto":
        return -abs(parsed[0])
    return -parsed[0] if kind == "nll" else parsed[0]


def order_by_score(scores: Sequence[float | None]) -> list[int]:
    """Candidate indices best first: descending score, ties kept in candidate order, unparsed (``None``) last.

    >>> order_by_score([-2.0, None, -1.0, -2.0])
    [2, 0, 3, 1]
    """
    return sorted(
        range(len(scores)), key=lambda i: (scores[i] is None, -(scores[i] or 0.0) if scores[i] is not None else 0.0)
    )


def rank_of(order: Sequence, gold) -> int:
    """1-based position of ``gold`` in a best-first ``order`` (``len(order) + 1`` when absent).

    >>> rank_of([2, 0, 3, 1], 0), rank_of([2, 0], 7)
    (2, 3)
    """
    for position, item in enumerate(order, 1):
        if item == gold:
            return position
    return len(order) + 1


def first_gold_rank(order: Sequence, golds: Iterable) -> int | None:
    """1-based rank of the first item of ``order`` that is in ``golds``; ``None`` when none is (a miss).

    >>> first_gold_rank(["c", "a", "b"], {"a", "b"}), first_gold_rank(["c"], {"a"})
    (2, None)
    """
    gold_set = set(golds)
    for position, item in enumerate(order, 1):
        if item in gold_set:
            return position
    return None


def hit_at(rank: int | None, k: int) -> bool:
    """Whether a 1-based ``rank`` is within the top ``k``; ``None`` (gold not retrieved) is a miss. R@k is the mean
    of these over queries (:func:`ranking_metrics`).

    >>> hit_at(3, 5), hit_at(6, 5), hit_at(None, 10)
    (True, False, False)
    """
    return rank is not None and rank <= k


def ranking_metrics(ranks: Sequence[int | None], ks: Sequence[int] = (1, 5, 10)) -> dict:
    """R@k, MRR and mean rank over 1-based ranks; ``None`` (gold not retrieved) counts as a miss for every k.

    ``mean_rank`` and ``mrr`` are over all queries, a miss counting rank ``inf`` (reciprocal 0); ``mean_rank`` is
    then ``inf``, so callers that can miss should report R@k and MRR only.

    >>> ranking_metrics([1, 3, 7, 12])
    {'r1': 0.25, 'r5': 0.5, 'r10': 0.75, 'mrr': 0.38988095238095233, 'mean_rank': 5.75}
    """
    n = len(ranks)
    if n == 0:
        return {**{f"r{k}": 0.0 for k in ks}, "mrr": 0.0, "mean_rank": 0.0}
    out = {f"r{k}": sum(1 for r in ranks if hit_at(r, k)) / n for k in ks}
    out["mrr"] = sum(1.0 / r for r in ranks if r is not None) / n
    out["mean_rank"] = sum(r if r is not None else math.inf for r in ranks) / n
    return out


def vd_recall_official(predictions: Sequence[Mapping], golds: Sequence[Mapping]) -> dict:
    """The official VD scorer (``eval_vd.py``): top-10 of each ``answer_sort`` vs the gold ``answer`` id.

    ``predictions`` and ``golds`` are paired by position (the official merge asserts equal ``question`` ids).

    >>> vd_recall_official([{"question": 1, "answer_sort": [5, 9]}], [{"question": 1, "answer": 9}])
    {'n': 1, 'r1': 0.0, 'r5': 1.0, 'r10': 1.0}
    """
    hits = {1: 0, 5: 0, 10: 0}
    for pred, gold in zip(predictions, golds, strict=True):
        if pred["question"] != gold["question"]:
            raise ValueError(f"VD submission out of order: question {pred['question']} vs gold {gold['question']}")
        top = list(pred["answer_sort"])[:10]
        for k in hits:
            hits[k] += gold["answer"] in top[:k]
    n = len(golds)
    return {"n": n, **{f"r{k}": hits[k] / n if n else 0.0 for k in hits}}


def itr_recall_official(submission: Mapping[str, Sequence[str]], gold: Mapping[str, Iterable[str]]) -> dict:
    """The official ITR scorer (``eval_itr.py``) for one direction: ``{query: top-N list}`` vs ``{query: golds}``.

    Rank = position of the first gold item (0-based ``pre_rank``, 100 when none is listed); R@k counts
    ``pre_rank < k``; the denominator is the number of submitted queries. A query missing from ``gold`` is retried
    with its whitespace runs replaced by ``,`` (the official fallback); still missing raises ``KeyError``.

    >>> itr_recall_official({"q": ["x", "y"]}, {"q": ["y"]})
    {'n': 1, 'r1': 0.0, 'r5': 1.0, 'r10': 1.0}
    """
    hits = {1: 0, 5: 0, 10: 0}
    for query, ranked in submission.items():
        key = query if query in gold else ",".join(query.split())
        golds = set(gold[key])
        pre_rank = next((i for i, item in enumerate(ranked) if item in golds), 100)
        for k in hits:
            hits[k] += pre_rank < k
    n = len(submission)
    return {"n": n, **{f"r{k}": hits[k] / n if n else 0.0 for k in hits}}


def rerank_query(candidates: Sequence[Mapping]) -> dict:
    """Stage-2 re-rank of one query's shortlist: ``candidates`` rows with ``stage1_rank``, ``score``, ``is_gold``.

    Order = descending VLM score (unparsed last), ties by stage-1 rank. Returns the best-first ``order`` (indices
    into ``candidates``), the rank of the first gold (``None`` if the shortlist holds no gold: a miss, the stage-1
    ceiling), and ``in_shortlist``.

    >>> rerank_query([{"stage1_rank": 1, "score": -3.0, "is_gold": False}, {"stage1_rank": 2, "score": -1.0, "is_gold": True}])
    {'order': [1, 0], 'rank': 1, 'in_shortlist': True}
    """
    rows = sorted(range(len(candidates)), key=lambda i: candidates[i]["stage1_rank"])
    scores = [candidates[i]["score"] for i in rows]
    order = [rows[j] for j in order_by_score(scores)]
    rank = first_gold_rank(order, [i for i, c in enumerate(candidates) if c["is_gold"]])
    return {"order": order, "rank": rank, "in_shortlist": any(c["is_gold"] for c in candidates)}


def itr_queries(items: list) -> list[dict]:
    """One re-ranked row per ITR query (sorted by query): ``rank``, ``in_shortlist``, ``category``, ``culture_group``.

    A query the stage-1 shortlist does not cover has only a placeholder row (``stage1_rank`` < 1, see
    ``hanyi.data.cvlue.itr_rerank_rows``): it has no candidate, so ``rank`` is None (a miss) and ``in_shortlist`` is
    False, and it stays in every denominator.
    """
    queries: dict[str, list] = {}
    for it in items:
        queries.setdefault(it["query"], []).append(it)
    return [
        {
            **rerank_query([r for r in rows if r["stage1_rank"] >= 1]),
            "category": rows[0]["category"],
            "culture_group": rows[0]["culture_group"],
        }
        for _, rows in sorted(queries.items())
    ]
