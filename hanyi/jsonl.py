"""One strict reader of JSON Lines files (lmms-eval's sample logs, replay inputs, the response cache's audit log).

Every reader of a ``.jsonl`` in hanyi goes through :func:`json_lines`: a line that is not UTF-8 or not JSON raises the
caller's error class naming ``file:line``, never a bare ``UnicodeDecodeError``/``JSONDecodeError`` or a
``RecursionError`` on deeply nested input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator


def json_lines(path: str, error: type[Exception] = ValueError) -> Iterator[tuple[int, object]]:
    """``(line number, value)`` of each non-blank line of ``path``, in order; raises ``error("<path>:<line>: ...")``
    on a line that is not UTF-8 or not JSON (``OSError`` on opening passes through)."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"{path}:{lineno}: not valid UTF-8 (byte {exc.start})") from None
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            except RecursionError:
                raise error(f"{path}:{lineno}: not valid JSON (nested too deeply)") from None
