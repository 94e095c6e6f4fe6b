"""The documented ``hanyi-submission`` JSON format (``docs/reading-results.md``): build one from a run, validate it.

Version 2 (version 1 is still read) adds what a leaderboard needs to re-check a file against
its own installed data and scorers (``hanyi leaderboard check``): per task ``n_original`` (the split's size),
``data_fingerprint`` (:func:`hanyi.results.perdoc.data_fingerprint` over every doc's content hash) and
``prompt_variant``; per prediction ``doc_hash`` (:func:`hanyi.results.samples.content_hash` of the doc it answered)
and, for a judged metric, ``verdicts`` (``{field: the logged item}``: the judge's verdicts the aggregates are
re-computed from).
"""

from __future__ import annotations

import math
import re

from hanyi import BENCHMARKS, __version__
from hanyi.submit.samples import SubmissionError, _finite, _response, evidence, read_samples

FORMAT_NAME = "hanyi-submission"
FORMAT_VERSION = 2
#: Versions this hanyi reads (1: no doc hashes, data fingerprint or verdicts; a leaderboard refuses it).
READ_VERSIONS = (1, 2)


#: Sample-log fields that hold a judge's verdicts without naming the judge in them (VULCA's rubric levels).
JUDGED_FIELDS = ("vulca_rubric",)


def verdicts(sample: dict) -> dict:
    """``{field: item}`` of one sample line's judged fields: items that log a judge's answer or model, and
    :data:`JUDGED_FIELDS`.

    >>> verdicts({"doc_id": 0, "ctc_score": {"score": 3, "judge_raw": "3"}, "ctc_blank_rate": 0.0, "acc": {"pred": "A"}})
    {'ctc_score': {'score': 3, 'judge_raw': '3'}}
    """
    return {
        k: v
        for k, v in sample.items()
        if isinstance(v, dict) and ("judge_raw" in v or "judge_model" in v or k in JUDGED_FIELDS)
    }


def hanyi_submission(run, benchmark: str, tasks: list[str], samples: dict[str, list[dict]] | None = None) -> dict:
    """The ``hanyi-submission`` document of ``tasks`` of one run (``samples``: already-read sample logs by task)."""
    samples = samples or {}
    out = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "benchmark": benchmark,
        "hanyi_version": __version__,
        "lmms_eval_version": _lmms_eval_version(run.lmms_eval_version),
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
        entry = {"version": task.version, "n": task.n, "n_original": task.n_original, "metrics": metrics}
        entry |= {"prompt_variant": task.prompt_variant, "predictions": []}
        if task.provenance:  # data source, scorer backends, judge, --limit, failed generations
            entry["provenance"] = task.provenance
        if name in samples or task.samples_file:
            from hanyi.results.perdoc import data_fingerprint
            from hanyi.results.samples import content_hash

            rows = samples[name] if name in samples else read_samples(task.samples_file)
            for s in rows:
                pred = {"doc_id": s["doc_id"], "doc_hash": content_hash(s), "target": s.get("target")}
                pred |= {"response": _response(s), "evidence": evidence(s, task.metrics)}
                if (lls := loglikelihoods(s)) is not None:  # a multiple-choice doc: its choices' scores
                    pred |= {"response": None, "loglikelihoods": lls}
                pred |= {"verdicts": v} if (v := verdicts(s)) else {}
                entry["predictions"].append(pred)
            entry["data_fingerprint"] = data_fingerprint({p["doc_id"]: p["doc_hash"] for p in entry["predictions"]})
        out["tasks"][name] = entry
    return _finite(out)


