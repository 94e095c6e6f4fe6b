"""Property tests for every answer parser: any input string -> a defined result, never an exception.

Inputs: arbitrary Unicode, empty and whitespace, huge strings, CJK, full-width forms, markdown decoration, and
strings built around a valid answer. Each parser is listed once in ``PARSERS`` with the predicate its result must
satisfy; a parser added to hanyi.metrics belongs in this table.
"""

from __future__ import annotations

import importlib
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _letter_or_none(letters):
    return lambda r: r is None or (isinstance(r, str) and r in letters)


def _is(*types):
    return lambda r: isinstance(r, types)


def _box_or_none(r):
    return r is None or (
        isinstance(r, tuple) and len(r) == 4 and all(isinstance(v, float) and math.isfinite(v) for v in r)
    )


def _critique_split(r):
    """split_critique's documented shape, with JSON that is standard (no NaN/inf anywhere in it)."""
    return (
        isinstance(r, dict)
        and isinstance(r["commentary"], str)
        and (r["json_text"] is None or isinstance(r["json_text"], str))
        and (r["json"] is None or isinstance(r["json"], dict))
        and (r["json_error"] is None or isinstance(r["json_error"], str))
        and r["json_valid"] is (r["json_error"] is None)
        and (r["json"] is None or _finite_json(r["json"]))
    )


