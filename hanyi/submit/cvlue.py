"""Official CVLUE submission files from hanyi results (repo readme + ``test_example/*_submit*.json`` formats).

Pure functions: plain records in, the official JSON structure out (write it with ``json.dump(..., ensure_ascii=False)``).
Order follows the official test file, since the official scorer zips gold and prediction by position. A test item
without a prediction is written with an empty answer (VQA: ``""``, VG: ``[]``; both score 0 officially) and counted.

* VQA  ``[{"image", "question_id", "question", "answer"}]``
* VG   ``[{"ref_id", "image", "text", "width", "height", "bbox": [x, y, w, h]}]``
* VD   ``[{"image_id", "image", "dialog_id", "question", "answer_sort": [all option ids, best first]}]``
* ITR  ``{image: [top-N captions]}`` (i2t) and ``{caption: [top-N images]}`` (t2i), N = 10

Two routes to these files:

* from the official test release and hanyi records (:func:`predictions_from_samples`, then :func:`vqa_submission`,
  :func:`vg_submission`, :func:`vd_submission`, :func:`itr_submission`);
* from a run's sample logs alone (:func:`cvlue_files`, what ``hanyi submit --benchmark cvlue`` writes), each file
  checked by :func:`validate_cvlue`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from hanyi.metrics.ranking import rerank_query
from hanyi.submit.samples import SubmissionError, read_samples

ITR_TOP_N = 10
#: CVLUE task -> official file written from it. Variants (``*_lite``, ``*_val``) are not submissions.
CVLUE_FILES = {
    "cvlue_vqa": "vqa_submit.json",
    "cvlue_vg": "vg_submit.json",
    "cvlue_vd": "vd_submit.json",
    "cvlue_tr_rerank": "i2t_submit.json",
    "cvlue_ir_rerank": "t2i_submit.json",
}


def predictions_from_samples(samples: Iterable[Mapping], task: str) -> list[dict]:
    """hanyi records from lmms-eval ``--log_samples`` lines of a CVLUE task (``vqa``, ``vg``, ``vd`` or ``itr``).

    >>> predictions_from_samples([{"accuracy": {"question_id": 7, "pred": "是", "v": 1.0}}], "vqa")
    [{'question_id': 7, 'answer': '是'}]
    """
    out = []
    for line in samples:
        if task == "vqa":
            out.append({"question_id": line["accuracy"]["question_id"], "answer": line["accuracy"]["pred"]})
        elif task == "vg":
            out.append({"ref_id": line["miou"]["ref_id"], "bbox": line["miou"]["pred_bbox"]})
        elif task == "vd":
            r = line["r1"]
            out.append({"image_id": r["image_id"], "question": r["question_id"], "answer_sort": r["answer_sort"]})
        elif task == "itr":
            out.append(dict(line["r1"]))
        else:
            raise ValueError(f"unknown CVLUE task {task!r}; use vqa, vg, vd or itr")
    return out


def vqa_submission(test_items: list[Mapping], predictions: Iterable[Mapping]) -> tuple[list[dict], int]:
    """Fill the official VQA test list with ``{"question_id", "answer"}`` predictions; returns (submission, missing).

    >>> vqa_submission([{"image": "i.png", "question_id": 1, "question": "q", "answer": ""}], [{"question_id": 1, "answer": "是"}])
    ([{'image': 'i.png', 'question_id': 1, 'question': 'q', 'answer': '是'}], 0)
    """
    by_id = {int(p["question_id"]): p["answer"] for p in predictions}
    out, missing = [], 0
    for item in test_items:
        answer = by_id.get(int(item["question_id"]))
        missing += answer is None
        out.append({**item, "answer": "" if answer is None else str(answer)})
    return out, missing


def vg_submission(test_items: list[Mapping], predictions: Iterable[Mapping]) -> tuple[list[dict], int]:
    """Fill the official VG test list with ``{"ref_id", "bbox": [x, y, w, h] pixels}``; returns (submission, missing).

    >>> vg_submission([{"ref_id": 3, "image": "i", "text": "t", "width": 9, "height": 9, "bbox": []}], [])
    ([{'ref_id': 3, 'image': 'i', 'text': 't', 'width': 9, 'height': 9, 'bbox': []}], 1)
    """
    by_id = {int(p["ref_id"]): list(p["bbox"] or []) for p in predictions}
    out, missing = [], 0
    for item in test_items:
        box = by_id.get(int(item["ref_id"]))
        missing += box is None
        out.append({**item, "bbox": box or []})
    return out, missing


def vd_submission(
    test_release: Mapping, predictions: Iterable[Mapping], gold: Mapping | None = None
) -> tuple[list[dict], int]:
    """Official VD submission from the test file and ``{"image_id", "question", "answer_sort"}`` predictions.

    ``dialog_id`` comes from ``gold`` when given, else it is the number of listed history rounds + 1 (both released
    examples satisfy this; spec §1.8). A question without a prediction keeps the file's option order, counted.
    """
    by_key = {(int(p["image_id"]), int(p["question"])): list(p["answer_sort"]) for p in predictions}
    dialog_ids = {(g["image_id"], g["question"]): g["dialog_id"] for g in (gold or {}).get("data", [])}
    out, missing = [], 0
    for dlg in test_release["dialogs"]:
        for position, turn in enumerate(dlg["dialog"]):
            if "answer_options" not in turn:
                continue
            key = (int(dlg["image_id"]), int(turn["question"]))
            ranking = by_key.get(key)
            missing += ranking is None
            out.append(
                {
                    "image_id": dlg["image_id"],
                    "image": dlg["image"],
                    "dialog_id": dialog_ids.get(key, position + 1),
                    "question": turn["question"],
                    "answer_sort": ranking if ranking is not None else list(turn["answer_options"]),
                }
            )
    return out, missing


def itr_submission(pairs: Iterable[Mapping], direction: str, top_n: int = ITR_TOP_N) -> dict[str, list[str]]:
    """``{query: top-N candidates}`` from scored ITR pair records (``query``, ``image_path``, ``caption``,
    ``stage1_rank``, ``is_gold``, ``score``), re-ranked as the rerank metrics do.

    >>> pairs = [{"query": "a.png", "caption": "x", "image_path": "a.png", "stage1_rank": 1, "is_gold": False, "score": -2.0},
    ...          {"query": "a.png", "caption": "y", "image_path": "a.png", "stage1_rank": 2, "is_gold": True, "score": -1.0}]
    >>> itr_submission(pairs, "tr")
    {'a.png': ['y', 'x']}
    """
    field = {"tr": "caption", "ir": "image_path"}[direction]
    queries: dict[str, list[Mapping]] = {}
    for p in pairs:
        queries.setdefault(p["query"], []).append(p)
    out = {}  # a query outside the stage-1 shortlist keeps its key with no candidate (the official rank 100)
    for query in sorted(queries):
        rows = [r for r in queries[query] if r["stage1_rank"] >= 1]
        out[query] = [rows[i][field] for i in rerank_query(rows)["order"]][:top_n]
    return out


# ---- from a run's sample logs (``hanyi submit``) ----------------------------------------------------------------
#: The field hanyi 0.3's scoring guard wrote in a sample-log line whose ``process_results`` raised (old logs).
SCORING_ERROR_KEY = "hanyi_error"


def _need(ev: dict, keys, task: str, sample: dict) -> None:
    missing = [k for k in keys if k not in ev]
    if not missing:
        return
    where = f"{task} doc {sample.get('doc_id')}"
    if sample.get(SCORING_ERROR_KEY):
        raise SubmissionError(
            f"{where}: scoring failed in the run ({sample[SCORING_ERROR_KEY]}), so its sample log holds the response "
            "but no prediction; fix the cause, then re-score the sample log with the replay model "
            "(docs/when-things-go-wrong.md) and submit from the re-scored run"
        )
    raise SubmissionError(
        f"{where}: the sample log has no {missing} for this doc (written by an older hanyi, or edited); re-score it "
        "with the replay model (docs/when-things-go-wrong.md) and submit from the re-scored run"
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
    hanyi.submit.samples.SubmissionError: vg_submit.json record 0: bbox must be [] or 4 numbers [x, y, w, h]
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
