"""VULCA human reference: the released MHEB feature CSV -> derived numbers only (spec §5.2).

Input: ``human_expert_features_consolidated.csv`` from yha9806/EMNLP2025-VULCA (commit
``91a6131fffbcfcb5f2abc448d13923962ec64bcb``, ``full_data/human_expert/result_for_profiling/``), 163 rows of zero-shot
scores of copyrighted book excerpts. We keep per-text numbers (top-1 stance, 17 feature and 11 quality scores), the
file id as a citation, and what we derive from them; ``text_preview`` (the excerpt itself) is dropped. Output:
``hanyi/tasks/vulca/reference/human_reference.json``. Regenerate::

    python -m hanyi.data.vulca_reference <csv> [out.json]
"""

from __future__ import annotations

import ast
import csv
import functools
import json
import os
import sys

from hanyi import TASKS_DIR
from hanyi.metrics.critique_profile import (
    FEATURE_LABELS,
    PROFILE_KEYS,
    QUALITY_LABELS,
    STANCE_LABELS,
    feature_vector,
    mean_profile,
    primary_profile,
    profile_scores,
)

SOURCE = {
    "repo": "yha9806/EMNLP2025-VULCA",
    "commit": "91a6131fffbcfcb5f2abc448d13923962ec64bcb",
    "path": "full_data/human_expert/result_for_profiling/human_expert_features_consolidated.csv",
    "extractor": "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli, template 'This example is {}.'",
}
DEFAULT_OUT = os.path.join(TASKS_DIR, "vulca", "reference", "human_reference.json")


class ReferenceRowError(ValueError):
    """A CSV row cannot be read; the message names the row."""


def _scores(cell: str, labels, where: str) -> dict[str, float]:
    try:
        raw = ast.literal_eval(cell)
        out = {label: float(raw[label]["score"]) for label in labels}
    except (ValueError, SyntaxError, KeyError, TypeError) as exc:
        raise ReferenceRowError(f"{where}: cannot read scores ({type(exc).__name__}: {exc})") from None
    return out


def read_reference_rows(path: str) -> list[dict]:
    """Rows of the released CSV as ``{"file_id", "stance_top1": [label, p], "features", "quality"}``, CSV order."""
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        for i, row in enumerate(csv.DictReader(f), 2):
            where = f"{path}:row {i} ({row.get('file_id', '?')})"
            label = row["stance_label_en"]
            if label not in STANCE_LABELS:
                raise ReferenceRowError(f"{where}: unknown stance label {label!r}")
            rows.append(
                {
                    "file_id": row["file_id"].replace("\\", "/"),
                    "stance_top1": [label, float(row["stance_score"])],
                    "features": _scores(row["features"], FEATURE_LABELS, where),
                    "quality": _scores(row["quality"], QUALITY_LABELS, where),
                }
            )
    return rows


def derive_reference(rows: list[dict]) -> dict:
    """Human means, profile scores, primary profiles and the per-profile 47-d centroids (top-1 stance slot only)."""
    per_text, vectors = [], {}
    for row in rows:
        label, score = row["stance_top1"]
        scores = profile_scores(label, score, row["features"], row["quality"])
        primary = primary_profile(scores)
        per_text.append({**row, "profiles": scores, "primary_profile": primary})
        vec = feature_vector({label: score}, row["features"], row["quality"])
        vectors.setdefault(primary, []).append(vec)
    centroids = {p: [sum(col) / len(vs) for col in zip(*vs)] for p, vs in sorted(vectors.items()) if p in PROFILE_KEYS}
    return {
        "source": SOURCE,
        "n": len(rows),
        "stance_representation": "top-1 label and its probability only (the CSV has no full stance distribution)",
        "mean_features": dict(zip(FEATURE_LABELS, mean_profile([r["features"] for r in rows], FEATURE_LABELS))),
        "mean_quality": dict(zip(QUALITY_LABELS, mean_profile([r["quality"] for r in rows], QUALITY_LABELS))),
        "mean_profiles": dict(zip(PROFILE_KEYS, mean_profile([t["profiles"] for t in per_text], PROFILE_KEYS))),
        "primary_profile_counts": {p: len(v) for p, v in sorted(vectors.items())},
        "profile_centroids_47d": centroids,
        "texts": per_text,
    }


@functools.lru_cache(maxsize=4)
def load_reference(path: str = DEFAULT_OUT) -> dict:
    """The shipped human reference (see :func:`derive_reference`), read once per process."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv=None) -> dict:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit(__doc__)
    ref = derive_reference(read_reference_rows(args[0]))
    out = args[1] if len(args) > 1 else DEFAULT_OUT
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=None, sort_keys=True)
        f.write("\n")
    return {"rows": ref["n"], "primary_profiles": ref["primary_profile_counts"]}


if __name__ == "__main__":
    print(main())
