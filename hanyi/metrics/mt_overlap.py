"""Surface-overlap scores of a generated sentence against one reference: corpus BLEU-4 and sentence METEOR.

UNPIE pun reconstruction (Chung et al., EMNLP 2024, §4.4, Table 6) reports "Bleu-4 (Papineni et al., 2002) and METEOR
(Banerjee and Lavie, 2005)" ×100 against the original English pun, without naming an implementation. Our choices
(``docs/unpie.md``): corpus BLEU-4 from ``sacrebleu`` (13a tokenizer), and the mean of NLTK's sentence METEOR on
lowercased regex tokens. NLTK's METEOR matches exact words, Porter stems and WordNet synonyms; WordNet is used only
when NLTK already has it locally (nothing is downloaded), otherwise synonyms are off, :func:`meteor_matcher`
says which matcher ran, and the task reports ``meteor_exact_stem`` instead of ``meteor`` (:mod:`hanyi.backbones`).
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Sequence

_TOKEN = re.compile(r"\w+|[^\w\s]")
#: One METEOR at a time: lmms-eval runs ``process_results`` in threads, and concurrent WordNet look-ups read each
#: other's lines (a wrong synset, a "No WordNet synset found" warning or a WordNetError).
_WORDNET_LOCK = threading.Lock()


def simple_tokenize(text: str) -> list[str]:
    r"""Lowercased ``\w+|[^\w\s]`` tokens (no punkt data needed).

    >>> simple_tokenize("How do farmers make crop circles? With a protractor.")
    ['how', 'do', 'farmers', 'make', 'crop', 'circles', '?', 'with', 'a', 'protractor', '.']
    """
    return _TOKEN.findall((text or "").lower())


def corpus_bleu4(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU-4 (sacrebleu defaults: 13a tokenizer, exponential smoothing off for corpus level), 0-100.

    >>> round(corpus_bleu4(["the cat sat on the mat"], ["the cat sat on the mat"]), 2)
    100.0
    >>> round(corpus_bleu4(["the cat sat on a mat"], ["the cat sat on the mat"]), 2)
    53.73
    """
    import sacrebleu

    if not hypotheses:
        return 0.0
    return float(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score)


#: Per-sentence BLEU sufficient statistics, in this order (sacrebleu's ``BLEUScore`` fields).
BLEU_STATS = ("sys_len", "ref_len", "correct_1", "correct_2", "correct_3", "correct_4",
              "total_1", "total_2", "total_3", "total_4")  # fmt: skip


@functools.lru_cache(maxsize=1)
def _bleu():
    """The BLEU metric of :func:`corpus_bleu4` (sacrebleu defaults). ``effective_order=True`` only silences
    sacrebleu's per-sentence warning: it changes how a score is computed, never the statistics read here."""
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(effective_order=True)


def bleu_sentence_stats(hypothesis: str, reference: str) -> tuple[int, ...]:
    """One sentence's BLEU-4 sufficient statistics (:data:`BLEU_STATS`): hypothesis and reference lengths, matched
    and total n-grams for n = 1..4, as sacrebleu's ``sentence_score`` exposes them (13a tokenizer).

    Corpus BLEU (Papineni et al. 2002) is a function of their sums over sentences, which is what makes Koehn's
    (2004) bootstrap over sentences possible (:func:`bleu4_from_stats`).

    >>> bleu_sentence_stats("the cat sat on a mat", "the cat sat on the mat")
    (6, 6, 5, 3, 2, 1, 6, 5, 4, 3)
    """
    score = _bleu().sentence_score(hypothesis, [reference])
    return (score.sys_len, score.ref_len, *score.counts, *score.totals)


