"""Write hanyi's lm-eval tasks as plain lm-evaluation-harness task folders (``hanyi export lm-eval``).

The machinery is the lmms-eval exporter's (:mod:`hanyi.export.lmms_eval_tasks`, with :data:`LM_EVAL` as its target);
what differs is only where things go and what is fixed at export time:

* ``<out>/<bench>/`` holds the YAMLs and ``utils.py`` of ``hanyi/lm_eval_tasks/<bench>/``; ``<out>/cultural_utils/``
  the shared code they reach (the lmms-eval glue of ``hanyi/tasks/<bench>/`` included, as
  ``lm_eval.tasks.cultural_utils.tasks.<bench>``, with its templates): copy ``<out>/*`` into ``lm_eval/tasks/``.
* Each ``metric_list: !function utils.X`` (the lmms-eval task's list, read at run time under hanyi) is written out as
  plain YAML; every ``!function hanyi.a.b.f`` becomes ``!function utils.f``, imported in ``utils.py``.
* The ``default`` prompt kwargs of the lmms-eval task YAMLs are baked into the generated ``_glue`` (no YAML of hanyi is
  read at run time); ``dataset_path`` is fixed as in the lmms-eval export.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

from hanyi import LM_EVAL_TASKS_DIR, TASKS_DIR
from hanyi.export import closure
from hanyi.export import lmms_eval_tasks as lt
from hanyi.task_yaml import FunctionRef, read

LM_EVAL = lt.Target(
    f"{lt.ROOT}.lm_eval_tasks", "lm_eval.tasks", "cultural_utils", "lm_eval.tasks.cultural_utils",
    '_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "tasks")', "where the lmms-eval glue's templates are",
    "README.md",
)  # fmt: skip
GLUE = f"{lt.ROOT}.lm_eval_tasks._glue"
_METRIC_LIST_RE = re.compile(r"^metric_list:\s*!function\s+utils\.(\w+)[^\n]*$", re.M)
_HANYI_FN_RE = re.compile(r"!function\s+hanyi\.([\w.]+)\.(\w+)")


def benchmarks() -> list[str]:
    return sorted(
        d for d in os.listdir(LM_EVAL_TASKS_DIR) if os.path.isfile(os.path.join(LM_EVAL_TASKS_DIR, d, "utils.py"))
    )


def _glue_calls(tree: ast.Module, fn: str) -> dict:
    """``{assigned name: (benchmark, task)}`` of the ``NAME = _glue.<fn>("bench", "task", ...)`` statements."""
    found = {}
    for node in tree.body:
        call = getattr(node, "value", None)
        if isinstance(node, ast.Assign) and isinstance(call, ast.Call) and getattr(call.func, "attr", "") == fn:
            found[node.targets[0].id] = (node, tuple(a.value for a in call.args[:2]))
    return found


def _defined_in(module: str, name: str) -> str:
    """The module that defines ``module``'s ``name``, past ``from x import name`` re-exports: ``utils.py`` reads it
    there, so no glue module keeps an import only for it (upstream's ruff --fix would drop it as unused)."""
    binding = closure.parse_module(lt.PACKAGE_DIR, module, lt.module_path(module)).bindings.get(name)
    return _defined_in(binding[1], name) if binding and binding[0] == "from" and binding[2] == name else module


def collections_as_tags(folder: str) -> dict:
    """The folder's groups that only collect tasks (no ``aggregate_metric_list``), to be written as tags:
    ``{"files": {group YAML file}, "members": {task: [group, ...]}}``.

    lm-eval's CI loads every task and group of the changed YAML files together, and its ``TaskManager`` refuses a group
    beside one of its own tasks (``Duplicate task 'x': found in both 'x' and 'group'``). A group without an aggregate
    is a tag in lm-eval's terms (``--tasks NAME`` runs the same tasks), so the export tags its members instead."""
    files, members = set(), {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as fh:
            cfg = yaml.load(fh, _PlainLoader)  # noqa: S506 - a SafeLoader that reads !function as a string
        if isinstance(cfg, dict) and cfg.get("group") and isinstance(cfg.get("task"), list):
            if cfg.get("aggregate_metric_list") or not all(isinstance(t, str) for t in cfg["task"]):
                continue
            files.add(name)
            for task in cfg["task"]:
                members.setdefault(task, []).append(cfg["group"])
    return {"files": files, "members": members}


class _PlainLoader(yaml.SafeLoader):
    pass


_PlainLoader.add_constructor("!function", lambda loader, node: str(loader.construct_scalar(node)))
_TASK_LINE = re.compile(r"^task:\s*(\w+)\s*$", re.M)
_TAG_LINE = re.compile(r"^tag:\s*\[([^\]]*)\]\s*$", re.M)


def _add_tags(text: str, members: dict) -> str:
    """``text`` (a task YAML) with the tags of :func:`collections_as_tags` its task belongs to."""
    m = _TASK_LINE.search(text)
    tags = members.get(m.group(1)) if m else None
    if not tags:
        return text
    old = _TAG_LINE.search(text)
    if old:
        have = [t.strip() for t in old.group(1).split(",") if t.strip()]
        return text[: old.start()] + f"tag: [{', '.join(have + tags)}]" + text[old.end() :]
    return text[: m.end()] + f"\ntag: [{', '.join(tags)}]" + text[m.end() :]


def _metric_yaml(bench: str, task: str, imports: dict) -> str:
    """The lmms-eval task's ``metric_list`` as plain YAML, aggregations as ``!function utils.f`` (``imports`` noted)."""
    lines = ["metric_list:"]
    for entry in read(os.path.join(TASKS_DIR, bench, f"{task}.yaml")).get("metric_list") or []:
        parts = []
        for key, value in entry.items():
            if isinstance(value, FunctionRef):
                module, name = str(value).rsplit(".", 1)
                imports[name] = _defined_in(f"{lt.ROOT}.tasks.{bench}.{module}", name)
                parts.append(f"{key}: !function utils.{name}")
            else:
                parts.append(f"{key}: {json.dumps(value)}")
        lines.append("  - {" + ", ".join(parts) + "}")
    return "\n".join(lines)


def export(out: str, data_root: str = "hub", repos=None, only=None) -> dict:
    """Write ``<out>/<bench>/`` for each lm-eval benchmark (``only`` those: one pull request per benchmark, the shared
    code then what they import) and ``<out>/cultural_utils/``; returns what was written."""
    chosen = [b for b in benchmarks() if not only or b in only]
    unknown = sorted(set(only or ()) - set(benchmarks()))
    if unknown:
        raise lt.ExportError(
            f"no lm-eval tasks for {', '.join(unknown)} (lm-eval benchmarks: {', '.join(benchmarks())})"
        )
    lt.formatters()
    for bench in chosen:  # a README without its paper is refused before anything is written
        _readme(bench, "")
    for bench in [*chosen, LM_EVAL.lib_dir]:
        dst = os.path.join(out, bench)
        if os.path.lexists(dst) and not (os.path.isdir(dst) and lt._is_export(dst) or bench == LM_EVAL.lib_dir and
                                         lt._is_generated_lib(dst)):  # fmt: skip
            raise lt.ExportError(f"{dst} exists and was not written by hanyi export; refusing to replace it")
    os.makedirs(out, exist_ok=True)
    written, modules, kwargs = {}, [], {}
    for bench in chosen:
        src, dst = os.path.join(LM_EVAL_TASKS_DIR, bench), os.path.join(out, bench)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        path_value = lt.dataset_path(bench, data_root, dst, repos)
        with open(os.path.join(src, "utils.py"), encoding="utf-8") as fh:
            source = fh.read()
        tree = ast.parse(source)
        for _node, key in _glue_calls(tree, "doc_to_text").values():
            kwargs["/".join(key)] = read(os.path.join(TASKS_DIR, key[0], f"{key[1]}.yaml"))[
                "lmms_eval_specific_kwargs"
            ]["default"]
        lists, imports = _glue_calls(tree, "metric_list"), {}
        as_tags = collections_as_tags(src)
        for name in sorted(os.listdir(src)):
            if not (name.endswith(".yaml") or name.endswith("_yaml")) or name in as_tags["files"]:
                continue
            with open(os.path.join(src, name), encoding="utf-8") as fh:
                text = _add_tags(fh.read(), as_tags["members"])
                text = _METRIC_LIST_RE.sub(
                    lambda m, lists=lists, imports=imports: _metric_yaml(*lists[m.group(1)][1], imports), text
                )

            def local(m, imports=imports):
                imports[m.group(2)] = _defined_in(f"{lt.ROOT}.{m.group(1)}", m.group(2))
                return f"!function utils.{m.group(2)}"

            text = lt.rewrite_yaml(_HANYI_FN_RE.sub(local, text), bench, path_value, os.path.join(src, name), LM_EVAL)
            text = lt.without_history(text)
            with open(os.path.join(dst, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        if lt.is_placeholder(bench, path_value):
            with open(os.path.join(dst, "dataset.py"), "w", encoding="utf-8") as fh:
                fh.write(lt.placeholder_module(bench, path_value, "lm_eval"))
        lines = source.splitlines()
        for node, _ in sorted(lists.values(), key=lambda v: -v[0].lineno):  # read at export time: drop
            del lines[node.lineno - 1 : node.end_lineno]
        end = max(n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
        mods = sorted(set(imports.values()))  # ``f = _module.f``: defined here, and kept by ruff's unused-import fix
        lines[end:end] = (
            [f"import {m} as _{m.rsplit('.', 1)[1]}" for m in mods]
            + [""]
            + [f"{name} = _{mod.rsplit('.', 1)[1]}.{name}" for name, mod in sorted(imports.items())]
        )
        source = "\n".join(lines) + "\n"
        mod_name = f"{LM_EVAL.folders}.{bench}.utils"
        modules.append(closure.parse_module(lt.PACKAGE_DIR, mod_name, os.path.join(src, "utils.py"), source))
        with open(os.path.join(dst, "utils.py"), "w", encoding="utf-8") as fh:
            fh.write(lt.exported_text(source, os.path.join(src, "utils.py"), LM_EVAL))
        if data_root == "sample" and not (repos or {}).get(bench):
            shutil.copytree(os.path.join(lt.PACKAGE_DIR, "data", "sample", bench), os.path.join(dst, "sample"))
        written[bench] = {"folder": dst, "dataset_path": path_value}
    baked = {GLUE: {"lmms_task_kwargs": "# the prompt settings of the lmms-eval tasks of the same names\n"
                    f"LMMS_TASK_KWARGS = {kwargs!r}"
                    "\n\n\ndef lmms_task_kwargs(benchmark, task):\n    return dict(LMMS_TASK_KWARGS[benchmark + '/' + task])"}}  # fmt: skip
    paths = {b: w["dataset_path"] for b, w in written.items()}
    shared = lt.export_shared(out, list(written), paths, LM_EVAL, modules=modules, extra=baked)
    for bench in written:  # the lmms-eval glue's templates, where the generated TASKS_DIR points
        src, dst = os.path.join(TASKS_DIR, bench), os.path.join(out, LM_EVAL.lib_dir, "tasks", bench)
        for name in os.listdir(src):
            if os.path.isdir(os.path.join(src, name)) and name != "__pycache__":
                shutil.copytree(os.path.join(src, name), os.path.join(dst, name), dirs_exist_ok=True)
            elif name == "_default_template_yaml":  # its metadata: where task_settings reads settings
                os.makedirs(dst, exist_ok=True)
                with open(os.path.join(dst, name), "w", encoding="utf-8") as fh:
                    yaml.safe_dump({"metadata": dict(read(os.path.join(src, name)).get("metadata") or {})}, fh)
    upstream_format([os.path.join(out, d) for d in [*written, LM_EVAL.lib_dir]])
    for bench, entry in written.items():  # after the shared code: its requirements are the README's
        with open(os.path.join(entry["folder"], "README.md"), "w", encoding="utf-8") as fh:
            fh.write(_readme(bench, entry["dataset_path"], entry["folder"]))
    with open(os.path.join(out, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
        fh.write(pull_request(out, list(written)))
    lt.record(out, [*written, LM_EVAL.lib_dir, "PULL_REQUEST.md"])
    return {**written, "shared": {"folder": os.path.join(out, LM_EVAL.lib_dir), "modules": shared}}


def pull_request(out: str, benchmarks: list[str]) -> str:
    """The description of the lm-eval pull request (kept beside the folders, not copied into ``lm_eval/tasks/``)."""
    from hanyi.export import pr, readme, requirements

    pkgs = requirements.extra_packages([os.path.join(out, d) for d in [*benchmarks, LM_EVAL.lib_dir]], "lm_eval")
    lines = ["# Add text-only tasks of Chinese/visual-pun benchmarks: " + ", ".join(benchmarks), "",
             "One folder per benchmark under `lm_eval/tasks/` (YAMLs and a `utils.py`), and `lm_eval/tasks/cultural_utils/`, "
             "the metric, prompt and data code they share (lm-eval has no shared-helper folder; the name is not "
             "`data/`, which lm-eval's `.gitignore` ignores). Each folder's README gives the paper, BibTeX, tasks, "
             "metrics, data access and requirements.", "", "## Folders", ""]  # fmt: skip
    for bench in benchmarks:
        folder = os.path.join(out, bench)
        lines.append(f"- `{bench}/`: tags {', '.join(f'`{t}`' for t in readme.tags(folder)) or 'none'}")
    lines += ["", "## Requirements (`pyproject.toml`)", "", "Added to `[project.optional-dependencies]` (the "
              "packages the folders import beyond lm-eval's dependencies and its `hf` extra):", "", "```toml",
              requirements.extras_snippet({b: pkgs for b in benchmarks}) if pkgs else "# none", "```"]  # fmt: skip
    lines += ["", "## Data", "", *readme.data_summary(out, benchmarks)]
    rows = [pr.task_list_entry(b, "lm_eval", pr.run_names(os.path.join(out, b))) for b in benchmarks]
    lines += ["", f"## Task list ({pr.TASK_LIST['lm_eval']})", "", *rows, ""]
    return "\n".join(lines)


#: lm-eval's pre-commit formats with ruff (``ruff-format``; ``ruff-check --fix``, whose isort settings these are).
RUFF_ISORT = ["lint.isort.known-first-party=['lm_eval']", "lint.isort.combine-as-imports=true",
              "lint.isort.lines-after-imports=2"]  # fmt: skip


def upstream_format(paths: list[str]) -> None:
    """Format as lm-eval's pre-commit does: imports sorted (ruff's isort rules, lm-eval's settings), a wrapped
    docstring's closing quotes on their own line (pydocstyle D209), ruff format."""
    config = [a for c in ["line-length=88", *RUFF_ISORT] for a in ("--config", c)]
    for cmd in (["check", "--fix", "--select", "I,D209", "--quiet", *config], ["format", "--quiet", *config]):
        proc = subprocess.run([sys.executable, "-m", "ruff", *cmd, "--no-cache", "--isolated", *paths],
                              capture_output=True, text=True)  # fmt: skip
        if proc.returncode:
            raise lt.ExportError(f"ruff {cmd[0]} failed on the lm-eval export: {proc.stderr.strip()[:300]}")


_DOC_LINK = re.compile(r"\[([^\]]+)\]\((?:\.\./)+docs/[^)]*\)")


def _readme(bench: str, path_value: str, folder: str | None = None) -> str:
    """The folder's README: the source tree's title, paper and citation, where the data comes from (the official
    release and its terms), then its tasks, metrics and checklist. Lines that point into hanyi (its docs, its data
    commands, its changelog) stay behind; a README without paper or BibTeX is refused."""
    from hanyi.export import readme

    with open(os.path.join(LM_EVAL_TASKS_DIR, bench, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    title, _, rest = text.partition("\n")
    parts = dict(readme.sections(rest))
    paper = parts.get("Paper", "")
    paper = "\n".join(line for line in paper.splitlines() if not line.startswith("Data: "))
    if not readme.bibtex(paper) or not paper.strip():
        raise lt.ExportError(f"{bench}: the lm-eval README's Paper section has no paper or no BibTeX; nothing to "
                             "export a citation from")  # fmt: skip
    body = [f"## {head}\n\n{content.strip()}\n" for head, content in readme.sections(rest)[1:]
            if head not in ("Paper", "Changelog")]  # fmt: skip
    out = "\n".join([
        title, "",
        "lm-evaluation-harness tasks; prompts and scoring as the lmms-eval tasks of the same name. The code the "
        "folders share is in `lm_eval/tasks/cultural_utils/`.", "",
        f"## Paper\n\n{paper.strip()}\n",
        "\n".join(readme.data_access(bench, path_value)) + "\n",
        "\n".join(readme.requirements_section(folder, "lm_eval", extra=bench)) + "\n" if folder else "",
        *body,
    ])  # fmt: skip
    if collections_as_tags(os.path.join(LM_EVAL_TASKS_DIR, bench))["files"]:
        out = out.replace(
            "### Groups\n", "### Tags\n\nA tag runs its tasks with `--tasks NAME` (no aggregate score):\n"
        )
    out = lt.native_mentions(lt.without_history(_DOC_LINK.sub(lambda m: m.group(1), out)), LM_EVAL)
    return re.sub(r"\n{3,}", "\n\n", out).rstrip("\n") + "\n"
