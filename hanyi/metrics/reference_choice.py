"""Which of two references is a generated text closer to? BERTScore-F1 decision with a chrF fallback.

UNPIE pun disambiguation (Chung et al., EMNLP 2024, §3 and §4.3): a translation ȳ^{i,j} is correct iff

    BERTScore(ȳ^{i,j}, y^{i,j}) > BERTScore(ȳ^{i,j}, y^{i,1-j})

i.e. it resembles the gold translation of the meaning shown in the image more than the other meaning's translation.
The comparison is strict, so ties (also an empty prediction, or identical references) are wrong. The paper names no
BERTScore variant; we use F1 of ``bert-score`` with ``bert-base-multilingual-cased`` layer 9 (what its ``lang=de/fr/ko``
setting selects), no idf, no baseline rescaling (a monotone map that cannot change the decision).

Scoring is batched: :func:`pair_scores` makes one scorer call for all ``2 N`` (candidate, reference) pairs (UNPIE:
one doc's answers), and :func:`load_bertscorer` loads a model once per process. When the weights cannot be loaded,
callers fall back to sentence chrF (:func:`chrf_scores`) and must report it under a different metric name.
"""

from __future__ import annotations

import collections
import functools
import os
import threading
from collections.abc import Callable, Sequence

#: Default BERTScore model and layer: what ``bert_score`` picks for ``lang`` in {de, fr, ko} (and any non-English).
DEFAULT_BERTSCORE_MODEL = "bert-base-multilingual-cased"
DEFAULT_BERTSCORE_LAYER = 9

PairScorer = Callable[[Sequence[str], Sequence[str]], Sequence[float]]


class ScorerUnavailable(RuntimeError):
    """The configured similarity model cannot be loaded (missing package or weights not available offline)."""


def closer_to_target(target_score: float | None, distractor_score: float | None) -> bool:
    """The UNPIE decision: strictly more similar to the target than to the distractor. ``None`` scores are wrong.

    >>> closer_to_target(0.91, 0.88)
    True
    >>> closer_to_target(0.9, 0.9)
    False
    >>> closer_to_target(None, 0.2)
    False
    """
    return target_score is not None and distractor_score is not None and target_score > distractor_score


def _pairs(predictions, targets, distractors) -> tuple[list[int], list[tuple[str, str]]]:
    """Indices of the non-empty predictions, and their (candidate, reference) pairs: all targets, then distractors."""
    keep = [i for i, p in enumerate(predictions) if isinstance(p, str) and p.strip()]
    cands = [predictions[i] for i in keep]
    return keep, list(zip(cands + cands, [targets[i] for i in keep] + [distractors[i] for i in keep]))


def pair_scores(
    predictions: Sequence[str],
    targets: Sequence[str],
    distractors: Sequence[str],
    scorer: PairScorer,
) -> tuple[list[float | None], list[float | None]]:
    """Score every prediction against its target and its distractor in **one** ``scorer`` call.

    ``scorer(candidates, references) -> scores`` is any pairwise similarity (BERTScore F1, chrF, a test double);
    it must be a function of the pair alone (all of those are), so each distinct ``(candidate, reference)`` pair is
    sent once and its score reused: repeated answers ("I don't know", a copied reference) cost nothing extra. The
    pairs are sent sorted, so a batched scorer (BERTScore pads each batch) gets the same batches, and gives the same
    bits, whatever the order of the docs.
    Empty predictions are not sent to the scorer and get ``None`` (a decision of "wrong").

    >>> overlap = lambda cands, refs: [len(set(c.split()) & set(r.split())) for c, r in zip(cands, refs)]
    >>> pair_scores(["a b", ""], ["a b c", "x"], ["a", "y"], overlap)
    ([2, None], [1, None])
    """
    if not (len(predictions) == len(targets) == len(distractors)):
        raise ValueError("predictions, targets and distractors must have the same length")
    keep, pairs = _pairs(predictions, targets, distractors)
    sent = sorted(set(pairs))  # the same batch whatever the order of the predictions
    scored = dict(zip(sent, scorer([c for c, _ in sent], [r for _, r in sent]))) if sent else {}
    scores = [scored[pair] for pair in pairs]
    t_scores: list[float | None] = [None] * len(predictions)
    d_scores: list[float | None] = [None] * len(predictions)
    for n, i in enumerate(keep):
        t_scores[i], d_scores[i] = scores[n], scores[n + len(keep)]
    return t_scores, d_scores


