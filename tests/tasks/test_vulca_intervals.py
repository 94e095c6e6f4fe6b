"""VULCA aggregations split into per-critique statistics + a combine (issue 15 item 3): equal, bit for bit, to the
former aggregations on the shipped reference; NLI/embedding/judge work once; finite bootstrap intervals."""

import hashlib
import math
import random

import pytest

from hanyi.data.vulca_reference import load_reference
from hanyi.metrics import critique_per_doc, critique_rubric, resample
from hanyi.metrics.critique_embed import EmbedConfig, EmbedItem, aggregate_embed_metric, encode_vectors
from hanyi.metrics.critique_profile import FEATURE_LABELS, QUALITY_LABELS, STANCE_LABELS
from hanyi.metrics.critique_rubric import RUBRICS, RubricItem
from hanyi.metrics.critique_scoring import NLI_METRICS, CritiqueItem, aggregate_critique_metric
from hanyi.metrics.judge import JudgeResult
from hanyi.metrics.zeroshot_nli import NLIConfig
from hanyi.tasks.vulca import aggregate

LABELS = [*STANCE_LABELS, *FEATURE_LABELS, *QUALITY_LABELS]


def _u(*parts) -> float:
    """A deterministic pseudo-random number in [0, 1) from strings."""
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16) / 16**12


def fake_logits(premises, hypotheses):
    """Entailment logit in [-3, 4): high for a label named in the text, else spread by a hash of the pair."""
    out = []
    for p, h in zip(premises, hypotheses):
        label = h[len("This example is ") : -1]
        out.append([(3.0 if label.lower() in p.lower() else -3.0) + 4.0 * _u(p, h), 0.0])
    return out


def _critiques(n=12, seed=0):
    rng = random.Random(seed)
    return [f"Painting {i}: " + "; ".join(rng.sample(LABELS, rng.randint(0, 12))) + "." for i in range(n)]


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def _check_interval(agg, items, exact_ok=True):
    stats = resample.as_array(agg.per_doc(items))
    assert len(stats) == len(items)
    assert _same(agg.combine(stats), agg(items))
    out = resample.bootstrap(agg.combine, stats, iters=300)
    assert out["ci_low"] is not None and math.isfinite(out["ci_low"]) and math.isfinite(out["ci_high"])
    assert out["ci_low"] <= out["value"] <= out["ci_high"]
    return out


@pytest.fixture(scope="module")
def nli_items():
    """Every NLI metric's items for 12 critiques, the NLI scores cached once through the former aggregation."""
    config = NLIConfig(model="fake-nli-h3-intervals")
    texts = _critiques()
    items = {m: [CritiqueItem(m, f"{i:02d}", t, config) for i, t in enumerate(texts)] for m in NLI_METRICS}
    reference = load_reference()
    former = {m: aggregate_critique_metric(its, reference, logits_fn=fake_logits) for m, its in items.items()}
    return items, former


def test_every_decomposed_nli_metric_equals_the_former_aggregation(nli_items):
    items, former = nli_items
    assert set(critique_per_doc.DECOMPOSED_NLI) == set(NLI_METRICS) - {
        "expert_alignment_chance",
        "expert_alignment_centered_chance",
    }
    varied = 0
    for metric in critique_per_doc.DECOMPOSED_NLI:
        agg = getattr(aggregate, f"vulca_{metric}")
        value = agg(items[metric])  # NLI scores from the cache: no model is needed here
        assert value == former[metric], metric
        stats = agg.per_doc(items[metric])
        assert _same(agg.combine(resample.as_array(stats)), value)
        varied += len({tuple(s) if isinstance(s, tuple) else s for s in stats}) > 1
    assert varied >= len(critique_per_doc.DECOMPOSED_NLI) - 6, varied  # the critiques differ: a real test
    for chance in ("expert_alignment_chance", "expert_alignment_centered_chance"):
        assert aggregate.vulca_aggregate(items[chance]) == former[chance]


@pytest.mark.parametrize(
    "metric", ["expert_alignment", "expert_alignment_centered", "primary_profile_rate_general_descriptive",
               "profile_cosine_max", "profile_technique_style_focused", "feature_profile_l1_to_human",
               "feat_symbolism", "qual_clear_logic"],
)  # fmt: skip
def test_headline_and_profile_metrics_get_a_finite_interval(nli_items, metric):
    items, former = nli_items
    agg = getattr(aggregate, f"vulca_{metric}")
    out = _check_interval(agg, items[metric])
    assert out["value"] == former[metric]
    if metric == "expert_alignment":
        assert agg.combine is resample.rate  # a proportion: exact interval on the 0/1 critiques


