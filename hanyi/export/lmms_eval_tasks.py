"""Write hanyi's benchmarks as self-contained lmms-eval task folders (``hanyi export lmms-eval``).

Everything is derived from the source tree at export time; nothing here lists a metric or a module:

* ``<out>/<bench>/`` is a copy of ``hanyi/tasks/<bench>/`` (YAMLs, ``templates/``, resources, the glue ``.py``
  files), with ``dataset_path: !function hanyi.data.sources.<bench>`` replaced by a plain string.
* ``<out>/<bench>/_<bench>_lib/`` holds every ``hanyi`` module the glue needs, found by following its imports
  (``import`` and ``from`` statements anywhere in the module, relative ones included, and the packages they sit in)
  and copied with ``hanyi`` rewritten to ``_<bench>_lib``. The metric code therefore has one source,
  ``hanyi/metrics``; the copies are regenerated, never edited (``--check`` catches drift).
* Each glue module gets a few generated lines that load ``_<bench>_lib`` by path (lmms-eval loads ``utils.py`` by
  file, with no package around it), so the folder works from ``--include_path`` and from ``lmms_eval/tasks/``.
* Two generated overrides keep paths right: the library's ``TASKS_DIR`` is the directory the benchmark folder sits
  in (templates and reference files are read from the folder), and ``resolve()`` of the vendored
  ``data/sources.py``, if needed, returns the exported ``dataset_path`` instead of reading ``HANYI_*`` variables.
"""

from __future__ import annotations

import ast
import filecmp
import json
import os
import re
import shutil
import tempfile

import hanyi
from hanyi import BENCHMARKS, TASKS_DIR

PACKAGE_DIR = os.path.dirname(os.path.abspath(hanyi.__file__))
ROOT = "hanyi"
_SKIP_DIRS = {"__pycache__"}
_SKIP_FILES = {"README.md"}
_IMPORT_RE = re.compile(r"^(\s*)(from|import)(\s+)hanyi(?=[\s.]|$)", re.M)
_SOURCE_RE = re.compile(r"!function\s+hanyi\.data\.sources\.(\w+)")
_FUNCTION_RE = re.compile(r"!function\s+(hanyi\.[\w.]+)")
GENERATED = "written by `hanyi export lmms-eval`"


class ExportError(RuntimeError):
    """The source tree cannot be exported as it is; the message names the file."""


def lib_name(bench: str) -> str:
    """The vendored library's package name: unique per benchmark, so folders never share module state."""
    return f"_{bench}_lib"


# --------------------------------------------------------------------------------------------------------------
# Which hanyi modules a folder needs


def module_path(name: str) -> str | None:
    """The source file of module ``hanyi.x.y`` (``x/y.py`` or ``x/y/__init__.py``), or None."""
    parts = name.split(".")[1:]
    base = os.path.join(PACKAGE_DIR, *parts)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def _is_package(path: str) -> bool:
    return os.path.basename(path) == "__init__.py"


def imported_modules(path: str, name: str) -> set[str]:
    """Every ``hanyi`` module that ``path`` (module ``name``) imports, at any depth of its code."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    package = name if _is_package(path) else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name == ROOT or a.name.startswith(ROOT + "."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module != ROOT and not module.startswith(ROOT + "."):
                continue
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names if module_path(f"{module}.{a.name}"))
    return found


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def folder_modules(bench: str) -> list[str]:
    """The glue modules of ``hanyi/tasks/<bench>/`` (they stay in the folder), as ``hanyi.tasks.<bench>.<name>``."""
    folder = os.path.join(TASKS_DIR, bench)
    names = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel = os.path.relpath(root, folder)
        for f in sorted(files):
            if f.endswith(".py"):
                stem = [] if f == "__init__.py" else [f[:-3]]
                parts = [] if rel == "." else rel.split(os.sep)
                names.append(".".join([ROOT, "tasks", bench, *parts, *stem]))
    return names


def needed_modules(bench: str) -> list[str]:
    """The ``hanyi`` modules outside ``hanyi/tasks/<bench>/`` that the folder's code reaches, sorted."""
    own = f"{ROOT}.tasks.{bench}"
    todo = list(folder_modules(bench))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        for mod in _with_parents(name):
            if mod in seen:
                continue
            seen.add(mod)
            path = module_path(mod)
            if path is None:
                if mod == own:  # a folder without __init__.py (a namespace package)
                    continue
                raise ExportError(f"{bench}: cannot find the source of {mod} (imported by {name})")
            todo.extend(imported_modules(path, mod))
    outside = sorted(m for m in seen if m != own and not m.startswith(own + "."))
    for mod in outside:
        if mod.startswith(f"{ROOT}.tasks.") and mod.split(".")[2] in BENCHMARKS:
            raise ExportError(f"{bench}: its glue imports {mod}, another benchmark's folder; export cannot split it")
    return outside