def decide(
    predictions: Sequence[str],
    targets: Sequence[str],
    distractors: Sequence[str],
    scorer: PairScorer,
) -> list[dict]:
    """One dict per prediction: ``target_score``, ``distractor_score`` and ``correct`` (:func:`closer_to_target`).

    >>> same = lambda cands, refs: [1.0 if c == r else 0.0 for c, r in zip(cands, refs)]
    >>> [d["correct"] for d in decide(["x", "y", "z"], ["x", "q", "z"], ["q", "y", "z"], same)]
    [True, False, False]
    """
    t_scores, d_scores = pair_scores(predictions, targets, distractors, scorer)
    return [
        {"target_score": t, "distractor_score": d, "correct": closer_to_target(t, d)}
        for t, d in zip(t_scores, d_scores)
    ]


def chrf_scores(candidates: Sequence[str], references: Sequence[str]) -> list[float]:
    """Sentence-level chrF (sacrebleu defaults: character 6-grams, beta 2) of each candidate against its reference.

    Character-based, so it works for Korean without a tokenizer. Scale 0-100.

    >>> [round(s, 1) for s in chrf_scores(["ein schreckliches Echo", "Gecko"], ["ein schreckliches Echo", "Zug"])]
    [100.0, 0.0]
    """
    from sacrebleu.metrics import CHRF

    chrf = CHRF()
    return [chrf.sentence_score(c, [r]).score for c, r in zip(candidates, references)]


#: lmms-eval runs ``process_results`` in threads (``--process_docs_parallel``): one load, and one scoring call at a
#: time (a Hugging Face fast tokenizer shared by threads can fail with "Already borrowed").
_LOAD_LOCK = threading.Lock()
_SCORE_LOCK = threading.Lock()


def load_bertscorer(model: str = DEFAULT_BERTSCORE_MODEL, num_layers: int = DEFAULT_BERTSCORE_LAYER, device: str = ""):
    """:func:`_load_bertscorer`, one thread at a time (the first call loads, the others wait and share it)."""
    with _LOAD_LOCK:
        return _load_bertscorer(model, num_layers, device)


@functools.lru_cache(maxsize=4)
def _load_bertscorer(model: str = DEFAULT_BERTSCORE_MODEL, num_layers: int = DEFAULT_BERTSCORE_LAYER, device: str = ""):
    """A ``bert_score.BERTScorer`` for ``model`` (local path or hub id) at ``num_layers``, loaded once per process.

    Raises :class:`ScorerUnavailable` when ``bert-score`` is missing or the weights cannot be loaded (e.g. a hub id
    that is not in the local cache while offline).
    """
    try:
        from bert_score import BERTScorer
    except ImportError as exc:  # pragma: no cover - bert-score is a dependency
        raise ScorerUnavailable(f"bert-score is not installed ({exc})") from None
    try:
        from hanyi.metrics.device import scorer_device

        return BERTScorer(model_type=model, num_layers=num_layers, idf=False, device=scorer_device(device or None))
    except (OSError, ValueError, KeyError) as exc:
        raise ScorerUnavailable(f"cannot load BERTScore model {model!r}: {str(exc).splitlines()[0][:200]}") from None


