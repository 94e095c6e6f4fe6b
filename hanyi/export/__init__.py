"""``hanyi export``: hanyi's tasks as self-contained folders for other harnesses (see ``docs/upstream.md``).

* ``hanyi export lmms-eval --out DIR [--benchmarks ...] [--data-root sample|<dir>|hub]`` writes one folder per
  benchmark and the code they share (``_task_utils/cultural_utils/``), ready to copy into ``lmms_eval/tasks/``
  (:mod:`hanyi.export.lmms_eval_tasks`); it needs black, isort and ruff at upstream's pins (``pip install -c constraints.txt 'hanyi[export]'``).
  Every pull request it writes is at most 2,500 lines of Python: a selection whose one pull request would be more
  (any judged benchmark) is written as a series, ``DIR/shared/`` first, then ``DIR/<bench>/`` (:mod:`hanyi.export.series`).
* ``--dataset-repo BENCH=ORG/NAME`` writes that hub dataset as BENCH's ``dataset_path`` (one per benchmark).
* ``hanyi export lm-eval --out DIR [--data-root ...]`` writes the lm-eval tasks (``hanyi/lm_eval_tasks``) as folders
  for ``lm_eval/tasks/`` that need no hanyi (:mod:`hanyi.export.lm_eval_tasks`); over the cap (UNPIE), as a series:
  the shared code in dependency order, then the benchmarks.
* ``hanyi export lmms-eval --series --out DIR`` writes the series even where one pull request would fit: the
  shared code two or more benchmarks use first (``DIR/shared/``), then one per benchmark (``DIR/<bench>/``).
* ``hanyi export lmms-eval --check DIR`` says whether an existing export still matches the source tree.

Nothing here is imported by the tasks; the exported folders import nothing from hanyi.
"""

from __future__ import annotations

import argparse
import json
import sys

from hanyi import plain_doc


def main(argv=None, prog: str = "hanyi export") -> int:
    from hanyi import BENCHMARKS
    from hanyi.export import lmms_eval_tasks as lt

    parser = argparse.ArgumentParser(prog=prog, description=plain_doc(__doc__))
    subs = parser.add_subparsers(dest="target", required=True)
    p = subs.add_parser("lmms-eval", help="task folders for a pull request to lmms-eval (lmms_eval/tasks/<name>/)")
    p.add_argument("--out", required=True, help="directory to write <benchmark>/ folders and PULL_REQUEST.md into")
    p.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS), metavar="BENCH",
                   help="one pull request where these fit in the review cap of 2,500 lines of Python, else a series: "
                   "--out/shared/ first, then --out/<bench>/ for each")  # fmt: skip
    p.add_argument(
        "--data-root",
        default="hub",
        help="dataset_path: 'hub' (the hub id where one exists; else the placeholder ORG/<bench>, which stops the "
        "task with one line saying how to get the data, until --dataset-repo names a real one), 'sample' "
        "(copy the bundled synthetic samples beside the tasks, for testing) or a directory written by hanyi prepare",
    )
    p.add_argument(
        "--dataset-repo",
        action="append",
        default=[],
        metavar="BENCH=ORG/NAME",
        help="dataset_path of BENCH: a hub dataset (e.g. one uploaded from `hanyi prepare BENCH --hub-folder DIR`)",
    )
    p.add_argument("--check", action="store_true", help="compare --out with a fresh export; exit 1 on drift")
    p.add_argument("--series", action="store_true", help="a series of pull requests under the review cap even where "
                   "one would fit: --out/shared/ first, then --out/<bench>/ for each of --benchmarks (a selection "
                   "over the cap is always written so)")  # fmt: skip
    p.add_argument("--force", action="store_true", help="replace a PULL_REQUEST.md in --out that hanyi did not write")
    q = subs.add_parser("lm-eval", help="task folders for lm-evaluation-harness (lm_eval/tasks/<name>/)")
    q.add_argument("--out", required=True, help="directory to write <benchmark>/ folders and cultural_utils/ into")
    q.add_argument("--data-root", default="hub", help="dataset_path, as for lmms-eval")
    q.add_argument("--dataset-repo", action="append", default=[], metavar="BENCH=ORG/NAME")
    q.add_argument("--benchmarks", nargs="+", metavar="BENCH", help="only these: one pull request where they fit in "
                   "the review cap, else a series (the shared code in dependency order, then the benchmarks)")  # fmt: skip
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    repos = dict(item.partition("=")[::2] for item in args.dataset_repo)
    bad = [k for k, v in repos.items() if k not in BENCHMARKS or v.count("/") != 1]
    if bad:
        print(f"hanyi export: --dataset-repo {bad[0]}={repos[bad[0]]}: expected BENCH=ORG/NAME, BENCH one of "
              f"{', '.join(BENCHMARKS)}", file=sys.stderr)  # fmt: skip
        return 2
    from hanyi.export import series

    if args.target == "lm-eval":
        try:
            written = series.export_lm_eval(args.out, args.data_root, repos, only=args.benchmarks)
        except lt.ExportError as exc:
            print(f"hanyi export: {exc}", file=sys.stderr)
            return 2
        print(json.dumps(written, ensure_ascii=False, indent=1))
        return 0
    if args.series:
        try:
            written = series.export_series(args.out, args.data_root, repos, args.benchmarks)
        except lt.ExportError as exc:
            print(f"hanyi export: {exc}", file=sys.stderr)
            return 2
        print(json.dumps({"python_lines": written, "cap": series.PR_LINES}, indent=1))
        return 0
    if args.check:
        try:
            drift = series.check_prs(args.out, args.benchmarks, args.data_root, repos)
        except lt.ExportError as exc:
            print(f"hanyi export: {exc}", file=sys.stderr)
            return 2
        for line in drift:
            print(line)
        print("export matches the source" if not drift else f"{len(drift)} difference(s): re-run hanyi export")
        return 1 if drift else 0
    try:
        written = series.export_prs(args.out, args.benchmarks, args.data_root, repos, force=args.force)
    except lt.ExportError as exc:
        print(f"hanyi export: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(written, ensure_ascii=False, indent=1))
    return 0
