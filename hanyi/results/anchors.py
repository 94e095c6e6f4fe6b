"""The papers' numbers (``hanyi/anchors/<benchmark>.yaml``) and their link to our ``(task, metric)`` pairs.

An anchor file has ``benchmark``, ``paper``, ``tables`` (``id``, ``cite``, ``caption``, ``unit``, ``columns``,
``rows: [{model, values, setting?, kind?}]``, optional ``note``) and ``map``, a list of entries. Every table also
says how the paper produced its numbers, for :func:`hanyi.results.provenance.comparability`: ``judge`` (``none``: no
judge), ``n`` (docs behind a number; ``unpublished``) and ``prompt_variant`` (``default``: the task's shipped
template; ``any``: a baseline row), each a value or a ``{column: value, "*": default}`` map, a row's own winning; a
missing one makes every comparison with the table "not comparable (unknown ...)". Map entries::

    {task: cii_bench, metric: "acc_domain_{}", table: t1, scale: auto, columns: {life: Life, art: Art}}
    {task: "cvlue_vqa*", metric: [vqa_acc, accuracy], table: t4, column: VQA Acc, rows: {setting: zero-shot}}

``task`` is a task id or an ``fnmatch`` pattern; ``metric`` a name or a list of names (the first one the task has
wins); ``n`` (optional) replaces the table's ``n`` for this entry's tasks; ``{}`` in either expands over the keys of ``columns``; ``rows`` keeps anchor rows whose fields equal the given
values (``null`` = field absent; a list = any of them). An anchor row may name the ``task`` and ``prompt_variant``
that produced it: such a row is compared only with our run of that same task with that same prompt variant (a row
without them, e.g. a random or human baseline, is shown for every task the map links); ``scale`` turns our value into the paper's unit: a number, or ``auto`` (multiply by
100 when the value is a fraction, ``|v| <= 1``, for tables printed in percent).
"""

from __future__ import annotations

import fnmatch
import functools
import os
from dataclasses import dataclass

#: A row's ``prompt_variant`` that holds for every run (a random or human baseline).
ANY = "any"

ANCHORS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "anchors")


@dataclass(frozen=True)
class AnchorRow:
    model: str
    value: float | None
    setting: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class Link:
    """Our ``task``/``metric`` is the paper's ``table``/``column``; ``label`` is the ``{}`` key, if any."""

    task: str
    metric: str
    table: dict
    column: str
    scale: object = 1
    rows_filter: tuple = ()
    label: str | None = None
    variant: str | None = None
    #: The map entry's ``n``: the docs of *our* task's run that the paper's number corresponds to, when that is not
    #: the table's ``n`` (UNPIE's Homo value of a task that scores both splits: one split of twice as many docs).
    n: object = None

    @property
    def cite(self) -> str:
        return self.table.get("cite", self.table.get("id", "?"))

    def rows(self) -> list[AnchorRow]:
        """The anchor rows comparable with our ``task`` run with prompt ``variant`` (``None``: unknown variant).

        >>> table = {"columns": ["Acc"], "rows": [{"model": "Random", "values": [14.3]},
        ...     {"model": "M1", "task": "t_a", "prompt_variant": "code_exact", "values": [40.0]},
        ...     {"model": "M2", "task": "t_b", "prompt_variant": "code_exact", "values": [22.0]}]}
        >>> [r.model for r in Link("t_a", "acc", table, "Acc", variant="code_exact").rows()]
        ['Random', 'M1']
        >>> [r.model for r in Link("t_a", "acc", table, "Acc", variant="paper").rows()]
        ['Random']
        """
        idx = self.table["columns"].index(self.column)
        out = []
        for row in self.table["rows"]:
            if not self.selects(row):
                continue
            if row.get("task", self.task) != self.task:
                continue
            variant = row.get("prompt_variant", self.variant)
            if variant != ANY and (variant != self.variant or ("prompt_variant" in row and self.variant is None)):
                continue
            out.append(AnchorRow(row["model"], row["values"][idx], row.get("setting"), row.get("kind")))
        return out

    def selects(self, row: dict) -> bool:
        """Whether the map entry's ``rows`` filter keeps paper ``row`` (e.g. ``setting: VLM``)."""
        return all(row.get(k) in (v if isinstance(v, tuple) else (v,)) for k, v in self.rows_filter)

    def row_setting(self, row: dict) -> str:
        """What the ``rows`` filter reads in ``row``, for a "different setting" reason."""
        return ", ".join(str(row.get(k) or "none") for k, _ in self.rows_filter) or "?"

    @property
    def excludes_rows(self) -> bool:
        """True when the table holds rows of other tasks or prompt variants, left out by :meth:`rows`."""
        return any("task" in row or "prompt_variant" in row for row in self.table["rows"]) and len(self.rows()) < sum(
            self.selects(row) for row in self.table["rows"]
        )

    def to_paper_unit(self, value: float | None) -> float | None:
        """Our value in the paper's unit.

        >>> link = Link("t", "acc", {"columns": ["Acc"], "rows": []}, "Acc", scale="auto")
        >>> link.to_paper_unit(0.541), link.to_paper_unit(54.1), link.to_paper_unit(None)
        (54.1, 54.1, None)
        """
        if value is None:
            return None
        if self.scale == "auto":
            return round(value * 100, 10) if abs(value) <= 1 else value
        return round(value * float(self.scale), 10)


