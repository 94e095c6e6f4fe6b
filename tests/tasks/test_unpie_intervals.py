"""UNPIE aggregations split into per-doc statistics + a combine: equal, bit for bit, to the former
aggregations; per_doc once per items list (no second judge pass); a finite bootstrap interval. Since 0.7 each doc is
scored in ``process_results`` (``utils._overlap_item``, ``scoring.decisions``) and the aggregations combine the logged
numbers: the items here are built that way."""

import math
import os
import random

import pytest
import sacrebleu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hanyi.data import unpie as data
from hanyi.data.sources import SAMPLE_DIR
from hanyi.metrics import mt_overlap, resample
from hanyi.metrics import reference_choice as rc
from hanyi.metrics.judge import JudgeResult
from hanyi.tasks.unpie import scoring, utils

WORDS = ["the", "a", "cat", "sat", "on", "mat", "pun", "Pun", "knives", "cut", ",", ".", "?", "don't", "42", "é"]


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def _interval(agg, items):
    stats = resample.as_array(agg.per_doc(items))
    assert _same(agg.combine(stats), agg(items))
    out = resample.bootstrap(agg.combine, stats, iters=300)
    assert out["ci_low"] is not None and math.isfinite(out["ci_low"]) and math.isfinite(out["ci_high"])
    assert out["ci_low"] <= out["value"] <= out["ci_high"] and out["stderr"] >= 0
    return out


@pytest.fixture(scope="module")
def sample_docs():
    """Disambiguation and reconstruction docs of the shipped sample (every language, both splits)."""
    import datasets

    root = os.path.join(SAMPLE_DIR, "unpie")
    rows = {s: datasets.load_dataset(root, split=s) for s in data.SPLITS}
    out = {"disambiguation": [], "reconstruction": []}
    for kind in out:
        for lang in ("de", "fr", "ko"):
            for split in data.SPLITS:
                out[kind] += data.expand_rows(rows[split], kind, split, lang)[0]
    return out


# The aggregations as they were before the decomposition (0.2.0), kept here as the references the decomposed ones
# must equal bit for bit.
def _former_meteor(items):
    use_wordnet = "exact+stem+wordnet" in {it["meteor_matcher"] for it in items}
    return mt_overlap.mean_meteor([it["prediction"] for it in items], [it["reference"] for it in items], use_wordnet)


def _former_disambiguation_accuracy(items, scorer):
    scored = [it for it in items if it["image_ok"]]
    decisions = rc.decide(
        [it["prediction"] for it in scored],
        [it["target"] for it in scored],
        [it["distractor"] for it in scored],
        scorer,
    )
    return sum(d["correct"] for d in decisions) / len(decisions) if decisions else math.nan


def _former_judge_correct(items, prompts, judge_many):
    from hanyi.metrics.judge import parse_yes_no

    asked = [i for i, it in enumerate(items) if it["prediction"].strip()]
    verdicts, failed = [False] * len(items), [False] * len(items)
    for i, res in zip(asked, judge_many([prompts[i] for i in asked], parse=parse_yes_no)):
        verdicts[i], failed[i] = res.value, res.request_failed
    kept = [v for v, f in zip(verdicts, failed) if not f]  # failed requests left out, unparseable ones count 0
    return sum(v is True for v in kept) / len(kept) if kept else math.nan


def _overlap(prediction, reference):
    """A reconstruction item as ``process_results`` logs it (BLEU statistics, sentence METEOR)."""
    return utils._overlap_item({"prediction": prediction}, reference)


def _sentence(rng, n_max=12):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, n_max)))


corpora = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora)
def test_bleu4_from_sentence_statistics_equals_sacrebleu_corpus_bleu(pairs):
    items = [_overlap(h, r) for h, r in pairs]
    expected = sacrebleu.corpus_bleu([h for h, _ in pairs], [[r for _, r in pairs]]).score if pairs else 0.0
    assert utils.unpie_bleu4(items) == expected == mt_overlap.corpus_bleu4([h for h, _ in pairs], [r for _, r in pairs])


