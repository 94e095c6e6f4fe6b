"""Judge configuration: :class:`JudgeConfig`, read from ``HANYI_JUDGE_*`` env vars and task-level overrides.

The configuration never holds the API key itself, only the *name* of the environment variable that holds it
(``api_key_env``); the key is read at request time by the client.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from hanyi.logs import get_logger

if TYPE_CHECKING:
    from collections.abc import Mapping

logger = get_logger("hanyi.judge")

# field name -> (environment variable, type). Order is the order of the docs table.
ENV_VARS: dict[str, tuple[str, type]] = {
    "base_url": ("HANYI_JUDGE_BASE_URL", str),
    "model": ("HANYI_JUDGE_MODEL", str),
    "api_key_env": ("HANYI_JUDGE_API_KEY_ENV", str),
    "temperature": ("HANYI_JUDGE_TEMPERATURE", float),
    "max_tokens": ("HANYI_JUDGE_MAX_TOKENS", int),
    "top_p": ("HANYI_JUDGE_TOP_P", float),
    "concurrency": ("HANYI_JUDGE_CONCURRENCY", int),
    "timeout_s": ("HANYI_JUDGE_TIMEOUT", float),
    "max_retries": ("HANYI_JUDGE_MAX_RETRIES", int),
    "cooldown_s": ("HANYI_JUDGE_COOLDOWN", float),  # a judge found down is not asked for this long (0: always)
    "trip_after": ("HANYI_JUDGE_TRIP_AFTER", int),  # this many 5xx / unreadable answers in a row: taken as down
    "cache_dir": ("HANYI_JUDGE_CACHE_DIR", str),
}

# override key (task metadata / lmms_eval_specific_kwargs) -> field name
OVERRIDE_KEYS: dict[str, str] = {f"judge_{name}": name for name in ENV_VARS} | {
    "judge_timeout": "timeout_s",
    "judge_backoff_base_s": "backoff_base_s",
    "judge_backoff_max_s": "backoff_max_s",
}
_FIELD_TYPES: dict[str, type] = {name: typ for name, (_, typ) in ENV_VARS.items()} | {
    "backoff_base_s": float,
    "backoff_max_s": float,
}


def redact_url(url: str) -> str:
    """Return ``url`` without user-info (``user:password@``), query string or fragment, for logs and reprs.

    >>> redact_url("https://user:s3cret@judge.example.org:8443/v1?key=abc")
    'https://judge.example.org:8443/v1'
    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def default_cache_dir() -> str:
    """``$HANYI_CACHE_DIR/judge`` if ``HANYI_CACHE_DIR`` is set, else ``~/.cache/hanyi/judge``."""
    root = os.environ.get("HANYI_CACHE_DIR")
    if root:
        return os.path.join(os.path.expanduser(root), "judge")
    return os.path.join(os.path.expanduser("~"), ".cache", "hanyi", "judge")


def _convert(name: str, value: Any, source: str) -> Any:
    typ = _FIELD_TYPES[name]
    if isinstance(value, str):
        value = value.strip()
    try:
        if typ is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        return typ(value)
    except (TypeError, ValueError):
        raise ValueError(f"{source}: expected {typ.__name__}, got {value!r}") from None


@dataclass(frozen=True)
class JudgeConfig:
    """Where and how to call the LLM judge (any OpenAI-compatible ``POST {base_url}/chat/completions``).

    ``api_key_env`` names the environment variable holding the key; the key is never stored here.
    ``cache_dir=None`` means :func:`default_cache_dir`. ``backoff_base_s`` / ``backoff_max_s`` shape the
    exponential backoff between retries (full jitter; a numeric ``Retry-After`` header is honoured up to the max).

    >>> cfg = JudgeConfig(base_url="https://u:pw@api.example.org/v1", model="gpt-4o")
    >>> "pw" in repr(cfg)
    False
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    top_p: float | None = None
    concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 5
    cooldown_s: float = 30.0
    trip_after: int = 6
    cache_dir: str | None = None
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0

    def __post_init__(self) -> None:
        if not self.base_url or not self.model:
            raise ValueError("JudgeConfig needs a non-empty base_url and model")
        if self.concurrency < 1:
            raise ValueError(f"JudgeConfig.concurrency must be >= 1, got {self.concurrency}")
        if self.max_retries < 0:
            raise ValueError(f"JudgeConfig.max_retries must be >= 0, got {self.max_retries}")
        if self.trip_after < 1:
            raise ValueError(f"JudgeConfig.trip_after must be >= 1, got {self.trip_after}")

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "base_url":
                value = redact_url(value)
            shown.append(f"{f.name}={value!r}")
        return f"JudgeConfig({', '.join(shown)})"

    __str__ = __repr__

    @property
    def endpoint(self) -> str:
        """The chat-completions URL that requests go to."""
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def resolved_cache_dir(self) -> str:
        """``cache_dir`` with ``~`` expanded, or :func:`default_cache_dir` when unset."""
        return os.path.expanduser(self.cache_dir) if self.cache_dir else default_cache_dir()

    @classmethod
    def from_env(cls, overrides: Mapping[str, Any] | None = None) -> JudgeConfig | None:
        """Build a config from ``HANYI_JUDGE_*`` env vars, with ``overrides`` (``judge_*`` keys) winning.

        ``overrides`` is typically a task's ``metadata`` or ``lmms_eval_specific_kwargs``: keys not starting with
        ``judge_`` are ignored, ``None`` values count as unset, unknown ``judge_*`` keys are logged and ignored.
        Returns ``None`` when no base URL or no model is configured. Malformed numbers raise ``ValueError``.

        >>> JudgeConfig.from_env({"judge_base_url": "http://127.0.0.1:8000/v1", "judge_model": "qwen"}).model
        'qwen'
        """
        values: dict[str, Any] = {}
        for name, (var, _) in ENV_VARS.items():
            raw = os.environ.get(var)
            if raw is not None and raw.strip() != "":
                values[name] = _convert(name, raw, f"environment variable {var}")
        for key, value in (overrides or {}).items():
            if not isinstance(key, str) or not key.startswith("judge_") or value is None:
                continue
            name = OVERRIDE_KEYS.get(key)
            if name is None:
                logger.warning("hanyi judge: ignoring unknown override key %r", key)
                continue
            values[name] = _convert(name, value, f"override {key}")
        if not values.get("base_url") or not values.get("model"):
            return None
        return cls(**values)
