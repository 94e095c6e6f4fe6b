"""``hanyi submit``: submission files from an lmms-eval output directory (run with ``--log_samples``).

Usage::

    hanyi submit OUTPUT_DIR --benchmark cvlue [--out DIR] [--model LABEL]

* **cvlue**: the official CVLUE submission files (format of the official ``test_example/`` and the baseline repo):
  ``vqa_submit.json`` (``[{image, question_id, answer}]``), ``vg_submit.json`` (``[{ref_id, image, bbox: [x, y, w, h]}]``,
  absolute pixels), ``vd_submit.json`` (``[{image_id, dialog_id, question, answer_sort: [ids, best first]}]``),
  ``i2t_submit.json`` / ``t2i_submit.json`` (``{query: [top-N candidates]}``). Lists keep the dataset order, which the
  official merge relies on.
* **other benchmarks** (no official submission format exists): ``<benchmark>_submission.json`` in the documented
  ``hanyi-submission`` format (``docs/reading-results.md``): run metadata, per task the aggregated metrics and one
  prediction per doc with its evidence.

Every file is validated against its format before it is written; a violation is an error naming the record. Files
are standard JSON: a NaN or infinity never reaches them (a non-finite box is written as the empty, unparsed box; other
non-finite numbers as ``null``).

Completeness: each task's sample log must hold every doc of the dataset split exactly once (checked against the
results' ``n-samples``), each line with an integer ``doc_id``, and the run must not use ``--limit``. Otherwise the
command refuses, naming the task and the problem, unless ``--allow-partial`` is given; then the ``hanyi-submission``
document carries ``"partial": {task: [problems]}`` and CVLUE files get a ``PARTIAL.json`` beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from hanyi import BENCHMARKS, __version__

FORMAT_NAME = "hanyi-submission"
FORMAT_VERSION = 1
#: CVLUE task -> official file written from it. Variants (``*_lite``, ``*_val``) are not submissions.
CVLUE_FILES = {
    "cvlue_vqa": "vqa_submit.json",
    "cvlue_vg": "vg_submit.json",
    "cvlue_vd": "vd_submit.json",
    "cvlue_tr_rerank": "i2t_submit.json",
    "cvlue_ir_rerank": "t2i_submit.json",
}
ITR_TOP_N = 10


class SubmissionError(ValueError):
    """The results cannot make a valid submission; the message names the task, doc or record."""


# ---- reading --------------------------------------------------------------------------------------------------------
def read_samples(path: str) -> list[dict]:
    """The lines of an lmms-eval ``*_samples_<task>.jsonl`` file, sorted by ``doc_id``.

    A line that is not JSON, not an object, or lacks an integer ``doc_id`` raises one :class:`SubmissionError` naming
    the file and line. Duplicates are kept (see :func:`check_complete`).
    """
    from hanyi.report.samples import SamplesFileError, numbered_samples

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

    ``task`` is a :class:`hanyi.report.results.TaskResult`: ``n_original`` is the dataset split's size, ``n`` the
    docs the run evaluated. Docs are matched by ``doc_id``, never by position.

    >>> from hanyi.report.results import TaskResult
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


# ---- hanyi-submission (documented JSON) ----------------------------------------------------------------------------
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
    hanyi.submit.SubmissionError: hanyi-submission: no task
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


# ---- CVLUE official formats -----------------------------------------------------------------------------------------
def _need(ev: dict, keys, task: str, sample: dict) -> None:
    missing = [k for k in keys if k not in ev]
    if missing:
        raise SubmissionError(
            f"{task} doc {sample.get('doc_id')}: the sample log lacks {missing} (re-run with --log_samples)"
        )


def cvlue_vqa(samples: list[dict], task: str = "cvlue_vqa") -> list[dict]:
    out = []
    for s in samples:
        ev = s.get("accuracy") if isinstance(s.get("accuracy"), dict) else {}
        _need(ev, ("question_id", "image_path"), task, s)
        pred = ev.get("pred")
        out.append(
            {"image": ev["image_path"], "question_id": ev["question_id"], "answer": "" if pred is None else str(pred)}
        )
    return out


def cvlue_vg(samples: list[dict], task: str = "cvlue_vg") -> list[dict]:
    out = []
    for s in samples:
        ev = s.get("miou") if isinstance(s.get("miou"), dict) else {}
        _need(ev, ("ref_id", "image_path", "pred_bbox"), task, s)
        box = [float(x) for x in ev["pred_bbox"]]
        if not all(math.isfinite(x) for x in box):
            box = []  # a NaN/inf box is a parse failure: the empty box (IoU 0), as the official scorer reads it
        out.append({"ref_id": ev["ref_id"], "image": ev["image_path"], "bbox": box})
    return out


def cvlue_vd(samples: list[dict], task: str = "cvlue_vd") -> list[dict]:
    out = []
    for s in samples:
        ev = s.get("r1") if isinstance(s.get("r1"), dict) else {}
        _need(ev, ("image_id", "dialog_id", "question_id", "answer_sort"), task, s)
        out.append(
            {
                "image_id": ev["image_id"],
                "dialog_id": ev["dialog_id"],
                "question": ev["question_id"],
                "answer_sort": list(ev["answer_sort"]),
            }
        )
    return out


def cvlue_itr(samples: list[dict], task: str, top_n: int = ITR_TOP_N) -> dict[str, list[str]]:
    """``{query: [top-N candidates by score]}`` from the (query, candidate) pair docs of a rerank task."""
    by_query: dict[str, list[tuple[float, int, str]]] = {}
    for s in samples:
        ev = s.get("r1") if isinstance(s.get("r1"), dict) else {}
        _need(ev, ("query", "image_path", "caption"), task, s)
        candidate = ev["caption"] if ev["query"] == ev["image_path"] else ev["image_path"]
        score = ev.get("score")
        by_query.setdefault(str(ev["query"]), []).append(
            (float("-inf") if score is None else float(score), s["doc_id"], candidate)
        )
    return {q: [c for _, _, c in sorted(items, key=lambda t: (-t[0], t[1]))][:top_n] for q, items in by_query.items()}


def validate_cvlue(kind: str, data) -> None:
    """Raise :class:`SubmissionError` unless ``data`` is a valid official CVLUE submission of ``kind``.

    >>> validate_cvlue("vg_submit.json", [{"ref_id": 1, "image": "a.png", "bbox": [1.0, 2.0, 3.0, 4.0]}])
    >>> validate_cvlue("vg_submit.json", [{"ref_id": 1, "image": "a.png", "bbox": [1.0, 2.0]}])
    Traceback (most recent call last):
    ...
    hanyi.submit.SubmissionError: vg_submit.json record 0: bbox must be [] or 4 numbers [x, y, w, h]
    """
    if kind in ("i2t_submit.json", "t2i_submit.json"):
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(c, str) for c in v) for k, v in data.items()
        ):
            raise SubmissionError(f"{kind}: must map each query string to a list of candidate strings")
        if any(len(v) > ITR_TOP_N for v in data.values()):
            raise SubmissionError(f"{kind}: at most {ITR_TOP_N} candidates per query")
        return
    if not isinstance(data, list):
        raise SubmissionError(f"{kind}: must be a JSON list in dataset order")
    keys = {"vqa_submit.json": "question_id", "vg_submit.json": "ref_id", "vd_submit.json": "question"}[kind]
    seen = set()
    for i, rec in enumerate(data):
        where = f"{kind} record {i}"
        if not isinstance(rec, dict) or keys not in rec:
            raise SubmissionError(f"{where}: needs {keys!r}")
        if kind == "vqa_submit.json" and not (isinstance(rec.get("answer"), str) and isinstance(rec.get("image"), str)):
            raise SubmissionError(f"{where}: needs string 'image' and 'answer'")
        if kind == "vg_submit.json":
            box = rec.get("bbox")
            if (
                not isinstance(box, list)
                or len(box) not in (0, 4)
                or not all(isinstance(x, (int, float)) and math.isfinite(x) for x in box)
            ):
                raise SubmissionError(f"{where}: bbox must be [] or 4 numbers [x, y, w, h]")
        if kind == "vd_submit.json":
            ranking = rec.get("answer_sort")
            if not isinstance(ranking, list) or not ranking or len(set(ranking)) != len(ranking):
                raise SubmissionError(f"{where}: answer_sort must be a non-empty ranking without repeats")
            key = (rec.get("image_id"), rec.get("dialog_id"), rec["question"])
        else:
            key = rec[keys]
        if key in seen:
            raise SubmissionError(f"{where}: {keys} {rec[keys]!r} appears twice")
        seen.add(key)


def cvlue_files(run, samples: dict[str, list[dict]] | None = None) -> dict[str, object]:
    """``{file name: data}`` for every CVLUE submission task the run has (with a sample log)."""
    samples_by_task = samples or {}
    files = {}
    for task, fname in CVLUE_FILES.items():
        result = run.tasks.get(task)
        if result is None:
            continue
        if not result.samples_file:
            raise SubmissionError(f"{task}: no sample log beside the results; re-run lmms-eval with --log_samples")
        samples = samples_by_task.get(task) or read_samples(result.samples_file)
        if task == "cvlue_vqa":
            data = cvlue_vqa(samples, task)
        elif task == "cvlue_vg":
            data = cvlue_vg(samples, task)
        elif task == "cvlue_vd":
            data = cvlue_vd(samples, task)
        else:
            data = cvlue_itr(samples, task)
        validate_cvlue(fname, data)
        files[fname] = data
    if not files:
        raise SubmissionError(f"no CVLUE submission task in these results (needs one of {', '.join(CVLUE_FILES)})")
    return files


# ---- command --------------------------------------------------------------------------------------------------------
def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("path", metavar="OUTPUT_DIR", help="lmms-eval output dir (or *_results.json) with sample logs")
    parser.add_argument("--benchmark", required=True, choices=BENCHMARKS)
    parser.add_argument(
        "--out", default=None, help="where to write (default: <OUTPUT_DIR>/hanyi_submission/<benchmark>)"
    )
    parser.add_argument(
        "--model", default=None, help="which run, by its report label, when the dir holds several models"
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="write even when a sample log is incomplete, duplicated or from a --limit run (the file says so)",
    )
    return parser


def _pick_run(runs, label):
    if label is not None:
        picked = [r for r in runs if r.label == label]
        if not picked:
            raise SubmissionError(f"no run labelled {label!r}; runs: {', '.join(r.label for r in runs)}")
        return picked[0]
    if len(runs) > 1:
        raise SubmissionError(
            f"several models in these results; choose one with --model ({', '.join(r.label for r in runs)})"
        )
    return runs[0]


def make_submission(
    path: str, benchmark: str, out_dir: str, model: str | None = None, allow_partial: bool = False
) -> list[str]:
    """Write the submission files of ``benchmark``; returns their paths.

    Refuses (:class:`SubmissionError`) a task without a sample log or with an incomplete one
    (:func:`check_complete`) unless ``allow_partial``; then the problems are recorded in the output.
    """
    from hanyi.report.results import benchmark_of, load_runs, parents_of

    run = _pick_run(load_runs([path]), model)
    parents = parents_of(run)
    tasks = sorted(t for t in run.tasks if benchmark_of(t, parents) == benchmark and not run.tasks[t].is_group)
    if not tasks:
        raise SubmissionError(f"no {benchmark} task in {path} (tasks: {', '.join(sorted(run.tasks)) or 'none'})")
    checked = [t for t in tasks if benchmark != "cvlue" or t in CVLUE_FILES]
    samples, partial = {}, {}
    for name in checked:
        task = run.tasks[name]
        if not task.samples_file:
            if benchmark == "cvlue":
                continue  # cvlue_files names the missing log
            partial[name] = ["no sample log beside the results (re-run lmms-eval with --log_samples)"]
            continue
        samples[name] = read_samples(task.samples_file)
        problems = check_complete(task, samples[name], run.limit)
        if problems:
            partial[name] = problems
    if partial and not allow_partial:
        lines = [f"{name}: {'; '.join(p)}" for name, p in sorted(partial.items())]
        raise SubmissionError(
            "incomplete results, not a submission (--allow-partial writes them anyway, marked partial):\n  "
            + "\n  ".join(lines)
        )
    samples = {name: _last_per_doc(rows) for name, rows in samples.items()}
    if benchmark == "cvlue":
        files = cvlue_files(run, samples)
        if partial:
            files["PARTIAL.json"] = {"partial": partial}
    else:
        doc = hanyi_submission(run, benchmark, tasks, samples)
        if partial:
            doc["partial"] = partial
        validate_hanyi_submission(doc)
        files = {f"{benchmark}_submission.json": doc}
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, data in files.items():
        target = os.path.join(out_dir, name)
        text = json.dumps(_redact_tree(_finite(data)), ensure_ascii=False, indent=1, allow_nan=False)
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        written.append(target)
    return written


def _last_per_doc(rows: list[dict]) -> list[dict]:
    """One record per ``doc_id`` (the last line of the log wins), sorted by ``doc_id``."""
    by_id = {}
    for row in rows:
        by_id[row["doc_id"]] = row
    return [by_id[i] for i in sorted(by_id)]


def _redact_tree(value):
    from hanyi.redact import redact_tree

    return redact_tree(value)


def main(argv: list[str] | None = None, prog: str = "hanyi submit") -> int:
    from hanyi.report.results import NoResultsError

    args = build_parser(prog).parse_args(argv)
    base = args.path if os.path.isdir(args.path) else os.path.dirname(args.path) or "."
    out_dir = args.out or os.path.join(base, "hanyi_submission", args.benchmark)
    try:
        written = make_submission(args.path, args.benchmark, out_dir, args.model, args.allow_partial)
    except (NoResultsError, SubmissionError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
