"""UNPIE (Chung et al., EMNLP 2024): hub rows -> task docs, disambiguator images, captions, the prepared dataset.

Release format (hub ``jiwan-chung/VisualPun_UNPIE``, config ``default``, splits ``homographic`` / ``heterographic``,
500 rows each): ``pun_sentence, alter_sentence, pun_phrase, alter_phrase, meaning1, translation1{de,fr,ko},
disamb_image1 (string), meaning2, translation2{de,fr,ko}, disamb_image2 (string), pun_exp_image (image)``.
A prepared directory (``hanyi prepare unpie``) has the same schema, with resolvable disambiguator images embedded
as ``data:`` URIs. :func:`expand` turns rows into self-contained task docs (2 per pun for disambiguation and
reconstruction). See ``docs/unpie.md``.

Disambiguator images (resolving a cell, the URL cache, opt-in downloads, ``data:`` URIs) are
:mod:`hanyi.data.unpie_images`.
"""

from __future__ import annotations

import hashlib
import os

from hanyi.data.images import ImageUnavailableError, check_images
from hanyi.data.unpie_caption_file import attach_captions, log_missing_captions
from hanyi.data.unpie_ids import CAPTIONS_ENV, CAPTIONS_FILE, caption_key, unpie_id  # noqa: F401  (the public entry)
from hanyi.data.unpie_images import (  # noqa: F401  (re-exported: hanyi.data.unpie stays the public entry)
    DOWNLOAD_ENV,
    IMAGE_CACHE_ENV,
    IMAGE_OK,
    IMAGE_ROOT_ENV,
    image_cache_dir,
    image_status,
    load_disamb_image,
    resolve_image_source,
    to_data_uri,
    url_cache_path,
)
from hanyi.logs import get_logger

log = get_logger(__name__)

HUB_ID = "jiwan-chung/VisualPun_UNPIE"
CONFIG = "default"
SPLITS = ("homographic", "heterographic")
LANGUAGES = ("de", "fr", "ko")
KINDS = ("grounding", "disambiguation", "reconstruction")
# --- rows -> docs -----------------------------------------------------------------------------------------------

REQUIRED = ("pun_sentence", "pun_phrase", "translation1", "translation2")

#: The fields each task kind reads (a translation in the task's own language only): a row is skipped from a task
#: only when one of *its* fields is empty, so one empty Korean translation leaves the pun in every other task.
KIND_FIELDS = {
    "grounding": ("pun_sentence", "pun_phrase"),
    "disambiguation": ("pun_sentence", "translation1", "translation2"),
    "reconstruction": ("pun_sentence", "pun_phrase", "translation1", "translation2"),
}

#: The hub columns :func:`expand_rows` reads for each kind (``expand`` converts no other: each column read is pages
#: of the split's file the process touches, and a grounding doc needs under half of a row)
READ_FIELDS = {
    "grounding": ("pun_sentence", "pun_phrase", "alter_phrase", "pun_exp_image"),
    "disambiguation": ("pun_sentence", "pun_phrase", "alter_phrase", "meaning1", "meaning2", "translation1",
                       "translation2", "disamb_image1", "disamb_image2"),
    "reconstruction": ("pun_sentence", "pun_phrase", "alter_phrase", "meaning1", "meaning2", "translation1",
                       "translation2", "pun_exp_image"),
}  # fmt: skip


def row_problems(row: dict, kind: str | None = None, lang: str | None = None) -> list[str]:
    """What is wrong with a hub row for task ``kind`` in language ``lang`` (its own fields only); ``[]`` when usable.

    Without ``kind``, every required field in every language is checked (``hanyi prepare`` reports them all).

    >>> row = {"pun_sentence": "x", "pun_phrase": "", "translation1": {"de": "a"}, "translation2": None}
    >>> row_problems(row)
    ['pun_phrase empty', 'translation1.fr empty', 'translation1.ko empty', 'translation2 missing']
    >>> row_problems(row, "disambiguation", "de"), row_problems(row, "grounding")
    (['translation2 missing'], ['pun_phrase empty'])
    """
    problems = []
    for field in KIND_FIELDS[kind] if kind else REQUIRED:
        value = row.get(field)
        if field.startswith("translation"):
            if not isinstance(value, dict):
                problems.append(f"{field} missing")
                continue
            langs = [lang] if kind and lang else LANGUAGES
            problems += [f"{field}.{code} empty" for code in langs if not (value.get(code) or "").strip()]
        elif not (value or "").strip():
            problems.append(f"{field} empty")
    return problems


