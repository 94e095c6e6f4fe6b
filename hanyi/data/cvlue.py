"""CVLUE (Wang et al., AAAI 2025): official release JSON -> hub-format dataset (``hanyi prepare cvlue``), and the sample.

The data is released on request under CC BY-NC-ND 4.0 (Google form linked from github.com/WangYuxuan93/CVLUE), so
users convert their own copy. Release layout read from ``--root`` (file names of the repo's ``test_example/`` are
accepted too; the first existing candidate wins, see ``RELEASE_FILES``; a gold file, ``GOLD_FILES``, always wins over
a question file, and a split without gold is refused, never scored: see :func:`_gold_source`)::

    images/<split>/<A|B>/<id>-<slug>/<A|B>-<id>-<n>.png
    VQA/<split>.json   [{"image", "question_id", "question", "answer"}]
    VG/<split>.json    [{"ref_id", "image", "text", "width", "height", "bbox": [x, y, w, h]}]
    VD/<split>.json    {"dialogs": [...], "id2question", "id2answer"}  (+ VD/<split>_gold.json {"data": [...]})
    IC/<split>.json    [{"image", "caption": [5 captions]}]            (ITR; stage 1: --itr-retriever or --itr-shortlist)

Configs written (one doc schema per task; every doc has ``category`` = image folder slug and ``culture_group``):
``vqa``, ``vg``, ``vd`` (one doc per (image, round), history resolved to text, ids kept for submissions), and the
ITR pair configs ``itr_tr_rerank``, ``itr_ir_rerank`` (fixed stage-1 shortlist, top-K) and ``itr_tr_mc``,
``itr_ir_mc`` (gold + N-1 seeded distractors; lite, not comparable with the paper). ITR pair docs reference images
by path (``images/...`` inside the prepared directory), since one image appears in many pairs.

This module reads the release (files, gold, images) and writes the dataset; :mod:`hanyi.data.cvlue_convert` turns
the official records into doc rows and holds the config schemas; :mod:`hanyi.data.cvlue_retrieval` computes the ITR
stage-1 shortlist of the test gallery with a Chinese-CLIP (``--itr-retriever``).
"""

from __future__ import annotations

import json
import os
import shutil

from hanyi.data.cvlue_convert import (  # noqa: F401  (re-exported: hanyi.data.cvlue stays the public entry)
    MC_SEED,
    MC_SIZE,
    UNCOVERED_RANK,
    _features,
    convert_vd,
    convert_vg,
    convert_vqa,
    itr_mc_rows,
    itr_rerank_rows,
)
from hanyi.data.cvlue_retrieval import add_retriever_arguments, retriever_step, stage1_info, stage1_summary
from hanyi.data.safepath import inside

SPLITS = {"val": "validation", "test": "test"}
TASKS = ("VQA", "VG", "VD", "IC")
#: Question files per task and split, in order of preference (``{s}`` = ``val`` / ``test``). They may be blind
#: (the repo's ``test_example/<T>/test_<T>.json`` has ``"answer": ""`` and ``"bbox": []``).
RELEASE_FILES = {
    "VQA": ("VQA/{s}.json", "VQA/{s}_VQA.json"),
    "VG": ("VG/{s}.json", "VG/{s}_VG.json"),
    "VD": ("VD/{s}.json", "VD/{s}_VD.json"),
    "IC": ("IC/{s}.json",),
}
#: Gold files per task and split, always preferred to the question file. A split-less ``gold.json``
#: (``test_example/``) serves every split, as it did when it was read as a question file.
GOLD_FILES = {
    "VQA": ("VQA/{s}_gold.json", "VQA/gold.json"),
    "VG": ("VG/{s}_gold.json", "VG/gold.json"),
    "VD": ("VD/{s}_gold.json", "VD/gold.json"),
    "IC": ("IC/{s}_gold.json", "IC/gold.json"),
}
VD_GOLD_FILES = GOLD_FILES["VD"]
REQUEST_URL = "https://github.com/WangYuxuan93/CVLUE (data on request, Google form in the readme; CC BY-NC-ND 4.0)"


class CvlueReleaseError(FileNotFoundError):
    """A part of the CVLUE release is missing or malformed; the message names the task, file and where to get it."""


def _find(root: str, candidates: tuple[str, ...], split: str) -> str | None:
    for pattern in candidates:
        path = os.path.join(root, pattern.format(s=split))
        if os.path.isfile(path):
            return path
    return None


