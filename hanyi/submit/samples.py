"""Reading lmms-eval sample logs for ``hanyi submit``: one task's lines, their completeness, the evidence of a line."""

from __future__ import annotations

import math


class SubmissionError(ValueError):
    """The results cannot make a valid submission; the message names the task, doc or record."""


# ---- reading --------------------------------------------------------------------------------------------------------
def read_samples(path: str) -> list[dict]:
    """The lines of an lmms-eval ``*_samples_<task>.jsonl`` file, sorted by ``doc_id``.

    A line that is not JSON, not an object, or lacks an integer ``doc_id`` raises one :class:`SubmissionError` naming
    the file and line. Duplicates are kept (see :func:`check_complete`).
    """
    from hanyi.results.samples import SamplesFileError, numbered_samples

    try:
        lines = numbered_samples(path)
    except SamplesFileError as exc:
        raise SubmissionError(str(exc)) from None
    rows = []
    for lineno, row in lines:
        doc_id = row.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, int):
            what = "no doc_id" if "doc_id" not in row else f"doc_id {doc_id!r} is not an integer"
            raise SubmissionError(f"{path}:{lineno}: {what}")
        rows.append(row)
    return sorted(rows, key=lambda r: r["doc_id"])


def check_complete(task, samples: list[dict], limit=None) -> list[str]:
    """The completeness problems of one task's sample log (empty when it is a full, consistent run).

    ``task`` is a :class:`hanyi.results.runs.TaskResult`: ``n_original`` is the dataset split's size, ``n`` the
    docs the run evaluated. Docs are matched by ``doc_id``, never by position.

    >>> from hanyi.results.runs import TaskResult
    >>> t = TaskResult("cii_none", {}, n=3, n_original=4)
    >>> check_complete(t, [{"doc_id": 0}, {"doc_id": 1}, {"doc_id": 1}], limit=3)
    ['run with --limit 3', 'doc_id 1 twice', 'missing 2 of 4 docs (first: 2, 3)']
    """
    problems = []
    if limit is not None:
        problems.append(f"run with --limit {limit}")
    ids = [s["doc_id"] for s in samples]
    dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    problems += [f"doc_id {i} twice" for i in dupes[:5]]
    if len(dupes) > 5:
        problems.append(f"... {len(dupes)} duplicated doc_ids in all")
    expected = task.n_original if task.n_original is not None else task.n
    if expected is None:
        problems.append("the results file gives no n-samples to check the sample log against")
        return problems
    missing = sorted(set(range(expected)) - set(ids))
    if missing:
        first = ", ".join(str(i) for i in missing[:5])
        problems.append(f"missing {len(missing)} of {expected} docs (first: {first})")
    extra = sorted(i for i in set(ids) if not 0 <= i < expected)
    if extra:
        problems.append(f"{len(extra)} doc_ids outside the dataset's 0..{expected - 1} (first: {extra[0]})")
    return problems


def _finite(value):
    """``value`` with every NaN/inf float replaced by ``None`` (submission files are standard JSON).

    >>> _finite({"a": [1.0, float("nan")], "b": float("inf")})
    {'a': [1.0, None], 'b': None}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def evidence(sample: dict, metrics) -> dict:
    """The first dict-valued metric field of a sample line: the evidence our ``process_results`` keeps.

    >>> evidence({"doc_id": 0, "acc": {"pred": "A"}, "parse_rate": 1.0}, ["parse_rate", "acc"])
    {'pred': 'A'}
    >>> evidence({"doc_id": 0, "parse_rate": 1.0}, ["parse_rate"])
    {}
    """
    for name in metrics:
        value = sample.get(name.split(",")[0])
        if isinstance(value, dict):
            return value
    return {}


def _response(sample: dict):
    resp = sample.get("filtered_resps", sample.get("resps"))
    while isinstance(resp, list) and len(resp) == 1:
        resp = resp[0]
    return resp


def _last_per_doc(rows: list[dict]) -> list[dict]:
    """One record per ``doc_id`` (the last line of the log wins), sorted by ``doc_id``."""
    by_id = {}
    for row in rows:
        by_id[row["doc_id"]] = row
    return [by_id[i] for i in sorted(by_id)]
