"""Every ``HANYI_*`` setting checked when a task loads, before any model call, with one clear line.

Settings that are only read after generation (the judge, BERTScore, the VULCA NLI model, the CVLUE log-likelihood
kind) used to fail in ``process_results`` or aggregation, where lmms-eval swallows the error and exits 0 with nothing
written: hours of generation lost to a typo. :func:`validate` runs from ``hanyi.data.sources`` every time a task YAML
is loaded (``dataset_path: !function dataset.path``, :func:`hanyi.data.sources.dataset_path`), so a bad value stops the run before the model
is asked anything, with exit status 1. It raises :class:`SettingsError` naming every bad value on one line (logged
first). Unknown ``HANYI_*`` names are warned about once (a typo is otherwise silently ignored).
"""

from __future__ import annotations

import functools
import logging
import math
import os
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hanyi.metrics.device import problem as device_problem

if TYPE_CHECKING:
    from collections.abc import Callable

log = logging.getLogger("hanyi.settings")


class SettingsError(SystemExit):
    """One or more ``HANYI_*`` values are invalid; the message names each variable, its value and what is allowed.

    A ``SystemExit``, not an ``Exception``: lmms-eval's CLI catches every ``Exception`` during evaluation and exits
    0, and its YAML loader rewraps any ``Exception`` as "Failed to import function"; a ``SystemExit`` passes through
    both, so the run stops before the model is called, prints this one line, and exits with status 1. Python callers
    catch ``SettingsError`` (or ``SystemExit``).
    """


def _int(minimum: int) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            number = int(value)
        except ValueError:
            return f"expected an integer >= {minimum}"
        return None if number >= minimum else f"expected an integer >= {minimum}"

    return check


def _float(low: float, high: float = math.inf, low_open: bool = False) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        ok = math.isfinite(number) and (number > low if low_open else number >= low) and number <= high
        bound = f"{'>' if low_open else '>='} {low:g}" + (f" and <= {high:g}" if high != math.inf else "")
        return None if ok else f"expected a number {bound}"

    return check


def _choice(*allowed: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value.lower() in allowed else f"expected one of {', '.join(allowed)}"

    return check


def _url(value: str) -> str | None:
    try:
        parts = urlsplit(value)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        ok = False
    if ok and (parts.query or parts.fragment):  # a ?key= was accepted, then every request 404ed
        return "no query string: the base URL only (a key goes in the API-key environment variable)"
    return None if ok else "expected an http(s) URL with a host, e.g. https://api.openai.com/v1"


def _identifier(value: str) -> str | None:
    return None if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) else "expected an environment variable name"


def _existing_dir(value: str) -> str | None:
    return None if os.path.isdir(os.path.expanduser(value)) else "no such directory"


def _existing_file(value: str) -> str | None:
    return None if os.path.isfile(os.path.expanduser(value)) else "no such file"


def _template(value: str) -> str | None:
    if value.count("{}") != 1:
        return "expected a hypothesis template with exactly one '{}' for the label, e.g. 'This example is {}.'"
    try:
        value.format("label")
    except (IndexError, KeyError, ValueError):
        return "expected a template whose only placeholder is '{}' (escape other braces as '{{' '}}')"
    return None


def _any(_value: str) -> str | None:
    return None


_BOOL = _choice("1", "0", "true", "false", "yes", "no")
#: Settings whose values are read case-insensitively: :func:`value` gives them in lower case (booleans as bool).
CHOICES = {"HANYI_CVLUE_LOGLIK", "HANYI_VULCA_SCORE_TEXT", "HANYI_UNPIE_DOWNLOAD_IMAGES"}
BOOLEANS = {"HANYI_UNPIE_DOWNLOAD_IMAGES"}

