"""``hanyi leaderboard``: submissions in, a ranked, validated leaderboard out.

Usage::

    hanyi leaderboard build SUBMISSIONS... --out SITE/   # files or folders of hanyi-submission files
    hanyi leaderboard check FILE                         # what a submitter runs before sending

``check`` runs the board's whole intake on one file (:mod:`hanyi.leaderboard.intake`: the file, the full split, the
protocol, every claimed metric against the board's re-score through the replay model) and prints one line per
problem on stderr, ``FILE: problem``; exit 1 on any, 3 when the file is pending (the board's own data, scorer or
judge failed: nothing is decided about the file), 0 otherwise. ``build`` runs the same intake over every file
(re-scoring only files whose sha256 is not yet in ``SITE/.cache/``), ranks the accepted ones
(:mod:`hanyi.leaderboard.ranking`) and writes the site (:mod:`hanyi.leaderboard.site`); a rejected file goes to the
site's "Rejected" page with its reasons, and one line per rejected file goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys

from hanyi import plain_doc

#: The cache folder under the site: one ``<sha256>.json`` per submission read.
CACHE_DIR = ".cache"
#: ``check``'s exit code for a pending file (the board failed, not the file).
PENDING_EXIT = 3


def build_parser(prog: str) -> argparse.ArgumentParser:
    from hanyi.leaderboard.intake import MAX_BYTES

    parser = argparse.ArgumentParser(prog=prog, description=plain_doc(__doc__))
    subs = parser.add_subparsers(dest="command", required=True)
    p = subs.add_parser("build", help="build the board's site from submission files or folders")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSIONS", help="hanyi-submission files or folders")
    p.add_argument("--out", required=True, metavar="SITE", help="the site's folder (its cache is SITE/.cache)")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, help=f"largest file read (default {MAX_BYTES:,})")
    p = subs.add_parser("check", help="check one submission file as the board would (exit 1 on any problem)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--max-bytes", type=int, default=MAX_BYTES, help=f"largest file read (default {MAX_BYTES:,})")
    return parser


def check(path: str, prog: str = "hanyi leaderboard check", max_bytes: int | None = None) -> int:
    from hanyi.leaderboard.entries import PENDING, Rejected
    from hanyi.leaderboard.intake import MAX_BYTES, check_file

    found = check_file(path, MAX_BYTES if max_bytes is None else max_bytes)
    if isinstance(found, Rejected):
        for reason in found.reasons:
            print(f"{path}: {_one_line(reason)}", file=sys.stderr)
        return PENDING_EXIT if found.state == PENDING else 1
    print(f"{path}: accepted ({found.benchmark}, {len(found.values)} task(s) re-scored)")
    return 0


def build(paths: list[str], out_dir: str, prog: str = "hanyi leaderboard build", max_bytes: int | None = None):
    """Intake, ranking and site, one build at a time per folder and never through a symlinked cache
    (:func:`hanyi.leaderboard.folder.claim_site`); returns ``(board, intake)``."""
    from hanyi.leaderboard.folder import claim_site

    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError(f"no such file or folder: {missing[0]}")
    with claim_site(out_dir, cache=CACHE_DIR):
        return _build(paths, out_dir, prog, max_bytes)


def _build(paths: list[str], out_dir: str, prog: str, max_bytes: int | None):
    from hanyi.leaderboard.intake import MAX_BYTES, intake
    from hanyi.leaderboard.ranking import rank
    from hanyi.leaderboard.site import write_site

    found = intake(paths, os.path.join(out_dir, CACHE_DIR), MAX_BYTES if max_bytes is None else max_bytes)
    for rej in found.rejected:
        first = _one_line(rej.reasons[0]) if rej.reasons else "rejected"
        more = f" (+{len(rej.reasons) - 1} more reasons)" if len(rej.reasons) > 1 else ""
        print(f"{prog}: {rej.state} {rej.path}: {first}{more}", file=sys.stderr)
    board = rank(found.entries, found.rejected, cache_dir=os.path.join(out_dir, CACHE_DIR))
    write_site(board, out_dir)
    return board, found


def _one_line(text: str) -> str:
    from hanyi.results.runs import one_line

    return one_line(str(text))


def main(argv: list[str] | None = None, prog: str = "hanyi leaderboard") -> int:
    args = build_parser(prog).parse_args(argv)
    if args.command == "check":
        return check(args.file, f"{prog} check", args.max_bytes)
    try:
        _board, found = build(args.submissions, args.out, f"{prog} build", args.max_bytes)
    except FileNotFoundError as exc:
        print(f"{prog} build: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a site folder that is not ours, read-only or full (hanyi.outputs.OutDirError, ...)
        from hanyi.outputs import failure_line

        print(failure_line(f"{prog} build", exc) if exc.errno else f"{prog} build: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.out}: {len(found.entries)} accepted, {found.count('rejected')} rejected, "
        f"{found.count('duplicate')} duplicate, {found.count('pending')} pending, "
        f"{len(found.rescored)} re-scored (the others from {os.path.join(args.out, CACHE_DIR)})"
    )
    return 0
