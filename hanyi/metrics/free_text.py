"""Short free-text answers: label stripping, exact match at three strictness levels, and word recovery.

Used by UNPIE (Chung et al., EMNLP 2024, arXiv 2410.01023). The paper scores pun grounding by "the exact match of the
surface text form" (§4.2) and publishes no code, so the normalisation below is our documented reading
(``docs/unpie.md``, "Answer extraction"):

* :func:`extract_labelled_answer` removes an echoed ``[answer]:`` / ``[German]:`` / ``answer:`` label, keeps the first
  non-empty line and one layer of matching quotes;
* :func:`extract_after_preamble` (ours, robust, its own metric keys) also skips a chat preamble line ("Here is the
  translation:") and an inline "German translation:" label before applying the same rule;
* :func:`exact_match` compares case-, width- and edge-punctuation-insensitively (headline metric);
* :func:`exact_match_strict` compares the raw stripped response with the gold string (transparency);
* :func:`exact_match_lenient` also accepts the sentence's plural surface form of a lemma gold ("buoys" for "buoy");
* :func:`word_recovered` checks that a sentence contains a word as a whole word, allowing a plural ``-s``/``-es``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

#: Matching quote pairs stripped (one layer) from an extracted answer.
QUOTE_PAIRS = (('"', '"'), ("'", "'"), ("“", "”"), ("«", "»"), ("„", "“"), ("‘", "’"), ("「", "」"))


def extract_labelled_answer(response: str, labels: Iterable[str] = ("answer",)) -> str:
    """The answer part of a model response (UNPIE spec §6.5).

    Strips whitespace; removes one leading echoed label ``[label]:`` or ``label:`` (case-insensitive, for each of
    ``labels``); keeps the first non-empty line; strips one layer of matching surrounding quotes. Returns ``""`` for
    an empty or non-string response.

    Args:
        response: the raw model output.
        labels: label names the prompt ends with, e.g. ``("answer",)`` or ``("German",)``.

    Returns:
        The extracted answer text (possibly empty).

    >>> extract_labelled_answer('[answer]: "cut"\\nBecause ...')
    'cut'
    >>> extract_labelled_answer("german: «Er und sein Partner.»", labels=("German",))
    'Er und sein Partner.'
    >>> extract_labelled_answer("\\n\\n  gecko  ")
    'gecko'
    >>> extract_labelled_answer(None)
    ''
    """
    if not isinstance(response, str):
        return ""
    text = unicodedata.normalize("NFC", response).strip()
    for label in labels:
        m = _label_pattern(label).match(text)
        if m:
            text = text[m.end() :].strip()
            break
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if len(line) < 2 or line[0] not in _QUOTE_LEFT:  # most answers: no pair to try
        return line
    for left, right in QUOTE_PAIRS:
        if line.startswith(left) and line.endswith(right):
            return line[len(left) : -len(right)].strip()
    return line


#: The first characters of :data:`QUOTE_PAIRS`' opening quotes (each one character).
_QUOTE_LEFT = frozenset(left[0] for left, _ in QUOTE_PAIRS)


@functools.lru_cache(maxsize=64)
def _label_pattern(label: str) -> re.Pattern:
    """An echoed ``[label]:`` or ``label:`` at the start (compiled once per label, not looked up per call)."""
    return re.compile(rf"^(?:\[\s*{re.escape(label)}\s*\]|{re.escape(label)})\s*[:：]", flags=re.IGNORECASE)


#: Chat openers that announce the answer instead of giving it ("Sure! Here is the translation").
_OPENER = re.compile(r"^(?:sure|certainly|of course|okay|ok|absolutely|here(?:\s+is|'s|\s+are))\b", re.IGNORECASE)
_LABEL_WORDS = (
    r"(?:translation|translated|sentence|answer|pun|english|german|french|korean|übersetzung|traduction|번역)"
)
#: An inline label before the answer on the same line: "German translation: ...", "Here is the answer: ...".
_INLINE_LABEL = re.compile(rf"^[^:：\n]{{0,40}}\b{_LABEL_WORDS}\b[^:：\n]{{0,20}}[:：]\s*(?=\S)", re.IGNORECASE)
_EMPHASIS = re.compile(r"\*\*|__")
_LINE_MARKER = re.compile(r"^(?:#{1,6}\s+|>\s*)")
_FENCE = re.compile(r"^(?:`{3,}\w*|-{3,}|\*{3,}|={3,})$")


def _unmarked(line: str) -> str:
    """A line without markdown emphasis, heading/quote markers and surrounding backticks."""
    line = _EMPHASIS.sub("", line.strip())
    return _LINE_MARKER.sub("", line).strip().strip("`").strip()


def extract_after_preamble(response: str, labels: Iterable[str] = ("answer",)) -> str:
    """Robust answer extraction (ours, not the paper's rule): the answer line after a chat preamble.

    Chat models often open with "Here is the translation:" and give the answer on the next line, which
    :func:`extract_labelled_answer` (first non-empty line) returns as the answer. This variant drops markdown
    emphasis and fences, skips leading lines that end with a colon or open with a chat opener ("Sure", "Certainly",
    "Here is") as long as a later line remains, removes an inline label naming the answer ("German translation:"),
    and then applies :func:`extract_labelled_answer` to the line found. A response without preamble gives the same
    result as :func:`extract_labelled_answer`.

    >>> extract_after_preamble("Here is the translation:\\n\\nEr und sein Partner.", labels=("German",))
    'Er und sein Partner.'
    >>> extract_after_preamble("Sure! **German translation:** «Er kam.»", labels=("German",))
    'Er kam.'
    >>> extract_after_preamble("Er kam.\\nThis keeps the pun.", labels=("German",))
    'Er kam.'
    """
    if not isinstance(response, str):
        return ""
    text = unicodedata.normalize("NFC", response)
    if _PLAIN_LINE.fullmatch(text):  # the rules below would leave it as it is (see _PLAIN_LINE)
        return extract_labelled_answer(text, labels)
    return _after_preamble(text, labels)


def _after_preamble(text: str, labels: Iterable[str]) -> str:
    """:func:`extract_after_preamble`'s rules on NFC ``text``, in full."""
    lines = [ln for ln in map(_unmarked, text.splitlines()) if ln and not _FENCE.match(ln)]
    i = 0
    while i < len(lines) - 1 and (lines[i].endswith((":", "：")) or _OPENER.match(lines[i])):
        i += 1
    line = _INLINE_LABEL.sub("", lines[i], count=1) if lines else ""
    return extract_labelled_answer(line, labels)


#: One line with nothing the preamble rules read: no line break (``str.splitlines``' own set), no emphasis, heading,
#: quote, fence or backtick character, no colon. On such a text the rules leave one stripped line with no label to
#: find, which :func:`extract_labelled_answer` reads as they would (tested against the full rules in
#: ``tests/test_served_hooks.py``): most answers skip the rules.
_PLAIN_LINE = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029*_#>`:：=-]*")


def normalise_answer(text: str) -> str:
    """Lowercase, Unicode NFKC, and strip leading/trailing punctuation and whitespace (inner text is kept).

    >>> normalise_answer("  “Cut.” ")
    'cut'
    >>> normalise_answer("for a song!")
    'for a song'
    """
    return _normalised(text or "")


@functools.lru_cache(maxsize=8192)
def _normalised(text: str) -> str:
    """:func:`normalise_answer`, cached: a doc's gold and answer are normalised up to four times per doc."""
    text = unicodedata.normalize("NFKC", text).lower()
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_edge(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith(("P", "S"))


def exact_match(prediction: str, gold: str) -> bool:
    """Headline grounding match: equal after :func:`normalise_answer` (an empty prediction never matches).

    >>> exact_match("Cut.", "cut")
    True
    >>> exact_match("cuts", "cut")
    False
    """
    p = normalise_answer(prediction)
    return bool(p) and p == normalise_answer(gold)


def exact_match_strict(response: str, gold: str) -> bool:
    """Raw match: the whole response, whitespace-stripped, equals ``gold`` exactly (no label, case or quote handling).

    >>> exact_match_strict(" cut\\n", "cut")
    True
    >>> exact_match_strict("Cut", "cut")
    False
    """
    return isinstance(response, str) and response.strip() == gold


def depluralise(word: str) -> str:
    """A crude English singular: drop ``-es`` after s/x/z/ch/sh, else a final ``-s`` (not ``-ss``).

    >>> [depluralise(w) for w in ("buoys", "boxes", "glass", "cut")]
    ['buoy', 'box', 'glass', 'cut']
    """
    if re.search(r"(?:s|x|z|ch|sh)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


_WORD = re.compile(r"\w+")


def exact_match_lenient(prediction: str, gold: str, sentence: str) -> bool:
    """:func:`exact_match`, or the prediction is a word of ``sentence`` whose :func:`depluralise` form is ``gold``.

    >>> exact_match_lenient("buoys", "buoy", "She kept the buoys in line.")
    True
    >>> exact_match_lenient("boys", "buoy", "She kept the buoys in line.")
    False
    """
    if exact_match(prediction, gold):
        return True
    p, g = normalise_answer(prediction), normalise_answer(gold)
    # a word w counts only when w == p and depluralise(w) == g, and depluralise(p) is a prefix of p: unless p starts
    # with g no word can count, and the sentence need not be read (most wrong answers stop here)
    if not p or not p.startswith(g) or depluralise(p) != g:
        return False
    words = _WORD.findall(unicodedata.normalize("NFKC", sentence or "").lower())
    return p in words  # a word equal to p: its depluralise form is p's, g (checked above)


def word_recovered(text: str, word: str) -> bool:
    """True when ``text`` contains ``word`` (case-insensitive) as a whole word or phrase, optionally + ``s``/``es``.

    >>> word_recovered("There was a terrible gecko.", "gecko")
    True
    >>> word_recovered("kept the buoys in line", "buoy")
    True
    >>> word_recovered("a terrible echo", "gecko")
    False
    >>> word_recovered("anything", "")
    False
    """
    w = normalise_answer(word)
    if not w or not isinstance(text, str):
        return False
    t = unicodedata.normalize("NFKC", text).lower()
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(part) for part in w.split()) + r"(?:e?s)?(?!\w)"
    return re.search(pattern, t) is not None