#: ``HANYI_*`` variable -> check(value) returning ``None`` or what is wrong. Empty values count as unset.
CHECKS: dict[str, Callable[[str], str | None]] = {
    "HANYI_DATA_ROOT": _any,  # resolved (and reported) by hanyi.data.sources
    "HANYI_CACHE_DIR": _any,
    "HANYI_NO_AUTOHOOK": _any,
    "HANYI_DEBUG": _any,  # tracebacks instead of one-line CLI errors
    "HANYI_EVAL_CACHE_EVERY": _int(1),  # hanyi eval --use_cache: requests per model call (hanyi.host.cache_chunks)
    "HANYI_FULL_SCALE_DIR": _any,  # benchmarks/full_scale.py data cache
    "HANYI_PUNREBUS_DATA": _any,
    "HANYI_CVLUE_DATA": _any,
    "HANYI_CII_DATA": _any,
    "HANYI_UNPIE_DATA": _any,
    "HANYI_VULCA_DATA": _any,
    "HANYI_VULCA_BENCH_DATA": _any,
    "HANYI_JUDGE_BASE_URL": _url,
    "HANYI_JUDGE_MODEL": _any,
    "HANYI_JUDGE_API_KEY_ENV": _identifier,
    "HANYI_JUDGE_TEMPERATURE": _float(0.0, 2.0),
    "HANYI_JUDGE_MAX_TOKENS": _int(1),
    "HANYI_JUDGE_TOP_P": _float(0.0, 1.0, low_open=True),
    "HANYI_JUDGE_CONCURRENCY": _int(1),
    "HANYI_JUDGE_TIMEOUT": _float(0.0, low_open=True),
    "HANYI_JUDGE_MAX_RETRIES": _int(0),
    "HANYI_JUDGE_COOLDOWN": _float(0.0),  # seconds a judge found down is not asked (0: no circuit breaker)
    "HANYI_JUDGE_TRIP_AFTER": _int(1),  # consecutive 5xx / unreadable answers that take a judge as down
    "HANYI_JUDGE_CACHE_DIR": _any,
    "HANYI_PUNREBUS_SBERT_MODEL": _any,
    "HANYI_CVLUE_LOGLIK": _choice("auto", "nll", "logprob"),
    "HANYI_IMAGE_MAX_PIXELS": _int(1),  # the most pixels an image may declare (hanyi.data.images.max_pixels)
    "HANYI_CII_IMAGE_ROOT": _existing_dir,
    "HANYI_CII_CTC_JSON": _existing_file,
    "HANYI_UNPIE_BERTSCORE_MODEL": _any,
    "HANYI_UNPIE_BERTSCORE_LAYERS": _int(1),
    "HANYI_UNPIE_BERTSCORE_BATCH": _int(1),
    "HANYI_UNPIE_IMAGE_ROOT": _existing_dir,
    "HANYI_UNPIE_IMAGE_CACHE": _any,
    "HANYI_UNPIE_DOWNLOAD_IMAGES": _BOOL,
    "HANYI_UNPIE_CAPTIONS": _existing_file,
    "HANYI_VULCA_NLI_MODEL": _any,
    "HANYI_VULCA_NLI_TEMPLATE": _template,
    "HANYI_VULCA_NLI_MAX_LENGTH": _int(8),
    "HANYI_VULCA_NLI_BATCH_SIZE": _int(1),
    "HANYI_VULCA_NLI_DEVICE": device_problem,
    "HANYI_VULCA_EMBED_MODEL": _any,
    "HANYI_VULCA_EMBED_MODEL_ID": _any,
    "HANYI_VULCA_EMBED_DEVICE": device_problem,
    "HANYI_SCORER_DEVICE": device_problem,  # every scoring backbone (hanyi.metrics.device)
    "HANYI_VULCA_SCORE_TEXT": _choice("commentary", "response"),
}