def test_expert_alignment_per_critique_is_the_best_centroid_match(nli_items):
    from hanyi.metrics.critique_scoring import critique_features, score_critique

    items, _ = nli_items
    its = items["expert_alignment"]
    feats = critique_features([it.text for it in its], its[0].nli)
    centroids = load_reference()["profile_centroids_47d"]
    expected = [float(score_critique(f, centroids)["cosine"] > 0.7) for f in feats]
    assert aggregate.vulca_expert_alignment.per_doc(its) == expected


def test_l1_combine_is_the_distance_of_column_means(nli_items):
    items, former = nli_items
    stats = resample.as_array(aggregate.vulca_feature_profile_l1_to_human.per_doc(items["feature_profile_l1_to_human"]))
    assert stats.shape == (12, len(FEATURE_LABELS) + len(QUALITY_LABELS))
    ref = load_reference()
    human = [ref["mean_features"][x] for x in FEATURE_LABELS] + [ref["mean_quality"][x] for x in QUALITY_LABELS]
    assert critique_per_doc.l1_to_human(stats) == pytest.approx(float(abs(stats.mean(axis=0) - human).sum()), abs=1e-9)
    assert critique_per_doc.l1_to_human(stats) == former["feature_profile_l1_to_human"]


def test_without_nli_model_every_critique_is_nan_and_the_metric_nan(monkeypatch):
    import hanyi.metrics.critique_scoring as cs

    monkeypatch.setattr(cs, "try_logits_fn", lambda config: None)
    items = [CritiqueItem("expert_alignment", "01", "never scored text h3", NLIConfig(model="missing-h3"))]
    assert math.isnan(aggregate.vulca_expert_alignment(items))
    assert math.isnan(aggregate.vulca_expert_alignment.per_doc(items)[0])
    with pytest.raises(ValueError, match="feat_genre"):
        aggregate.vulca_expert_alignment([CritiqueItem("feat_genre", "01", "x", NLIConfig(model="missing-h3"))])


def test_rubric_means_equal_the_former_and_judge_each_prompt_once(monkeypatch):
    import hanyi.metrics.judge as judge

    sent = []

    class Client:
        def judge_many(self, prompts, parse):
            sent.extend(prompts)
            out = []
            for p in prompts:
                u = _u(p)
                if u < 0.15:
                    out.append(JudgeResult("h", "no idea", None, "parse_failure", False))
                elif u < 0.25:
                    out.append(JudgeResult("h", None, None, "request_failed: timeout", False))
                else:
                    out.append(JudgeResult("h", "Score", parse(f"Score: {1 + int(u * 5)}"), None, False))
            return out

    monkeypatch.setattr(judge.JudgeConfig, "from_env", classmethod(lambda cls: "fake-judge-config-h3"))
    monkeypatch.setattr(judge, "get_judge_client", lambda config: Client())
    monkeypatch.setattr(critique_rubric, "_MEMO", {})
    texts = _critiques(seed=4)
    for metric in RUBRICS:
        items = [RubricItem(metric, f"{i:02d}", f"Title {i}", t) for i, t in enumerate(texts)]
        former = aggregate.vulca_rubric_aggregate(items)
        n_sent = len(sent)
        agg = getattr(aggregate, f"vulca_{metric}")
        assert agg(items) == former and len(sent) == n_sent == len(set(sent))  # memo: no second request
        stats = agg.per_doc(items)
        assert any(math.isnan(s) for s in stats) and not all(math.isnan(s) for s in stats)
        _check_interval(agg, items)


def test_reference_embedding_metrics_equal_the_former(monkeypatch):
    import hanyi.metrics.critique_embed as ce

    dim = 8

    def vec(text):
        return [_u(text, str(k)) - 0.3 for k in range(dim)]

    monkeypatch.setattr(ce, "embed_texts", lambda texts, config, batch_size=32: [vec(t) for t in texts])
    humans = [vec(f"human {k}") for k in range(9)]
    config = EmbedConfig("fake/path", "fake-embedder-h3")
    reference = {"embedder": "fake-embedder-h3", "n": len(humans), "dim": dim, "vectors_b64": encode_vectors(humans)}
    texts = _critiques(seed=9)
    for metric in critique_per_doc.DECOMPOSED_EMBED:
        items = [EmbedItem(metric, f"{i:02d}", t, config) for i, t in enumerate(texts)]
        agg = critique_per_doc.embed_aggregation(metric, lambda: reference)
        assert agg(items) == aggregate_embed_metric(items, reference), metric
        _check_interval(agg, items)
        assert getattr(aggregate, f"vulca_{metric}").combine is agg.combine
    other = {**reference, "embedder": "another-model"}
    items = [EmbedItem("sem_sim_mean", "01", "x", config)]
    assert math.isnan(critique_per_doc.embed_aggregation("sem_sim_mean", lambda: other)(items))
