"""One judgement (:class:`JudgeResult`) and the aggregate over many (:func:`summarize_judgements`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

PARSE_FAILURE = "parse_failure"
REQUEST_FAILED = "request_failed"


@dataclass
class JudgeResult:
    """The judge's verdict on one prompt, with its evidence.

    Attributes:
        prompt_hash: sha256 hex of the request (model, messages incl. system, temperature, max_tokens); the cache key.
        raw: the judge's answer text, or ``None`` when the request failed.
        value: ``parse(raw)``, or ``None`` when unparseable or failed.
        error: ``None`` on success, ``"parse_failure"`` when ``parse`` returned ``None`` (or raised), or
            ``"request_failed: <reason>"`` when every attempt failed.
        cached: ``True`` when ``raw`` came from the on-disk cache (no HTTP call).
    """

    prompt_hash: str
    raw: str | None
    value: Any | None
    error: str | None
    cached: bool

    @property
    def request_failed(self) -> bool:
        """True when no answer was obtained from the judge."""
        return self.error is not None and self.error.startswith(REQUEST_FAILED)


def summarize_judgements(results: Sequence[JudgeResult]) -> dict:
    """Mean judge value over the items that were scored, with the counts needed to read it honestly.

    Items whose request failed or whose answer could not be parsed are *excluded* from the mean (never counted as
    0) and reported in ``n_request_failures`` / ``n_parse_failures``; ``n_scored`` is the denominator of ``mean``.
    Booleans count as 1/0, so the mean of :func:`parse_yes_no` verdicts is the yes-rate.

    Args:
        results: judgements whose ``value`` is a real number, a bool, or ``None``.

    Returns:
        ``{"mean": float (nan when nothing was scored), "n": int, "n_scored": int, "n_parse_failures": int,
        "n_request_failures": int}``.

    Raises:
        TypeError: if a ``value`` is neither ``None`` nor a real number.

    >>> ok = JudgeResult("h1", "Score: 4", 4, None, False)
    >>> ok2 = JudgeResult("h2", "Score: 5", 5, None, True)
    >>> bad = JudgeResult("h3", "no idea", None, "parse_failure", False)
    >>> down = JudgeResult("h4", None, None, "request_failed: HTTP 503", False)
    >>> summarize_judgements([ok, ok2, bad, down])
    {'mean': 4.5, 'n': 4, 'n_scored': 2, 'n_parse_failures': 1, 'n_request_failures': 1}
    >>> summarize_judgements([])["mean"]
    nan
    """
    total = 0.0
    n_scored = n_parse = n_request = 0
    for result in results:
        if result.value is not None:
            if not isinstance(result.value, Real):
                raise TypeError(f"summarize_judgements needs numeric values, got {type(result.value).__name__}")
            total += float(result.value)
            n_scored += 1
        elif result.error == PARSE_FAILURE:
            n_parse += 1
        elif result.request_failed:
            n_request += 1
    return {
        "mean": total / n_scored if n_scored else math.nan,
        "n": len(results),
        "n_scored": n_scored,
        "n_parse_failures": n_parse,
        "n_request_failures": n_request,
    }
