"""Split a two-part critique (free commentary + a JSON summary) and check the JSON part.

VULCA's core prompt (released ``prompt.md``, spec §3.2.1) asks for "Part One: Commentary Text" followed by "Part Two:
Structured Evaluation in JSON Format" with five top-level keys. The paper reports no JSON metric; ``json_valid`` is
our addition (spec §5.3). The released scorer classified the *whole* response, JSON included [CODE]; the commentary
split serves the optional ``score_text: commentary`` mode.
"""

from __future__ import annotations

import json
import math
import re

#: Top-level keys of the Part Two schema, in prompt order.
PART_TWO_KEYS = (
    "artwork_identifier",
    "evaluative_stance",
    "core_focal_points",
    "argumentative_quality_impression",
    "multimodal_input_notes",
)
_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)```", re.S)
_PART_TWO_HEADING = re.compile(r"Part Two", re.I)
#: Characters the balanced-object search may visit in one answer. Each unclosed ``{`` costs a scan to the end, so
#: ``"{" * 8000`` alone would take ~32M steps (seconds); past this bound the answer is unparsed instead.
_SEARCH_BUDGET = 1_000_000


class _SearchTooLong(Exception):
    """The balanced-object search ran past :data:`_SEARCH_BUDGET`."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not standard JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1E400 parses to inf
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _last_balanced_object(text: str) -> tuple[int, str] | None:
    """(start, substring) of the last balanced ``{...}`` in ``text`` (string-aware), or None.

    Raises :class:`_SearchTooLong` after visiting :data:`_SEARCH_BUDGET` characters.
    """
    best = None
    budget = _SEARCH_BUDGET
    for start in (m.start() for m in re.finditer(r"\{", text)):
        if best is not None and start < best[0] + len(best[1]):
            continue
        budget -= len(text) - start
        if budget < 0:
            raise _SearchTooLong
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                esc = (ch == "\\") and not esc
                if ch == '"' and not esc:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    best = (start, text[start : i + 1])
                    break
    return best


def split_critique(response: str) -> dict:
    """Split ``response`` into commentary and the Part Two JSON.

    The JSON candidate is the last fenced code block, else the last balanced ``{...}``. The commentary is the text
    before it, with a trailing "Part Two" heading line removed. Any input gives a result, never an exception: JSON
    nested past Python's recursion limit, ``NaN``/``Infinity`` (not standard JSON) and answers whose brace search
    would exceed a fixed work bound are reported in ``json_error`` with ``json_valid`` false.

    Returns:
        ``{"commentary": str, "json_text": str | None, "json": dict | None, "json_error": str | None,
        "json_valid": bool}``; ``json_valid`` = parses as an object holding all five :data:`PART_TWO_KEYS`.

    >>> r = split_critique('TEXT:\\nFine silk.\\n**Part Two: JSON**\\n```json\\n{"artwork_identifier": "x"}\\n```')
    >>> r["commentary"], r["json"], r["json_valid"], r["json_error"]
    ('TEXT:\\nFine silk.', {'artwork_identifier': 'x'}, False, 'missing keys: evaluative_stance, core_focal_points, argumentative_quality_impression, multimodal_input_notes')
    >>> split_critique("no json here")["json_error"]
    'no JSON object found'
    >>> split_critique('{"artwork_identifier": NaN}')["json_error"]
    'invalid JSON: NaN is not standard JSON'
    """
    text = response if isinstance(response, str) else ""
    fences = list(_FENCE.finditer(text))
    too_long = False
    if fences:
        start, json_text = fences[-1].start(), fences[-1].group(1).strip()
    else:
        try:
            found = _last_balanced_object(text)
        except _SearchTooLong:
            found, too_long = None, True
        start, json_text = found if found else (len(text), None)
    lines = text[:start].rstrip().split("\n")
    if lines and _PART_TWO_HEADING.search(lines[-1]):
        lines = lines[:-1]
    commentary = "\n".join(lines)
    result = {
        "commentary": commentary.strip(),
        "json_text": json_text,
        "json": None,
        "json_error": None,
        "json_valid": False,
    }
    if json_text is None:
        result["json_error"] = "unparsed: too many unbalanced '{' to search" if too_long else "no JSON object found"
        return result
    try:
        obj = json.loads(json_text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        result["json_error"] = f"invalid JSON: {exc.msg} at line {exc.lineno}"
        return result
    except RecursionError:
        result["json_error"] = "invalid JSON: nested too deeply"
        return result
    except ValueError as exc:
        result["json_error"] = f"invalid JSON: {exc}"
        return result
    if not isinstance(obj, dict):
        result["json_error"] = f"JSON is a {type(obj).__name__}, not an object"
        return result
    result["json"] = obj
    missing = [k for k in PART_TWO_KEYS if k not in obj]
    result["json_error"] = f"missing keys: {', '.join(missing)}" if missing else None
    result["json_valid"] = not missing
    return result
