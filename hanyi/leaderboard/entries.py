"""What the board's intake hands to its ranking and its site: one :class:`Entry` per accepted submission, one
:class:`Rejected` per refused file.

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
    # task -> doc_id -> cluster label (docs sharing an image, story or pun; hanyi.results.perdoc.cluster_key)
    clusters: dict[str, dict[int, str]] = field(default_factory=dict)
    # task -> the protocol fields rows must share to be ranked together: task version, prompt variant, judge model
    # and version, backbone keys, full split, data fingerprint (str values; None where unknown)
    protocol: dict[str, dict[str, str | None]] = field(default_factory=dict)
    # task -> provenance shown on the row (judge, backbones, data source + fingerprint, ...)
    provenance: dict[str, dict] = field(default_factory=dict)
    # metrics whose judged verdicts were re-aggregated from the log vs re-judged by the board's judge
    judged: dict[str, str] = field(default_factory=dict)  # "task/metric" -> "re-aggregated" | "re-judged"
    predictions_file: str | None = None  # path (relative to the site) of the per-doc predictions
    # task -> metric -> the factor from the per-doc mean to ``values`` (100 where lmms-eval prints a percentage)
    scales: dict[str, dict[str, float]] = field(default_factory=dict)
    source_path: str = ""  # the submission file as given to the board (intake)
    # the submitter's model card (hanyi.submit.model_card: name, organisation, parameters, open_weights, link,
    # release_date, training_data), checked and cleaned; the site shows ``name`` instead of the model class
    card: dict = field(default_factory=dict)
    # "task/metric" -> why the board did not verify it: a judged metric re-aggregated from the submitter's own logged
    # verdicts (no judge on the board). Shown as the submitter's claim, marked; never ranked, never splits a section.
    unverified: dict[str, str] = field(default_factory=dict)
    # task -> canonical hash of its (doc content hash, answer) pairs: the submission's identity by content, whatever
    # its bytes, key order or model name (intake.content_hashes)
    content: dict[str, str] = field(default_factory=dict)
    # warnings shown on the row that do not refuse it, e.g. a model name another ranked submission also uses
    flags: list[str] = field(default_factory=list)

    @property
    def display_name(self) -> str:
        return str(self.card.get("name") or self.model)


@dataclass
class Rejected:
    """A submission file refused on arrival, with one line per reason; nothing of it enters a table."""

    path: str
    submission_hash: str | None
    model: str | None
    reasons: list[str] = field(default_factory=list)
    # "rejected": the submitter's file fails a check; "duplicate": the same predictions as an earlier submission
    # (``duplicate_of``; shown as such, never ranked); "pending": the board's own data, scorer or judge failed, so
    # nothing is decided: never cached, retried on the next build
    state: str = "rejected"
    duplicate_of: str | None = None  # the earlier submission's path (state "duplicate")


#: The states of a :class:`Rejected`.
REJECTED, DUPLICATE, PENDING = "rejected", "duplicate", "pending"


# What the ranking (``ranking.py``) hands to the site (``site.py``, JSON, CSV, Every Eval Ever records).


@dataclass
class Cell:
    """One table cell: the re-scored value and its 95 % interval (clustered where docs share an image, story or pun)."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int | None = None  # docs scored
    note: str = ""  # e.g. "judge re-aggregated", "not comparable: <reason>"
    stderr: float | None = None  # standard error (hanyi.metrics.intervals.interval's "stderr"; Every Eval Ever)
    method: str = ""  # how the interval was computed (intervals.interval's "method"), e.g. "exact (Clopper-Pearson)"


@dataclass
class Row:
    """One ranked row of a section: a submission, or a paper's own number (``reference``; never ranked)."""

    label: str  # model name as submitted (escaped by the site, never trusted as HTML)
    cells: dict[str, Cell]  # column id ("task/metric") -> cell
    entry: Entry | None = None  # None for a reference row
    reference: bool = False  # a paper row from hanyi/anchors
    comparable: bool | None = None  # reference rows: comparable with this section by the report's rules
    reasons: list[str] = field(default_factory=list)  # why not comparable (reference rows)
    rank: int | None = None  # point rank by the ranking column (1 = best)
    rank_low: int | None = None  # 95 % rank interval (paired bootstrap over the common docs)
    rank_high: int | None = None
    tier: int | None = None  # rows whose adjacent differences are not significant (Holm) share a tier
    flip: int | None = None  # fewest docs whose change would swap this row with the one above
    p_above: float | None = None  # Holm-adjusted p of the paired test against the tier's top row (the tier's evidence)


@dataclass
class Section:
    """Rows ranked together: one benchmark under one protocol. Rows of another protocol go to another section."""

    benchmark: str
    protocol: dict[str, str | None]  # the shared protocol fields
    columns: list[str]  # "task/metric", the paper's main-table columns first
    ranking_column: str  # the column the rank, tiers and flips are computed on
    rows: list[Row] = field(default_factory=list)
    apart: list[str] = field(default_factory=list)  # why this section is apart from the main one (empty: main)
    method: str = ""  # the test and interval methods, said on the page
    lower_is_better: list[str] = field(default_factory=list)  # columns whose metric is lower-is-better (mean_rank)


@dataclass
class Board:
    sections: list[Section] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    overall: Section | None = None  # a mean rank only when every row has every benchmark comparable
    overall_absent: str = ""  # why there is no overall score
