"""Reading hanyi's lmms-eval task YAMLs without running them: ``!function`` tags stay references until asked for.

lmms-eval's own ``load_yaml_config`` resolves *every* ``!function`` tag on reading, ``dataset_path: !function
hanyi.data.sources...`` included, which fails where the data is not prepared. The lm-eval glue (the prompt settings
and ``metric_list`` of a task) and the report (the aggregation function behind a logged metric) only need some keys,
so both read through :func:`read` and resolve just the references they use with :func:`resolve`.
"""

from __future__ import annotations

import importlib
import os

import yaml

from hanyi import TASKS_DIR


class FunctionRef(str):
    """The text of a ``!function`` tag, e.g. ``utils.cii_acc``."""


#: libyaml's safe reader where PyYAML was built with it (0.56 -> 0.06 s for hanyi's task YAMLs; the same dicts,
#: tests/test_task_yaml.py), else the pure-Python one.
_SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SAFE):
    """A safe reader that keeps each ``!function`` tag as a :class:`FunctionRef`."""


class _PureLoader(yaml.SafeLoader):
    """The pure-Python twin of :class:`_Loader` (what it must equal)."""


for _cls in (_Loader, _PureLoader):
    _cls.add_constructor("!function", lambda loader, node: FunctionRef(loader.construct_scalar(node)))


def read(path: str, depth: int = 0) -> dict:
    """The task YAML at ``path`` with its ``include`` files merged under it, as lmms-eval merges them; ``{}`` for a
    file that is not a mapping."""
    with open(path, encoding="utf-8") as f:
        config = yaml.load(f, Loader=_Loader) or {}  # noqa: S506 (a SafeLoader subclass)
    if not isinstance(config, dict):
        return {}
    include = config.pop("include", None)
    if not include or depth > 8:
        return config
    merged: dict = {}
    for name in [include] if isinstance(include, str) else include:
        merged.update(read(os.path.join(os.path.dirname(path), name), depth + 1))
    merged.update(config)
    return merged


def resolve(ref: str, yaml_dir: str):
    """The function a ``!function`` reference names, as lmms-eval finds it: ``utils.x`` from the ``.py`` file beside
    the YAML (imported as its package module, ``hanyi.tasks.<bench>.utils``), else a dotted module path."""
    module, _, name = ref.rpartition(".")
    path = os.path.join(yaml_dir, *module.split(".")) + ".py"
    package = task_module_name(path) if os.path.isfile(path) else None
    return getattr(importlib.import_module(package or module), name)


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
