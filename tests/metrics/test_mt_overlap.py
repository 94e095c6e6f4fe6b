"""BLEU-4 and METEOR on hand-checked pairs (hanyi.metrics.mt_overlap)."""

import pytest

from hanyi.metrics.mt_overlap import corpus_bleu4, mean_meteor, meteor_matcher, sentence_meteor, simple_tokenize


def test_corpus_bleu4_hand_computed():
    # "the cat sat on a mat" vs "the cat sat on the mat": p1=5/6 p2=3/5 p3=2/4 p4=1/3, BP=1
    expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert corpus_bleu4(["the cat sat on a mat"], ["the cat sat on the mat"]) == pytest.approx(expected, abs=1e-9)


def test_corpus_bleu4_is_corpus_level_not_mean_of_sentences():
    # sentence 2 has no 4-gram match; corpus pooling keeps the score above zero
    hyps, refs = ["the cat sat on the mat", "a dog"], ["the cat sat on the mat", "the dog"]
    pooled = 100 * ((7 / 8) * (5 / 6) * (4 / 4) * (3 / 3)) ** 0.25 * __import__("math").exp(1 - 8 / 8)
    assert corpus_bleu4(hyps, refs) == pytest.approx(pooled, abs=1e-9)
    assert corpus_bleu4([], []) == 0.0


@pytest.mark.parametrize(
    "hyp, ref, expected",
    [
        # m=2 of h=3, r=5, one chunk: P=2/3 R=2/5 Fmean=PR/(0.9P+0.1R); pen=0.5*(1/2)^3
        ("a terrible echo", "there was a terrible gecko", (2 / 3 * 2 / 5) / (0.9 * 2 / 3 + 0.1 * 2 / 5) * (1 - 0.0625)),
        # identical, m=6 one chunk: 1 - 0.5*(1/6)^3
        ("the cat sat on the mat", "the cat sat on the mat", 1 - 0.5 / 216),
        # stem match: "farmers" ~ "farmer" (Porter), m=2 one chunk of h=2 r=2
        ("the farmers", "the farmer", 1 - 0.5 / 8),
        ("", "anything", 0.0),
    ],
)
def test_sentence_meteor_exact_and_stem_hand_computed(hyp, ref, expected):
    assert sentence_meteor(hyp, ref, use_wordnet=False) == pytest.approx(expected, abs=1e-9)


def test_meteor_without_wordnet_data_reports_exact_plus_stem_matcher(no_wordnet):
    # NLTK's search path holds no WordNet data; nothing may be downloaded
    assert meteor_matcher() == "exact+stem"
    assert sentence_meteor("a big house", "a large house") == sentence_meteor("a big house", "a large house", False)


def test_mean_meteor_is_percent_mean():
    assert mean_meteor(["the cat", "a dog"], ["the cat", "the cat"], use_wordnet=False) == pytest.approx(
        100 * (1 - 0.5 / 8) / 2
    )


def test_simple_tokenize_needs_no_punkt():
    assert simple_tokenize("Can't stop!") == ["can", "'", "t", "stop", "!"]


def test_meteor_with_wordnet_reports_the_synonym_matcher(with_wordnet):
    assert meteor_matcher() == "exact+stem+wordnet"


def test_meteor_with_wordnet_is_the_same_from_many_threads(with_wordnet):
    """lmms-eval runs process_results in threads: METEOR's WordNet look-ups from 8 threads at once must give the
    serial values (NLTK's reader shares one file handle per part of speech; unguarded, threads read each other's
    lines: wrong synonyms, warnings or a WordNetError)."""
    import random
    import warnings
    from concurrent.futures import ThreadPoolExecutor

    from nltk.corpus import wordnet

    assert meteor_matcher() == "exact+stem+wordnet"
    rng = random.Random(7)  # words no other test looked up: NLTK caches the synsets it has read
    words = rng.sample(sorted(name for name in wordnet.all_lemma_names() if name.isalpha()), 3000)
    pairs = [(" ".join(words[i : i + 6]), " ".join(words[i + 3 : i + 9])) for i in range(0, 2400, 6)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a "No WordNet synset found" warning fails the test
        with ThreadPoolExecutor(8) as pool:
            threaded = list(pool.map(lambda pair: sentence_meteor(*pair), pairs))
    assert threaded == [sentence_meteor(*pair) for pair in pairs]
