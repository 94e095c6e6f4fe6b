"""Which lmms-eval tasks are hanyi's: the one test every run-time extra of ``hanyi eval`` applies before it touches a
task, kept in a module of its own so that the extras (:mod:`hanyi.host.run_intervals`, :mod:`hanyi.host.cache_chunks`)
and the package that installs them do not import each other.
"""

from __future__ import annotations

import os

from hanyi import TASKS_DIR


def is_hanyi_task(task) -> bool:
    """True when ``task`` (an lmms-eval task object) is one of hanyi's: its ``process_results`` is defined in a file
    under :data:`hanyi.TASKS_DIR`. The one test of "is this task hanyi's" in this package."""
    fn = getattr(getattr(task, "config", None), "process_results", None)
    code = getattr(fn, "__code__", None)
    filename = os.path.abspath(code.co_filename) if code is not None else ""
    return filename.startswith(os.path.abspath(TASKS_DIR) + os.sep)
