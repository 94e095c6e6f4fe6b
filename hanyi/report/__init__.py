"""``hanyi report``: Markdown + HTML reports from lmms-eval output directories, beside the papers' numbers.

Usage::

    hanyi report OUT [OUT2 ...] [--out DIR] [--no-plots] [--label NAME ...]

Each ``OUT`` is an ``lmms-eval --output_path`` directory (or a model sub-directory, or one ``*_results.json``).
Several directories, or several models in one, are compared side by side; exactly two runs (``hanyi report RUN_A
RUN_B``) are also compared doc by doc (paired bootstrap CI, McNemar's exact p). Every paper comparison says whether it
is comparable and why not. Runs are named after their model (for a replay run, the replayed file); ``--label NAME``,
once per run in the order of the Runs table, names them instead. See ``docs/reading-results.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from hanyi import BENCHMARKS, plain_doc

#: Plots per benchmark section by default: the ones beside paper numbers first, in report order.
DEFAULT_MAX_PLOTS = 8


def select_plots(plots: list, limit: int) -> list:
    """The plots to draw: those with paper rows (rankings, linked category tables) first, then the rest, in order."""
    with_paper = [p for p in plots if p.kind == "ranking" or any(not ours for _, _, ours in p.series)]
    rest = [p for p in plots if p not in with_paper]
    chosen = set(map(id, (with_paper + rest)[: max(0, limit)]))
    return [p for p in plots if id(p) in chosen]


def _render_all(plots: list) -> dict[str, bytes]:
    # Serial on purpose: on 2 loaded cores a process pool was slower (fork + matplotlib import per worker).
    from hanyi.report import plots as plot_mod

    return {p.name: plot_mod.render_png(p) for p in plots}


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=plain_doc(__doc__))
    parser.add_argument("paths", nargs="+", metavar="OUTPUT_DIR", help="lmms-eval output dirs or *_results.json files")
    parser.add_argument("--out", default=None, help="report directory (default: <first OUTPUT_DIR>/hanyi_report)")
    parser.add_argument(
        "--no-plots", dest="plots", action="store_false", help="skip the PNG plots (no matplotlib needed)"
    )
    parser.add_argument(
        "--max-plots",
        type=int,
        default=DEFAULT_MAX_PLOTS,
        help=f"plots per benchmark, those beside paper numbers first (default {DEFAULT_MAX_PLOTS}); tables stay complete",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=None,
        metavar="NAME",
        help="name of a run in tables and plots, once per run in the order of the Runs table (default: the model)",
    )
    return parser


class LabelError(ValueError):
    """``--label`` does not fit the runs found (count, duplicates, empty)."""


def apply_labels(runs: list, labels: list[str] | None) -> None:
    """Name ``runs`` with ``labels`` (one per run, in order); :class:`LabelError` naming the runs when they do not
    fit."""
    if not labels:
        return
    found = ", ".join(r.label for r in runs)
    if len(labels) != len(runs):
        raise LabelError(f"{len(labels)} --label for {len(runs)} run(s) ({found}): give one per run, in this order")
    if len(set(labels)) != len(labels) or not all(label.strip() for label in labels):
        raise LabelError(f"--label names must be distinct and not empty: {', '.join(map(repr, labels))}")
    for run, label in zip(runs, labels):
        run.label = label.strip()


def make_report(
    paths: list[str], out_dir: str, plots: bool = True, max_plots: int = DEFAULT_MAX_PLOTS, labels=None
) -> dict:
    """Load, build, plot and write; returns the written paths plus ``timings`` (seconds per stage).

    Raises :class:`hanyi.results.runs.NoResultsError` when a path has no results, ``LookupError`` when the
    results hold none of hanyi's tasks, and :class:`LabelError` when ``labels`` (:func:`apply_labels`) do not fit the runs.
    """
    from hanyi.report import build, render
    from hanyi.results import runs as results

    t0 = time.perf_counter()
    render.claim_out_dir(out_dir)  # before any work: never into a folder of the user's files
    runs = results.load_runs(paths)
    apply_labels(runs, labels)
    t1 = time.perf_counter()
    sections = build.build_sections(runs)
    if not sections:
        found = sorted({t for r in runs for t in r.tasks})
        shown = ", ".join(found[:12]) + (" ..." if len(found) > 12 else "")
        raise LookupError(
            f"no hanyi task in {', '.join(paths)} (tasks found: {shown or 'none'}); "
            f"hanyi reports cover {', '.join(BENCHMARKS)} (task names <benchmark>_...)"
        )
    t2 = time.perf_counter()
    pngs = {}
    if plots:
        from hanyi.report import plots as plot_mod

        if plot_mod.available():
            wanted = []
            for section in sections:
                chosen = select_plots(section.plots, max_plots)
                wanted += chosen
                if len(chosen) < len(section.plots):
                    section.notes.append(
                        f"{len(section.plots) - len(chosen)} of {len(section.plots)} tables are not plotted "
                        f"(--max-plots {max_plots}); their numbers are all in the tables."
                    )
            pngs = _render_all(wanted)
        else:
            for section in sections:
                section.notes.append("matplotlib is not installed (pip install 'hanyi[report]'): no plots.")
    t3 = time.perf_counter()
    missing = [b for b in BENCHMARKS if b not in {s.benchmark for s in sections}]
    paths_out = render.write_report(out_dir, runs, sections, pngs, missing)
    t4 = time.perf_counter()
    paths_out["timings"] = {"load": t1 - t0, "build": t2 - t1, "plots": t3 - t2, "write": t4 - t3, "total": t4 - t0}
    paths_out["benchmarks"] = [s.benchmark for s in sections]
    return paths_out


def main(argv: list[str] | None = None, prog: str = "hanyi report") -> int:
    from hanyi.outputs import OutDirError
    from hanyi.results.runs import NoResultsError

    args = build_parser(prog).parse_args(argv)
    first = args.paths[0]
    out_dir = args.out or os.path.join(first if os.path.isdir(first) else os.path.dirname(first) or ".", "hanyi_report")
    try:
        written = make_report(args.paths, out_dir, plots=args.plots, max_plots=args.max_plots, labels=args.label)
    except (NoResultsError, LookupError, OutDirError, LabelError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    print(f"benchmarks: {', '.join(written['benchmarks'])}")
    print(f"markdown:   {written['markdown']}")
    print(f"html:       {written['html']}")
    print(f"plots:      {len(written['plots'])} in {os.path.join(out_dir, 'plots')}")
    return 0
