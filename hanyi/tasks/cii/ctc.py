"""CII-Bench CTC judge glue: one batched judge call per set of descriptions, shared by the CTC aggregations.

Every ``ctc_*`` metric aggregates the same items; the first one judges them (through the shared client in
``hanyi.metrics.judge``, whose disk cache also survives the process) and the others reuse the in-process result.
"""

from __future__ import annotations

import hashlib
import threading

from hanyi.metrics.cii_ctc import ctc_scores, parse_ctc_score

_MEMO: dict[str, dict] = {}
_LOCK = threading.Lock()


def _batch_key(items) -> str:
    h = hashlib.sha256()
    for it in items:
        h.update(it["judge_user"].encode("utf-8") + b"\0")
    return h.hexdigest()


#: ``top_p`` of the official CTC judge requests (``CTC_Evaluation.ipynb``).
OFFICIAL_JUDGE_TOP_P = 0.95


def judge_batch(items: list[dict], system: str, client=None) -> dict:
    """``{"scores": [official per-item scores], "raw": [...], "failures": n}`` for ``items`` (memoised).

    ``client`` defaults to the process-wide judge client of ``JudgeConfig.from_env()``; tests inject a fake with a
    ``judge_many(prompts, parse, system=...)`` method.
    """
    key = _batch_key(items)
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
    if client is None:
        import dataclasses

        from hanyi.metrics.judge import JudgeConfig, get_judge_client

        config = JudgeConfig.from_env()
        if (
            config is not None and config.top_p is None
        ):  # the official notebook sends top_p=0.95; HANYI_JUDGE_TOP_P overrides
            config = dataclasses.replace(config, top_p=OFFICIAL_JUDGE_TOP_P)
        client = get_judge_client(config)
    results = client.judge_many([it["judge_user"] for it in items], parse=parse_ctc_score, system=system)
    out = {
        "scores": ctc_scores(r.value for r in results),
        "raw": [r.raw for r in results],
        "failures": sum(r.error is not None for r in results),
    }
    with _LOCK:
        _MEMO[key] = out
    return out