def test_bleu4_edge_cases_and_interval(sample_docs):
    assert utils.unpie_bleu4([]) == 0.0 and utils.unpie_bleu4.per_doc([]) == []
    empty = [_overlap("", "He and his partner made knives.")] * 3
    assert utils.unpie_bleu4(empty) == sacrebleu.corpus_bleu(["", "", ""], [[empty[0]["reference"]] * 3]).score == 0.0
    rng = random.Random(7)
    items = []
    for d in sample_docs["reconstruction"]:
        words = d["target"].split()
        keep = [w for w in words if rng.random() < 0.7]
        items.append(_overlap(rng.choice([" ".join(keep), d["target"], "", " ".join(words[::-1])]), d["target"]))
    hyps, refs = [it["prediction"] for it in items], [it["reference"] for it in items]
    assert utils.unpie_bleu4(items) == sacrebleu.corpus_bleu(hyps, [refs]).score
    stats = utils.unpie_bleu4.per_doc(items)
    assert len(stats) == len(items) and all(len(s) == len(mt_overlap.BLEU_STATS) for s in stats)
    assert [sum(col) for col in zip(*stats)][:2] == [
        sacrebleu.corpus_bleu(hyps, [refs]).sys_len,
        sacrebleu.corpus_bleu(hyps, [refs]).ref_len,
    ]
    out = _interval(utils.unpie_bleu4, items)
    assert out["ci_high"] - out["ci_low"] > 1.0  # 36 sentences of mixed quality: a real spread


@pytest.mark.parametrize("matcher", ["exact+stem", "exact+stem+wordnet"])
def test_meteor_per_sentence_mean_equals_the_former_aggregation(sample_docs, matcher):
    rng = random.Random(3)
    items = []
    for d in sample_docs["reconstruction"]:
        pred = rng.choice([d["target"], _sentence(rng), "", d["target"].lower()[: rng.randint(1, 30)]])
        score = mt_overlap.sentence_meteor(pred, d["target"], matcher == "exact+stem+wordnet")  # as process_results
        items.append({"prediction": pred, "reference": d["target"], "meteor_matcher": matcher, "meteor_score": score})
    assert utils.unpie_meteor(items) == _former_meteor(items)
    assert utils.unpie_meteor([]) == _former_meteor([]) == 0.0
    _interval(utils.unpie_meteor, items)
    with pytest.raises(ValueError, match="different matchers"):
        utils.unpie_meteor.per_doc([*items[:2], {**items[2], "meteor_matcher": "other"}])


