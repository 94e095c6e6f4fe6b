"""Shared LLM-judge client for the judged metrics (CII-Bench, UNPIE, Pun Rebus, VULCA).

One OpenAI-compatible client (``POST {base_url}/chat/completions``: OpenAI, vLLM, sglang, any proxy) with bounded
concurrency, retries with backoff, a persistent per-request disk cache, and API-key redaction. A task asks it once
per doc in ``process_results`` and logs the verdict in the doc's item (the aggregation only combines them)::

    config = JudgeConfig.from_env(task_metadata)          # None when no judge is configured
    if config is None:
        warn_judge_disabled(["cii_painting_judge_score"])
    else:
        (result,) = get_judge_client(config).judge_many([prompt], lambda t: parse_integer_score(t, 1, 5))

Importing this package uses the standard library only; ``httpx`` is imported when the first request is sent.
"""

from .cache import JudgeCache, request_key
from .client import JudgeClient, get_judge_client, warn_judge_disabled
from .config import JudgeConfig, default_cache_dir, redact_url
from .parsing import parse_integer_score, parse_yes_no
from .results import JudgeResult, summarize_judgements

__all__ = [
    "JudgeCache",
    "JudgeClient",
    "JudgeConfig",
    "JudgeResult",
    "default_cache_dir",
    "get_judge_client",
    "parse_integer_score",
    "parse_yes_no",
    "redact_url",
    "request_key",
    "summarize_judgements",
    "warn_judge_disabled",
]