def expand_rows(rows, kind: str, split: str, lang: str | None = None, first: int = 0) -> tuple[list[dict], list[str]]:
    """Hub rows (dicts, in split order) -> self-contained task docs, plus one message per skipped corrupt row.

    grounding: one doc per pun. disambiguation / reconstruction: two docs per pun, one per meaning j in {0, 1}
    (j=0 <-> ``meaning1``/``translation1``/``disamb_image1``). Disambiguation docs carry ``target`` (the translation of
    the depicted meaning), ``distractor`` (the other one) and ``image_status``; reconstruction docs carry
    ``source_sentence`` (translation j) and ``target`` (the English pun). ``first``: the split index of ``rows[0]``
    (a part of a split), from which each pun's id is numbered.
    """
    if kind not in KINDS or split not in SPLITS or (kind != "grounding" and lang not in LANGUAGES):
        raise ValueError(f"unknown UNPIE expansion: kind={kind!r} split={split!r} lang={lang!r}")
    docs, skipped = [], []
    for idx, row in enumerate(rows, first):
        pid = unpie_id(split, idx)
        problems = row_problems(row, kind, lang)
        if problems:
            skipped.append(f"{pid}: {', '.join(problems)}")
            continue
        base = {
            "unpie_id": pid,
            "category": split,
            "pun_sentence": row["pun_sentence"],
            "pun_phrase": row.get("pun_phrase") or "",
        }
        base["alter_phrase"] = row.get("alter_phrase") or ""
        if kind == "grounding":
            docs.append({**base, "pun_exp_image": row.get("pun_exp_image")})
            continue
        translations = (row["translation1"][lang], row["translation2"][lang])
        for j in (0, 1):
            doc = {**base, "meaning_idx": j, "lang": lang, "meaning": row.get(f"meaning{j + 1}") or ""}
            if kind == "disambiguation":
                image = row.get(f"disamb_image{j + 1}")
                hint = f"unpie_id={pid} meaning_idx={j}"
                doc.update(target=translations[j], distractor=translations[1 - j], disamb_image=image or "")
                doc["image_status"] = image_status(image, doc_hint=hint, digests=(sha := {}))
                doc["image_sha256"] = sha.get(hint)  # the bytes checked: paired runs are matched on them
            else:
                doc.update(source_sentence=translations[j], target=row["pun_sentence"])
                doc["pun_exp_image"] = row.get("pun_exp_image")
            docs.append(doc)
    return docs, skipped


#: hub rows converted at a time by :func:`expand`: the Python rows and docs of one part are alive at once, not a split's
PART_ROWS = 256


def expand(dataset, kind: str, split: str, lang: str | None = None, needs_image: bool = False, captions=False,
           text_only=False, store=None):  # fmt: skip
    """``process_docs`` body: a ``datasets.Dataset`` of hub rows -> a Dataset of task docs (:func:`expand_rows`).

    The explanation image is passed through as stored bytes (no re-encoding), checked first unless the task reads
    captions: one missing or damaged stops the load naming the pun (text tasks too: they share the docs). Corrupt
    rows are skipped and logged with their ids. A disambiguation doc whose disambiguator image cannot be resolved is left out here when the task
    shows the image (``needs_image``: the VLM tasks, which never send a request without one), and logged with its
    count and ids. The caption tasks (``captions``) need no image: each doc gets its ``caption`` from the caption
    file (:func:`attach_captions`); a doc without one is kept, left out of every score and counted in
    ``caption_missing``. A text-only task (``text_only``) sends no image: its docs carry no explanation image, which is
    neither checked nor decoded (no image library needed), only its stored bytes hashed for ``image_sha256``.

    The rows are converted :data:`PART_ROWS` at a time, each part a Dataset handed to ``store`` (which returns what
    to keep of it: by default the part itself, in memory); the parts are concatenated in order. Converting a whole
    split at once held every row and doc as Python objects together, memory the allocator kept after they were
    freed (UNPIE grounding's load grew 6 KB a doc). Every message and error covers the whole split, as before.
    """
    import datasets

    if "pun_exp_image" in dataset.column_names:
        dataset = dataset.cast_column("pun_exp_image", datasets.Image(decode=False))
    # the rows converted in one Arrow pass, not decoded one by one (17 -> 1.2 ms for 500 rows; the same dicts), and
    # only the columns the kind reads (a disambiguation doc does not carry the explanation image: its bytes unread)
    if kind in READ_FIELDS:  # an unknown kind is refused by expand_rows, naming it
        dataset = dataset.select_columns([c for c in READ_FIELDS[kind] if c in dataset.column_names])
    tag = f"unpie {kind} {split}{'/' + lang if lang else ''}"
    store = store or (lambda part: part)
    parts, skipped, left_out, damaged, caption_gaps, n_docs = [], [], [], [], [], 0
    for first in range(0, len(dataset), PART_ROWS):
        rows = dataset.select(range(first, min(first + PART_ROWS, len(dataset)))).to_list()
        docs, part_skipped = expand_rows(rows, kind, split, lang, first)
        del rows
        skipped += part_skipped
        n_docs += len(docs)
        bad = [d for d in docs if d.get("image_status", IMAGE_OK) != IMAGE_OK]
        if bad and needs_image:
            left_out += [(f"{d['unpie_id']}/{d['meaning_idx']}", d["image_status"]) for d in bad]
            docs = [d for d in docs if d.get("image_status", IMAGE_OK) == IMAGE_OK]
        if text_only:  # the same image_sha256 as the image tasks log (the sha256 of the stored bytes), no decoding
            docs = [{**{k: v for k, v in d.items() if k != "pun_exp_image"}, "image_sha256": _stored_sha256(d)}
                    for d in docs]  # fmt: skip
        elif kind != "disambiguation" and not captions:  # the explanation image: every one checked, as for images
            cells = {d["unpie_id"]: d.get("pun_exp_image") or {} for d in docs}
            checked = [(pid, cell.get("bytes") or cell.get("path")) for pid, cell in cells.items()]
            damaged += check_images(checked, 4, sha := {})
            docs = [{**d, "image_sha256": sha.get(d["unpie_id"])} for d in docs]
        if captions:
            attach_captions(docs, tag, missing=caption_gaps)
        if docs:
            part = datasets.Dataset.from_list(docs)
            del docs
            if "pun_exp_image" in part.column_names:
                part = part.cast_column("pun_exp_image", datasets.Image())
            parts.append(store(part))
    if skipped:
        log.warning("%s: skipped %d corrupt row(s): %s", tag, len(skipped), "; ".join(skipped[:10]))
    if left_out:
        ids = ", ".join(i for i, _ in left_out[:10]) + (" ..." if len(left_out) > 10 else "")
        log.warning(
            "%s: left out %d of %d docs whose disambiguator image cannot be resolved (a VLM task sends no request "
            "without its image): %s. First: %s",
            tag,
            len(left_out),
            n_docs,
            ids,
            left_out[0][1],
        )
    if damaged:
        shown = "; ".join(f"unpie_id={pid}: {why}" for pid, why in damaged[:10])
        raise ImageUnavailableError(
            f"{tag}: {len(damaged)} explanation image(s) missing or damaged ({shown}). Rebuild the data."
        )
    if captions:
        log_missing_captions(caption_gaps, n_docs - len(left_out), tag)
    if not parts:
        return datasets.Dataset.from_list([])
    return parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)


