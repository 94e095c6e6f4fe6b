"""Paths named by a release file stay inside the release; paths a builder writes stay inside ``--out``.

A release JSON may name an image ``../../home/me/.ssh/id_rsa`` or ``/etc/passwd``, or a release folder may hold a
symlink to a file elsewhere. Every ``hanyi prepare`` builder joins such names with :func:`inside`, which refuses:

* absolute paths (``/x``, ``C:\\x``, ``\\\\server\\x``);
* traversal (any ``..`` component);
* a path that resolves (symlinks followed) outside the folder it was joined to.

The error names the record (``what``) and the offending path, and says nothing was written outside the folder.
Every file a builder writes goes through :func:`no_link`: a symbolic link where hanyi writes (a file, or the
folder it is written into) is refused, never followed.
"""

from __future__ import annotations

import os
import re

_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafePathError(ValueError):
    """A path from a release (or for an output) would leave its folder."""


def inside(base: str, rel, what: str = "path") -> str:
    """``base/rel``, after checking that it stays inside ``base`` (which need not exist yet).

    >>> inside("/data/cvlue", "images/test/A/1.png")
    '/data/cvlue/images/test/A/1.png'
    >>> inside("/data/cvlue", "../../etc/passwd", what="vqa doc 3 image_path")
    Traceback (most recent call last):
    ...
    hanyi.data.safepath.UnsafePathError: vqa doc 3 image_path: '../../etc/passwd' goes up out of /data/cvlue ('..'); refused
    >>> inside("/data/cvlue", "/etc/passwd")
    Traceback (most recent call last):
    ...
    hanyi.data.safepath.UnsafePathError: path: '/etc/passwd' is an absolute path, not one inside /data/cvlue; refused
    """
    if not isinstance(rel, str) or not rel.strip():
        raise UnsafePathError(f"{what}: {rel!r} is not a relative file path")
    if "\x00" in rel:
        raise UnsafePathError(f"{what}: {rel!r} contains a NUL byte; refused")
    if os.path.isabs(rel) or rel.startswith(("/", "\\")) or _DRIVE.match(rel):
        raise UnsafePathError(f"{what}: {rel!r} is an absolute path, not one inside {base}; refused")
    if ".." in re.split(r"[\\/]+", rel):
        raise UnsafePathError(f"{what}: {rel!r} goes up out of {base} ('..'); refused")
    path = os.path.join(base, rel)
    real_base = os.path.realpath(base)
    real = os.path.realpath(path)
    if real != real_base and not real.startswith(real_base.rstrip(os.sep) + os.sep):
        raise UnsafePathError(f"{what}: {rel!r} resolves to {real}, outside {base} (a symlink?); refused")
    return path


def no_link(path: str, what: str = "output") -> str:
    """``path``, after checking that neither it nor the folder it goes into is a symbolic link.

    A write to ``<out>/vulca/README.md`` where that name is a link to ``~/.bashrc`` would replace a file outside
    ``--out``; so hanyi writes nothing through a link. Raises :class:`UnsafePathError` naming the link.

    >>> no_link("/tmp/hanyi-no-such-dir/README.md")
    '/tmp/hanyi-no-such-dir/README.md'
    """
    for candidate in (path, os.path.dirname(path)):
        if candidate and os.path.islink(candidate):
            raise UnsafePathError(
                f"{what}: {candidate} is a symbolic link (to {os.readlink(candidate)}); hanyi writes no file through "
                "a link. Remove it or choose another --out; nothing was written there"
            )
    return path