def bertscore_f1_scorer(
    model: str = DEFAULT_BERTSCORE_MODEL, num_layers: int = DEFAULT_BERTSCORE_LAYER, batch_size: int = 64
) -> PairScorer:
    """A :data:`PairScorer` returning BERTScore F1 (no idf, no rescaling) from the process-wide model.

    Loads the model now, so an unavailable model raises :class:`ScorerUnavailable` before any scoring.
    """
    scorer = load_bertscorer(model, int(num_layers))

    def score(candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        if not candidates:
            return []
        with _SCORE_LOCK:
            return bertscore_f1(scorer, list(candidates), list(references), batch_size)

    def encode(sentences: Sequence[str]) -> None:  # a task's strings, encoded ahead (tasks/_ahead.py)
        with _SCORE_LOCK:
            bertscore_f1(scorer, [], [], batch_size, sentences)

    score.encode = encode
    return score


#: (scorer, sentence) -> its token embeddings and idf weights: each distinct string of a run encoded once.
_EMBEDDED: dict[tuple[int, str], tuple] = {}


def bert_embeddings(scorer, sentences: Sequence[str], batch_size: int) -> dict:
    """``{sentence: (token embeddings, idf weights)}`` as ``bert_score`` computes them (``get_bert_embedding`` on
    batches of ``batch_size`` distinct sentences, longest first); no cache."""
    from bert_score.utils import get_bert_embedding

    tok, todo, out = scorer._tokenizer, sorted(set(sentences), key=lambda x: len(x.split(" ")), reverse=True), {}
    idf_dict = collections.defaultdict(lambda: 1.0, {tok.sep_token_id: 0, tok.cls_token_id: 0})  # BERTScorer's, no idf
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        emb, mask, idf = get_bert_embedding(batch, scorer._model, tok, idf_dict, device=scorer.device)
        for i, sentence in enumerate(batch):
            n = int(mask[i].sum())
            out[sentence] = (emb[i, :n].cpu().clone(), idf[i, :n].cpu().clone())
    return out


def bertscore_f1(scorer, candidates: list[str], references: list[str], batch_size: int, ahead=()) -> list[float]:
    """BERTScore F1 of each (candidate, reference) pair, as ``BERTScorer.score`` computes it (``greedy_cos_idf`` over
    padded batches), from embeddings computed once per distinct string in the process (with ``ahead`` too, in
    batches): a pair's F1 differs from ``BERTScorer.score``'s by the batch's padding only (docs/dev/contributing.md)."""
    import torch
    from bert_score.utils import greedy_cos_idf
    from torch.nn.utils.rnn import pad_sequence

    new = {s for s in (*candidates, *references, *ahead) if (id(scorer), s) not in _EMBEDDED}
    _EMBEDDED.update({(id(scorer), s): v for s, v in bert_embeddings(scorer, sorted(new), batch_size).items()})

    def padded(batch):
        emb, idf = zip(*(_EMBEDDED[(id(scorer), s)] for s in batch))
        lens = torch.tensor([e.size(0) for e in emb])
        mask = torch.arange(int(lens.max())).expand(len(lens), -1) < lens.unsqueeze(1)
        return pad_sequence(emb, batch_first=True, padding_value=2.0), mask, pad_sequence(idf, batch_first=True)

    f1 = []
    for start in range(0, len(references), batch_size):
        end = start + batch_size
        f1 += greedy_cos_idf(*padded(references[start:end]), *padded(candidates[start:end]))[2].tolist()
    return [float(x) for x in f1]


MODEL_ENV, LAYERS_ENV, BATCH_ENV = (
    "HANYI_UNPIE_BERTSCORE_MODEL",
    "HANYI_UNPIE_BERTSCORE_LAYERS",
    "HANYI_UNPIE_BERTSCORE_BATCH",
)


def bertscore_settings() -> tuple[str, int | None, int]:
    """UNPIE's BERTScore backbone: ``(model, num_layers, batch_size)`` from the environment; ``num_layers`` is ``None`` when unknown."""
    model = os.environ.get(MODEL_ENV, "").strip() or DEFAULT_BERTSCORE_MODEL
    layers = os.environ.get(LAYERS_ENV, "").strip()
    if layers:
        num_layers = int(layers)
    elif model == DEFAULT_BERTSCORE_MODEL:
        num_layers = DEFAULT_BERTSCORE_LAYER
    else:
        from bert_score.utils import model2layers

        num_layers = model2layers.get(model)
    return model, num_layers, int(os.environ.get(BATCH_ENV, "") or 64)
