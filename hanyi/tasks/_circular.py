"""Glue shared by the ``*_circular`` tasks: one doc per (question, rotation), and the items the circular aggregations read.

Scoring rules live in :mod:`hanyi.metrics.circular`; docs/cii.md and docs/punrebus.md ("Circular evaluation").
"""

from __future__ import annotations

#: Column added to every expanded doc: the rotation ``k`` (0 = the original option order).
ROTATION = "circular_rotation"

#: Metric keys of every circular task; ``*_robust`` use the benchmark's tolerant parser instead of the paper's.
METRICS = ("circular_acc", "rotation_acc", "consistency_rate")
ROBUST_METRICS = tuple(f"{m}_robust" for m in METRICS)


def expand_rotations(dataset, n_rotations: int):
    """Each doc ``n_rotations`` times with a ``circular_rotation`` column, question-major and deterministic.

    Order: question 0 rotations 0..N-1, question 1 rotations 0..N-1, ... (so ``--limit`` keeps whole questions but
    possibly the last, which the aggregation leaves out). A filtered dataset is materialised once; the rotations then
    share its columns (Arrow concatenations plus one index map), so images are not copied N times.
    """
    import datasets

    if ROTATION in dataset.column_names:
        raise ValueError(f"circular tasks add a {ROTATION!r} column; the dataset already has one")
    if getattr(dataset, "_indices", None) is not None:  # a filtered dataset: materialise once, not once per rotation
        dataset = dataset.flatten_indices()
    m = len(dataset)
    parts = [dataset.add_column(ROTATION, [k] * m) for k in range(n_rotations)]
    whole = datasets.concatenate_datasets(parts)
    return whole.select([k * m + i for i in range(m) for k in range(n_rotations)])


def results(item: dict, robust_item: dict) -> dict:
    """``process_results`` output: the paper-parser item under every plain key, the robust one under ``*_robust``."""
    return {**dict.fromkeys(METRICS, item), **dict.fromkeys(ROBUST_METRICS, robust_item)}
