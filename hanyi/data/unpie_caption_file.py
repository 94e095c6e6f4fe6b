"""The caption file of UNPIE's Socratic-Model (``*_sm``) tasks as the tasks read it at load: where it is, and each
doc's caption attached (the file is written beforehand with an image-to-text model).
"""

from __future__ import annotations

import json
import os

from hanyi.data.unpie_ids import CAPTIONS_ENV, CAPTIONS_FILE, caption_key
from hanyi.logs import get_logger

log = get_logger(__name__)


def captions_path(configured: str | None = None) -> str | None:
    """The caption file for ``*_sm`` tasks: ``configured`` (a path given by the caller), ``$HANYI_UNPIE_CAPTIONS``, or
    ``captions.json`` inside the resolved data directory (prepared or sample). ``None`` when none exists."""
    for candidate in (configured, os.environ.get(CAPTIONS_ENV)):
        if candidate:
            return os.path.expanduser(candidate)
    from hanyi.data.sources import DataNotFoundError, resolve

    try:
        root = resolve("unpie")
    except DataNotFoundError:
        return None
    path = os.path.join(root, CAPTIONS_FILE)
    return path if os.path.isfile(path) else None


def attach_captions(docs: list[dict], tag: str = "unpie", path: str | None = None, missing=None) -> int:
    """Give each doc its ``caption`` (``""`` when the caption file lacks its key); returns how many lack one.

    The file is :func:`captions_path` (``path``, ``$HANYI_UNPIE_CAPTIONS`` or ``captions.json`` in the data
    directory); without any, the caption tasks cannot run and ``FileNotFoundError`` says how to make one. The keys
    without a caption are logged here, or added to ``missing`` when it is a list (a split attached part by part
    logs them once: :func:`log_missing_captions`).
    """
    path = captions_path(path)
    if path is None:
        raise FileNotFoundError(f"unpie *_sm tasks need a caption file: set {CAPTIONS_ENV} (docs/unpie.md, SM mode)")
    table = load_captions(path)
    gaps = []
    for doc in docs:
        key = caption_key(doc["unpie_id"], doc["meaning_idx"] if "disamb_image" in doc else None)
        doc["caption"] = (table.get(key) or "").strip()
        if not doc["caption"]:
            gaps.append(key)
    if missing is None:
        log_missing_captions(gaps, len(docs), tag, path)
    else:
        missing += gaps
    return len(gaps)


def log_missing_captions(missing: list, n_docs: int, tag: str = "unpie", path: str | None = None) -> None:
    """Warn once that ``missing`` caption keys (of ``n_docs`` docs) have no caption in the caption file."""
    if missing:
        log.warning(
            "%s: %d of %d docs have no caption in %s (left out of every score, counted in caption_missing): %s",
            tag,
            len(missing),
            n_docs,
            captions_path(path),
            ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""),
        )


def load_captions(path: str) -> dict[str, str]:
    """Read a caption file (JSON object ``{caption_key: caption}``); raises ``ValueError`` on a malformed file."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise ValueError(f"{path}: a UNPIE caption file is a JSON object mapping caption keys to strings")
    return data
