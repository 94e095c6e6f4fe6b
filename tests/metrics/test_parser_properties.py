"""Property tests for every answer parser: any input string -> a defined result, never an exception.

Inputs: arbitrary Unicode, empty and whitespace, huge strings, CJK, full-width forms, markdown decoration, and
strings built around a valid answer. Each parser is listed once in ``PARSERS`` with the predicate its result must
satisfy; a parser added to hanyi.metrics belongs in this table.
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _letter_or_none(letters):
    return lambda r: r is None or (isinstance(r, str) and r in letters)


# (module, function, kwargs, predicate on the result)
PARSERS = [
    ("hanyi.metrics.choice", "extract_leading_letter", {"letters": "ABCDEFG"}, _letter_or_none("ABCDEFG")),
    ("hanyi.metrics.choice", "extract_choice_robust", {"letters": "ABCDEFG"}, _letter_or_none("ABCDEFG")),
    ("hanyi.metrics.choice", "extract_choice_robust", {"letters": "ABCDEF"}, _letter_or_none("ABCDEF")),
]


def _load(module, name):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:  # pragma: no cover - a renamed parser must be fixed in this table
        pytest.fail(f"parser {module}.{name} listed in PARSERS is missing: {exc}")


CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
FULLWIDTH = st.characters(min_codepoint=0xFF01, max_codepoint=0xFF5E)
PUNCT = st.sampled_from(list("*_#>`-()[]{}（）【】：:,，。. \n\t"))
MARKDOWN = st.builds(
    lambda pre, letter, post: f"{pre}{letter}{post}",
    st.sampled_from(["", "**", "# ", "> ", "- ", "(", "（", "`", "答案：", "Answer: ", "The answer is "]),
    st.sampled_from(list("ABCDEFGabcdefgＡＢＣ")),
    st.sampled_from(["", "**", ")", "）", ".", "。", ": because", "\n\nExplanation"]),
)
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=st.one_of(CJK, PUNCT), max_size=200),
    st.text(alphabet=st.one_of(FULLWIDTH, PUNCT), max_size=200),
    MARKDOWN,
    st.lists(st.one_of(MARKDOWN, st.text(alphabet=CJK, max_size=20)), max_size=8).map(" ".join),
    st.sampled_from(["", " ", "\n", "\u3000", "\x00", "None", "null", "A" * 100_000, "选" * 50_000]),
)


@pytest.mark.parametrize(
    ("module", "name", "kwargs", "ok"), PARSERS, ids=[f"{m.rsplit('.', 1)[-1]}.{n}" for m, n, _, _ in PARSERS]
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_parser_returns_a_defined_result_for_any_text(module, name, kwargs, ok, text):
    result = _load(module, name)(text, **kwargs)
    assert ok(result), f"{module}.{name}({text[:80]!r}) -> {result!r}"


@pytest.mark.parametrize(
    ("module", "name", "kwargs", "ok"), PARSERS, ids=[f"{m.rsplit('.', 1)[-1]}.{n}" for m, n, _, _ in PARSERS]
)
@pytest.mark.parametrize("value", [None, 3, b"A", ["A"], {"a": 1}])
def test_parser_tolerates_non_strings(module, name, kwargs, ok, value):
    assert ok(_load(module, name)(value, **kwargs))
