"""Answer extraction and the grounding exact-match family (hanyi.metrics.free_text), table-driven."""

import pytest

from hanyi.metrics.free_text import (
    exact_match,
    exact_match_lenient,
    exact_match_strict,
    extract_labelled_answer,
    word_recovered,
)


@pytest.mark.parametrize(
    "response, labels, expected",
    [
        ("cut", ("answer",), "cut"),
        ("[answer]: cut", ("answer",), "cut"),
        ('[Answer] : "cut"', ("answer",), "cut"),
        ("Answer: for a song\nBecause it means cheap.", ("answer",), "for a song"),
        ("\n\n“gecko”\n", ("answer",), "gecko"),
        ("[German]: Er hielt die Bojen in einer Linie.", ("German",), "Er hielt die Bojen in einer Linie."),
        ("[French]: « Avec un tracteur. »", ("French",), "Avec un tracteur."),
        ("[Korean]: „트랙터로.“", ("Korean",), "트랙터로."),
        ("The pun is: cut", ("answer",), "The pun is: cut"),  # only a *leading* label is removed
        ('"unbalanced', ("answer",), '"unbalanced'),  # quotes removed only in matching pairs
        ("", ("answer",), ""),
        ("   \n  ", ("answer",), ""),
        (None, ("answer",), ""),
    ],
)
def test_extract_labelled_answer_table(response, labels, expected):
    assert extract_labelled_answer(response, labels) == expected


@pytest.mark.parametrize(
    "prediction, gold, em",
    [
        ("cut", "cut", True),
        ("Cut.", "cut", True),
        ("ＣＵＴ", "cut", True),  # NFKC: full-width letters
        ("'chemistry'", "chemistry", True),
        ("for a song", "for a song", True),
        ("cuts", "cut", False),
        ("a cut", "cut", False),
        ("", "cut", False),
        ("...", "", False),  # an empty answer never matches, even an empty gold
    ],
)
def test_exact_match_normalises_case_width_and_edge_punctuation_only(prediction, gold, em):
    assert exact_match(prediction, gold) is em


@pytest.mark.parametrize(
    "response, gold, strict",
    [("cut", "cut", True), (" cut \n", "cut", True), ("Cut", "cut", False), ("[answer]: cut", "cut", False)],
)
def test_exact_match_strict_is_the_raw_stripped_response(response, gold, strict):
    assert exact_match_strict(response, gold) is strict


@pytest.mark.parametrize(
    "prediction, gold, sentence, ok",
    [
        ("buoys", "buoy", "She became a lifeguard at the beach and kept the buoys in line.", True),
        ("buoy", "buoy", "She kept the buoys in line.", True),
        ("boys", "buoy", "She kept the buoys in line.", False),
        ("buoys", "buoy", "She kept the buoy in line.", False),  # the plural must be the sentence's own token
    ],
)
def test_exact_match_lenient_accepts_only_the_sentence_plural_of_a_lemma_gold(prediction, gold, sentence, ok):
    assert exact_match_lenient(prediction, gold, sentence) is ok


@pytest.mark.parametrize(
    "text, word, found",
    [
        ("I tried to record an album in a reptile shop, but there was a terrible gecko.", "gecko", True),
        ("... but there was a terrible echo.", "gecko", False),
        ("She kept the buoys in line.", "buoy", True),
        ("She kept the boys in line.", "buoy", False),
        ("With a protractor.", "tractor", False),  # whole words only
        ("A pop singer bought a house for  a song.", "for a song", True),
        ("GECKOES everywhere", "gecko", True),
        ("", "gecko", False),
    ],
)
def test_word_recovered_whole_word_with_plural(text, word, found):
    assert word_recovered(text, word) is found


# a chat preamble before the answer line.
PREAMBLE_CASES = [
    ("Here is the translation:\nDer Mann ging.", "Der Mann ging."),
    ('Sure, here it is:\n\n"Der Mann ging."', "Der Mann ging."),
    ("**Translation:**\nDer Mann ging.", "Der Mann ging."),
    ("```\nDer Mann ging.\n```", "Der Mann ging."),
    ("Here is the German translation: Der Mann ging.", "Der Mann ging."),
    ("Certainly.\nDer Mann ging.", "Der Mann ging."),
    ("Voici la traduction :\nDer Mann ging.", "Der Mann ging."),
]


@pytest.mark.parametrize("response,expected", PREAMBLE_CASES)
def test_robust_extraction_skips_preamble(response, expected):
    from hanyi.metrics.free_text import extract_after_preamble

    assert extract_after_preamble(response, labels=("German",)) == expected
    # the paper-faithful rule is unchanged: it still keeps the first line
    assert extract_labelled_answer(response, labels=("German",)) != expected


@pytest.mark.parametrize(
    "response",
    ["Der Mann ging.", "German: Der Mann ging.", "Der Mann ging.\nThe pun is kept.", "[German]: «Der Mann ging.»"],
)
def test_robust_extraction_agrees_without_preamble(response):
    from hanyi.metrics.free_text import extract_after_preamble

    assert extract_after_preamble(response, labels=("German",)) == "Der Mann ging."
    assert extract_after_preamble(response, labels=("German",)) == extract_labelled_answer(response, ("German",))


def test_robust_extraction_keeps_a_lone_preamble_line():
    from hanyi.metrics.free_text import extract_after_preamble

    assert extract_after_preamble("Here is the translation:", labels=("German",)) == "Here is the translation:"
    assert extract_after_preamble("", labels=("German",)) == ""
    assert extract_after_preamble(None) == ""
