"""Official CVLUE submission files from hanyi results (repo readme + ``test_example/*_submit*.json`` formats).

Pure functions: plain records in, the official JSON structure out (write it with ``json.dump(..., ensure_ascii=False)``).
Order follows the official test file, since the official scorer zips gold and prediction by position. A test item
without a prediction is written with an empty answer (VQA: ``""``, VG: ``[]``; both score 0 officially) and counted.

* VQA  ``[{"image", "question_id", "question", "answer"}]``
* VG   ``[{"ref_id", "image", "text", "width", "height", "bbox": [x, y, w, h]}]``
* VD   ``[{"image_id", "image", "dialog_id", "question", "answer_sort": [all option ids, best first]}]``
* ITR  ``{image: [top-N captions]}`` (i2t) and ``{caption: [top-N images]}`` (t2i), N = 10
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hanyi.metrics.ranking import rerank_query

ITR_TOP_N = 10


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
