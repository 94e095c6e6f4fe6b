"""The closer-reference decision (UNPIE disambiguation): injected scorers, chrF, and real BERTScore on a tiny model."""

import importlib.util
import os

import pytest

from hanyi.metrics import reference_choice as rc

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "unpie")


def _tiny_bert_module():
    spec = importlib.util.spec_from_file_location("unpie_tiny_bert", os.path.join(FIXTURES, "tiny_bert.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    module = _tiny_bert_module()
    return module.build_tiny_bert(str(tmp_path_factory.mktemp("tiny_bert"))), module.NUM_LAYERS


class CountingScorer:
    """Similarity = a fixed table lookup; counts calls to prove batching."""

    def __init__(self, table):
        self.table, self.calls = table, []

    def __call__(self, cands, refs):
        self.calls.append(len(cands))
        return [self.table[c, r] for c, r in zip(cands, refs)]


@pytest.mark.parametrize(
    "target, distractor, correct",
    [
        (0.9, 0.1, True),
        (0.50001, 0.5, True),
        (0.5, 0.5, False),
        (0.1, 0.9, False),
        (None, 0.1, False),
        (0.9, None, False),
    ],
)
def test_decision_is_strict_so_ties_are_wrong(target, distractor, correct):
    assert rc.closer_to_target(target, distractor) is correct


def test_decide_scores_all_pairs_in_one_call_and_skips_empty_predictions():
    table = {
        ("p1", "t1"): 0.8,
        ("p1", "d1"): 0.7,
        ("p2", "t2"): 0.3,
        ("p2", "d2"): 0.6,
        ("p3", "t3"): 0.5,
        ("p3", "d3"): 0.5,
    }
    scorer = CountingScorer(table)
    out = rc.decide(["p1", "p2", "p3", "  "], ["t1", "t2", "t3", "t4"], ["d1", "d2", "d3", "d4"], scorer)
    assert [d["correct"] for d in out] == [True, False, False, False]
    assert scorer.calls == [6]  # one batch: 3 non-empty predictions x (target, distractor)
    assert out[3] == {"target_score": None, "distractor_score": None, "correct": False}
    assert out[0]["target_score"] == 0.8 and out[0]["distractor_score"] == 0.7


def test_identical_references_are_always_a_tie():
    out = rc.decide(["Mit einem Traktor."], ["Mit einem Traktor."], ["Mit einem Traktor."], rc.chrf_scores)
    assert out[0]["correct"] is False


def test_chrf_fallback_decides_by_characters_including_korean():
    preds = ["Wie machen Bauern Kornkreise? Mit einem Traktor.", "농부들은 어떻게 농작물 원을 만드나요? 트랙터로."]
    targets = ["Wie machen Bauern Kornkreise? Mit einem Traktor.", "농부들은 어떻게 농작물 원을 만드나요? 트랙터로."]
    distractors = [
        "Wie machen Bauern Kornkreise? Mit einem Winkelmesser.",
        "농부들은 어떻게 농작물 원을 만드는가? 각도계를 이용하여.",
    ]
    assert [d["correct"] for d in rc.decide(preds, targets, distractors, rc.chrf_scores)] == [True, True]
    swapped = rc.decide(preds, distractors, targets, rc.chrf_scores)
    assert [d["correct"] for d in swapped] == [False, False]


def test_unavailable_bertscore_model_raises_scorer_unavailable(tmp_path):
    with pytest.raises(rc.ScorerUnavailable, match="cannot load BERTScore model"):
        rc.bertscore_f1_scorer(str(tmp_path / "no-such-model"), 2)


def test_real_bertscore_on_tiny_local_model_batched_equals_per_doc(tiny_bert):
    path, layers = tiny_bert
    scorer = rc.bertscore_f1_scorer(path, layers)
    assert rc._load_bertscorer.cache_info().currsize >= 1
    assert rc.bertscore_f1_scorer(path, layers) is not scorer  # new closure ...
    assert rc.load_bertscorer(path, layers) is rc.load_bertscorer(path, layers)  # ... over one loaded model
    preds = ["Mit einem Traktor.", "Er und sein Partner stellten Messer her.", "Avec un tracteur."]
    targets = ["Mit einem Traktor.", "Er und sein Partner stellten Messer her.", "Avec un rapporteur."]
    distractors = ["Mit einem Winkelmesser.", "Er und sein Partner teilten.", "Avec un tracteur."]
    batched = rc.decide(preds, targets, distractors, scorer)
    per_doc = [rc.decide([p], [t], [d], scorer)[0] for p, t, d in zip(preds, targets, distractors)]
    assert [d["correct"] for d in batched] == [True, True, False]  # identical text has F1 = 1, the maximum
    assert [d["correct"] for d in per_doc] == [d["correct"] for d in batched]
    for b, p in zip(batched, per_doc):
        assert b["target_score"] == pytest.approx(p["target_score"], abs=1e-5)
    assert batched[0]["target_score"] == pytest.approx(1.0, abs=1e-5)


def test_repeated_pairs_are_scored_once_with_the_same_decisions():
    """at full size replayed/real answers repeat; each distinct (candidate, reference) pair is scored once."""
    table = {("p", "t"): 0.8, ("p", "d"): 0.2, ("q", "t"): 0.1, ("q", "d"): 0.4}
    scorer = CountingScorer(table)
    preds, targets, distractors = ["p", "q", "p", "p", "q"], ["t"] * 5, ["d"] * 5
    out = rc.decide(preds, targets, distractors, scorer)
    assert scorer.calls == [4]  # 4 distinct pairs, not 10
    assert [d["correct"] for d in out] == [True, False, True, True, False]
    assert [d["target_score"] for d in out] == [0.8, 0.1, 0.8, 0.8, 0.1]
    assert [d["distractor_score"] for d in out] == [0.2, 0.4, 0.2, 0.2, 0.4]


def test_per_doc_bertscore_from_four_threads_equals_one_thread(tiny_bert):
    """lmms-eval runs process_results in threads (--process_docs_parallel, 4 by default): scoring is serialised, so
    every doc gets the score it gets alone and no shared tokenizer fails."""
    from concurrent.futures import ThreadPoolExecutor

    path, layers = tiny_bert
    scorer = rc.bertscore_f1_scorer(path, layers)
    pairs = [([f"ein Satz Nummer {i}", "Zug"], [f"ein Satz {i}", "Gecko"]) for i in range(24)]
    alone = [scorer(c, r) for c, r in pairs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda pair: scorer(*pair), pairs))
    assert together == alone
