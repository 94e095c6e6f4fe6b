"""Whether a run's number compares with a paper's, or with another run's, and why not: the rules the report's
comparisons and the leaderboard's paper rows share.

A paper number is produced by a task, prompt variant, judge, doc count and setting (:func:`anchor_fields`, from the
anchor tables); a run's provenance (:mod:`hanyi.results.provenance`) says how ours was. Two runs are paired doc by
doc only when the same doc ids hold the same docs (:func:`data_differs`) and, for a re-ranking task, the same stage-1
shortlist (:func:`shortlists_differ`).
"""

from __future__ import annotations

from hanyi.results import anchors as anchor_mod
from hanyi.results import provenance as prov_mod
from hanyi.results.perdoc import doc_hashes
from hanyi.results.perdoc import metric_of as _metric
from hanyi.results.runs import Run


def provenance_of(run: Run, task: str) -> dict:
    """A task's provenance; a group's is pooled from its tasks."""
    t = run.tasks.get(task)
    if t is None:
        return {}
    if not t.is_group:
        return t.provenance
    return prov_mod.combine(task, [provenance_of(run, s) for s in t.subtasks if s in run.tasks])


#: Anchor fields that say how a paper number was produced (table-level, per column, overridden per row).
ANCHOR_FIELDS = ("task", "prompt_variant", "judge", "n")


def anchor_fields(link: anchor_mod.Link, model: str | None = None) -> dict:
    """How the paper produced the number in ``link``'s column of row ``model`` (``None``: the table's fields only):
    ``task``, ``prompt_variant``, ``judge``, ``n``. A field may be a ``{column: value, "*": default}`` map; the row's
    own fields win over the table's. The map entry's task pattern is not a paper fact and is not included.

    >>> table = {"columns": ["A", "B"], "n": {"*": 500, "B": 1000}, "judge": "none", "prompt_variant": "default",
    ...          "rows": [{"model": "M", "task": "t_x", "values": [1, 2]}]}
    >>> anchor_fields(anchor_mod.Link("t", "acc", table, "B"), "M")
    {'judge': 'none', 'n': 1000, 'prompt_variant': 'default', 'task': 't_x'}
    """
    table = link.table
    out = {}
    for key in ("judge", "n", "prompt_variant"):
        value = prov_mod.anchor_value(table.get(key), link.column)
        if value is not None:
            out[key] = value
    if link.n is not None:  # the map entry's: the docs of our task's run behind the paper's number
        out["n"] = link.n
    row = next((r for r in table["rows"] if r.get("model") == model), {}) if model is not None else {}
    for key in (*ANCHOR_FIELDS, "variant"):
        value = prov_mod.anchor_value(row.get(key), link.column)
        if value is not None:
            out["prompt_variant" if key == "variant" else key] = value
    return out


def run_mark(prov: dict, link: anchor_mod.Link) -> tuple[bool, list[str]]:
    """Whether a run compares with any paper row of ``link``: its run-level reasons (sample data, ``--limit``, a
    fallback scorer ...) when it has any, else the reasons of every paper row when none of them is comparable."""
    ok, reasons = prov_mod.comparability(prov, link.metric)
    if not ok:
        return ok, reasons
    union: list[str] = []
    for row in link.rows():
        if row.value is None:
            continue
        ok, why = prov_mod.comparability(prov, link.metric, anchor_fields(link, row.model))
        if ok:
            return True, []
        union += [r for r in why if r not in union]
    return (not union), union


def row_reasons(run: Run, task: str, task_links: list[anchor_mod.Link], row: dict) -> list[str] | None:
    """Why our ``task`` row of ``run`` is not comparable with paper ``row`` (``[]``: comparable), over every column
    both have a value in; ``None`` when they share no column."""
    reasons: list[str] = []
    shared = False
    for link in task_links:
        m = _metric(run, task, link.metric)
        paper_value = row["values"][link.table["columns"].index(link.column)]
        if m is None or isinstance(m.value, dict) or m.value is None or paper_value is None:
            continue
        shared = True
        why = [] if link.selects(row) else [f"a different setting (paper row: {link.row_setting(row)})"]
        why += prov_mod.comparability(provenance_of(run, task), link.metric, anchor_fields(link, row["model"]))[1]
        reasons += [r for r in why if r not in reasons]
    return reasons if shared else None


def data_differs(runs: list[Run], task: str, notes: list | None = None) -> str | None:
    """Why two runs of ``task`` must not be paired doc by doc: the same doc ids hold different docs (lmms-eval's
    content differs, e.g. two data versions, or the images' bytes do); ``None`` when the shared docs match or no doc
    was logged. The images count when both logs carry their digests; else ids and paths only, which goes
    to ``notes`` when the docs are paired."""
    full, plain = ([doc_hashes(r, task, images) for r in runs] for images in (True, False))
    carry = [f != p for f, p in zip(full, plain)]  # a log carries image digests when they change its hashes
    a, b = full if all(carry) else plain
    shared = set(a) & set(b)
    changed = sum(a[k] != b[k] for k in shared)
    if not changed:
        if shared and not all(carry) and notes is not None:
            notes.append(
                f"{task}: paired by doc ids and logged doc fields only: {'one' if any(carry) else 'no'} sample log "
                "carries image digests (a text-only task, or a log written before hanyi logged them): a changed "
                "image under the same id or path is not seen"
            )
        return None
    return (
        f"{task}: not paired doc by doc: {changed} of the {len(shared)} doc ids both runs scored hold different docs "
        "(their logged content differs: another data version or order); compare the headline values only"
    )


def _leaves(run: Run, task: str) -> list[str]:
    t = run.tasks.get(task)
    if t is None:
        return []
    if not t.is_group:
        return [task]
    return [leaf for sub in t.subtasks for leaf in _leaves(run, sub)]


def shortlists_differ(runs: list[Run], task: str) -> bool:
    """Whether ``task`` (or a task of the group) re-ranked different shortlists in different runs."""
    leaves = {leaf for r in runs for leaf in _leaves(r, task)}
    return any(
        len({prov_mod.shortlist_id(provenance_of(r, leaf)) for r in runs if leaf in r.tasks}) > 1 for leaf in leaves
    )


def shortlist_notes(runs: list[Run], tasks: list[str]) -> list[str]:
    """One note per re-ranking task whose runs used different stage-1 shortlists."""
    notes = []
    for task in tasks:
        if any(run.tasks.get(task) is not None and run.tasks[task].is_group for run in runs):
            continue
        ids = {r.label: prov_mod.shortlist_id(provenance_of(r, task)) for r in runs if task in r.tasks}
        if len(set(ids.values())) > 1:
            which = "; ".join(
                f"{label}: " + ("not recorded" if i is None else f"K={i[1]}, {str(i[0])[:19]}")
                for label, i in ids.items()
            )
            notes.append(
                f"{task}: the runs re-ranked different stage-1 shortlists ({which}), so their R@k are not comparable "
                "with each other."
            )
    return notes
