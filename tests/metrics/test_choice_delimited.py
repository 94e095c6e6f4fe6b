"""hanyi.metrics.choice_delimited: the robust letter parser of the spec (ambiguity 4), table-driven."""

import pytest

from hanyi.metrics.choice_delimited import extract_choice_delimited
from hanyi.tasks.punrebus.constants import OPTIONS

CASES = [
    ("B", "B"),
    ("B. Happiness, Joy, Good Luck", "B"),
    ("**B.** Happiness", "B"),
    ("(C) Prestige", "C"),
    ("[D]", "D"),
    ("**B**", "B"),
    ("Option E", "E"),
    ("Answer: F.", "F"),
    ("答案：G", "G"),
    ("选项B", "B"),
    ("Ｂ．", "B"),
    ("> `A:` longevity", "A"),
    ("A Longevity and Good Health", "A"),
    ("Based on the bats and coins, B.", "B"),  # preamble, then a delimited letter
    ("Based on the bats and coins", None),  # the paper parser reads B here; the robust one does not
    ("A vase depicting peaches", None),  # the English article is not answer A
    ("The artwork means wealth or prosperity", "E"),  # unique option text
    ("Longevity and good health, or happiness, joy, good luck", None),  # two option texts: ambiguous
    ("", None),
    ("   ", None),
    (None, None),
]


@pytest.mark.parametrize("response, expected", CASES)
def test_delimited_parser(response, expected):
    assert extract_choice_delimited(response, OPTIONS) == expected
