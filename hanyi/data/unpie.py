"""UNPIE (Chung et al., EMNLP 2024): hub rows -> task docs, disambiguator images, captions, ``hanyi prepare unpie``.

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
from hanyi.data.unpie_caption_file import attach_captions
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


def expand_rows(rows, kind: str, split: str, lang: str | None = None) -> tuple[list[dict], list[str]]:
    """Hub rows (dicts, in split order) -> self-contained task docs, plus one message per skipped corrupt row.

    grounding: one doc per pun. disambiguation / reconstruction: two docs per pun, one per meaning j in {0, 1}
    (j=0 <-> ``meaning1``/``translation1``/``disamb_image1``). Disambiguation docs carry ``target`` (the translation of
    the depicted meaning), ``distractor`` (the other one) and ``image_status``; reconstruction docs carry
    ``source_sentence`` (translation j) and ``target`` (the English pun).
    """
    if kind not in KINDS or split not in SPLITS or (kind != "grounding" and lang not in LANGUAGES):
        raise ValueError(f"unknown UNPIE expansion: kind={kind!r} split={split!r} lang={lang!r}")
    docs, skipped = [], []
    for idx, row in enumerate(rows):
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
                doc["image_sha256"] = sha.get(hint)  # the bytes checked: hanyi report pairs runs on them
            else:
                doc.update(source_sentence=translations[j], target=row["pun_sentence"])
                doc["pun_exp_image"] = row.get("pun_exp_image")
            docs.append(doc)
    return docs, skipped


def expand(dataset, kind: str, split: str, lang: str | None = None, needs_image: bool = False, captions=False,
           text_only=False):  # fmt: skip
    """``process_docs`` body: a ``datasets.Dataset`` of hub rows -> a Dataset of task docs (:func:`expand_rows`).

    The explanation image is passed through as stored bytes (no re-encoding), checked first unless the task reads
    captions: one missing or damaged stops the load naming the pun (text tasks too: they share the docs). Corrupt
    rows are skipped and logged with their ids. A disambiguation doc whose disambiguator image cannot be resolved is left out here when the task
    shows the image (``needs_image``: the VLM tasks, which never send a request without one), and logged with its
    count and ids. The caption tasks (``captions``) need no image: each doc gets its ``caption`` from the caption
    file (:func:`attach_captions`); a doc without one is kept, left out of every score and counted in
    ``caption_missing``. A text-only task (``text_only``) sends no image: its docs carry no explanation image, which is
    neither checked nor decoded (no image library needed), only its stored bytes hashed for ``image_sha256``.
    """
    import datasets

    if "pun_exp_image" in dataset.column_names:
        dataset = dataset.cast_column("pun_exp_image", datasets.Image(decode=False))
    # the rows converted in one Arrow pass, not decoded one by one (17 -> 1.2 ms for 500 rows; the same dicts); a
    # disambiguation doc does not carry the explanation image, so its bytes are not read
    if kind == "disambiguation" and "pun_exp_image" in dataset.column_names:
        dataset = dataset.remove_columns("pun_exp_image")
    docs, skipped = expand_rows(dataset.to_list(), kind, split, lang)
    tag = f"unpie {kind} {split}{'/' + lang if lang else ''}"
    if skipped:
        log.warning("%s: skipped %d corrupt row(s): %s", tag, len(skipped), "; ".join(skipped[:10]))
    bad = [d for d in docs if d.get("image_status", IMAGE_OK) != IMAGE_OK]
    if bad and needs_image:
        ids = ", ".join(f"{d['unpie_id']}/{d['meaning_idx']}" for d in bad[:10]) + (" ..." if len(bad) > 10 else "")
        log.warning(
            "%s: left out %d of %d docs whose disambiguator image cannot be resolved (a VLM task sends no request "
            "without its image): %s. First: %s",
            tag,
            len(bad),
            len(docs),
            ids,
            bad[0]["image_status"],
        )
        docs = [d for d in docs if d.get("image_status", IMAGE_OK) == IMAGE_OK]
    if text_only:  # the same image_sha256 as the image tasks log (the sha256 of the stored bytes), no decoding
        docs = [{**{k: v for k, v in d.items() if k != "pun_exp_image"}, "image_sha256": _stored_sha256(d)}
                for d in docs]  # fmt: skip
    elif kind != "disambiguation" and not captions:  # the explanation image: every one checked, as for image tasks
        cells = {d["unpie_id"]: d.get("pun_exp_image") or {} for d in docs}
        bad = check_images([(pid, cell.get("bytes") or cell.get("path")) for pid, cell in cells.items()], 4, sha := {})
        docs = [{**d, "image_sha256": sha.get(d["unpie_id"])} for d in docs]
        if bad:
            shown = "; ".join(f"unpie_id={pid}: {why}" for pid, why in bad[:10])
            raise ImageUnavailableError(
                f"{tag}: {len(bad)} explanation image(s) missing or damaged ({shown}). Rebuild the data."
            )
    if captions:
        attach_captions(docs, tag)
    out = datasets.Dataset.from_list(docs)
    if "pun_exp_image" in out.column_names:
        out = out.cast_column("pun_exp_image", datasets.Image())
    return out


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
