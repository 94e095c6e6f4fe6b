"""The stage-1 retriever of a re-ranking protocol (CVLUE ITR rerank@K) in the report: its own row, and which runs it
makes incomparable.

Stage 1 is a result of its own: the retriever alone (e.g. Chinese-CLIP), R@1/5/10 both ways by the official rule
over the full gallery, and ``stage1_ceiling`` (recall@K), as ``hanyi prepare cvlue --itr-retriever`` recorded them
(``provenance["shortlist"]``, :func:`hanyi.results.provenance.shortlist_record`). They are shown in a table of their
own, one row per shortlist, never as the VLM's R@k. Two runs that re-ranked different shortlists (hash or K) are not
comparable with each other: :func:`shortlist_notes` says so and :func:`differ` keeps them out of paired comparisons.
"""

from __future__ import annotations

from hanyi.report.tables import Table, fmt
from hanyi.results import provenance as prov_mod
from hanyi.results.comparability import provenance_of
from hanyi.results.runs import Run

DIRECTIONS = (("tr", "TR (image→text)"), ("ir", "IR (text→image)"))


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