def _finite_json(value):
    """No NaN/inf anywhere in a parsed JSON value (iterative: the value may be nested thousands deep)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return False
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return True


def _loglik_or_none(r):
    return r is None or (
        isinstance(r, tuple)
        and len(r) == 2
        and isinstance(r[0], float)
        and not math.isnan(r[0])
        and isinstance(r[1], bool)
    )


def _score_or_none(low, high):
    return lambda r: r is None or (isinstance(r, int) and low <= r <= high)


PUNREBUS_OPTIONS = [(c, f"option {c}") for c in "ABCDEFG"]
CII_OPTIONS = ["勤劳致富", "百年好合", "年年有余", "马到成功", "步步高升", "五福临门"]

# (module, function, kwargs, predicate on the result): every answer parser in hanyi.metrics.
PARSERS = [
    ("hanyi.metrics.choice", "extract_leading_letter", {"letters": "ABCDEFG"}, _letter_or_none("ABCDEFG")),
    (
        "hanyi.metrics.choice_delimited",
        "extract_choice_delimited",
        {"options": PUNREBUS_OPTIONS},
        _letter_or_none("ABCDEFG"),
    ),
    ("hanyi.metrics.choice_punrebus", "extract_first_char_letter", {}, _letter_or_none("ABCDEFG")),
    # official port: may return G/H (its scan range) and "error" for a dict (an API error object)
    (
        "hanyi.metrics.cii_extract",
        "extract_option_labels",
        {"options": CII_OPTIONS},
        lambda r: r == "error" or _letter_or_none("ABCDEFGH")(r),
    ),
    (
        "hanyi.metrics.cii_extract",
        "extract_option_labels",
        {},
        lambda r: r == "error" or _letter_or_none("ABCDEFGH")(r),
    ),
    ("hanyi.metrics.cii_extract", "extract_answer_robust", {"options": CII_OPTIONS}, _letter_or_none("ABCDEF")),
    ("hanyi.metrics.cii_ctc", "parse_ctc_score", {}, lambda r: r is None or (isinstance(r, int) and r >= 0)),
    (
        "hanyi.metrics.elements",
        "parse_elements_official",
        {},
        lambda r: r is None or (isinstance(r, list) and all(isinstance(e, str) for e in r)),
    ),
    ("hanyi.metrics.free_text", "extract_labelled_answer", {}, _is(str)),
    ("hanyi.metrics.bbox", "parse_box", {}, _box_or_none),
    ("hanyi.metrics.ranking", "parse_loglikelihood", {}, _loglik_or_none),
    ("hanyi.metrics.short_answer_zh", "clean_answer", {}, _is(str)),
    ("hanyi.metrics.critique_json", "split_critique", {}, _critique_split),
    ("hanyi.metrics.judge", "parse_integer_score", {"low": 1, "high": 5}, _score_or_none(1, 5)),
    ("hanyi.metrics.judge", "parse_yes_no", {}, lambda r: r is None or isinstance(r, bool)),
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
BRACKETS = st.sampled_from(list("{}[]()<>\"'"))
# Nesting past Python's recursion limit, unclosed openers, and one opener repeated around a real answer.
NESTED = st.one_of(
    st.builds(
        lambda o, n: o * n,
        st.sampled_from(["{", "[", "(", '{"a":', '{"bbox": [', "```json\n["]),
        st.integers(1, 30_000),
    ),
    st.builds(
        lambda pair, n, core: pair[0] * n + core + pair[1] * n,
        st.sampled_from([("{", "}"), ("[", "]"), ("(", ")"), ('{"a":', "}")]),
        st.integers(1, 5_000),
        st.sampled_from(["", "1", '"bbox": [1, 2, 3, 4]', "(1,2),(3,4)", "A"]),
    ),
    st.text(alphabet=BRACKETS, max_size=500),
)
# NaN / inf in every spelling a model (or a JSON encoder) may produce, inside the formats the parsers read.
NONFINITE = st.builds(
    lambda fmt, v: fmt.format(v=v),
    st.sampled_from(
        [
            "[{v}, 0, 10, 10]",
            '{{"bbox": [{v}, 0, 10, 10]}}',
            '{{"bbox_2d": [0, 0, {v}, 10]}}',
            "({v},1),(2,3)",
            "({v}, False)",
            "{v}",
            "score: {v}",
            '```json\n{{"artwork_identifier": {v}}}\n```',
            '{{"a": {v}}}',
        ]
    ),
    st.sampled_from(["NaN", "nan", "Infinity", "-Infinity", "inf", "1e400", "9" * 400, "-" + "9" * 400]),
)
# 10^5-character answers: repeated openers, digits, and a valid answer buried at the end.
HUGE = st.builds(
    lambda unit, tail: (unit * (100_000 // len(unit)))[:100_000] + tail,
    st.sampled_from(["{", "[", "(", "9", "A", '"bbox":[', "(1,2),(3,", "[1,", "选", " ", "\n", "{}"]),
    st.sampled_from(["", "[1, 2, 3, 4]", "A", '{"x": 1}']),
)
TEXT = st.one_of(
    st.text(),
    NESTED,
    NONFINITE,
    HUGE,
    st.text(alphabet=st.one_of(CJK, PUNCT), max_size=200),
    st.text(alphabet=st.one_of(FULLWIDTH, PUNCT), max_size=200),
    MARKDOWN,
    st.lists(st.one_of(MARKDOWN, st.text(alphabet=CJK, max_size=20)), max_size=8).map(" ".join),
    st.sampled_from(
        ["", " ", "\n", "\u3000", "\x00", "None", "null", "A" * 100_000, "选" * 50_000, "9" * 5_000, "[" * 10_000]
    ),
)


@pytest.mark.parametrize(
    ("module", "name", "kwargs", "ok"),
    PARSERS,
    ids=[f"{m.rsplit('.', 1)[-1]}.{n}-{i}" for i, (m, n, _, _) in enumerate(PARSERS)],
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_parser_returns_a_defined_result_for_any_text(module, name, kwargs, ok, text):
    result = _load(module, name)(text, **kwargs)
    assert ok(result), f"{module}.{name}({text[:80]!r}) -> {result!r}"


@pytest.mark.parametrize(
    ("module", "name", "kwargs", "ok"),
    PARSERS,
    ids=[f"{m.rsplit('.', 1)[-1]}.{n}-{i}" for i, (m, n, _, _) in enumerate(PARSERS)],
)
@pytest.mark.parametrize(
    "value", [None, 3, b"A", ["A"], {"a": 1}, True, float("nan"), float("inf"), 1e400, ("A",), 2.5, object()]
)
def test_parser_tolerates_non_strings(module, name, kwargs, ok, value):
    assert ok(_load(module, name)(value, **kwargs))
