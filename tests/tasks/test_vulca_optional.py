"""VULCA optional metrics: rubric judge (fake judge server) and embedding similarity, through the real evaluator.

Each critique is judged and embedded in process_results; the sample log keeps its levels and embedding, and the
metrics are computed from it as ``hanyi report`` does (:func:`hanyi.metrics.from_samples.derive`)."""

import pytest

from hanyi.metrics import from_samples
from hanyi.metrics.critique_rubric import RUBRIC_METRICS


def _derived(out, task):
    """The task's results plus what hanyi report computes from its sample log, by metric name."""
    res = {k.split(",")[0]: v for k, v in out["results"][task].items()}
    derived = from_samples.derive(task, out["samples"][task], emitted=res)
    return {**res, **{k: v for k, (v, _) in derived.items()}}


CRITIQUES = {
    "01": "Lanterns glow in the first month; the court watches.",
    "04": "Willows and a pavilion.",
    "05": "Boats.",
}


def _records(task):
    return [{"task": task, "key": {"doc_id": d}, "response": t} for d, t in CRITIQUES.items()]


def test_without_a_judge_no_rubric_metric(replay, monkeypatch):
    monkeypatch.delenv("HANYI_VULCA_NLI_MODEL", raising=False)  # the default model: offline, unavailable
    res = _derived(replay(_records("vulca_baseline"), ["vulca_baseline"], on_missing="empty"), "vulca_baseline")
    assert not any(k.startswith("rubric_") for k in res) and "json_valid_rate" in res


def test_rubric_scores_through_the_evaluator(replay, monkeypatch, tmp_path, fake_judge):
    seen = []

    def answer(messages):
        prompt = messages[-1]["content"]
        seen.append(prompt)
        if "Boats." in prompt:
            return "I cannot rate this."  # unparseable: unscored, counted, not a zero
        level = 3 if "Lanterns" in prompt else 5
        if "(7-point scale)" in prompt:
            level += 2
        return f"Score: {level}"

    monkeypatch.delenv("HANYI_VULCA_NLI_MODEL", raising=False)  # the default model: offline, unavailable
    with fake_judge(answer=answer) as judge:
        monkeypatch.setenv("HANYI_JUDGE_BASE_URL", judge.base_url)
        monkeypatch.setenv("HANYI_JUDGE_MODEL", "fake-judge")
        monkeypatch.setenv("HANYI_JUDGE_CACHE_DIR", str(tmp_path / "judge-cache"))
        out = replay(_records("vulca_baseline"), ["vulca_baseline"], on_missing="empty")
    res = _derived(out, "vulca_baseline")
    assert not any(k.startswith("rubric_") for k in out["results"]["vulca_baseline"])  # from the sample log only
    docs = len(out["samples"]["vulca_baseline"])  # 6 sample docs, 3 answered, 3 empty answers
    # one request per (doc, rubric), sent once for the four rubric metrics
    assert len(seen) == 3 * docs
    # empty answers are judged too (the judge says level 5 for them here): (3 + 5 * 4) / 5 scored docs
    assert res["rubric_painting_elements_1_5"] == pytest.approx((3 + 5 * (docs - 2)) / (docs - 1))
    assert res["rubric_cn_painting_understanding_1_7"] == pytest.approx((5 + 7 * (docs - 2)) / (docs - 1))
    assert res["rubric_judge_unscored"] == 3.0  # "Boats." on each of the three rubrics
    lantern = next(p for p in seen if "Lanterns" in p and "Chinese Language Usage" in p)
    assert 'the painting "清_清院_十二月令图_一月_正月"' in lantern
    assert "Level 5: Expert-level language usage with precise terminology" in lantern
    assert lantern.rstrip().endswith('in the form "Score: N".')
    assert set(RUBRIC_METRICS) <= set(res)
    # the judge is named in the logged levels: the report's provenance and a leaderboard read it from the sample log
    assert {s["vulca_rubric"]["judge_model"] for s in out["samples"]["vulca_baseline"]} == {"fake-judge"}


def _embed_run(replay, monkeypatch, model):
    monkeypatch.delenv("HANYI_VULCA_NLI_MODEL", raising=False)  # the default model: offline, unavailable
    if model is None:
        monkeypatch.delenv("HANYI_VULCA_EMBED_MODEL", raising=False)
    else:
        monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", model)
    records = _records("vulca_baseline_kb")
    out = replay(records, ["vulca_baseline_kb"], on_missing="empty")
    assert not any(k.startswith("sem_") for k in out["results"]["vulca_baseline_kb"])  # from the sample log only
    return _derived(out, "vulca_baseline_kb")


def test_embedding_metrics_with_the_shipped_reference_embedder(replay, monkeypatch):
    from sentence_transformers import SentenceTransformer

    from hanyi.data.vulca_embed_reference import load_embed_reference
    from hanyi.metrics.critique_embed import EmbedConfig, decode_vectors

    res = _embed_run(replay, monkeypatch, "sentence-transformers/all-MiniLM-L6-v2")
    # by hand: the 6 sample docs (3 critiques + 3 empty answers), embedded directly, vs the shipped vectors
    texts = [CRITIQUES.get(d, "") for d in ("01", "04", "05", "08", "10", "12")]
    emb = SentenceTransformer(EmbedConfig.from_env().path).encode(texts, normalize_embeddings=True)
    ref = load_embed_reference()
    humans = decode_vectors(ref["vectors_b64"], ref["n"], ref["dim"])
    sims = [[sum(a * b for a, b in zip(e, h)) for h in humans] for e in emb]
    # MiniLM is not the paper's bge-large-zh-v1.5: every sem_* metric under its own key, never the paper's
    assert not [k for k in res if k.startswith("sem_") and "_custom_model" not in k]
    res = {k.replace("_custom_model", ""): v for k, v in res.items()}
    assert res["sem_sim_mean"] == pytest.approx(sum(sum(r) / len(r) for r in sims) / 6, abs=1e-5)
    assert res["sem_sim_max"] == pytest.approx(sum(max(r) for r in sims) / 6, abs=1e-5)
    assert res["sem_mean_pairwise_cosdist"] == pytest.approx(1 - res["sem_sim_mean"])
    assert 0 < res["sem_diversity"] < 1 and 0 < res["sem_coherence"] <= 1


def test_embedder_other_than_the_reference_disables_reference_metrics(replay, monkeypatch, caplog):
    from hanyi.metrics.critique_embed import EmbedConfig, warn_once

    warn_once.cache_clear()  # warned once per process: another test of this process may have warned already
    monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", "all-MiniLM-L6-v2")
    local = EmbedConfig.from_env().path  # the same weights under a local path: its id is the folder name
    res = _embed_run(replay, monkeypatch, local)
    assert "sem_diversity_custom_model" in res and "sem_coherence_custom_model" in res
    assert not any(k.startswith(("sem_sim", "sem_mean_pairwise")) for k in res)
    assert "differs from the shipped human reference" in caplog.text


def test_embedder_unavailable_emits_no_sem_metric(replay, monkeypatch):
    res = _embed_run(replay, monkeypatch, None)  # the paper's default, BAAI/bge-large-zh-v1.5: not downloadable offline
    assert not any(k.startswith("sem_") for k in res) and "json_valid_rate" in res