def _load(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise CvlueReleaseError(f"{path}: not readable JSON ({exc})") from None


def _has_gold(task: str, items) -> bool:
    """Whether every item of a VQA / VG / IC list carries its gold (answer, 4-number box, captions)."""
    if not isinstance(items, list) or not items or not all(isinstance(it, dict) for it in items):
        return False  # e.g. the blind IC pools of test_example/ are plain lists of captions or image paths
    if task == "VQA":
        return all(isinstance(it.get("answer"), str) and it["answer"].strip() for it in items)
    if task == "VG":
        return all(isinstance(it.get("bbox"), list) and len(it["bbox"]) == 4 for it in items)
    return all(isinstance(it.get("caption"), list) and it["caption"] for it in items)


def _gold_source(task: str, root: str, split: str, refused: list[str]):
    """``(data, gold)`` to convert for ``task``/``split``, or None when the split has no file or no gold.

    VQA / VG / IC: the gold file when there is one (its ids are checked against the question file), else the question
    file if every item carries its gold. VD: the dialog file plus the gold file (or None). A split whose gold is
    missing is appended to ``refused`` and not written: a blind test file scored as gold would count empty answers as
    correct, give IoU 0 and VD rank 100.
    """
    question, gold = _find(root, RELEASE_FILES[task], split), _find(root, GOLD_FILES[task], split)
    if task == "VD":
        if question is None and gold is not None and os.path.basename(gold).startswith(split):
            refused.append(f"VD {split}: {gold} but no dialog file (VD/{split}.json); split not written")
        return (_load(question), _load(gold) if gold else None) if question else None
    if question is None and gold is None:
        return None
    if gold is not None:
        data = _load(gold)
        if not _has_gold(task, data):
            refused.append(f"{task} {split}: gold file {gold} lacks gold values; split not written")
            return None
        key = {"VQA": "question_id", "VG": "ref_id", "IC": "image"}[task]
        if question is not None and {it.get(key) for it in _load(question)} != {it.get(key) for it in data}:
            refused.append(f"{task} {split}: {question} and {gold} hold different {key}s; split not written")
            return None
        return data, None
    data = _load(question)
    if not _has_gold(task, data):
        refused.append(f"{task} {split}: {question} is blind (no gold) and no gold file; submission-only, not written")
        return None
    return data, None


def _with_images(docs: list[dict], root: str, missing: set[str]) -> list[dict]:
    out = []
    for doc in docs:
        ids = ", ".join(f"{k}={doc[k]}" for k in ("question_id", "ref_id", "dialog_id", "image_id") if k in doc)
        path = inside(root, doc["image_path"], f"CVLUE record ({ids or 'no id'}) image_path")
        if not os.path.isfile(path):
            missing.add(doc["image_path"])
            continue
        with open(path, "rb") as f:
            out.append({**doc, "image": {"bytes": f.read(), "path": os.path.basename(path)}})
    return out


def convert_release(
    root: str,
    out_dir: str,
    shortlist: dict | None = None,
    rerank_k: int = 16,
    tasks: tuple[str, ...] = TASKS,
    mc_size: int = MC_SIZE,
    vd_options: int = 100,
    source: str | None = None,
    retrieve=None,
    shortlist_origin: dict | None = None,
) -> dict:
    """Convert the release under ``root`` into a hub-format dataset at ``out_dir``; returns counts and anomalies.

    ``retrieve(ic_items) -> (shortlist, record)`` computes the test split's ITR shortlist (``cvlue_retrieval``), else
    ``shortlist`` serves every split. Raises :class:`CvlueReleaseError` naming every missing task file or image.
    """
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    anomalies: list[str] = []
    missing_files: list[str] = []
    missing_images: set[str] = set()
    configs: dict[str, dict] = {}
    itr_images: set[str] = set()
    refused: list[str] = []
    stage1 = None
    for task in tasks:
        found = scorable = False
        for split, hub_split in SPLITS.items():
            found = found or any(_find(root, c, split) for c in (RELEASE_FILES[task], GOLD_FILES[task]))
            gold_source = _gold_source(task, root, split, refused)  # not `source`: that names the release
            if gold_source is None:
                continue
            data, gold = gold_source
            if task == "VQA":
                rows = {"vqa": convert_vqa(data)}
            elif task == "VG":
                rows = {"vg": convert_vg(data, anomalies)}
            elif task == "VD":
                rows = {"vd": convert_vd(data, gold, anomalies, vd_options)}
                unscored = sum(d["answer_id"] == -1 for d in rows["vd"])
                if unscored:
                    refused.append(
                        f"VD {split}: {unscored} round(s) without a gold answer (no gold file?); not written"
                    )
                    continue
            else:
                rows = itr_mc_rows(data, mc_size)
                split_shortlist = shortlist
                if retrieve is not None and split == "test":
                    split_shortlist, stage1 = retrieve(data)
                    anomalies += [f"ITR stage 1: skipped image {s}" for s in stage1["skipped_images"]]
                if split_shortlist is not None:
                    rows.update(itr_rerank_rows(data, split_shortlist, rerank_k, anomalies))
                elif split == "test":
                    anomalies.append("ITR: no --itr-shortlist/--itr-retriever, so itr_*_rerank configs are not written")
                itr_images |= {r["image_path"] for v in rows.values() for r in v}
            scorable = True
            for config, docs in rows.items():
                if config in ("vqa", "vg", "vd"):
                    docs = _with_images(docs, root, missing_images)
                configs.setdefault(config, {})[hub_split] = datasets.Dataset.from_list(docs, features=_features(config))
        if not found:
            names = " or ".join(RELEASE_FILES[task]).replace("{s}", "<val|test>")
            missing_files.append(f"task {task}: no {names} under {root}")
        elif not scorable:
            missing_files.append(
                f"task {task}: no split with gold (" + "; ".join(r for r in refused if r.startswith(task)) + ")"
            )
    anomalies += refused
    missing_images |= {p for p in itr_images if not os.path.isfile(inside(root, p, "ITR image_path"))}
    if missing_files or missing_images:
        lines = missing_files + [f"image missing: {p}" for p in sorted(missing_images)[:20]]
        if len(missing_images) > 20:
            lines.append(f"... and {len(missing_images) - 20} more missing images")
        raise CvlueReleaseError(
            "incomplete CVLUE release:\n  " + "\n  ".join(lines) + f"\nRequest the data: {REQUEST_URL}"
        )
    for rel in sorted(itr_images):
        target = inside(out_dir, rel, "ITR image copy")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        inside(out_dir, rel, "ITR image copy")  # again, now that its folders exist (a symlinked folder)
        shutil.copyfile(inside(root, rel, "ITR image_path"), target)
    card = f"# CVLUE, converted by hanyi\n\nSource: {REQUEST_URL}. Do not redistribute (ND licence). See docs/cvlue.md."
    info = {
        "source": source or os.path.abspath(root),
        "anomalies": anomalies,
        **stage1_info(stage1, shortlist, shortlist_origin, rerank_k),
    }
    counts = write_hub_dataset(out_dir, configs, card, info)
    return {"counts": counts, "anomalies": anomalies, "refused": refused, "itr_stage1": stage1}


def add_prepare_arguments(parser) -> None:
    """Arguments of ``hanyi prepare cvlue``."""
    parser.add_argument(
        "--release", "--root", dest="root", required=True, help="official release directory (images/, VQA/ ... IC/)"
    )
    parser.add_argument(
        "--rerank-k", type=int, default=16, help="shortlist depth K of the rerank@K protocol (default 16)"
    )
    add_retriever_arguments(parser)


def run_prepare(args) -> dict:
    """``hanyi prepare cvlue``: convert ``args.root`` into ``args.out_dir``; returns the counts to print."""
    shortlist = None
    if getattr(args, "itr_shortlist", None):
        shortlist = _load(args.itr_shortlist)
        if not isinstance(shortlist, dict) or not {"i2t", "t2i"} & set(shortlist):
            raise CvlueReleaseError(f"{args.itr_shortlist}: expected an object with 'i2t' and/or 't2i'")
    k = getattr(args, "rerank_k", 16)
    if k < 1:
        raise ValueError(f"--rerank-k must be at least 1, got {k}")
    retrieve = retriever_step(args, k) if getattr(args, "itr_retriever", None) else None
    origin = {"path": os.path.abspath(args.itr_shortlist)} if shortlist is not None else None
    result = convert_release(args.root, args.out_dir, shortlist, k, retrieve=retrieve, shortlist_origin=origin)
    out = {f"{c}/{s}": n for c, splits in result["counts"].items() for s, n in splits.items()}
    out["anomalies"] = len(result["anomalies"])
    out["refused_splits"] = len(result["refused"])
    return {**out, **stage1_summary(result["itr_stage1"], getattr(args, "itr_retriever", None))}


def build_sample(out_dir: str, size: int | None = None) -> dict:
    """The bundled sample: a synthetic release in the official format (our own images), converted like a real one.

    ``size``: test VQA images (``cvlue_sample.FULL_SIZE["vqa_images"]`` for the paper's sizes); writes the test
    split of VQA, VG and 100-option VD (:func:`hanyi.data.cvlue_sample.write_scaled_release`), no ITR.
    """
    import tempfile

    from hanyi.data.cvlue_sample import (
        SAMPLE_RERANK_K,
        SAMPLE_VD_OPTIONS,
        write_scaled_release,
        write_synthetic_release,
    )

    with tempfile.TemporaryDirectory() as tmp:
        if size is not None:
            write_scaled_release(tmp, size)
            source = f"synthetic, size={size} (hanyi.data.cvlue_sample)"
            return convert_release(tmp, out_dir, tasks=("VQA", "VG", "VD"), source=source)["counts"]
        shortlist = write_synthetic_release(tmp)
        result = convert_release(
            tmp,
            out_dir,
            shortlist,
            SAMPLE_RERANK_K,
            mc_size=3,
            vd_options=SAMPLE_VD_OPTIONS,
            source="synthetic sample (hanyi.data.cvlue_sample)",
            shortlist_origin={"retriever": "none: the sample's fixed synthetic shortlist"},
        )
    return result["counts"]
