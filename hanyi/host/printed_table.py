"""The table lmms-eval prints, kept to the headline numbers for hanyi's tasks (at most 80 rows, 120 columns for
``--tasks punrebus,cvlue,cii,unpie,vulca``), with every group printing its own headline row.

lmms-eval 0.7.3 prints ``lmms_eval.utils.make_table(results)``: every metric of every task and group, breakdowns and
confusion dicts included, and a group that aggregates nothing (no ``aggregate_metric_list``) as one blank row. Then,
when some group aggregates, it prints a second table, ``make_table(results, "groups")``. :func:`install` wraps
``make_table`` so that, **for hanyi's tasks only**, it prints a filtered copy (:func:`headline_only`); the results
dict, the results JSON, the sample logs and ``hanyi report`` keep every number. Rules, per hanyi task or group:

* **which entries print:** a top-level task or group, and the direct members of a top-level group that has numbers
  of its own (``cii``: ``cii_none`` prints under it). Members of a nested group (UNPIE's ``*_homo`` / ``*_hetero``)
  are represented by their group's rows;
* **which metrics print:** the entry's ``metadata.headline`` list when its YAML declares one (and one of them was
  emitted); otherwise the metrics that a paper table column measures (the benchmark's anchor ``map``, for a group
  also its members' entries) plus their ``_robust`` sibling, per-category cells excluded (a ``map`` entry naming one
  metric is a paper column even when its name looks like a family member, e.g. ``element_sim`` beside
  ``element_abs_rule_lemma``); when no paper column was emitted (no scorer model, no judge), the first headline
  metric (by :mod:`hanyi.report.layout`) that has a ``_robust`` sibling, with it (UNPIE's ``disamb_acc_chrf``), else
  the first headline metric. Only numbers print: dict-valued metrics (confusion rows), lists and ``N/A`` never do;
* **every group prints its own headline rows:** a group with numbers of its own prints them. A group with none (no
  ``aggregate_metric_list``: ``punrebus``, ``cvlue``, ``unpie``, ``vulca``) shows its members' headline rows as its
  own: Tasks column = the group, Metric column = ``<member short name> · <metric>`` (the short name is the member's
  name without the ``<group>_`` prefix: ``matching · accuracy``, ``disambiguation_de · disamb_acc_chrf``), value,
  stderr and ↑/↓ copied from the member; those members are then not printed again. This is recursive (a member
  group with no numbers contributes its own members' rows). An entry with nothing printable prints one row
  ``(no headline value: see hanyi report)`` (a member of a lifted group: ``<short> · (no headline value: ...)``),
  value ``N/A``; no hanyi row is ever blank and no group is silently absent;
* **the "Groups" table** leaves hanyi's groups out. lmms-eval lists there only the groups that aggregate (``cii``,
  UNPIE's nested ``unpie_disambiguation_de`` ...), each of which the main table already shows (``cii``'s own rows;
  the nested groups as ``unpie``'s rows), so it would repeat those rows in a second layout (the nested groups
  without their parent) and spend a sixth of the 80-row budget on duplicates. Other harness groups keep their rows;
  when nothing is left the wrapper returns an empty string (lmms-eval then prints one empty line, no table).

Set ``HANYI_FULL_TABLE=1`` to print lmms-eval's full tables. :func:`install` is called by the start-up hook
(``hanyi/_autohook.py``) and by ``hanyi eval``.
"""

from __future__ import annotations

import numbers
import os
import sys

FULL_TABLE_ENV = "HANYI_FULL_TABLE"
NO_HEADLINE = "(no headline value: see hanyi report)"
SEPARATOR = " · "
_STDERR = ("_stderr", "_stderr_clt", "_stderr_clustered")


def _parents(result_dict: dict) -> dict[str, str]:
    return {sub: group for group, subs in (result_dict.get("group_subtasks") or {}).items() for sub in subs or ()}


def _depth(task: str, parents: dict[str, str]) -> int:
    depth, seen = 0, {task}
    while task in parents and parents[task] not in seen:
        task = parents[task]
        seen.add(task)
        depth += 1
    return depth


