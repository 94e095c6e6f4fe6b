"""The stage-1 retriever of a re-ranking protocol (CVLUE ITR rerank@K) in the report: its own row, and which runs it
makes incomparable.

Stage 1 is a result of its own: the retriever alone (e.g. Chinese-CLIP), R@1/5/10 both ways by the official rule
over the full gallery, and ``stage1_ceiling`` (recall@K), as ``hanyi prepare cvlue --itr-retriever`` recorded them
(``provenance["shortlist"]``, :func:`hanyi.report.provenance.shortlist_record`). They are shown in a table of their
own, one row per shortlist, never as the VLM's R@k. Two runs that re-ranked different shortlists (hash or K) are not
comparable with each other: :func:`shortlist_notes` says so and :func:`differ` keeps them out of paired comparisons.
"""

from __future__ import annotations

from hanyi.report import provenance as prov_mod
from hanyi.report.build import Table, fmt, provenance_of
from hanyi.report.results import Run

DIRECTIONS = (("tr", "TR (image→text)"), ("ir", "IR (text→image)"))


def _leaves(run: Run, task: str) -> list[str]:
    t = run.tasks.get(task)
    if t is None:
        return []
    if not t.is_group:
        return [task]
    return [leaf for sub in t.subtasks for leaf in _leaves(run, sub)]


def differ(runs: list[Run], task: str) -> bool:
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


def stage1_table(runs: list[Run], tasks: list[str]) -> Table | None:
    """The retriever rows: one per distinct shortlist among the runs' re-ranking tasks; ``None`` when none recorded."""
    rows, seen = [], set()
    for run in runs:
        for task in tasks:
            t = run.tasks.get(task)
            if t is None or t.is_group:
                continue
            rec = provenance_of(run, task).get("shortlist")
            key = prov_mod.shortlist_id({"shortlist": rec})
            if not rec or key in seen:
                continue
            seen.add(key)
            metrics = rec.get("metrics") or {}
            cells = []
            for direction, _ in DIRECTIONS:
                m = metrics.get(direction) or {}
                cells += [fmt(m.get(k)) for k in ("r1", "r5", "r10", "stage1_ceiling")]
            used_by = ", ".join(r.label for r in runs if prov_mod.shortlist_id(provenance_of(r, task)) == key)
            name = f"{rec.get('retriever') or '(not recorded)'} (stage 1 alone)"
            revision = str(rec.get("revision") or "-")[:19]
            embed = str(rec.get("embedding_hash") or "-")[:19]
            rows.append([name, rec.get("origin", "-"), revision, str(rec.get("k", "-")), embed, *cells, used_by])
    if not rows:
        return None
    header = ["retriever", "origin", "revision", "K", "embedding hash"]
    for _, label in DIRECTIONS:
        header += [f"{label} R@1", "R@5", "R@10", "R@K (ceiling)"]
    header.append("re-ranked by")
    return Table(
        "ITR stage 1: the retriever alone (not a VLM result)",
        header,
        rows,
        "The fixed shortlist the rerank@K tasks re-rank, scored on its own: R@1/5/10 by the official eval_itr.py rule "
        "over the full gallery (a query with no gold in its list is a miss), and R@K = stage1_ceiling, the best R@k "
        "any re-ranker can reach. Computed by `hanyi prepare cvlue --itr-retriever` and read from the prepared data's "
        "hanyi_build.json; a shortlist given with --itr-shortlist has no metrics here (origin file). Runs that "
        "re-ranked different shortlists are not comparable with each other.",
        kind="stage1",
    )
