"""Reading lmms-eval's per-sample logs (``*_samples_<task>.jsonl``, written with ``--log_samples``).

One strict reader for the report, its provenance record and ``hanyi submit``: a line that is not JSON or not an
object raises :class:`SamplesFileError` naming the file and line, never a bare ``JSONDecodeError`` or a crash later.
"""

from __future__ import annotations

import json


class SamplesFileError(ValueError):
    """A per-sample log line is not a JSON object; the message names the file and line."""


def read_samples(path: str) -> list[dict]:
    """The lines of one ``*_samples_<task>.jsonl``, in file order; raises :class:`SamplesFileError`."""
    return [value for _, value in numbered_samples(path)]


def numbered_samples(path: str) -> list[tuple[int, dict]]:
    """``[(line number, line), ...]`` of one ``*_samples_<task>.jsonl`` (blank lines skipped)."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise SamplesFileError(f"{path}:{lineno}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
            if not isinstance(value, dict):
                raise SamplesFileError(f"{path}:{lineno}: a sample line must be a JSON object")
            lines.append((lineno, value))
    return lines
