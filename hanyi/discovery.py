"""Make lmms-eval 0.7.3 find hanyi's tasks with no ``--include_path`` flag.

lmms-eval 0.7.3 has no entry-point group for tasks, and its ``LMMS_EVAL_PLUGINS`` route appends plugin task
directories only *after* the ``TaskManager`` has indexed the tasks (``lmms_eval/__main__.py``), so plugin tasks are
never found. :func:`patch_task_manager` wraps ``TaskManager.__init__`` so that :data:`hanyi.TASKS_DIR` is always
indexed, after the built-ins and after any user ``--include_path`` (built-ins win on a name clash, as upstream).

The patch stands down by itself when the installed lmms-eval reads plugin task directories on its own, which is
signalled by the ``TASK_ENTRY_POINT_GROUP`` constant that our upstream fix adds to ``lmms_eval.tasks``
(``docs/upstream/0001-read-task-plugins-before-indexing.patch``).
"""

from __future__ import annotations

import functools
import os

from hanyi import TASKS_DIR

_MARKER = "_hanyi_tasks_dir_patched"
UPSTREAM_FIX_MARKER = "TASK_ENTRY_POINT_GROUP"


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(str(a)).rstrip(os.sep) == os.path.realpath(str(b)).rstrip(os.sep)


def with_hanyi_tasks(include_path, tasks_dir: str = TASKS_DIR) -> list:
    """Return ``include_path`` as a new list that ends with ``tasks_dir`` (added once).

    >>> with_hanyi_tasks(None, "/x/tasks")
    ['/x/tasks']
    >>> with_hanyi_tasks("/mine", "/x/tasks")
    ['/mine', '/x/tasks']
    >>> with_hanyi_tasks(["/x/tasks/"], "/x/tasks")
    ['/x/tasks/']
    """
    if include_path is None:
        paths = []
    elif isinstance(include_path, (str, os.PathLike)):
        paths = [include_path]
    else:
        paths = list(include_path)
    if not any(_same_dir(p, tasks_dir) for p in paths):
        paths.append(tasks_dir)
    return paths


def patch_task_manager(cls, tasks_dir: str = TASKS_DIR) -> bool:
    """Wrap ``cls.__init__`` so every instance also indexes ``tasks_dir``. Idempotent; returns True if it patched."""
    if getattr(cls, _MARKER, False):
        return False
    original_init = cls.__init__

    @functools.wraps(original_init)
    def __init__(self, verbosity="INFO", include_path=None, include_defaults=True, model_name=None, *args, **kwargs):
        original_init(
            self, verbosity, with_hanyi_tasks(include_path, tasks_dir), include_defaults, model_name, *args, **kwargs
        )

    cls.__init__ = __init__
    setattr(cls, _MARKER, True)
    return True


def upstream_reads_plugins(tasks_module) -> bool:
    """True when the installed lmms-eval discovers plugin task directories itself (our patch is then not needed)."""
    return hasattr(tasks_module, UPSTREAM_FIX_MARKER)


def patch_lmms_eval_tasks_module(tasks_module=None) -> bool:
    """Patch ``lmms_eval.tasks.TaskManager`` unless upstream already handles plugins. Returns True if patched."""
    if tasks_module is None:
        import lmms_eval.tasks as tasks_module
    try:
        from hanyi import guard

        guard.install()  # lmms_eval.api.task is loaded by now: keep responses when scoring fails
    except Exception as exc:  # never break lmms-eval because of us
        import logging

        logging.getLogger("hanyi").warning("hanyi: scoring guard not installed (%r)", exc)
    if upstream_reads_plugins(tasks_module):
        return False
    return patch_task_manager(tasks_module.TaskManager)
