"""Writing a command's output files: never through a symlink out of its output folder, and a failed write is one line.

``hanyi report --out`` and ``hanyi submit --out`` followed a planted symlink (``report.md -> ~/.bashrc``) and
overwrote a file outside their folder. :func:`open_output` opens a file for writing only when the folder
holding it is inside the output folder (symlinks resolved) and the file itself is not a symlink (``O_NOFOLLOW``).
:func:`failure_line` turns the ``OSError`` of a full disk or a read-only folder into one line naming the file.
"""

from __future__ import annotations

import errno
import os


class OutDirError(FileExistsError):
    """``--out`` names a folder the report or the leaderboard must not write into."""


class UnsafeOutputError(OSError):
    """A file a command would write is a symlink, or lies outside its output folder."""


def open_output(root: str, path: str, mode: str = "w"):
    """``open(path, mode)`` for writing a file inside the output folder ``root``, refusing a symlink.

    ``mode`` is ``"w"`` (UTF-8 text) or ``"wb"``. Raises :class:`UnsafeOutputError` when ``path`` is a symlink or the
    folder holding it resolves outside ``root``.
    """
    real_root = os.path.realpath(root)
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    if os.path.islink(path) or not (folder == real_root or folder.startswith(real_root + os.sep)):
        target = os.path.realpath(path)
        raise UnsafeOutputError(
            errno.ELOOP,
            f"refusing to write through a symlink (it leads to {target}); remove it or choose another folder",
            path,
        )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    return os.fdopen(fd, mode) if "b" in mode else os.fdopen(fd, mode, encoding="utf-8")


def failure_line(prog: str, exc: OSError) -> str:
    """One line for an ``OSError`` met while reading or writing: the file, the reason, the fix.

    >>> failure_line("hanyi report", OSError(errno.ENOSPC, "No space left on device", "out/report.md"))
    'hanyi report: out/report.md: No space left on device; free some space or choose another folder (exit status 1)'
    """
    where = exc.filename or ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    fix = {
        errno.ENOSPC: "free some space or choose another folder",
        errno.EDQUOT: "free some space or choose another folder",
        errno.EACCES: "choose a folder you can write to",
        errno.EPERM: "choose a folder you can write to",
        errno.EROFS: "choose a folder you can write to",
    }.get(exc.errno, "check the path and the disk")
    return f"{prog}: {where}{': ' if where else ''}{reason}; {fix} (exit status 1)"


LOCK = ".hanyi-eval.lock"


def claim_run_folder(folder: str):
    """Make sure ``hanyi eval`` can write into ``folder`` (``--output_path``) and that no other ``hanyi eval`` is
    writing there; returns the function that releases it. lmms-eval names its files after the second the run
    started, so two runs into one folder in the same second lost a results file and merged their sample logs.

    A lock file holds the process id; one left by a process that is gone (killed) is taken over. Raises ``OSError``
    (one line with :func:`failure_line`) when the folder cannot be written or another run holds it.
    """
    folder = os.path.expanduser(folder)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, LOCK)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except FileExistsError:
            try:
                with open(path, encoding="utf-8") as f:
                    pid = int(f.read().strip() or 0)
                os.kill(pid, 0)  # alive (or not ours to signal): the folder is taken
            except ProcessLookupError:
                os.remove(path)  # left by a run that was killed
                continue
            except (OSError, ValueError):
                pass
            raise OSError(
                errno.EBUSY, "another hanyi eval is writing into this folder; use another --output_path", folder
            ) from None
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        return lambda: os.path.exists(path) and os.remove(path)
    raise OSError(errno.EBUSY, "cannot take the folder's lock", path)


def empty_outputs(folder: str, since: float) -> list[str]:
    """Results and sample-log files under ``folder`` written since ``since`` that are empty (lmms-eval exits 0 when
    a full disk leaves them so)."""
    found = []
    for root, _dirs, names in os.walk(os.path.expanduser(folder)):
        for name in sorted(names):
            path = os.path.join(root, name)
            if name.endswith(("_results.json", ".jsonl")) and os.path.getmtime(path) >= since - 1:
                if os.path.getsize(path) == 0:
                    found.append(path)
    return found