# --------------------------------------------------------------------------------------------------------------
# Rewriting


def rewrite_imports(source: str, lib: str, filename: str) -> str:
    """``from hanyi... import`` / ``import hanyi...`` -> the vendored library; refuses other uses of the name."""
    out = _IMPORT_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{lib}", source)
    for node in ast.walk(ast.parse(out, filename=filename)):
        bad = (isinstance(node, ast.Name) and node.id == ROOT) or (
            isinstance(node, (ast.Import, ast.ImportFrom))
            and any(
                n == ROOT or n.startswith(ROOT + ".")
                for n in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
            )
        )
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            first = node.args[0] if node.args else None
            text = ast.unparse(first) if first is not None else ""
            bad = bad or text.strip("'\"f").startswith(ROOT)
        if bad:
            raise ExportError(f"{filename}:{node.lineno}: uses the name 'hanyi' in a way the exporter cannot rewrite")
    return out


def bootstrap(lib: str) -> str:
    return (
        f"# --- {GENERATED}: load this folder's vendored library {lib}/ by path, once per process ---\n"
        "import importlib.util as _export_ilu  # noqa: E402\n"
        "import os as _export_os  # noqa: E402\n"
        "import sys as _export_sys  # noqa: E402\n"
        "\n"
        f'if "{lib}" not in _export_sys.modules:\n'
        f'    _export_dir = _export_os.path.join(_export_os.path.dirname(_export_os.path.abspath(__file__)), "{lib}")\n'
        "    _export_spec = _export_ilu.spec_from_file_location(\n"
        f'        "{lib}", _export_os.path.join(_export_dir, "__init__.py"), submodule_search_locations=[_export_dir]\n'
        "    )\n"
        f'    _export_sys.modules["{lib}"] = _export_ilu.module_from_spec(_export_spec)\n'
        f'    _export_spec.loader.exec_module(_export_sys.modules["{lib}"])\n'
        "# --- end of generated lines ---\n"
    )


def with_bootstrap(source: str, lib: str) -> str:
    """Insert :func:`bootstrap` after the docstring and ``__future__`` imports, if the module uses ``lib``."""
    if not re.search(rf"^\s*(from|import)\s+{lib}\b", source, re.M):
        return source
    tree = ast.parse(source)
    line = None
    for i, node in enumerate(tree.body):
        docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (docstring or future):
            line = node.lineno - 1
            break
    lines = source.splitlines(keepends=True)
    if line is None:
        line = len(lines)
    return "".join(lines[:line]) + bootstrap(lib) + "\n" + "".join(lines[line:])


def lib_overrides(module: str, lib: str, dataset_paths: dict) -> str:
    """Generated lines appended to a vendored module so that paths point into the exported folder."""
    if module == ROOT:
        return (
            f"\n\n# --- {GENERATED}: the task folders are the directory this benchmark folder sits in ---\n"
            "import os as _export_os  # noqa: E402\n\n"
            "TASKS_DIR = _export_os.path.dirname(_export_os.path.dirname(_export_os.path.dirname("
            "_export_os.path.abspath(__file__))))\n"
        )
    if module == f"{ROOT}.tasks":
        return (
            f"\n\n# --- {GENERATED}: {lib}.tasks.<bench> is the exported benchmark folder itself ---\n"
            "import os as _export_os  # noqa: E402\n\n"
            "__path__.append(_export_os.path.dirname(_export_os.path.dirname(_export_os.path.dirname("
            "_export_os.path.dirname(_export_os.path.abspath(__file__))))))\n"
        )
    if module == f"{ROOT}.data.sources":
        return (
            f"\n\n# --- {GENERATED}: the folder's dataset_path, fixed at export time ---\n"
            f"EXPORTED_DATASET_PATHS = {json.dumps(dataset_paths, ensure_ascii=False)}\n\n\n"
            "def resolve(benchmark: str) -> str:  # noqa: F811\n"
            '    """The ``dataset_path`` this folder was exported with (``hanyi export --data-root``)."""\n'
            "    if benchmark not in EXPORTED_DATASET_PATHS:\n"
            "        raise DataNotFoundError(f'{benchmark} is not part of this exported folder')\n"
            "    return EXPORTED_DATASET_PATHS[benchmark]\n"
        )
    return ""


