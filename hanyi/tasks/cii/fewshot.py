"""Few-shot exemplars of the CII-Bench few-shot tasks, kept per loaded dataset (glue; no I/O, nothing at import).

``process_docs`` runs once per loaded dataset: it takes the fixed exemplars (dev-33, dev-34, dev-35) out of the
scored docs and registers them under the dataset's fingerprint, which each remaining doc carries in
``fewshot_source``; the prompt hooks look the exemplars up from there. This module is imported by its absolute name,
so every task YAML shares one registry (``utils.py`` itself is re-executed per YAML by lmms-eval).
"""

from __future__ import annotations

import threading

from hanyi.tasks.cii.constants import FEWSHOT_IDS

SOURCE_FIELD = "fewshot_source"
_EXEMPLARS: dict[str, list[dict]] = {}
_LOCK = threading.Lock()


class FewShotExemplarsMissing(LookupError):
    """The loaded data lacks a few-shot exemplar (dev-33..35), or a doc's exemplars were never registered."""


def split_exemplars(dataset):
    """Register the exemplars of ``dataset`` and return the dataset without them (plus ``fewshot_source``)."""
    ids = list(dataset["id"])
    missing = [rid for rid in FEWSHOT_IDS if rid not in ids]
    if missing:
        raise FewShotExemplarsMissing(
            f"CII-Bench few-shot tasks need the dev exemplars {', '.join(FEWSHOT_IDS)}; missing from the loaded data: "
            f"{', '.join(missing)} (use the full dataset, test + dev)"
        )
    chosen = dataset.select([ids.index(rid) for rid in FEWSHOT_IDS])
    key = dataset._fingerprint
    with _LOCK:
        _EXEMPLARS[key] = [dict(row) for row in chosen]
    kept = dataset.select([i for i, rid in enumerate(ids) if rid not in FEWSHOT_IDS])
    return kept.add_column(SOURCE_FIELD, [key] * len(kept))


def exemplars_for(doc: dict, shots: int) -> list[dict]:
    """The first ``shots`` exemplars registered for ``doc``'s dataset, in the official order."""
    with _LOCK:
        rows = _EXEMPLARS.get(doc.get(SOURCE_FIELD))
    if rows is None:
        raise FewShotExemplarsMissing(f"no few-shot exemplars registered for doc id={doc.get('id')}")
    return rows[:shots]
