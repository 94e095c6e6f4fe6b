"""A tolerant option-letter parser that needs a delimiter after the letter (not paper-faithful; ``*_robust`` metrics).

Defined in the Pun Rebus spec (ambiguity 4). Unlike a first-character parser, it never reads an English word as a
letter: "A vase depicting bats" and "Based on the image" are not answers A and B. Steps, first hit wins:

1. Normalise: NFKC (full-width ``Ｂ`` -> ``B``), remove markdown emphasis (``*``, backtick), strip leading whitespace,
   ``#``, ``>`` and quotes.
2. Leading answer: an optional ``option|answer|choice|选项|答案`` prefix (case-insensitive) with an optional colon,
   an optional ``(`` or ``[``, then an uppercase letter followed by a delimiter (``.`` ``)`` ``]`` ``:`` ``：`` ``,``
   ``，`` ``;`` ``、`` or a dash), the end of its *line* (so ``"B\n<justification>"`` and ``"B\n\nB"`` parse), or
   whitespace plus that option's own text. These are the formats the Pun Rebus prompts ask for ("start with the
   chosen letter", optionally "followed by a justification", the Qwen wording "A. Longevity and Good Health" then a
   new line) and their usual chat renderings (``**B**``, ``**B.**``, ``# B``, ``> B``, ``Answer: **B**``).
   A letter followed by ``.`` and a letter is an abbreviation (``"E.g."``, ``"A.k.a."``), and a leading list of
   letters (``"A, B and D all fit"``) is no answer (``"B, B is right"``, ``"B, A pair of bats"`` are no list).
3. A declared choice within the first 200 characters: ``the answer is B``, ``the best is E``, ``I choose B``
   (also ``chose``, ``pick``, ``select``, ``go with``), the letter not followed by another letter.
4. A standalone letter followed by ``.``, ``)``, ``:`` or ``,`` within the first 200 characters (same abbreviation
   and list rules), or a line that holds nothing but a letter (``"Looking at the bats...\n\nB"``).
5. Exactly one option text appearing in the response (case-insensitive).

Otherwise ``None`` (unparsed, counted wrong by the caller).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

_EMPHASIS = re.compile(r"[*`]")
_LEAD_STRIP = re.compile(r"^[\s*#>`\"'“”‘’]+")
_PREFIX = r"(?:(?i:option|answer|choice)|选项|答案)\s*[:：]?\s*"
#: What may follow a leading letter: punctuation, or a dash after optional spaces ("B - Happiness").
_DELIM = r"\.(?![A-Za-z])|[\):：\],，;；、]|\s+[-–—]|[-–—]\s"
#: A declared choice: "the answer is B", "the best is E", "I choose B", "I'd go with (C)".
_DECLARED = (
    r"(?i:\banswer\s+is|\bbest\s+(?:answer\s+|option\s+|choice\s+|fit\s+)?is|\bchoose|\bchose|\bpick|\bselect"
    r"|\bgo\s+with)\s*[:：]?\s*(?i:option\s+)?[\(\[]?"
)


def _letter_list(letters: str) -> str:
    """A letter then another, not itself nor the article: ``A, B``, ``A and D``, ``A/B``; not ``B, B is``, ``B, A bat``."""
    other = rf"(?!(?P=first)(?![A-Za-z])|A\s+(?!(?i:and|or)\b)[a-z])[{letters}]"
    return rf"(?P<first>[{letters}])\s*(?:[,，、/]|\s(?i:and|or)\s)\s*[\(\[]?{other}(?![A-Za-z])"


def extract_choice_delimited(response: str | None, options: Sequence[tuple[str, str]]) -> str | None:
    """Letter chosen in ``response`` among ``options`` (``(letter, text)`` pairs), or ``None``.

    >>> opts = [("A", "Longevity and Good Health"), ("B", "Happiness, Joy, Good Luck")]
    >>> [extract_choice_delimited(r, opts) for r in ["**B.** Happiness", "Ｂ", "Answer: (A)", "选项B"]]
    ['B', 'B', 'A', 'B']
    >>> [extract_choice_delimited(r, opts) for r in ["Based on the bats", "A vase with bats", ""]]
    [None, None, None]
    >>> extract_choice_delimited("It shows happiness, joy, good luck.", opts)
    'B'
    >>> [extract_choice_delimited(r, opts) for r in ["B\\nThe bats...", "**B**\\n\\nThe bats", "B, Happiness", "B\\n\\nB"]]
    ['B', 'B', 'B', 'B']
    >>> [extract_choice_delimited(r, opts) for r in ["The answer is B", "A and B fit, but the best is A.", "E.g. bats"]]
    ['B', 'A', None]
    """
    if not isinstance(response, str):
        return None
    text = _LEAD_STRIP.sub("", _EMPHASIS.sub("", unicodedata.normalize("NFKC", response)))
    if not text:
        return None
    listed_lead, leads, declared, standalone, alone, lowered_options = _patterns(tuple(map(tuple, options)))
    if not listed_lead.match(text):
        for letter, lead in leads:
            if lead.match(text):
                return letter
    m = declared.search(text[:200]) or standalone.search(text[:200]) or alone.search(text)
    if m:
        return m.group("letter")
    lowered = text.lower()
    hits = [letter for letter, option_text in lowered_options if option_text in lowered]
    return hits[0] if len(hits) == 1 else None


@functools.lru_cache(maxsize=64)
def _patterns(options: tuple) -> tuple:
    """The compiled patterns of :func:`extract_choice_delimited` for one set of options, built once (a task has one
    or a few option sets; building and looking up the patterns per call was two thirds of its cost)."""
    letters = "".join(re.escape(letter) for letter, _ in options)
    listed = _letter_list(letters)
    leads = tuple(
        (
            letter,
            re.compile(
                rf"^(?:{_PREFIX})?[\(\[]?{re.escape(letter)}(?:{_DELIM}|[ \t]*(?:\n|$)|\s+(?i:{re.escape(text)}))"
            ),
        )
        for letter, text in options
    )
    return (
        re.compile(rf"(?:{_PREFIX})?[\(\[]?{listed}"),
        leads,
        re.compile(rf"{_DECLARED}(?P<letter>[{letters}])(?![A-Za-z])"),
        re.compile(rf"\b(?!{listed})(?P<letter>[{letters}])(?:\.(?![A-Za-z])|[\):,])"),
        re.compile(rf"(?m)^[ \t]*(?P<letter>[{letters}])[ \t]*$"),
        tuple((letter, text.lower()) for letter, text in options),
    )
