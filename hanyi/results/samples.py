"""Reading lmms-eval's per-sample logs (``*_samples_<task>.jsonl``, written with ``--log_samples``).

One strict reader for the report, its provenance record and ``hanyi submit``: a line that is not JSON or not an
object raises :class:`SamplesFileError` naming the file and line, never a bare ``JSONDecodeError`` or a crash later.
"""

from __future__ import annotations

import json


class SamplesFileError(ValueError):
    """A per-sample log line is not a JSON object; the message names the file and line."""


def read_samples(path: str) -> list[dict]:
    """The lines of one ``*_samples_<task>.jsonl``, in file order, one per ``doc_id`` (:func:`one_per_doc`); raises
    :class:`SamplesFileError`."""
    return one_per_doc([value for _, value in numbered_samples(path)], path)


def one_per_doc(lines: list[dict], path: str = "") -> list[dict]:
    """``lines`` with a ``doc_id`` logged more than once kept once, its last line (the rule of the replay model), with
    a warning naming ``path`` and the counts: a duplicated line counted twice made n=18 of 12 docs and halved a parse
    rate. Lines without an integer ``doc_id`` are kept as they are.

    >>> [s["v"] for s in one_per_doc([{"doc_id": 0, "v": 1}, {"doc_id": 1, "v": 2}, {"doc_id": 0, "v": 3}])]
    [2, 3]
    """
    last = {(s["doc_id"] if isinstance(s.get("doc_id"), int) else ("line", i)): i for i, s in enumerate(lines)}
    if len(last) == len(lines):
        return lines
    kept = sorted(last.values())
    differ = len({json.dumps(s, sort_keys=True, default=str) for s in lines}) - len(kept)
    import logging

    logging.getLogger("hanyi.report").warning(
        "hanyi report: %s: %d line(s) repeat a doc_id already logged (%d of them with other content); each doc is "
        "counted once, from its last line",
        path or "sample log",
        len(lines) - len(kept),
        max(0, differ),
    )
    return [lines[i] for i in kept]


def numbered_samples(path: str) -> list[tuple[int, dict]]:
    """``[(line number, line), ...]`` of one ``*_samples_<task>.jsonl`` (blank lines skipped); every line as it is."""
    from hanyi.jsonl import json_lines

    lines = []
    try:
        for lineno, value in json_lines(path, SamplesFileError):
            if not isinstance(value, dict):
                raise SamplesFileError(f"{path}:{lineno}: a sample line must be a JSON object")
            lines.append((lineno, value))
    except OSError as exc:
        raise SamplesFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return lines


def image_digests(sample: dict) -> list[str]:
    """The sha256 of the doc's image bytes that the task logged in its per-doc items (``image_sha256``, read where the
    load-time check read the image: hanyi.tasks._common.require_images), sorted; ``[]`` in a log from before.

    >>> image_digests({"acc": {"image_sha256": "ab"}, "acc_robust": {"image_sha256": "ab"}, "n": 1})
    ['ab']
    """
    found = (v.get("image_sha256") for v in sample.values() if isinstance(v, dict))
    return sorted({d for d in found if isinstance(d, str)})


def content_hash(sample: dict, images: bool = True) -> str | None:
    """A hash of the doc a sample-log line scored: lmms-eval's logged ``doc`` (every field but the decoded images,
    which it does not log; the image's id, path or ``data:`` URI are fields), its ``target`` and ``input_media``, and
    (``images``) the :func:`image_digests` the task logged, so other pixels under the same path are another doc.
    lmms-eval's own ``doc_hash`` hashes the prompt only, the same for every Pun Rebus doc, so two runs over other
    docs were paired. Falls back to ``doc_hash`` for a line without a ``doc``; ``None`` without either.
    A line without digests hashes as before they were logged."""
    import hashlib

    digests = image_digests(sample) if images else []
    if not isinstance(sample.get("doc"), dict):
        base = sample["doc_hash"] if isinstance(sample.get("doc_hash"), str) else None
        return hashlib.sha256(json.dumps([base, digests]).encode()).hexdigest() if digests else base
    body = [sample["doc"], sample.get("target"), sample.get("input_media")] + ([digests] if digests else [])
    text = json.dumps(body, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def judged_note(samples: list | None, name: str) -> str:
    """`` (judged k of N docs; F failed)`` for a judge metric ``name`` some of whose requests failed, from its logged
    per-doc items (``judge_error`` ``request_failed: ...``, ``judge_request_failed``, or a NaN ``judge_score`` without
    a judge answer); ``""`` otherwise. Without it 4 of 12 answered showed ``9.00 [9.00, 9.00] | 12``.

    >>> ok, down = {"verdict": 9, "judge_error": None}, {"verdict": None, "judge_error": "request_failed: HTTP 503"}
    >>> judged_note([{"judge_score": ok}] * 4 + [{"judge_score": down}] * 8, "judge_score")
    ' (judged 4 of 12 docs; 8 judge requests failed)'
    """
    items = [s.get(name) for s in samples or () if isinstance(s, dict) and isinstance(s.get(name), dict)]

    def failed(it: dict) -> bool:
        score = it.get("judge_score")
        lost = isinstance(score, float) and score != score and it.get("judge_raw") is None  # NaN: a failed request
        return it.get("judge_request_failed") is True or str(it.get("judge_error")).startswith("request_failed") or lost

    bad = sum(map(failed, items))
    if not bad:
        return ""
    judged = sum(1 for it in items if not failed(it) and it.get("judge_error") is None)
    return f" (judged {judged} of {len(items)} docs; {bad} judge request{'s' if bad != 1 else ''} failed)"
