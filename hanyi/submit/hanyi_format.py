"""The documented ``hanyi-submission`` JSON format (``docs/reading-results.md``): build one from a run, validate it."""

from __future__ import annotations

import math

from hanyi import BENCHMARKS, __version__
from hanyi.submit.samples import SubmissionError, _finite, _response, evidence, read_samples

FORMAT_NAME = "hanyi-submission"
FORMAT_VERSION = 1


def hanyi_submission(run, benchmark: str, tasks: list[str], samples: dict[str, list[dict]] | None = None) -> dict:
    """The ``hanyi-submission`` document of ``tasks`` of one run (``samples``: already-read sample logs by task)."""
    samples = samples or {}
    out = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "benchmark": benchmark,
        "hanyi_version": __version__,
        "lmms_eval_version": run.lmms_eval_version,
        "model": run.model,
        "model_args": run.model_args,
        "date": run.date,
        "tasks": {},
    }
    for name in tasks:
        task = run.tasks[name]
        metrics = {
            m: v.value
            for m, v in task.metrics.items()
            if isinstance(v.value, (int, float)) and not isinstance(v.value, bool) and math.isfinite(v.value)
        }
        entry = {"version": task.version, "n": task.n, "metrics": metrics, "predictions": []}
        if task.provenance:  # data source, scorer backends, judge, --limit, failed generations
            entry["provenance"] = task.provenance
        if name in samples or task.samples_file:
            rows = samples[name] if name in samples else read_samples(task.samples_file)
            for s in rows:
                entry["predictions"].append(
                    {
                        "doc_id": s["doc_id"],
                        "target": s.get("target"),
                        "response": _response(s),
                        "evidence": evidence(s, task.metrics),
                    }
                )
        out["tasks"][name] = entry
    return _finite(out)


def validate_hanyi_submission(doc: dict) -> None:
    """Raise :class:`SubmissionError` unless ``doc`` follows the ``hanyi-submission`` v1 format.

    >>> validate_hanyi_submission({"format": "hanyi-submission", "version": 1, "benchmark": "cii", "model": "m",
    ...     "tasks": {"cii_none": {"metrics": {"acc": 50.0}, "predictions": [{"doc_id": 0, "response": "A"}]}}})
    >>> validate_hanyi_submission({"format": "hanyi-submission", "version": 1, "benchmark": "cii", "model": "m", "tasks": {}})
    Traceback (most recent call last):
    ...
    hanyi.submit.samples.SubmissionError: hanyi-submission: no task
    """
    if doc.get("format") != FORMAT_NAME or doc.get("version") != FORMAT_VERSION:
        raise SubmissionError(f"hanyi-submission: format/version must be {FORMAT_NAME!r}/{FORMAT_VERSION}")
    if doc.get("benchmark") not in BENCHMARKS:
        raise SubmissionError(f"hanyi-submission: unknown benchmark {doc.get('benchmark')!r}")
    if not isinstance(doc.get("model"), str):
        raise SubmissionError("hanyi-submission: 'model' must be a string")
    if not isinstance(doc.get("tasks"), dict) or not doc["tasks"]:
        raise SubmissionError("hanyi-submission: no task")
    for name, task in doc["tasks"].items():
        if not isinstance(task.get("metrics"), dict) or not all(
            isinstance(v, (int, float)) and math.isfinite(v) for v in task["metrics"].values()
        ):
            raise SubmissionError(f"hanyi-submission: {name}: 'metrics' must map names to numbers")
        seen = set()
        for i, pred in enumerate(task.get("predictions", [])):
            if not isinstance(pred.get("doc_id"), int) or "response" not in pred:
                raise SubmissionError(
                    f"hanyi-submission: {name} prediction {i}: needs an integer doc_id and a response"
                )
            if pred["doc_id"] in seen:
                raise SubmissionError(f"hanyi-submission: {name}: doc_id {pred['doc_id']} twice")
            seen.add(pred["doc_id"])
