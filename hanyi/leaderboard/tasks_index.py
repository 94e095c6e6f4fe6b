"""The board's view of the installed tasks: one lmms-eval ``TaskManager`` over hanyi's task folder, built once per
process (indexing the tasks takes seconds). Both the document check (:mod:`hanyi.leaderboard.submission_schema`: a
task name must be a task, not a group or tag) and the re-score (:mod:`hanyi.leaderboard.intake`) read it.
"""

from __future__ import annotations

_TASK_MANAGER = None


def task_manager():
    """One lmms-eval TaskManager over hanyi's tasks only (the board's installed tasks)."""
    global _TASK_MANAGER
    if _TASK_MANAGER is None:
        from lmms_eval.tasks import TaskManager

        import hanyi

        _TASK_MANAGER = TaskManager("ERROR", include_path=hanyi.TASKS_DIR, include_defaults=False)
    return _TASK_MANAGER
