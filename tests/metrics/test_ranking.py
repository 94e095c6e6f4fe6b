"""Loglikelihood parsing, ranking direction, R@k / MRR, and parity with the official VD and ITR scorers."""

import json
import math
import os

import pytest

from hanyi.metrics.ranking import (
    itr_recall_official,
    order_by_score,
    parse_loglikelihood,
    rank_of,
    ranking_metrics,
    rerank_query,
    score_from_loglikelihood,
    vd_recall_official,
)

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cvlue", "official_examples.json")


def _fx():
    with open(FIXTURE, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("(-1.5, False)", (-1.5, False)),  # lmms-eval 0.7.3 stringified tuple
        ("(2, True)", (2.0, True)),
        ((0.25, False), (0.25, False)),  # a fixed lmms-eval passes the tuple
        ([0.25, 1], (0.25, True)),
        ("(-inf, False)", (-math.inf, False)),
        (3.0, (3.0, False)),
        ("(nan, False)", None),
        ("garbage", None),
        ("", None),
        (None, None),
        (("a", False), None),
    ],
)
def test_parse_loglikelihood(value, parsed):
    assert parse_loglikelihood(value) == parsed


def test_nll_ranks_lowest_loss_first_and_logprob_highest():
    values = ["(2.0, False)", "(0.5, False)", "(1.0, False)"]
    assert order_by_score([score_from_loglikelihood(v, "nll") for v in values]) == [1, 2, 0]
    assert order_by_score([score_from_loglikelihood(v, "logprob") for v in values]) == [0, 2, 1]


def test_unparsed_scores_sort_last_and_ties_keep_candidate_order():
    assert order_by_score([None, -1.0, -1.0, None, 0.0]) == [4, 1, 2, 0, 3]
    assert rank_of([4, 1, 2, 0, 3], 0) == 4


def test_ranking_metrics_hand_computed():
    got = ranking_metrics([1, 2, 6, 11, None])
    assert got["r1"] == 0.2 and got["r5"] == 0.4 and got["r10"] == 0.6
    assert got["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 6 + 1 / 11) / 5)


def test_parity_vd_with_official_scorer():
    fx = _fx()
    preds = [{"question": x["question"], "answer_sort": x["answer_sort_top10"]} for x in fx["vd"]]
    golds = [{"question": x["question"], "answer": x["answer"]} for x in fx["vd"]]
    got = vd_recall_official(preds, golds)
    assert {k: got[k] for k in ("r1", "r5", "r10")} == fx["expected"]["vd"]


def test_vd_official_rejects_out_of_order_submission():
    with pytest.raises(ValueError, match="out of order"):
        vd_recall_official([{"question": 2, "answer_sort": [1]}], [{"question": 1, "answer": 1}])


@pytest.mark.parametrize("direction", ["i2t", "t2i"])
def test_parity_itr_with_official_scorer(direction):
    fx = _fx()
    got = itr_recall_official(fx["itr"][f"{direction}_submit"], fx["itr"][f"{direction}_gold"])
    assert {k: got[k] for k in ("r1", "r5", "r10")} == fx["expected"][direction]


def test_itr_official_whitespace_fallback_and_missing_gold_is_rank_100():
    assert itr_recall_official({"a b": ["x"]}, {"a,b": ["x"]})["r1"] == 1.0
    assert itr_recall_official({"q": ["y"] * 20}, {"q": ["x"]})["r10"] == 0.0


def test_rerank_gold_outside_shortlist_is_a_miss():
    rows = [{"stage1_rank": 1, "score": -0.1, "is_gold": False}, {"stage1_rank": 2, "score": -0.2, "is_gold": False}]
    assert rerank_query(rows) == {"order": [0, 1], "rank": None, "in_shortlist": False}
