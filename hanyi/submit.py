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

Every file is validated against its format before it is written; a violation is an error naming the record.
"""

from __future__ import annotations

import argparse
import json
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
    """The lines of an lmms-eval ``*_samples_<task>.jsonl`` file, sorted by ``doc_id``. Bad lines raise."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SubmissionError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
    return sorted(rows, key=lambda r: (r.get("doc_id", 0), r.get("idx", 0)))


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
def hanyi_submission(run, benchmark: str, tasks: list[str]) -> dict:
    """The ``hanyi-submission`` document of ``tasks`` of one run."""
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
        metrics = {m: v.value for m, v in task.metrics.items() if isinstance(v.value, (int, float))}
        entry = {"version": task.version, "n": task.n, "metrics": metrics, "predictions": []}
        if task.provenance:  # data source, scorer backends, judge, --limit, failed generations
            entry["provenance"] = task.provenance
        if task.samples_file:
            for s in read_samples(task.samples_file):
                entry["predictions"].append(
                    {
                        "doc_id": s["doc_id"],
                        "target": s.get("target"),
                        "response": _response(s),
                        "evidence": evidence(s, task.metrics),
                    }
                )
        out["tasks"][name] = entry
    return out


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
            isinstance(v, (int, float)) for v in task["metrics"].values()
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
        out.append({"ref_id": ev["ref_id"], "image": ev["image_path"], "bbox": [float(x) for x in ev["pred_bbox"]]})
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
            if not isinstance(box, list) or len(box) not in (0, 4) or not all(isinstance(x, (int, float)) for x in box):
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


def cvlue_files(run) -> dict[str, object]:
    """``{file name: data}`` for every CVLUE submission task the run has (with a sample log)."""
    files = {}
    for task, fname in CVLUE_FILES.items():
        result = run.tasks.get(task)
        if result is None:
            continue
        if not result.samples_file:
            raise SubmissionError(f"{task}: no sample log beside the results; re-run lmms-eval with --log_samples")
        samples = read_samples(result.samples_file)
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


def make_submission(path: str, benchmark: str, out_dir: str, model: str | None = None) -> list[str]:
    """Write the submission files of ``benchmark``; returns their paths."""
    from hanyi.report.results import benchmark_of, load_runs, parents_of

    run = _pick_run(load_runs([path]), model)
    parents = parents_of(run)
    tasks = sorted(t for t in run.tasks if benchmark_of(t, parents) == benchmark and not run.tasks[t].is_group)
    if not tasks:
        raise SubmissionError(f"no {benchmark} task in {path} (tasks: {', '.join(sorted(run.tasks)) or 'none'})")
    if benchmark == "cvlue":
        files = cvlue_files(run)
    else:
        doc = hanyi_submission(run, benchmark, tasks)
        validate_hanyi_submission(doc)
        files = {f"{benchmark}_submission.json": doc}
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, data in files.items():
        target = os.path.join(out_dir, name)
        with open(target, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
        written.append(target)
    return written


def main(argv: list[str] | None = None, prog: str = "hanyi submit") -> int:
    from hanyi.report.results import NoResultsError

    args = build_parser(prog).parse_args(argv)
    base = args.path if os.path.isdir(args.path) else os.path.dirname(args.path) or "."
    out_dir = args.out or os.path.join(base, "hanyi_submission", args.benchmark)
    try:
        written = make_submission(args.path, args.benchmark, out_dir, args.model)
    except (NoResultsError, SubmissionError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