def _cross_checks(env) -> list[str]:
    """Checks across variables: a half-configured judge; a BERTScore model with no known layer."""
    problems = []
    url, model = env.get("HANYI_JUDGE_BASE_URL", "").strip(), env.get("HANYI_JUDGE_MODEL", "").strip()
    if bool(url) != bool(model):
        missing = "HANYI_JUDGE_MODEL" if url else "HANYI_JUDGE_BASE_URL"
        given = "HANYI_JUDGE_BASE_URL" if url else "HANYI_JUDGE_MODEL"
        problems.append(f"{given} is set but {missing} is not: set both to use the judge, or neither")
    bert = env.get("HANYI_UNPIE_BERTSCORE_MODEL", "").strip()
    if bert and not env.get("HANYI_UNPIE_BERTSCORE_LAYERS", "").strip():
        from hanyi.metrics.reference_choice import DEFAULT_BERTSCORE_MODEL

        if bert != DEFAULT_BERTSCORE_MODEL and os.path.basename(os.path.normpath(bert)) != DEFAULT_BERTSCORE_MODEL:
            try:
                from bert_score.utils import model2layers
            except ImportError:  # pragma: no cover - bert-score is a dependency
                model2layers = {}
            if bert not in model2layers:
                problems.append(
                    f"HANYI_UNPIE_BERTSCORE_MODEL={bert!r} has no known layer: set HANYI_UNPIE_BERTSCORE_LAYERS "
                    f"(the paper's bert-base-multilingual-cased uses 9)"
                )
    return problems


def _shown(name: str, value: str) -> str:
    """The value as it may appear in a message: URLs without user-info or query (never a secret in a log)."""
    if "URL" in name:
        from hanyi.metrics.judge.config import redact_url

        return redact_url(value)
    return value


def problems(env=None) -> list[str]:
    """Every invalid ``HANYI_*`` value in ``env`` (default ``os.environ``), one message each; ``[]`` when all is well.

    >>> problems({"HANYI_JUDGE_CONCURRENCY": "0"})
    ["HANYI_JUDGE_CONCURRENCY='0': expected an integer >= 1"]
    >>> problems({"HANYI_CVLUE_LOGLIK": "nll", "HANYI_VULCA_NLI_TEMPLATE": "This text is about {}."})
    []
    """
    env = os.environ if env is None else env
    found = []
    for name, check in CHECKS.items():
        value = env.get(name, "").strip()
        if value:
            why = check(value)
            if why:
                found.append(f"{name}={_shown(name, value)!r}: {why}")
    return found + _cross_checks(env)


def value(name: str, default=None, env=None):
    """The validated, normalised value of setting ``name``: what every consumer reads, never the raw environment.

    Surrounding blanks stripped; empty counts as unset (``default``); choice settings in lower case (``NLL`` is
    ``nll``); booleans as ``True``/``False`` (``YES`` is ``True``). An invalid value raises :class:`SettingsError`
    naming it, as :func:`validate` does at task load.

    >>> value("HANYI_CVLUE_LOGLIK", "auto", {"HANYI_CVLUE_LOGLIK": " NLL "}), value("HANYI_UNPIE_DOWNLOAD_IMAGES", False, {"HANYI_UNPIE_DOWNLOAD_IMAGES": "YES"})
    ('nll', True)
    """
    env = os.environ if env is None else env
    raw = env.get(name, "").strip()
    if not raw:
        return default
    why = CHECKS[name](raw) if name in CHECKS else None
    if why:
        raise SettingsError(f"hanyi: invalid settings, fix before running: {name}={_shown(name, raw)!r}: {why}")
    if name in BOOLEANS:
        return raw.lower() in ("1", "true", "yes")
    return raw.lower() if name in CHOICES else raw


@functools.cache
def _warn_unknown(names: tuple[str, ...]) -> None:
    from hanyi.docpath import doc

    log.warning("hanyi: unknown setting(s) %s are ignored (typo?); known: %s", ", ".join(names), doc("backbones.md"))


def validate(env=None) -> None:
    """Raise :class:`SettingsError` when a ``HANYI_*`` value is invalid (logged first, on one line)."""
    env = os.environ if env is None else env
    unknown = tuple(sorted(n for n in env if n.startswith("HANYI_") and n not in CHECKS))
    if unknown:
        _warn_unknown(unknown)
    found = problems(env)
    if found:
        message = "hanyi: invalid settings, fix before running: " + "; ".join(found)
        log.error("%s", message)
        raise SettingsError(message)
