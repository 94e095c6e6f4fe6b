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
        from hanyi import versions

        versions.fail_fast()  # a known-bad host release: one line and exit, before lmms-eval loads any model
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
    """Patch ``lmms_eval.tasks.TaskManager`` unless upstream already handles plugins. Returns True if patched.

    This is all the start-up hook replaces in lmms-eval: task discovery. Everything a task's numbers need is in the
    task folder; ``hanyi eval`` adds its run-time extras itself (:func:`hanyi.host.install_eval_extras`)."""
    if tasks_module is None:
        import lmms_eval.tasks as tasks_module
    if upstream_reads_plugins(tasks_module):
        return False
    return patch_task_manager(tasks_module.TaskManager)


# --- lm-evaluation-harness (lm_eval 0.4.13) --------------------------------------------------------------------------
# lm-eval has no plugin route for tasks or models at all: tasks come from its own folder and --include_path, models
# from a fixed name table. The same start-up hook patches its TaskManager (hanyi.LM_EVAL_TASKS_DIR) and registers
# the replay model, unless lm-eval carries docs/upstream/0004-lm-eval-task-and-model-entry-points.patch.

LM_EVAL_REPLAY = "hanyi.models.lm_eval_replay:ReplayLM"
LM_EVAL_MODEL_NAMES = ("replay", "hanyi_replay")


def lm_eval_include_path(include_path, tasks_dir: str | None = None) -> list:
    """``include_path`` as a new list that *starts* with hanyi's lm-eval tasks (added once).

    lm-eval indexes its built-ins, then each include path in order, and a later path overrides an earlier one on a
    name clash; putting hanyi first keeps the user's own ``--include_path`` in charge.

    >>> lm_eval_include_path(None, "/x/lm")
    ['/x/lm']
    >>> lm_eval_include_path("/mine", "/x/lm")
    ['/x/lm', '/mine']
    >>> lm_eval_include_path(["/mine", "/x/lm/"], "/x/lm")
    ['/mine', '/x/lm/']
    """
    if tasks_dir is None:
        from hanyi import LM_EVAL_TASKS_DIR as tasks_dir
    paths = (
        []
        if include_path is None
        else [include_path]
        if isinstance(include_path, (str, os.PathLike))
        else list(include_path)
    )
    if any(_same_dir(p, tasks_dir) for p in paths):
        return paths
    return [tasks_dir, *paths]


def patch_lm_eval_task_manager(cls, tasks_dir: str | None = None) -> bool:
    """Wrap lm-eval's ``TaskManager.__init__`` so every instance also indexes ``tasks_dir``. Idempotent."""
    import inspect

    if getattr(cls, _MARKER, False):
        return False
    original_init = cls.__init__
    signature = inspect.signature(original_init)

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.arguments["include_path"] = lm_eval_include_path(bound.arguments.get("include_path"), tasks_dir)
        original_init(*bound.args, **bound.kwargs)

    cls.__init__ = __init__
    setattr(cls, _MARKER, True)
    return True


def lm_eval_reads_plugins(tasks_module) -> bool:
    """True when the installed lm-eval reads task entry points itself (docs/upstream/0004 applied)."""
    import sys

    manager = sys.modules.get(getattr(tasks_module.TaskManager, "__module__", ""), None)
    return hasattr(tasks_module, UPSTREAM_FIX_MARKER) or hasattr(manager, UPSTREAM_FIX_MARKER)


def register_lm_eval_replay(registry=None, models_module=None) -> bool:
    """Register ``--model replay`` in lm-eval's model registry (lazily: nothing is imported until it is used).

    lm-eval's ``get_model`` loads its own model table only when the registry is *empty*, so that table is loaded
    first. Skipped when lm-eval reads the ``lm_eval.models`` entry point itself. Returns True if it registered.
    """
    if models_module is None:
        import lm_eval.models as models_module
    if hasattr(models_module, "MODEL_ENTRY_POINT_GROUP"):
        return False
    if registry is None:
        from lm_eval.api.registry import model_registry as registry
    added = False
    for name in LM_EVAL_MODEL_NAMES:
        if name not in registry:
            registry.register(name, target=LM_EVAL_REPLAY)
            added = True
    return added


def patch_lm_eval_tasks_module(tasks_module=None) -> bool:
    """Patch ``lm_eval.tasks.TaskManager`` and register the replay model, unless lm-eval handles plugins itself."""
    if tasks_module is None:
        import lm_eval.tasks as tasks_module
    register_lm_eval_replay()
    if lm_eval_reads_plugins(tasks_module):
        return False
    return patch_lm_eval_task_manager(tasks_module.TaskManager)


def tasks_list_argv(argv: list) -> list | None:
    """lm-eval 0.4.13 dropped ``lm_eval --tasks list`` for ``lm_eval ls tasks``; map the old spelling (else None).

    >>> tasks_list_argv(["--tasks", "list"])
    ['ls', 'tasks']
    >>> tasks_list_argv(["--tasks=list", "--include_path", "/mine"])
    ['ls', 'tasks', '--include_path', '/mine']
    >>> tasks_list_argv(["--model", "hf", "--tasks", "cii_textonly"]) is None
    True
    """
    args = list(argv)
    if args[:1] == ["run"]:
        args = args[1:]
    if "--tasks=list" in args:
        i = args.index("--tasks=list")
        args[i : i + 1] = ["--tasks", "list"]
    pairs = [(a, b) for a, b in zip(args, args[1:] + [None]) if a.startswith("--")]
    flags = dict(pairs)
    if flags.get("--tasks") != "list" or set(flags) - {"--tasks", "--include_path"}:
        return None
    return ["ls", "tasks"] + (["--include_path", flags["--include_path"]] if flags.get("--include_path") else [])


def patch_lm_eval_cli(harness_module) -> bool:
    """Let ``lm_eval --tasks list`` work again in 0.4.13 (it fails with "Tasks not found: list"). Idempotent."""
    import sys

    cls = harness_module.HarnessCLI
    if getattr(cls, _MARKER, False):
        return False
    original = cls.parse_args

    @functools.wraps(original)
    def parse_args(self):
        mapped = tasks_list_argv(sys.argv[1:])
        if mapped is not None:
            sys.argv[1:] = mapped
        return original(self)

    cls.parse_args = parse_args
    setattr(cls, _MARKER, True)
    return True