# --------------------------------------------------------------------------------------------------------------
# Data source


def dataset_path(bench: str, data_root: str, out_bench: str) -> str:
    """``hub``: the hub id, else the default prepared dir; ``sample``: the copy beside the tasks; else ``<dir>``."""
    from hanyi.data import sources

    hub_id = sources.SOURCES[bench].hub_id
    if data_root == "sample":
        return os.path.join(os.path.abspath(out_bench), "sample")
    if data_root == "hub":
        return hub_id or os.path.join(sources.default_data_root(), bench)
    prepared = os.path.join(os.path.abspath(os.path.expanduser(data_root)), bench)
    if hub_id and not os.path.isfile(os.path.join(prepared, sources.MANIFEST)):
        return hub_id
    return prepared


def rewrite_yaml(text: str, bench: str, path_value: str, filename: str) -> str:
    def source(m):
        if m.group(1) != bench:
            raise ExportError(f"{filename}: dataset_path names another benchmark ({m.group(1)})")
        return json.dumps(path_value, ensure_ascii=False) + "  # fixed by hanyi export; HANYI_* variables do not apply"

    out = _SOURCE_RE.sub(source, text)
    other = _FUNCTION_RE.search(out)
    if other:
        raise ExportError(f"{filename}: '!function {other.group(1)}' points into hanyi; move it into the folder glue")
    return out


# --------------------------------------------------------------------------------------------------------------
# Export


MARKER = f"<!-- {GENERATED}; re-export instead of editing -->"


def _is_export(folder: str) -> bool:
    """True for a folder an earlier export wrote (its README starts with :data:`MARKER`)."""
    try:
        with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
            return f.readline().strip() == MARKER
    except OSError:
        return False


PR_MARKER = f"<!-- {GENERATED}: PULL_REQUEST.md; re-export instead of editing -->"