@functools.cache
def load_anchor_file(benchmark: str, directory: str = ANCHORS_DIR) -> dict | None:
    """The parsed anchor file of ``benchmark``, or ``None`` when there is none. Malformed files raise ``ValueError``."""
    import yaml

    path = os.path.join(directory, f"{benchmark}.yaml")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f) or {}
    check_anchor_file(data, path)
    return data


def check_anchor_file(data: dict, where: str = "anchors") -> None:
    """Raise ``ValueError`` naming the first structural problem (row width, unknown table or column in ``map``)."""
    for hint in data.get("categories") or []:
        if not {"bases", "dimension", "labels"} <= set(hint):
            raise ValueError(f"{where}: a categories hint needs bases, dimension and labels: {hint}")
    tables = {}
    for table in data.get("tables") or []:
        for key in ("id", "cite", "columns", "rows"):
            if key not in table:
                raise ValueError(f"{where}: a table lacks {key!r}")
        for row in table["rows"]:
            if len(row.get("values", ())) != len(table["columns"]):
                raise ValueError(
                    f"{where}: {table['id']} row {row.get('model')!r} has {len(row.get('values', ()))} values for {len(table['columns'])} columns"
                )
        tables[table["id"]] = table
    for entry in data.get("map") or []:
        table = tables.get(entry.get("table"))
        if table is None:
            raise ValueError(f"{where}: map entry {entry} names an unknown table")
        columns = list((entry.get("columns") or {}).values()) or [entry.get("column")]
        for col in columns:
            if col not in table["columns"]:
                raise ValueError(
                    f"{where}: map entry {entry} names column {col!r}, not in {table['id']} {table['columns']}"
                )


def _expand(entry: dict, tables: dict) -> list[tuple[str, list[str], str, str | None]]:
    """``[(task pattern, metric candidates, column, label)]`` for one map entry."""
    metrics = entry["metric"] if isinstance(entry["metric"], list) else [entry["metric"]]
    if entry.get("columns"):
        return [
            (entry["task"].replace("{}", key), [m.replace("{}", key) for m in metrics], col, key)
            for key, col in entry["columns"].items()
        ]
    return [(entry["task"], metrics, entry["column"], None)]


def links_for(
    benchmark: str, task: str, metric_names, directory: str = ANCHORS_DIR, variant: str | None = None
) -> list[Link]:
    """Every anchor link of one of our tasks, given the metric names it reported and its prompt ``variant``.

    >>> [(l.metric, l.column, l.cite) for l in links_for("cii", "cii_none", ["acc", "acc_domain_art"])]
    [('acc', 'Overall', 'Table 1'), ('acc_domain_art', 'Art', 'Table 1')]
    >>> links_for("cii", "mmmu_val", ["acc"])
    []
    """
    data = load_anchor_file(benchmark, directory)
    if not data:
        return []
    tables = {t["id"]: t for t in data.get("tables") or []}
    names = set(metric_names)
    links = []
    for entry in data.get("map") or []:
        for pattern, candidates, column, label in _expand(entry, tables):
            if not fnmatch.fnmatchcase(task, pattern):
                continue
            metric = next((m for m in candidates if m in names), None)
            if metric is None:
                continue
            rows_filter = tuple(
                sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in (entry.get("rows") or {}).items())
            )
            table = tables[entry["table"]]
            scale = entry.get("scale", 1)
            links.append(Link(task, metric, table, column, scale, rows_filter, label, variant, entry.get("n")))
    return links


def unmatched_map_entries(benchmark: str, tasks: dict[str, list[str]], directory: str = ANCHORS_DIR) -> list[str]:
    """Map entries that match none of ``{task: [metric names]}`` (e.g. every task id that exists), for upkeep."""
    data = load_anchor_file(benchmark, directory) or {}
    tables = {t["id"]: t for t in data.get("tables") or []}
    missing = []
    for entry in data.get("map") or []:
        for pattern, candidates, _column, _label in _expand(entry, tables):
            hit = any(fnmatch.fnmatchcase(t, pattern) and set(candidates) & set(ms) for t, ms in tasks.items())
            if not hit:
                missing.append(f"{pattern} / {'|'.join(candidates)}")
    return missing
