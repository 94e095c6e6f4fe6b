"""Surface-overlap scores of a generated sentence against one reference: corpus BLEU-4 and sentence METEOR.

UNPIE pun reconstruction (Chung et al., EMNLP 2024, §4.4, Table 6) reports "Bleu-4 (Papineni et al., 2002) and METEOR
(Banerjee and Lavie, 2005)" ×100 against the original English pun, without naming an implementation. Our choices
(``docs/unpie.md``): corpus BLEU-4 from ``sacrebleu`` (13a tokenizer), and the mean of NLTK's sentence METEOR on
lowercased regex tokens. NLTK's METEOR matches exact words, Porter stems and WordNet synonyms; WordNet is used only
when NLTK already has it locally (nothing is downloaded), otherwise synonyms are off, :func:`meteor_matcher`
says which matcher ran, and the task reports ``meteor_exact_stem`` instead of ``meteor`` (:mod:`hanyi.backbones`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"\w+|[^\w\s]")


def simple_tokenize(text: str) -> list[str]:
    """Lowercased ``\\w+|[^\\w\\s]`` tokens (no punkt data needed).

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
    return float(meteor_score([ref], hyp, wordnet=wordnet if wordnet is not None else _NoSynonyms()))


def mean_meteor(hypotheses: Sequence[str], references: Sequence[str], use_wordnet: bool | None = None) -> float:
    """Mean :func:`sentence_meteor` ×100 over the pairs (0.0 for none).

    >>> round(mean_meteor(["the cat", "a dog"], ["the cat", "the cat"], use_wordnet=False), 2)
    46.88
    """
    if not hypotheses:
        return 0.0
    return 100.0 * sum(sentence_meteor(h, r, use_wordnet) for h, r in zip(hypotheses, references)) / len(hypotheses)
