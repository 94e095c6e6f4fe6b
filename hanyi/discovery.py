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


def task_module_name(module_path: str, tasks_dir: str = TASKS_DIR) -> str | None:
    """The package name of a ``.py`` file under ``tasks_dir`` (``hanyi.tasks.cii.utils``), else ``None``.

    >>> task_module_name("/x/tasks/cii/utils.py", "/x/tasks")
    'hanyi.tasks.cii.utils'
    >>> task_module_name("/elsewhere/utils.py", "/x/tasks") is None
    True
    """
    rel = os.path.relpath(os.path.normpath(module_path), os.path.normpath(tasks_dir))
    if rel.startswith(os.pardir) or os.path.isabs(rel) or not rel.endswith(".py"):
        return None
    parts = rel[: -len(".py")].split(os.sep)
    if not all(p.isidentifier() for p in parts):
        return None
    return ".".join(["hanyi", "tasks", *parts])


def patch_function_loader(utils_module, tasks_dir: str = TASKS_DIR) -> bool:
    """Resolve ``!function utils.x`` in hanyi's task YAMLs through Python's module cache. Idempotent.

    lmms-eval 0.7.3's ``import_function`` executes the named file afresh for every ``!function`` tag it meets (and,
    where bytecode is not written, compiles it again): loading ``cii`` ran ``cii/utils.py`` 34 times, about 30 ms per
    task load on our CI machine, and the five groups repeat it for every task. For files under ``tasks_dir`` the
    wrapper imports the file once as its package module (``hanyi.tasks.cii.utils``) and returns that module's
    function, the same object every time; any other file goes to lmms-eval's own loader unchanged
    (``docs/upstream/0007-cache-yaml-function-modules.patch`` proposes the cache upstream).
    """
    original = getattr(utils_module, "import_function", None)
    if original is None or getattr(original, _MARKER, False):
        return False

    @functools.wraps(original)
    def import_function(loader, node):
        dotted = loader.construct_scalar(node)
        *module_parts, function_name = dotted.split(".")
        path = os.path.join(os.path.dirname(getattr(loader, "name", "") or ""), *module_parts) + ".py"
        name = task_module_name(path, tasks_dir) if module_parts and os.path.isfile(path) else None
        if name is None:
            return original(loader, node)
        import importlib

        try:
            module = importlib.import_module(name)
        except ImportError:  # not importable as a package module (e.g. a copied tree): lmms-eval's way
            return original(loader, node)
        return getattr(module, function_name)

    setattr(import_function, _MARKER, True)
    utils_module.import_function = import_function
    return True


def _libyaml_loaders(utils_module) -> dict | None:
    """lmms-eval's two YAML readings (``simple``: ``!function`` tags left as nodes; ``full``: resolved) on PyYAML's C
    parser, or None without libyaml. Each loader names its file (``loader.name``), which ``!function`` resolution
    reads to find the module beside the YAML; the constructors are looked up at call time, so later patches apply."""
    import yaml

    base = getattr(yaml, "CFullLoader", None)
    if base is None:
        return None
    loaders = {}
    for mode, constructor in (("simple", "ignore_constructor"), ("full", "import_function")):

        class Loader(base):
            def __init__(self, stream):
                super().__init__(stream)
                self.name = getattr(stream, "name", "<file>")

        Loader.add_constructor("!function", lambda loader, node, c=constructor: getattr(utils_module, c)(loader, node))
        loaders[mode] = Loader
    return loaders


def patch_yaml_loader(utils_module, tasks_dir: str = TASKS_DIR) -> bool:
    """Read hanyi's task YAMLs with PyYAML's C parser (libyaml). Idempotent; True if it patched now.

    lmms-eval 0.7.3's ``load_yaml_config`` uses ``yaml.full_load``, the pure-Python parser: 210 ms for hanyi's 128
    task files, which every ``TaskManager`` reads to index its tasks, against 24 ms with libyaml; the ``cii`` default
    template alone takes 10.5 ms against 1.1 ms. For a file under ``tasks_dir`` (and lmms-eval's ``simple``/``full``
    modes) the wrapper parses with the C loader and hands the result to lmms-eval's own function, which resolves
    ``include`` and local ``data_files`` as before; any other file, or a file libyaml rejects, goes to lmms-eval's
    reading unchanged (so a broken YAML gets lmms-eval's error). ``tests/test_discovery.py`` checks that every hanyi
    YAML reads the same both ways.
    """
    original = getattr(utils_module, "load_yaml_config", None)
    if original is None or getattr(original, _MARKER, False):
        return False
    loaders = _libyaml_loaders(utils_module)
    if loaders is None:
        return False
    import yaml

    root = os.path.abspath(tasks_dir)

    @functools.wraps(original)
    def load_yaml_config(yaml_path=None, yaml_config=None, yaml_dir=None, mode="full"):
        if (
            yaml_config is None
            and mode in loaders
            and isinstance(yaml_path, str)
            and os.path.abspath(yaml_path).startswith(root + os.sep)
        ):
            try:
                with open(yaml_path, "rb") as f:
                    parsed = yaml.load(f, Loader=loaders[mode])  # FullLoader rules, as lmms-eval reads
            except yaml.YAMLError:
                parsed = None  # lmms-eval's reading below reports it in its own words
            if isinstance(parsed, dict):
                yaml_config = parsed
        return original(yaml_path=yaml_path, yaml_config=yaml_config, yaml_dir=yaml_dir, mode=mode)

    setattr(load_yaml_config, _MARKER, True)
    utils_module.load_yaml_config = load_yaml_config
    return True


def upstream_reads_plugins(tasks_module) -> bool:
    """True when the installed lmms-eval discovers plugin task directories itself (our patch is then not needed)."""
    return hasattr(tasks_module, UPSTREAM_FIX_MARKER)


def patch_lmms_eval_tasks_module(tasks_module=None) -> bool:
    """Patch ``lmms_eval.tasks.TaskManager`` unless upstream already handles plugins. Returns True if patched."""
    if tasks_module is None:
        import lmms_eval.tasks as tasks_module
    from hanyi import multiprocess, run_intervals

    multiprocess.install()  # N-process runs aggregate hanyi's tasks in doc order (hanyi/multiprocess.py)
    run_intervals.install()  # after it: standard errors and per-doc stats of decomposed aggregations
    try:
        import lmms_eval.utils

        patch_function_loader(lmms_eval.utils)  # `!function utils.x` of hanyi's YAMLs: each file imported once
        patch_yaml_loader(lmms_eval.utils)  # hanyi's YAMLs read by libyaml: task index and loads 9x faster
    except Exception as exc:  # never break lmms-eval because of us
        import logging

        logging.getLogger("hanyi").warning("hanyi: YAML function cache not installed (%r)", exc)
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
