"""How UNPIE's puns and their pictures are named across the tasks and the data builder: a pun's id, its caption-file key, and where the caption
file is found. Kept apart so the loader (:mod:`hanyi.data.unpie`), the caption file reader
(:mod:`hanyi.data.unpie_caption_file`) and the caption writer share one naming
without importing each other.
"""

from __future__ import annotations

CAPTIONS_ENV = "HANYI_UNPIE_CAPTIONS"
CAPTIONS_FILE = "captions.json"


def unpie_id(split: str, row_idx: int) -> str:
    """Stable pun id ``<split>-<row index>`` (e.g. ``homographic-0``)."""
    return f"{split}-{row_idx}"


def caption_key(pun_id: str, meaning_idx: int | None = None) -> str:
    """Caption-file key: ``<unpie_id>`` for the explanation image, ``<unpie_id>-<j>`` for disambiguator image j.

    >>> caption_key("heterographic-3"), caption_key("heterographic-3", 1)
    ('heterographic-3', 'heterographic-3-1')
    """
    return pun_id if meaning_idx is None else f"{pun_id}-{meaning_idx}"
