"""What the board's intake hands to its ranking and its site: one :class:`Entry` per accepted submission, one
:class:`Rejected` per refused file (issue 38).

The intake (``hanyi/leaderboard/intake.py``) reads ``hanyi-submission`` files, re-scores their per-doc predictions
with the installed scorers, and builds these; the ranking (``ranking.py``) and the site (``site.py``) read only these.
Every number here is the board's own re-score, never a submitter's claim.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Entry:
    """One accepted submission of one benchmark: re-scored values, per-doc scores and the protocol it was run under."""

    submission_hash: str  # sha256 of the submission file's bytes (the cache key and dedupe identity)
    benchmark: str  # one of hanyi.BENCHMARKS
    model: str  # as submitted; the site escapes it
    model_args: str  # redacted (hanyi.redact)
    date: str
    hanyi_version: str
    lmms_eval_version: str
    # task -> metric -> re-scored headline value (in the task's own unit, as lmms-eval prints it)
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    # task -> metric -> doc_id -> per-doc score (what the headline is the mean / aggregate of)
    per_doc: dict[str, dict[str, dict[int, float]]] = field(default_factory=dict)
    # task -> doc_id -> cluster label (docs sharing an image, story or pun; hanyi.report.stats.cluster_key)
    clusters: dict[str, dict[int, str]] = field(default_factory=dict)
    # task -> the protocol fields rows must share to be ranked together: task version, prompt variant, judge model
    # and version, backbone keys, full split, data fingerprint (str values; None where unknown)
    protocol: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # task -> provenance shown on the row (judge, backbones, data source + fingerprint, ...)
    provenance: dict[str, dict] = field(default_factory=dict)
    # metrics whose judged verdicts were re-aggregated from the log vs re-judged by the board's judge
    judged: dict[str, str] = field(default_factory=dict)  # "task/metric" -> "re-aggregated" | "re-judged"
    predictions_file: str | None = None  # path (relative to the site) of the per-doc predictions


@dataclass
class Rejected:
    """A submission file refused on arrival, with one line per reason; nothing of it enters a table."""

    path: str
    submission_hash: str | None
    model: str | None
    reasons: list[str] = field(default_factory=list)
