"""Persistent judge cache: one JSON file per request, written atomically (temp file + ``os.replace``).

One file per key needs no lock, so several processes (lmms-eval ranks, parallel runs) can read and write the same
directory at once, also on network file systems where SQLite's WAL mode is unsafe. A reader sees either no file or
a complete one; a file that cannot be decoded is treated as a miss and overwritten on the next success.
Layout: ``<cache_dir>/<key[:2]>/<key>.json`` holding the request (model, messages, temperature, max_tokens) and
the raw answer. The API key and the endpoint URL are never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from typing import Any

CACHE_FORMAT_VERSION = 1


def request_fingerprint(
    model: str, messages: list[dict], temperature: float, max_tokens: int, top_p: float | None = None
) -> dict[str, Any]:
    """The part of a request that determines the judge's answer (and so the cache key); no URL, no key.

    ``top_p`` enters the fingerprint only when set, so entries cached without it keep their keys.
    """
    fingerprint = {
        "v": CACHE_FORMAT_VERSION,
        "model": model,
        "messages": messages,
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
    }
    if top_p is not None:
        fingerprint["top_p"] = float(top_p)
    return fingerprint


def request_key(fingerprint: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of a request fingerprint.

    >>> fp = request_fingerprint("gpt-4o", [{"role": "user", "content": "Same pun?"}], 0, 512)
    >>> request_key(fp) == request_key(request_fingerprint("gpt-4o", [{"content": "Same pun?", "role": "user"}], 0.0, 512))
    True
    >>> request_key(fp) == request_key(request_fingerprint("gpt-4o-mini", fp["messages"], 0, 512))
    False
    """
    canonical = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class JudgeCache:
    """Directory of finished judgements, keyed by :func:`request_key`."""

    def __init__(self, root: str):
        self.root = root

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key[:2], f"{key}.json")

    def get(self, key: str) -> str | None:
        """The cached raw answer for ``key``, or ``None`` (missing, unreadable or corrupt)."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            return None
        raw = record.get("raw") if isinstance(record, dict) else None
        return raw if isinstance(raw, str) and record.get("key") == key else None

    def put(self, key: str, fingerprint: dict[str, Any], raw: str) -> None:
        """Persist one finished judgement atomically; a concurrent writer of the same key is harmless."""
        path = self._path(key)
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        record = {"key": key, "request": fingerprint, "raw": raw, "created_unix": round(time.time(), 3)}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, ensure_ascii=False, default=str)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