def _is_generated_pr(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().strip() == PR_MARKER
    except OSError:
        return False


def preflight(out: str, benchmarks, force: bool = False) -> None:
    """Check every path the export would write before anything is written; raises :class:`ExportError` (one line).

    Refused: ``out`` that is a file (or a symlink); a ``<out>/<bench>`` that is a symlink, not a folder, or a folder
    no earlier export wrote; a ``PULL_REQUEST.md`` that is a symlink, or that hanyi did not write (unless ``force``).
    """
    if os.path.islink(out) or (os.path.exists(out) and not os.path.isdir(out)):
        kind = "a symbolic link" if os.path.islink(out) else "a file"
        raise ExportError(f"--out {out} is {kind}, not a folder; choose a folder (nothing was written)")
    for bench in benchmarks:
        dst = os.path.join(out, bench)
        if os.path.islink(dst):
            raise ExportError(f"{dst} is a symbolic link (to {os.readlink(dst)}); refusing to replace it or write "
                              "through it (nothing was written)")  # fmt: skip
        if os.path.exists(dst) and (not os.path.isdir(dst) or not _is_export(dst)):
            raise ExportError(f"{dst} exists and was not written by hanyi export; refusing to replace it (nothing "
                              "was written)")  # fmt: skip
    pr = os.path.join(out, "PULL_REQUEST.md")
    if os.path.islink(pr):
        raise ExportError(f"{pr} is a symbolic link; refusing to write through it (nothing was written)")
    if os.path.exists(pr) and not force and not _is_generated_pr(pr):
        raise ExportError(f"{pr} is yours (hanyi did not write it); keeping it. Use --force to replace it (nothing "
                          "was written)")  # fmt: skip


def export_benchmark(out: str, bench: str, data_root: str) -> dict:
    lib = lib_name(bench)
    src = os.path.join(TASKS_DIR, bench)
    dst = os.path.join(out, bench)
    if os.path.exists(dst):
        if os.path.islink(dst) or not _is_export(dst):
            raise ExportError(f"{dst} exists and was not written by hanyi export; refusing to replace it")
        shutil.rmtree(dst)
    path_value = dataset_path(bench, data_root, dst)
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in sorted(files):
            if (rel == "." and f in _SKIP_FILES) or f.endswith(".pyc"):
                continue
            s, d = os.path.join(root, f), os.path.join(dst, rel, f)
            if f.endswith(".py"):
                with open(s, encoding="utf-8") as fh:
                    text = with_bootstrap(rewrite_imports(fh.read(), lib, s), lib)
            elif f.endswith(".yaml") or f.endswith("_yaml"):
                with open(s, encoding="utf-8") as fh:
                    text = rewrite_yaml(fh.read(), bench, path_value, s)
            else:
                shutil.copyfile(s, d)
                continue
            with open(d, "w", encoding="utf-8") as fh:
                fh.write(text)
    vendored = needed_modules(bench)
    if ROOT not in vendored:
        vendored.insert(0, ROOT)
    for mod in vendored:
        s = module_path(mod)
        rel = os.path.relpath(s, PACKAGE_DIR)
        d = os.path.join(dst, lib, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(s, encoding="utf-8") as fh:
            text = rewrite_imports(fh.read(), lib, s) + lib_overrides(mod, lib, {bench: path_value})
        with open(d, "w", encoding="utf-8") as fh:
            fh.write(text)
    if data_root == "sample":
        shutil.copytree(os.path.join(PACKAGE_DIR, "data", "sample", bench), os.path.join(dst, "sample"))
    from hanyi.export import readme

    with open(os.path.join(dst, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(MARKER + "\n" + readme.folder_readme(bench, dst, path_value, vendored))
    return {"folder": dst, "dataset_path": path_value, "vendored": [m.replace(ROOT, lib, 1) for m in vendored]}


def export(out: str, benchmarks=BENCHMARKS, data_root: str = "hub", force: bool = False) -> dict:
    """Write ``<out>/<bench>/`` for each benchmark and ``<out>/PULL_REQUEST.md``; returns what was written.

    Every path is checked first (:func:`preflight`), so a refusal leaves ``out`` as it was."""
    from hanyi.export import readme

    preflight(out, benchmarks, force)
    os.makedirs(out, exist_ok=True)
    written = {bench: export_benchmark(out, bench, data_root) for bench in benchmarks}
    with open(os.path.join(out, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
        fh.write(PR_MARKER + "\n" + readme.pull_request(out, list(benchmarks), data_root))
    return written


def _tree(root: str) -> set[str]:
    found = set()
    for r, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        found.update(os.path.relpath(os.path.join(r, f), root) for f in files if not f.endswith(".pyc"))
    return found


def check_export(out: str, benchmarks=BENCHMARKS, data_root: str = "hub") -> list[str]:
    """Differences between ``out`` and a fresh export of the current source (empty when they match)."""
    drift = []
    with tempfile.TemporaryDirectory(prefix="hanyi-export-check-") as tmp:
        export(tmp, benchmarks, data_root)
        for bench in [*benchmarks, None]:
            a, b = (os.path.join(tmp, bench), os.path.join(out, bench)) if bench else (tmp, out)
            if bench is None:
                names_a, names_b = {"PULL_REQUEST.md"}, {"PULL_REQUEST.md"} & set(os.listdir(out))
            else:
                names_a, names_b = _tree(a), (_tree(b) if os.path.isdir(b) else set())
            for name in sorted(names_a - names_b):
                drift.append(f"missing: {os.path.join(b, name)}")
            for name in sorted(names_b - names_a):
                drift.append(f"not in the source any more: {os.path.join(b, name)}")
            for name in sorted(names_a & names_b):
                fa, fb = os.path.join(a, name), os.path.join(b, name)
                if filecmp.cmp(fa, fb, shallow=False):
                    continue
                try:
                    with open(fa, encoding="utf-8") as x, open(fb, encoding="utf-8") as y:
                        same = x.read().replace(os.path.abspath(tmp), os.path.abspath(out)) == y.read()
                except UnicodeDecodeError:
                    same = False
                if not same:
                    drift.append(f"differs from the source: {fb}")
    return drift