def loglikelihoods(sample: dict) -> list | None:
    """``[[logprob, is_greedy], ...]`` (one per choice) of a ``loglikelihood`` / ``multiple_choice`` sample line, as
    the replay model reads them back; ``None`` for a generated answer. lmms-eval 0.7.3 logs each choice as the text
    of its tuple, ``"(-1.5, False)"``.

    >>> loglikelihoods({"filtered_resps": ["(-1.5, False)", "(-0.25, True)"]}), loglikelihoods({"filtered_resps": ["A"]})
    ([[-1.5, False], [-0.25, True]], None)
    >>> loglikelihoods({"resps": [[[-1.5, False]], [[-0.25, True]]]})
    [[-1.5, False], [-0.25, True]]
    """
    resp = sample.get("filtered_resps", sample.get("resps"))
    if not isinstance(resp, list) or not resp:
        return None
    out = []
    for choice in resp:
        while isinstance(choice, list) and len(choice) == 1:
            choice = choice[0]
        if isinstance(choice, str):
            found = _TUPLE.fullmatch(choice.strip())
            choice = [float(found.group(1)), found.group(2) == "True"] if found else None
        if not (isinstance(choice, list) and len(choice) == 2 and isinstance(choice[0], (int, float))
                and not isinstance(choice[0], bool) and isinstance(choice[1], bool)):  # fmt: skip
            return None
        out.append([float(choice[0]), choice[1]])
    return out


#: A choice's ``(logprob, is_greedy)`` as lmms-eval 0.7.3 writes it into the sample log.
_TUPLE = re.compile(r"\((-?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf)|nan), (True|False)\)")


def _lmms_eval_version(recorded: str) -> str:
    """The release the results record, else the installed one (lmms-eval 0.7.3 records the git branch@commit of the
    folder a run started in, which is no version: :func:`hanyi.results.provenance.lmms_eval_version`)."""
    from hanyi.results.provenance import installed_lmms_eval, lmms_eval_version

    return lmms_eval_version(recorded, installed_lmms_eval())


def validate_hanyi_submission(doc: dict) -> None:
    """Raise :class:`SubmissionError` unless ``doc`` follows the ``hanyi-submission`` format (version 1 or 2).

    >>> validate_hanyi_submission({"format": "hanyi-submission", "version": 1, "benchmark": "cii", "model": "m",
    ...     "tasks": {"cii_none": {"metrics": {"acc": 50.0}, "predictions": [{"doc_id": 0, "response": "A"}]}}})
    >>> validate_hanyi_submission({"format": "hanyi-submission", "version": 1, "benchmark": "cii", "model": "m", "tasks": {}})
    Traceback (most recent call last):
    ...
    hanyi.submit.samples.SubmissionError: hanyi-submission: no task
    """
    if doc.get("format") != FORMAT_NAME or doc.get("version") not in READ_VERSIONS:
        raise SubmissionError(f"hanyi-submission: format/version must be {FORMAT_NAME!r}/1 or 2")
    if doc.get("benchmark") not in BENCHMARKS:
        raise SubmissionError(f"hanyi-submission: unknown benchmark {doc.get('benchmark')!r}")
    if not isinstance(doc.get("model"), str):
        raise SubmissionError("hanyi-submission: 'model' must be a string")
    if not isinstance(doc.get("tasks"), dict) or not doc["tasks"]:
        raise SubmissionError("hanyi-submission: no task")
    for name, task in doc["tasks"].items():
        if not isinstance(task, dict):
            raise SubmissionError(f"hanyi-submission: {name}: a task must be a JSON object")
        if not isinstance(task.get("predictions", []), list):
            raise SubmissionError(f"hanyi-submission: {name}: 'predictions' must be a list")
        if not isinstance(task.get("metrics"), dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in task["metrics"].values()
        ):
            raise SubmissionError(f"hanyi-submission: {name}: 'metrics' must map names to numbers")
        seen = set()
        for i, pred in enumerate(task.get("predictions", [])):
            if (
                not isinstance(pred, dict)
                or isinstance(pred.get("doc_id"), bool)
                or not isinstance(pred.get("doc_id"), int)
                or "response" not in pred
            ):
                raise SubmissionError(
                    f"hanyi-submission: {name} prediction {i}: needs an integer doc_id and a response"
                )
            if pred["doc_id"] in seen:
                raise SubmissionError(f"hanyi-submission: {name}: doc_id {pred['doc_id']} twice")
            seen.add(pred["doc_id"])
    from hanyi.submit.model_card import card_problems

    problems = card_problems(doc.get("model_card"))
    if problems:  # after the tasks: a bad card never hides a task's problem
        raise SubmissionError("hanyi-submission: model_card: " + "; ".join(problems))