def _stored_sha256(doc: dict) -> str | None:
    """The sha256 of a doc's stored explanation image (its bytes, or the file its path names); None without one."""
    cell = doc.get("pun_exp_image") or {}
    data = cell.get("bytes") if isinstance(cell, dict) else None
    path = cell.get("path") if isinstance(cell, dict) else None
    if data is None and isinstance(path, str) and os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
    return hashlib.sha256(data).hexdigest() if data else None


# --- sample and prepare ------------------------------------------------------------------------------------------


def features():
    import datasets

    tr = {lang: datasets.Value("string") for lang in LANGUAGES}
    s = datasets.Value("string")
    return datasets.Features(
        {
            "pun_sentence": s,
            "alter_sentence": s,
            "pun_phrase": s,
            "alter_phrase": s,
            "meaning1": s,
            "translation1": tr,
            "disamb_image1": s,
            "meaning2": s,
            "translation2": tr,
            "disamb_image2": s,
            "pun_exp_image": datasets.Image(),
        }
    )


def add_prepare_arguments(parser) -> None:
    """Options of ``hanyi prepare unpie``."""
    parser.add_argument("--source", default=HUB_ID, help=f"hub id or local hub-format directory (default {HUB_ID})")
    parser.add_argument("--revision", default=None, help="hub revision (commit) to load")
    parser.add_argument(
        "--download-images",
        action="store_true",
        help="download disambiguator images given as URLs (into the image cache) and embed them; off by default",
    )


def run_prepare(args) -> dict:
    """Load both splits from ``args.source``, embed every resolvable disambiguator image as a data URI, and write a
    hub-format dataset to ``args.out_dir``. Returns counts; unresolvable images and corrupt rows are reported."""
    import datasets

    from hanyi.data.hubformat import write_hub_dataset

    counts: dict[str, int] = {"images_embedded": 0, "images_unresolved": 0, "corrupt_rows": 0}
    out_splits, unresolved, corrupt = {}, [], []
    for split in SPLITS:
        ds = datasets.load_dataset(args.source, split=split, revision=getattr(args, "revision", None))
        rows = []
        for idx, row in enumerate(ds):
            pid = unpie_id(split, idx)
            corrupt += [f"{pid}: {p}" for p in row_problems(row)]
            for j in (1, 2):
                value, hint = row.get(f"disamb_image{j}"), f"unpie_id={pid} disamb_image{j}"
                try:
                    img = load_disamb_image(value, doc_hint=hint, download=bool(args.download_images))
                except Exception as exc:  # ImageUnavailableError, or a decode error
                    unresolved.append(str(exc))
                    continue
                row[f"disamb_image{j}"] = to_data_uri(img)
                counts["images_embedded"] += 1
            rows.append(row)
        out_splits[split] = datasets.Dataset.from_list(rows, features=features())
        counts[f"rows_{split}"] = len(rows)
    counts["images_unresolved"], counts["corrupt_rows"] = len(unresolved), len({c.split(":")[0] for c in corrupt})
    for msg in (unresolved + corrupt)[:20]:
        log.warning("unpie prepare: %s", msg)
    info = {"source": args.source, "revision": getattr(args, "revision", None), "unresolved_images": unresolved}
    card = f"# UNPIE (prepared by hanyi)\n\nSource: {args.source}. See docs/unpie.md."
    write_hub_dataset(args.out_dir, {CONFIG: out_splits}, card, {**info, "corrupt": corrupt})
    return counts