def bleu4_from_stats(stats) -> float:
    """Corpus BLEU-4 (0-100) from summed :func:`bleu_sentence_stats` rows (an ``(n, 10)`` array; 0.0 for none),
    through sacrebleu's public ``BLEU.compute_bleu`` with :func:`corpus_bleu4`'s settings (exponential smoothing,
    no effective order), so it equals :func:`corpus_bleu4` on the same sentences.

    >>> import numpy as np
    >>> rows = [bleu_sentence_stats("the cat sat on a mat", "the cat sat on the mat")]
    >>> round(bleu4_from_stats(np.asarray(rows, dtype=float)), 2)
    53.73
    """
    from sacrebleu.metrics.bleu import BLEU

    if len(stats) == 0:
        return 0.0
    sums = [round(x) for x in stats.sum(axis=0).tolist()]  # integer counts, exact in float64
    default = BLEU()
    return float(
        BLEU.compute_bleu(
            correct=sums[2:6],
            total=sums[6:10],
            sys_len=sums[0],
            ref_len=sums[1],
            smooth_method=default.smooth_method,
            smooth_value=default.smooth_value,
            effective_order=default.effective_order,
            max_ngram_order=default.max_ngram_order,
        ).score
    )


class _NoSynonyms:
    """Stands in for NLTK's WordNet reader: no synsets, so METEOR matches exact words and stems only."""

    @staticmethod
    def synsets(*_args, **_kwargs) -> list:
        return []


def _wordnet():
    """NLTK's WordNet reader when the ``wordnet`` backbone resolved (once per process, never downloads), else ``None``."""
    from hanyi import backbones

    if not backbones.available("wordnet"):
        return None
    from nltk.corpus import wordnet

    return wordnet


def meteor_matcher() -> str:
    """``"exact+stem+wordnet"`` when local WordNet data exists, else ``"exact+stem"``: the METEOR matchers in use."""
    return "exact+stem+wordnet" if _wordnet() is not None else "exact+stem"


def sentence_meteor(hypothesis: str, reference: str, use_wordnet: bool | None = None) -> float:
    """NLTK METEOR (alpha 0.9, beta 3, gamma 0.5) of one hypothesis against one reference, 0-1.

    ``use_wordnet=None`` uses WordNet when it is installed; ``False`` forces the exact+stem matcher.

    >>> sentence_meteor("the cat sat on the mat", "the cat sat on the mat", use_wordnet=False) > 0.99
    True
    >>> round(sentence_meteor("a terrible echo", "there was a terrible gecko", use_wordnet=False), 4)
    0.3906
    """
    from nltk.translate.meteor_score import meteor_score

    wordnet = _wordnet() if use_wordnet is not False else None
    hyp, ref = simple_tokenize(hypothesis), simple_tokenize(reference)
    if not hyp or not ref:
        return 0.0
    with _WORDNET_LOCK:  # NLTK's WordNet reader seeks and reads one shared file handle per part of speech
        return float(meteor_score([ref], hyp, wordnet=wordnet if wordnet is not None else _NoSynonyms()))


def mean_meteor(hypotheses: Sequence[str], references: Sequence[str], use_wordnet: bool | None = None) -> float:
    """Mean :func:`sentence_meteor` ×100 over the pairs (0.0 for none).

    >>> round(mean_meteor(["the cat", "a dog"], ["the cat", "the cat"], use_wordnet=False), 2)
    46.88
    """
    if not hypotheses:
        return 0.0
    scores = [sentence_meteor(h, r, use_wordnet) for h, r in zip(hypotheses, references)]
    return 100.0 * math.fsum(scores) / len(scores)


def meteor_from_scores(stats) -> float:
    """Mean of :func:`sentence_meteor` values ×100 (0.0 for none), with :func:`mean_meteor`'s arithmetic, so the
    two are equal on the same sentences. The sum is exactly rounded (:func:`math.fsum`): the value does not depend on
    the order of the sentences.

    >>> import numpy as np
    >>> meteor_from_scores(np.array([0.5, 0.25])), meteor_from_scores(np.zeros(0))
    (37.5, 0.0)
    """
    scores = stats.tolist()
    return 100.0 * math.fsum(scores) / len(scores) if scores else 0.0


meteor_from_scores.mean_scale = 100.0  # 100 x a mean: the closed-form standard error scales by it
