"""CII-Bench docs at load time: unscorable rows dropped with a report, every image found before any model call.

Image sources, in order: the embedded image; ``$HANYI_CII_IMAGE_ROOT/<local_path>`` (a GitHub clone); for a hub
source, ``<local_path>`` fetched from the hub dataset repository. What none of them serves is an error naming the ids.
"""

import os

from hanyi.data.cii import CHECKED_FIELDS, check_rows, gold_letter
from hanyi.logs import get_logger
from hanyi.tasks._common import missing_image_ids, require_images

log = get_logger("hanyi.cii")


def checked(dataset):
    """Stop at a gold answer that names no option letter, naming every such id: left out, it would shrink the
    denominator unseen; kept, it would be wrong for every model. A gold letter in another spelling (``" c "``) is
    scored as that letter; rows with an empty option are dropped; every anomaly is logged (images are not decoded
    here)."""
    rows = dataset.select_columns([c for c in CHECKED_FIELDS if c in dataset.column_names]).to_list()
    _, report = check_rows([{**row, "image": True} for row in rows])
    bad = report.pop("bad_answer", [])
    if bad:
        raise ValueError(
            f"hanyi cii: {len(bad)} gold answer(s) name no option letter A-F (doc ids: {', '.join(bad)}); fix the "
            "data's `answer` field or rebuild it with `hanyi prepare cii` (docs/cii.md, deviation 10)"
        )
    if report:
        log.warning("hanyi cii: data anomalies (first ids) %s", {k: v[:10] for k, v in report.items()})
    if report.get("normalised_answer"):
        dataset = dataset.map(lambda a: {"answer": gold_letter(a)}, input_columns="answer")
    dropped = set(report.get("dropped_unscorable", ()))
    return dataset.filter(lambda rid: rid not in dropped, input_columns="id") if dropped else dataset


IMAGE_FIX = (
    "Set HANYI_CII_IMAGE_ROOT to a clone of github.com/MING-ZCH/CII-Bench, or run "
    "`hanyi prepare cii --source github --github-root <clone>`"
)


def with_images(dataset):
    """Image tasks: every doc must have its picture, checked before inference.

    Sources, in order: the embedded image; ``$HANYI_CII_IMAGE_ROOT/<local_path>`` (a GitHub clone); for a hub
    source, ``<local_path>`` fetched from the hub dataset repository (whose ``images/`` folder holds the pictures the
    parquet may lack, e.g. the dev split's) into the hub cache. What none of them serves is an error naming the ids.
    """
    root = os.path.expanduser(os.environ.get("HANYI_CII_IMAGE_ROOT") or "")
    if root:  # ``~`` expanded; a file found there is decoded like an embedded image
        paths = dict(zip(dataset["id"], dataset["local_path"])) if "local_path" in dataset.column_names else {}
        served = lambda rid: next(filter(os.path.isfile, [os.path.join(root, paths.get(rid) or "")]), None)  # noqa: E731
        return require_images(dataset, "image", "id", IMAGE_FIX, served)
    return require_images(_fill_from_hub(dataset), "image", "id", IMAGE_FIX)


def _fill_from_hub(dataset):
    """Fill missing images from the hub repository by ``local_path`` (only when the source is a hub id)."""
    from hanyi.data.sources import resolve

    source = resolve("cii")
    if os.path.isdir(source) or "local_path" not in dataset.column_names:
        return dataset  # nothing to fetch from: require_images names what is missing (one scan of the images)
    missing = set(missing_image_ids(dataset, "image", "id"))
    if not missing:
        return dataset
    import datasets
    import huggingface_hub

    fetched = {}
    for rid, rel in zip(dataset["id"], dataset["local_path"]):
        if rid in missing and rel:
            try:
                fetched[rid] = huggingface_hub.hf_hub_download(source, rel, repo_type="dataset")
            except Exception as exc:  # offline, or not in the repo: require_images names what is left
                log.warning("hanyi cii: could not fetch %s from %s: %s", rel, source, exc)
                break
    if not fetched:
        return dataset
    log.info("hanyi cii: %d image(s) not embedded in %s were fetched by local_path", len(fetched), source)
    raw = dataset.cast_column("image", datasets.Image(decode=False))
    raw = raw.map(
        lambda row: {"image": {"bytes": None, "path": fetched[row["id"]]} if row["id"] in fetched else row["image"]}
    )
    return raw.cast_column("image", datasets.Image())


def cii_doc_to_visual(doc):
    from hanyi.data.images import ImageUnavailableError, to_pil

    root = os.path.expanduser(os.environ.get("HANYI_CII_IMAGE_ROOT") or "") or None
    value = doc.get("image") if doc.get("image") is not None or not root else doc.get("local_path")
    try:
        return [to_pil(value, doc_hint=f"CII-Bench id={doc.get('id')}", base_dir=root)]
    except ImageUnavailableError as exc:
        raise ImageUnavailableError(f"{exc}. {IMAGE_FIX}") from None
