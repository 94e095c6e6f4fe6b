"""The lmms-eval contribution as a series of pull requests a maintainer can review: a shared one first, then one per
benchmark, each at most :data:`PR_LINES` lines of Python (``hanyi export lmms-eval --series``).

One pull request per benchmark that carries all the shared code it needs stays over the cap for the judged
benchmarks (the judge client with its cache, retries and breaker, the backbone checks, the secret redaction and the
image checks alone are about 1,900 lines), and two such pull requests would write the same shared files with different
content. So the series splits the full export (every benchmark) by file:

* ``<out>/shared/``: every file of ``_task_utils/cultural_utils/`` that two or more benchmarks reach, with the content
  the full export gives it, so it serves every later pull request unchanged;
* ``<out>/<bench>/``: the benchmark's folder and the shared-code files only it reaches.

Every exported file lands in exactly one pull request, and the union of the series is the full export, byte for byte.
Each directory is copied into ``lmms_eval/tasks/`` and holds its ``PULL_REQUEST.md`` beside the folders.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from hanyi import BENCHMARKS
from hanyi.export import lmms_eval_tasks as lt
from hanyi.export import pr, settings_map
from hanyi.export.naming import LIB_DIR

#: Lines of Python one pull request may hold: what a maintainer reviews in one piece.
PR_LINES = 2_500
SHARED = "shared"


def _lib_files(bench: str) -> set[str]:
    """The files of ``_task_utils/cultural_utils/`` (relative to it) that ``bench``'s folder reaches."""
    found = lt.shared_closure([bench], {})
    return {lt.lib_file(m) for m in found.kept} | {settings_map.MODULE + ".py"}


def python_lines(folder: str) -> int:
    """Lines of the ``.py`` files under ``folder`` (bundled samples left out)."""
    total = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("sample", "__pycache__")]
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    total += len(fh.read().splitlines())
    return total


def _copy(src_root: str, rel: str, dst_root: str) -> None:
    src, dst = os.path.join(src_root, rel), os.path.join(dst_root, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.isdir(src):
        shutil.copytree(src, dst)
    else:
        shutil.copyfile(src, dst)


def export_series(out: str, data_root: str = "hub", repos=None) -> dict:
    """Write ``<out>/shared/`` and ``<out>/<bench>/`` (see the module docstring); returns ``{pr: python lines}``."""
    if os.path.lexists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise lt.ExportError(f"--out {out} exists and is not an empty folder; choose a new one (nothing was written)")
    users: dict[str, set] = {}
    for bench in BENCHMARKS:
        for rel in _lib_files(bench):
            users.setdefault(rel, set()).add(bench)
    with tempfile.TemporaryDirectory(prefix="hanyi-series-") as full:
        lt.export(full, BENCHMARKS, data_root, repos=repos)
        written = []
        for root, _, files in os.walk(os.path.join(full, LIB_DIR)):
            written += [os.path.relpath(os.path.join(root, f), os.path.join(full, LIB_DIR)) for f in files]
        unknown = sorted(set(written) - set(users))
        if unknown:
            raise lt.ExportError(f"shared files no benchmark reaches on its own: {', '.join(unknown)}")
        shared = sorted(r for r in written if len(users[r]) > 1)
        for rel in shared:
            _copy(full, os.path.join(LIB_DIR, rel), os.path.join(out, SHARED))
        for bench in BENCHMARKS:
            dst = os.path.join(out, bench)
            _copy(full, bench, dst)
            for rel in sorted(r for r in written if users[r] == {bench}):
                _copy(full, os.path.join(LIB_DIR, rel), dst)
        for bench in BENCHMARKS:
            text = pr.pull_request(os.path.join(out, bench), [bench], data_root, [])
            with open(os.path.join(out, bench, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
                fh.write(_depends(text, bench))
        with open(os.path.join(out, SHARED, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
            fh.write(_shared_text(shared, users))
    return {name: python_lines(os.path.join(out, name)) for name in [SHARED, *BENCHMARKS]}


def _depends(text: str, bench: str) -> str:
    title, _, rest = text.partition("\n")
    note = (f"\nPart of a series: merge the shared pull request (`{LIB_DIR}/`, the code two or more of these "
            f"benchmarks use) first; this one adds `{bench}/` and the shared-code files only {bench} uses.\n")  # fmt: skip
    return title + "\n" + note + rest


def _shared_text(shared: list[str], users: dict) -> str:
    lines = ["# Shared code for the cultural and implied-meaning benchmarks (first of a series)", "",
             f"`lmms_eval/tasks/{LIB_DIR}/`: the code two or more of the benchmark folders of the following pull "
             f"requests use ({', '.join(BENCHMARKS)}), one pull request per benchmark, each under {PR_LINES:,} lines "
             "of Python; this one adds no task. Each file and the benchmarks that use it:", ""]  # fmt: skip
    lines += [f"- `{rel}`: {', '.join(sorted(users[rel]))}" for rel in shared]
    lines += ["", "## Judged metrics", "", pr.readme.JUDGE_REASON, ""]
    return "\n".join(lines)
