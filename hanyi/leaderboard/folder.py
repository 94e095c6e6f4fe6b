"""The board's site folder: one build at a time, and its cache never reached through a symlink.

``hanyi leaderboard build --out SITE`` writes the site and its cache (``SITE/.cache``: the intake's records, the
cells, the site's manifest). Two builds into one folder at once both exited 0 while one deleted the other's
``predictions/`` files, and a ``SITE/.cache`` symlinked out of the folder had the cache written wherever it led.
:func:`claim_site` makes sure the cache is a real folder inside ``SITE`` and holds an exclusive lock
(``fcntl.flock`` on ``SITE/.cache/build.lock``) for the whole build: a second build waits up to ``wait`` seconds for
the first, then stops with one line. The lock goes with the process: a killed build leaves nothing to clean up.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time

from hanyi.outputs import UnsafeOutputError

#: How long a second build into the same folder waits for the first one (seconds).
LOCK_WAIT = 60.0
LOCK_NAME = "build.lock"


class SiteBusyError(OSError):
    """Another build holds the site folder."""


def cache_folder(out_dir: str, cache: str = ".cache") -> str:
    """``out_dir/cache``, created as a real folder; raises :class:`hanyi.outputs.UnsafeOutputError` (one line) when
    it is a symlink, not a folder, or resolves outside ``out_dir``."""
    path = os.path.join(out_dir, cache)
    if os.path.islink(path):
        raise UnsafeOutputError(
            errno.ELOOP,
            f"the site's cache is a symlink (it leads to {os.path.realpath(path)}); remove it or choose another --out",
            path,
        )
    if os.path.lexists(path) and not os.path.isdir(path):
        raise UnsafeOutputError(
            errno.ENOTDIR, "the site's cache is not a folder; remove it or choose another --out", path
        )
    os.makedirs(path, exist_ok=True)
    root = os.path.realpath(out_dir)
    if not os.path.realpath(path).startswith(root + os.sep):
        raise UnsafeOutputError(errno.ELOOP, "the site's cache resolves outside the site folder", path)
    return path


@contextlib.contextmanager
def claim_site(out_dir: str, wait: float | None = None, cache: str = ".cache"):
    """Hold the site folder for one build (see the module docstring); raises :class:`SiteBusyError` when another
    build still holds it after ``wait`` seconds (default :data:`LOCK_WAIT`)."""
    import fcntl

    os.makedirs(out_dir, exist_ok=True)
    folder = cache_folder(out_dir, cache)
    path = os.path.join(folder, LOCK_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SiteBusyError(
                        f"{out_dir}: another hanyi leaderboard build is writing this folder (it held it for more than "
                        f"{LOCK_WAIT if wait is None else wait:g} s); run the builds one after the other"
                    ) from None
                time.sleep(0.1)
        yield folder
    finally:
        os.close(fd)  # releases the lock