def _disamb_items(docs, seed, name="disamb_acc_chrf"):
    """Items as ``process_results`` logs them: each doc's decision made on its own pairs (``scoring.decisions``)."""
    rng = random.Random(seed)
    items = []
    for d in docs:
        pred = rng.choice([d["target"], d["distractor"], "", d["target"][: len(d["target"]) // 2]])
        item = {"prediction": pred, "target": d["target"], "distractor": d["distractor"],
                "image_ok": d["image_status"] == data.IMAGE_OK}  # fmt: skip
        if item["image_ok"]:
            item.update(scoring.decisions([pred], d["target"], d["distractor"], name)[0])
        items.append(item)
    return items


def test_disambiguation_accuracy_per_doc_equals_former_and_scores_nothing(sample_docs, monkeypatch):
    chrf = rc.chrf_scores
    items = _disamb_items(sample_docs["disambiguation"], 11)
    unresolved = sum(not it["image_ok"] for it in items)
    assert unresolved >= 1 and len(items) - unresolved >= 20  # the sample has an unresolved image per language
    former = _former_disambiguation_accuracy([dict(it) for it in items], chrf)  # one batch: chrF is per pair
    monkeypatch.setattr(rc, "chrf_scores", lambda *a: pytest.fail("the aggregation scored"))
    agg = utils.unpie_disamb_acc_chrf
    assert agg(items) == former
    stats = agg.per_doc(items)
    assert [math.isnan(s) for s in stats] == [not it["image_ok"] for it in items]
    expected = [float(it["correct"]) for it in items if it["image_ok"]]  # each doc's logged decision
    assert [s for s in stats if not math.isnan(s)] == expected
    assert former == sum(expected) / len(expected)
    assert agg.combine is resample.rate
    _interval(agg, items)
    assert math.isnan(agg([{**it, "image_ok": False} for it in items]))  # nothing scored: NaN, as before


def test_bertscore_aggregations_keep_their_name_and_decision(sample_docs, monkeypatch):
    monkeypatch.setattr(scoring, "bertscore_scorer", lambda: rc.chrf_scores)  # any pair scorer: the plumbing
    for agg, name in ((utils.unpie_disamb_acc_bertscore, "disamb_acc_bertscore"),
                      (utils.unpie_disamb_acc_custom_model, "disamb_acc_custom_model")):  # fmt: skip
        items = _disamb_items(sample_docs["disambiguation"], 5, name)
        assert agg.__name__ == f"unpie_{name}" and resample.by_name(agg.__name__) is agg
        assert agg(items) == _former_disambiguation_accuracy([dict(it) for it in items], rc.chrf_scores)
    monkeypatch.setattr(scoring, "bertscore_scorer", lambda: None)
    with pytest.raises(RuntimeError, match="unavailable"):
        _disamb_items(sample_docs["disambiguation"], 5, "disamb_acc_bertscore")


def test_grounding_exact_match_rate():
    items = [{"correct": c} for c in [True, False, True, True, False, True, True]]
    assert utils.unpie_mean_correct(items) == sum(it["correct"] for it in items) / len(items)
    assert math.isnan(utils.unpie_mean_correct([]))
    _interval(utils.unpie_mean_correct, items)


class _FakeJudge:
    """Yes/No by a marker in the prompt; "FAIL" makes the request fail, "MAYBE" an unparseable answer."""

    def __init__(self):
        self.calls = 0

    def judge_many(self, prompts, parse):
        self.calls += 1
        out = []
        for i, p in enumerate(prompts):
            if "FAIL" in p:
                out.append(JudgeResult(str(i), None, None, "request_failed: HTTP 503", False))
            elif "MAYBE" in p:
                out.append(JudgeResult(str(i), "Maybe", None, "parse_failure", False))
            else:
                out.append(JudgeResult(str(i), "Yes" if "GOOD" in p else "No", "GOOD" in p, None, False))
        return out


def test_judge_is_asked_per_doc_and_the_aggregation_equals_the_former_batch_without_asking(sample_docs, monkeypatch):
    """Since reconstruction 0.8 the judge is asked in ``process_results``, one doc at a time
    (``scoring.judge_same_pun``), and its verdict logged; ``unpie_correct`` combines the logged scores: the former
    batch aggregation's value, with no judge call."""
    import hanyi.metrics.judge as judge

    fake = _FakeJudge()
    monkeypatch.setattr(judge, "get_judge_client", lambda config: fake)
    marks = ["GOOD", "bad", "FAIL", "MAYBE", "", "GOOD"]
    preds = [
        f"{marks[i % len(marks)]} answer" if marks[i % len(marks)] else "  "
        for i in range(len(sample_docs["reconstruction"]))
    ]
    items = [{"prediction": p, "judge_prompt": p, **scoring.judge_same_pun(object(), p, p)} for p in preds]
    assert fake.calls == sum(bool(p.strip()) for p in preds)  # one request per answered doc, none for an empty one
    former = _former_judge_correct([dict(it) for it in items], preds, _FakeJudge().judge_many)
    monkeypatch.setattr(judge, "get_judge_client", lambda config: pytest.fail("the aggregation asked the judge"))
    assert utils.unpie_correct(items) == former and utils.unpie_correct.light
    stats = utils.unpie_correct.per_doc(items)
    kinds = [marks[i % len(marks)] for i in range(len(items))]
    assert [math.isnan(s) for s in stats] == [k == "FAIL" for k in kinds]
    assert [s for s, k in zip(stats, kinds) if k != "FAIL"] == [float(k == "GOOD") for k in kinds if k != "FAIL"]
    assert [it.get("judge_verdict") for it in items[:4]] == [True, False, None, None]  # logged with the raw answer
    _interval(utils.unpie_correct, items)
    assert math.isnan(utils.unpie_correct([it for it, k in zip(items, kinds) if k == "FAIL"]))  # judge down: NaN


def test_proportions_get_the_exact_interval_of_their_scored_docs():
    from scipy.stats import binomtest

    stats = resample.as_array([1.0, 0.0, math.nan, 1.0, 1.0, 0.0, 1.0, math.nan, 1.0])
    out = resample.bootstrap(resample.rate, stats)
    ci = binomtest(5, 7).proportion_ci(confidence_level=0.95, method="exact")
    assert out["value"] == resample.rate(stats) == 5 / 7 and out["n"] == 7
    assert out["ci_low"] == pytest.approx(ci.low, abs=1e-9) and out["ci_high"] == pytest.approx(ci.high, abs=1e-9)
    meteor = resample.bootstrap(utils.unpie_meteor.combine, resample.as_array([0.2, 0.5, 0.9, 0.4]), iters=200)
    assert meteor["method"].startswith("bootstrap") and meteor["ci_low"] < meteor["value"] < meteor["ci_high"]