def _printable(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def headline_metrics(
    bench: str, task: str, entry: dict, config: dict | None = None, members: list[str] | tuple = ()
) -> list[str]:
    """The metric names (without filter) of one results entry to print, in the entry's order.

    ``members``: a group's member tasks, whose anchor links count for the group too (UNPIE's ``unpie_grounding``
    aggregates the ``exact_match`` that the paper reports per ``unpie_grounding_homo`` / ``_hetero``).
    """
    from hanyi.report.anchors import links_for, load_anchor_file
    from hanyi.report.layout import category_tables

    names = []
    for key, value in entry.items():
        metric, sep, _filt = key.partition(",")
        if not sep or metric.endswith(_STDERR) or not _printable(value):
            continue
        if metric not in names:
            names.append(metric)
    declared = ((config or {}).get("metadata") or {}).get("headline")
    if isinstance(declared, list) and any(m in declared for m in names):
        return [m for m in names if m in declared]
    hints = (load_anchor_file(bench) or {}).get("categories") or []
    head, _ = category_tables(names, hints)
    # a map entry naming one metric is a paper column; a `{}` pattern entry (label set) maps per-category cells
    links = [link for t in (task, *members) for link in links_for(bench, t, names)]
    mapped = {link.metric for link in links if link.label is None or link.metric in head}
    if not mapped:  # no paper column emitted: the first score that has a robust sibling, else the first headline
        scored = [m for m in head if not m.endswith("_robust") and m + "_robust" in head]
        mapped = set(scored[:1] or head[:1])
    keep = mapped | {m + "_robust" for m in mapped}
    return [m for m in names if m in keep]


def headline_only(result_dict: dict, column: str = "results") -> dict:
    """A copy of ``result_dict`` whose ``column`` keeps only the headline rows of hanyi's tasks (see module doc).

    ``result_dict`` itself is never modified; entries of other harness tasks are passed through as they are.
    """
    from hanyi.report.results import benchmark_of

    if os.environ.get(FULL_TABLE_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return result_dict
    entries = result_dict.get(column)
    if not isinstance(entries, dict):
        return result_dict
    parents = _parents(result_dict)
    if column == "groups":  # hanyi's groups already print their rows in the main table (module doc)
        return {**result_dict, column: {t: e for t, e in entries.items() if benchmark_of(t, parents) is None}}
    rows = _Rows(result_dict, entries, parents)
    kept, higher = {}, dict(result_dict.get("higher_is_better") or {})
    for task, entry in entries.items():
        bench = benchmark_of(task, parents)
        if bench is None or not isinstance(entry, dict):
            kept[task] = entry  # not ours: untouched
            continue
        depth = _depth(task, parents)
        if depth > 1 or (depth == 1 and rows.lifted(parents[task])):
            continue  # represented by its group's rows
        values, hib = rows.of(task)
        if not values:
            values, hib = {NO_HEADLINE + ",none": "N/A"}, {}
        kept[task] = {"alias": entry.get("alias", task), **values}
        higher[task] = {**(higher.get(task) or {}), **hib}
    return {**result_dict, column: kept, "higher_is_better": higher}


class _Rows:
    """The printable ``{"metric,filter": value}`` keys (stderr keys included) of one entry, and their ↑/↓."""

    def __init__(self, result_dict: dict, entries: dict, parents: dict[str, str]):
        self.entries, self.parents = entries, parents
        self.subtasks = result_dict.get("group_subtasks") or {}
        self.configs = result_dict.get("configs") or {}
        self.higher = result_dict.get("higher_is_better") or {}
        self._own: dict[str, tuple[dict, dict]] = {}

    def lifted(self, group: str) -> bool:
        """True for a hanyi group with no numbers of its own: its members print as its rows."""
        from hanyi.report.results import benchmark_of

        return benchmark_of(group, self.parents) is not None and not self.own(group)[0]

    def own(self, task: str) -> tuple[dict, dict]:
        """The entry's own headline keys (a group's: its aggregates), and ``{metric: higher_is_better}``."""
        from hanyi.report.results import benchmark_of

        if task not in self._own:
            entry, bench = self.entries.get(task), benchmark_of(task, self.parents)
            values, hib = {}, {}
            if isinstance(entry, dict) and bench is not None:
                config, members = self.configs.get(task), self.subtasks.get(task) or ()
                metrics = set(headline_metrics(bench, task, entry, config, members))
                values = {k: v for k, v in entry.items() if "," in k and _base(k.partition(",")[0]) in metrics}
                hib = {m: h for m, h in (self.higher.get(task) or {}).items() if m in metrics}
            self._own[task] = values, hib
        values, hib = self._own[task]
        return dict(values), dict(hib)

    def of(self, task: str, seen: frozenset = frozenset()) -> tuple[dict, dict]:
        """Own keys; for a group with none, its members' rows under ``<short name> · <metric>`` (recursively)."""
        values, hib = self.own(task)
        if values or task not in self.subtasks or task in seen:
            return values, hib
        for sub in self.subtasks[task] or ():
            sub_values, sub_hib = self.of(sub, seen | {task})
            if not sub_values:
                sub_values = {NO_HEADLINE + ",none": "N/A"}
            prefix = _short(sub, task) + SEPARATOR
            values |= {prefix + k: v for k, v in sub_values.items()}
            hib |= {prefix + m: h for m, h in sub_hib.items()}
        return values, hib


def _short(member: str, group: str) -> str:
    """``punrebus_matching`` in ``punrebus`` -> ``matching``; a name without the group prefix is kept whole."""
    return member[len(group) + 1 :] if member.startswith(group + "_") and len(member) > len(group) + 1 else member


def _base(metric: str) -> str:
    for suffix in _STDERR:
        if metric.endswith(suffix):
            return metric[: -len(suffix)]
    return metric


def install() -> bool:
    """Wrap ``lmms_eval.utils.make_table`` (and ``lmms_eval.evaluator``'s copy) once. Returns True if installed."""
    import lmms_eval.utils as utils

    if getattr(utils.make_table, "_hanyi_headline", False):
        return False
    original = utils.make_table

    def make_table(result_dict, column: str = "results", sort_results: bool = False):
        printed = headline_only(result_dict, column)
        if column == "groups" and printed is not result_dict and not printed.get(column):
            return ""  # only hanyi groups, whose rows the main table shows: no second table
        return original(printed, column, sort_results)

    make_table._hanyi_headline = True
    make_table.__wrapped__ = original
    make_table.__doc__ = original.__doc__
    utils.make_table = make_table
    for name in ("lmms_eval.evaluator", "lmms_eval.__main__"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "make_table", None) is original:
            module.make_table = make_table
    return True
