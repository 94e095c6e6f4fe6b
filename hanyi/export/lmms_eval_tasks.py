"""Write hanyi's benchmarks as plain lmms-eval task folders (``hanyi export lmms-eval``).

Everything is derived from the source tree at export time; nothing here lists a metric or a module:

* ``<out>/<bench>/`` holds the benchmark's YAMLs, ``templates/`` and resources, and the ``.py`` files of
  ``hanyi/tasks/<bench>/`` that its YAMLs reach (``!function`` targets and what they import from the folder), with
  ``dataset_path: !function dataset.path`` replaced by a plain string (the folder's ``dataset.py`` stays behind).
* ``<out>/_task_utils/cultural_utils/`` holds, once for all folders, the shared code those files use, imported as
  ``lmms_eval.tasks._task_utils.cultural_utils.<module>`` (upstream's own shared-helper folder is
  ``lmms_eval/tasks/_task_utils/``). Only the top-level statements the folders reach are copied
  (:mod:`hanyi.export.closure`), so report, CLI, data preparation and the like stay behind; the metric code keeps one
  source, ``hanyi/metrics``, and the copies are regenerated, never edited (``--check`` catches drift).
* ``hanyi.tasks.<bench>`` imports become ``lmms_eval.tasks.<bench>``: copy ``<out>/*`` into ``lmms_eval/tasks/``.
* Two generated definitions keep paths right: ``TASKS_DIR`` is the directory the folders sit in (templates and
  reference files are read from the folder), and ``resolve()`` of ``data/sources.py`` returns the exported
  ``dataset_path`` instead of reading ``HANYI_*`` variables.
* No ``HANYI_*`` variable is read: each setting comes from upstream's env variable or the folder's YAML ``metadata``
  (:mod:`hanyi.export.settings_map`, one table; ``os.environ`` reads go through the generated ``task_settings``).
* Every ``.py`` file is formatted as upstream's pre-commit formats it (black, line length 240; isort, profile black;
  ``lmms_eval`` first party), so ``--check`` and upstream's pre-commit agree.
"""

from __future__ import annotations

import ast
import filecmp
import json
import os
import re
import shutil
import tempfile
import textwrap
from dataclasses import dataclass

import hanyi
from hanyi import BENCHMARKS, TASKS_DIR
from hanyi.export import closure, settings_map
from hanyi.export.naming import ISSUE_REF, LIB_DIR, LIB_PACKAGE, upstream_wording, without_history

PACKAGE_DIR = os.path.dirname(os.path.abspath(hanyi.__file__))
ROOT = "hanyi"
#: Packages of the shared code renamed in the export: upstream's ``.gitignore`` ignores every folder named ``data``
#: (lmms-eval's and lm-eval's; copies in ``docs/upstream/*.gitignore``), so ``git add`` would leave ``data/`` out.
RENAMED = {"data": "task_data"}
_SKIP_DIRS = {"__pycache__"}
_SKIP_FILES = {"README.md"}
_IMPORT_RE = re.compile(r"^(\s*)(from|import)(\s+)(hanyi(?:\.\w+)*)", re.M)
#: ``dataset_path``'s tag: the folder's ``dataset.py`` (``dataset.path``), or the older ``hanyi.data.sources.<bench>``;
#: the rest of the line (a comment about hanyi) goes with it.
_SOURCE_RE = re.compile(r"!function\s+(?:hanyi\.data\.sources\.(\w+)|dataset\.path\b)[^\n]*")
_FUNCTION_RE = re.compile(r"!function\s+(hanyi\.[\w.]+)")
_TARGET_RE = re.compile(r"!function\s+([A-Za-z_][\w.]*)")
GENERATED = "written by `hanyi export lmms-eval`"
LIB_MARKER = f"# {GENERATED}: shared code of the hanyi task folders; re-export instead of editing"
#: upstream's pre-commit (``.pre-commit-config.yaml`` of EvolvingLMMs-Lab/lmms-eval): black 25.1.0 with
#: ``--line-length=240``, isort 6.0.1 with ``--profile black`` run from the repository root (``lmms_eval`` first party).
BLACK_LINE_LENGTH = 240
ISORT_SETTINGS = {"profile": "black", "known_first_party": ["lmms_eval"]}


@dataclass(frozen=True)
class Target:
    """Where an export puts things: the ``hanyi`` package of the benchmark folders and the host package they are
    imported as, the shared code's folder and package, and ``TASKS_DIR`` in its ``__init__`` (where the bench folders'
    templates sit)."""

    folders: str
    host: str
    lib_dir: str
    lib_package: str
    tasks_dir: str
    tasks_note: str = "the directory the benchmark folders sit in (lmms_eval/tasks/)"
    #: The exported page that stands for ``docs/<bench>.md`` (the metric definitions and deviations).
    page: str = "DETAILS.md"


LMMS = Target(f"{ROOT}.tasks", "lmms_eval.tasks", LIB_DIR, LIB_PACKAGE,
              "_os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))")  # fmt: skip


class ExportError(RuntimeError):
    """The source tree cannot be exported as it is; the message names the file."""


def module_path(name: str) -> str | None:
    """The source file of module ``hanyi.x.y`` (``x/y.py`` or ``x/y/__init__.py``), or None."""
    return closure.module_path(PACKAGE_DIR, name)


def exported_module(name: str, target: Target = LMMS) -> str:
    """The module an exported file imports for ``hanyi`` module ``name``."""
    rest = name.removeprefix(target.folders + ".")
    if rest != name and rest.split(".")[0] in BENCHMARKS:
        return f"{target.host}.{rest}"
    return ".".join([target.lib_package, *(RENAMED.get(p, p) for p in name.split(".")[1:])])


def lib_file(name: str, target: Target = LMMS) -> str:
    """Where module ``name`` of the shared code is written, relative to ``<out>/<target.lib_dir>``."""
    parts = exported_module(name, target).removeprefix(target.lib_package).split(".")[1:]
    if os.path.basename(module_path(name)) == "__init__.py":
        return os.path.join(*parts, "__init__.py")
    return os.path.join(*parts[:-1], parts[-1] + ".py")


#: A module or file of hanyi named in prose (docstrings, comments, YAML comments, READMEs): ``hanyi.metrics.x``,
#: ``:func:`hanyi.data.images.to_pil```, ``hanyi/tasks/cii/utils.py``, ``hanyi/tasks/unpie/*_text_*``.
_DOTTED_MENTION = re.compile(r"(?<![\w./-])hanyi((?:\.\w+)+)")
_PATH_MENTION = re.compile(r"(?<![\w./-])hanyi/((?:[\w*]+/)*[\w*]+)(\.py\b)?")


def _longest_module(parts: list[str]) -> int:
    """How many leading ``parts`` (``["hanyi", ...]``) name a module or folder of the source package; 0 if none."""
    for n in range(len(parts), 1, -1):
        if module_path(".".join(parts[:n])) or os.path.isdir(os.path.join(PACKAGE_DIR, *parts[1:n])):
            return n
    return 0


_DOC_PAGE = re.compile(r"(?:\.\./)*docs/(\w+)\.md")
#: A pointer to one of hanyi's other pages (``docs/judge.md``, ``docs/backbones.md``), which upstream does not have.
_OTHER_PAGE = (
    (re.compile(r" \(`?docs/[\w-]+\.md`?(?:, \"[^\"]*\")?\)"), ""),
    (re.compile(r",? see `{0,2}docs/[\w-]+\.md`{0,2}"), ""),
    (re.compile(r"[,;] `?docs/[\w-]+\.md`?(?=\))"), ""),
)


def native_mentions(text: str, target: Target = LMMS) -> str:
    """``text`` with each module or file of hanyi it names replaced by the exported one, as the imports are
    (:func:`exported_module`): a dotted name by the module a folder imports (an attribute after it kept), a path by
    the exported file's path from the upstream repository's root (``lmms_eval/tasks/cii/utils.py``); a benchmark's
    page ``docs/<bench>.md`` by the folder's page (:attr:`Target.page`), a pointer to another page of hanyi's dropped;
    hanyi's commands reworded (:func:`hanyi.export.naming.upstream_wording`). A maintainer reads the names of the tree
    in front of them; a name of no module is left for the leftover checks to report."""
    root = target.host.replace(".", "/")
    text = upstream_wording(text)
    text = _DOC_PAGE.sub(
        lambda m: f"{root}/{m.group(1)}/{target.page}" if m.group(1) in BENCHMARKS else m.group(0), text
    )
    for pattern, repl in _OTHER_PAGE:
        text = pattern.sub(repl, text)

    def dotted(m):
        parts = ["hanyi", *m.group(1)[1:].split(".")]
        n = _longest_module(parts)
        return ".".join([exported_module(".".join(parts[:n]), target), *parts[n:]]) if n else m.group(0)

    def path(m):
        parts = ["hanyi", *m.group(1).split("/")]
        n = _longest_module(parts)
        if not n:
            return m.group(0)
        return "/".join([exported_module(".".join(parts[:n]), target).replace(".", "/"), *parts[n:]]) + (
            m.group(2) or ""
        )

    return _DOTTED_MENTION.sub(dotted, _PATH_MENTION.sub(path, text))


# --------------------------------------------------------------------------------------------------------------
# Which files a folder needs


def folder_modules(bench: str) -> list[str]:
    """The ``.py`` files of ``hanyi/tasks/<bench>/`` that the folder's YAMLs reach, as ``hanyi.tasks.<bench>.<x>``:
    the modules of ``!function`` targets and the folder modules they import, at any depth."""
    folder = os.path.join(TASKS_DIR, bench)
    own = f"{ROOT}.tasks.{bench}"
    todo = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".yaml") or name.endswith("_yaml"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                for target in _TARGET_RE.findall(_SOURCE_RE.sub("", fh.read())):  # dataset_path is fixed
                    if not target.startswith(ROOT + ".") and "." in target:
                        todo.append(f"{own}.{target.rsplit('.', 1)[0]}")
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = module_path(name)
        if path is None:
            raise ExportError(f"{bench}: a YAML or module names {name}, which has no source file in the folder")
        seen.add(name)
        module = closure.parse_module(PACKAGE_DIR, name, path)
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ImportFrom):
                base = closure.absolute(node, name, False)
                mods = [base, *(f"{base}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            for mod in mods:
                if mod.startswith(own + ".") and module_path(mod):
                    todo.append(mod)
                elif (
                    mod.startswith(f"{ROOT}.tasks.") and mod.split(".")[2] in BENCHMARKS and mod.split(".")[2] != bench
                ):
                    raise ExportError(f"{bench}: {name} imports {mod}, another benchmark's folder")
    return sorted(seen)


#: Registries of the shared code whose entries name the benchmarks they serve (``Backbone(name, description,
#: (bench, ...), ...)``): an export keeps the entries of its benchmarks only, so a pull request for one benchmark does
#: not carry the model checks (and their scorer modules) of the others.
REGISTRIES = {f"{ROOT}.backbones": "BACKBONES"}


def registry_for(module: str, name: str, benchmarks) -> str | None:
    """The source of ``module``'s ``name = {... for b in (Entry(...), ...)}`` with only the entries whose third
    argument (a tuple of benchmark names) meets ``benchmarks``; None when every entry stays."""
    path = module_path(module)
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    lines = source.splitlines()
    for node in ast.parse(source).body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            continue
        entries = next((n.elts for n in ast.walk(node) if isinstance(n, ast.Tuple) and n.elts
                        and all(isinstance(e, ast.Call) for e in n.elts)), None)  # fmt: skip
        if not entries:
            raise ExportError(f"{path}: {name} is not a collection of entries the exporter can filter")
        drop = []
        for entry in entries:
            served = entry.args[2] if len(entry.args) > 2 else None
            if not isinstance(served, ast.Tuple):
                raise ExportError(f"{path}:{entry.lineno}: a {name} entry without its tuple of benchmarks")
            if not {ast.literal_eval(e) for e in served.elts} & set(benchmarks):
                drop.append(entry)
        if not drop:
            return None
        gone = {i for e in drop for i in range(e.lineno - 1, e.end_lineno)}
        if any(e.lineno == e.end_lineno and lines[e.lineno - 1].strip() != ast.unparse(e) + "," for e in drop):
            raise ExportError(f"{path}: each {name} entry must sit on lines of its own")
        return "\n".join(lines[i] for i in range(node.lineno - 1, node.end_lineno) if i not in gone)
    raise ExportError(f"{path}: no top-level {name}")


def overrides(dataset_paths: dict, target: Target = LMMS, benchmarks=BENCHMARKS) -> dict:
    """Generated definitions that replace a name's statements in the shared code (paths inside the export; for
    lmms-eval, its tasks' logger: ``hanyi.logs.get_logger`` is lmms-eval's ``eval_logger``, lm-eval's tasks use
    :mod:`logging` as hanyi does; the :data:`REGISTRIES` reduced to ``benchmarks``)."""
    logger = "# lmms-eval's eval_logger (loguru), as lmms-eval's tasks log\nget_logger = EvalLogger"
    registries = {}
    for module, name in REGISTRIES.items():
        text = registry_for(module, name, benchmarks)
        if text is not None:
            registries[module] = {name: text}
    return {
        **registries,
        **({f"{ROOT}.logs": {"get_logger": logger}} if target is LMMS else {}),
        ROOT: {"TASKS_DIR": f"# {target.tasks_note}\nTASKS_DIR = {target.tasks_dir}"},
        f"{ROOT}.data.sources": {
            "resolve": "# each folder's dataset_path\n"
            f"EXPORTED_DATASET_PATHS = {json.dumps(dataset_paths, ensure_ascii=False)}\n\n\n"
            "def resolve(benchmark: str) -> str:\n"
            '    """The ``dataset_path`` of this benchmark\'s task YAMLs."""\n'
            "    if benchmark not in EXPORTED_DATASET_PATHS:\n"
            "        raise DataNotFoundError(f'{benchmark} is not part of this export')\n"
            "    return EXPORTED_DATASET_PATHS[benchmark]"
        },
    }


def shared_closure(benchmarks, dataset_paths: dict, modules=None, target: Target = LMMS, extra=None) -> closure.Closure:
    """The statements of ``hanyi`` that the exported folders reach (:class:`hanyi.export.closure.Closure`);
    ``modules``: the folder modules, parsed (default: each benchmark's :func:`folder_modules`)."""
    found = closure.Closure(PACKAGE_DIR, {**overrides(dataset_paths, target, benchmarks), **(extra or {})},
                            folders=[f"{target.folders}.{b}" for b in BENCHMARKS])  # fmt: skip
    if modules is None:
        modules = [closure.parse_module(PACKAGE_DIR, n, module_path(n)) for b in benchmarks for n in folder_modules(b)]
    for module in modules:
        found.add_module_uses(module)
    try:
        found.run()
    except LookupError as exc:
        raise ExportError(str(exc)) from None
    return found


def needed_modules(bench: str) -> list[str]:
    """The ``hanyi`` modules outside ``hanyi/tasks/<bench>/`` that the folder's code reaches, sorted."""
    return sorted(shared_closure([bench], {}).kept)


# --------------------------------------------------------------------------------------------------------------
# Rewriting and formatting


def rewrite_imports(source: str, filename: str, target: Target = LMMS) -> str:
    """``from hanyi... import`` / ``import hanyi... as x`` -> the exported modules; refuses other uses of the name."""

    def sub(m):
        if m.group(2) == "import":
            line = source[m.start() :].split("\n", 1)[0]
            if " as " not in line:
                raise ExportError(f"{filename}: `{line.strip()}` binds the name 'hanyi'; use `from ... import`")
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{exported_module(m.group(4), target)}"

    out = _IMPORT_RE.sub(sub, source)
    for node in ast.walk(ast.parse(out, filename=filename)):
        bad = isinstance(node, ast.Name) and node.id == ROOT
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            first = node.args[0] if node.args else None
            text = ast.unparse(first) if first is not None else ""
            bad = bad or text.strip("'\"f").startswith(ROOT)
        if bad:
            raise ExportError(f"{filename}:{node.lineno}: uses the name 'hanyi' in a way the exporter cannot rewrite")
    return out


def rewrite_source(source: str, filename: str, target: Target = LMMS) -> str:
    """The code of a ``.py`` file as exported: imports renamed (:func:`rewrite_imports`) and settings read where
    upstream reads them (:func:`hanyi.export.settings_map.rewrite`); docstrings and format aside."""
    try:
        text = settings_map.rewrite(rewrite_imports(source, filename, target), filename, target.lib_package)
    except settings_map.SettingsRewriteError as exc:
        raise ExportError(str(exc)) from None
    host = target.host.split(".")[0]  # the host's cache folder, as lmms-eval's tasks use ~/.cache/lmms_eval
    text = text.replace('".cache", "hanyi"', f'".cache", "{host}"').replace("~/.cache/hanyi", f"~/.cache/{host}")
    text = text.replace("-hanyi-{", f"-{host}-{{")  # files it names in a cache folder: f"cache-hanyi-{sha}.arrow"
    text = re.sub(r'get_logger\((["\'])hanyi(?=[."\'])', rf"get_logger(\1{target.host}", text)  # the host's loggers
    text = settings_map.reword(_MESSAGE_PREFIX.sub(r"\1", text))  # messages say what, not "hanyi cii: ..."
    return native_mentions(text, target)  # after the advice naming hanyi's modules is reworded


#: ``"hanyi: "``, ``"hanyi cii: "``, ``"hanyi punrebus judge: "``, ``"hanyi judge ("`` opening a message; not advice
#: naming a hanyi command (``"hanyi setup (or set ...)"``), which :data:`settings_map.MESSAGES` rewords whole.
_MESSAGE_PREFIX = re.compile(
    r"""((?:\b[fr])?["'])hanyi(?::\s| (?!setup\b|prepare\b)(?=[a-z_]+(?: [a-z_]+)?(?::| \()))"""
)


#: The exported shared package's docstring.
LIB_DOC = (
    "Code the task folders of the cultural and implied-meaning VLM benchmarks share: metrics, data checks, prompts."
)


def with_docstring(source: str, doc: str) -> str:
    """``source`` with its module docstring replaced by ``doc`` (added when it has none)."""
    body = ast.parse(source).body
    lines = source.split("\n")
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        lines[first.lineno - 1 : first.end_lineno] = [f'"""{doc}"""']
        return "\n".join(lines)
    return f'"""{doc}"""\n' + source


def exported_text(source: str, filename: str, target: Target = LMMS) -> str:
    """A ``.py`` file as written: :func:`rewrite_source`, docstrings cut, ``HANYI_*`` names renamed, formatted."""
    try:
        text = rewrite_source(source, filename, target)
        text = settings_map.rename(without_doc_comments(short_docstrings(text)), filename)
    except settings_map.SettingsRewriteError as exc:
        raise ExportError(str(exc)) from None
    return formatted(text, filename)


def short_docstrings(source: str, width: int = BLACK_LINE_LENGTH) -> str:
    """Each docstring cut to its first paragraph (the summary), re-wrapped at upstream's line length; the rest
    (examples, derivations, history) stays in hanyi's source and docs, so the exported code stays small. A summary
    with a doctest, a list or a literal block keeps its lines."""
    tree = ast.parse(source)
    lines = source.splitlines()
    edits = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not body:
            continue
        doc = body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            continue
        first, last = doc.lineno - 1, doc.end_lineno - 1
        opening = lines[first]
        indent = opening[: len(opening) - len(opening.lstrip())]
        prefix = opening.lstrip()[: len(opening.lstrip()) - len(opening.lstrip().lstrip("rRuU"))]
        quote = opening.lstrip()[len(prefix) : len(prefix) + 3]
        if quote not in ('"""', "'''") or doc.col_offset != len(indent):
            continue
        blank = next((i for i in range(first + 1, last) if not lines[i].strip()), None)
        end = blank if blank is not None else last + 1
        parts = [opening.strip()[len(prefix) + 3 :]] + [line.strip() for line in lines[first + 1 : end]]
        if any(p.startswith((">>>", "* ", "- ", "|", "..")) or p.endswith("::") for p in parts):
            if blank is not None:
                edits.append((first, last, lines[first : blank - 1] + [lines[blank - 1].rstrip() + quote]))
            continue
        text = without_history(" ".join(p for p in parts if p))
        text = text[: -len(quote)].rstrip() if text.endswith(quote) else text
        wrapped = textwrap.wrap(prefix + quote + text + quote, width=width - len(indent), break_long_words=False,
                                break_on_hyphens=False)  # fmt: skip
        edits.append((first, last, [indent + w for w in wrapped]))
    for first, last, new in sorted(edits, reverse=True):
        lines[first : last + 1] = new
    return "\n".join(lines) + "\n"


def without_doc_comments(source: str) -> str:
    """The source without its ``#:`` attribute doc-comments (whole-line comments only; like the docstrings' detail,
    they stay in hanyi's source and docs)."""
    import io
    import tokenize

    drop = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith("#:") and tok.line.strip() == tok.string.strip():
            drop.add(tok.start[0] - 1)
    lines = source.splitlines(keepends=True)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):  # hanyi's history, not upstream's
        if tok.type == tokenize.COMMENT and ISSUE_REF.search(tok.string):
            row, col = tok.start[0] - 1, tok.start[1]
            lines[row] = lines[row][:col] + without_history(lines[row][col:])
    return "".join(line for i, line in enumerate(lines) if i not in drop)


#: The formatters of the upstream pre-commit configs (lmms-eval: black and isort at these versions; lm-eval: ruff)
#: and how to get them without torch: the ``export`` extra, with hanyi's constraints.
FORMATTER_PINS = {"black": "25.1.0", "isort": "6.0.1"}
INSTALL_HINT = "pip install -c constraints.txt 'hanyi[export]'"


def formatters():
    """``(black, isort)`` at upstream's pins (ruff beside them), or :class:`ExportError` saying how to install them."""
    import importlib.util

    try:
        import black
        import isort
    except ImportError:
        black = isort = None
    have = {"black": getattr(black, "__version__", None), "isort": getattr(isort, "__version__", None)}
    wrong = [f"{n} {have[n] or 'missing'} (upstream's pre-commit pins {v})" for n, v in FORMATTER_PINS.items()
             if have[n] != v]  # fmt: skip
    if importlib.util.find_spec("ruff") is None:
        wrong.append("ruff missing (lm-eval's pre-commit formats with it)")
    if wrong:
        raise ExportError(f"formatting the export as upstream does needs the formatters at its pins: "
                          f"{'; '.join(wrong)}. Install them: {INSTALL_HINT} (nothing was written)")  # fmt: skip
    return black, isort


def formatted(source: str, filename: str) -> str:
    """``source`` as upstream's pre-commit leaves it: black (line length 240) and isort (profile black)."""
    black, isort = formatters()
    try:
        # hanyi's own formatter wraps at 120 and leaves trailing commas that would keep black from joining lines at
        # 240: join first (black, magic trailing commas off), then isort, then black as upstream runs it.
        text = black.format_str(source, mode=black.Mode(line_length=BLACK_LINE_LENGTH, magic_trailing_comma=False))
        text = isort.code(text, **ISORT_SETTINGS)
        return black.format_str(text, mode=black.Mode(line_length=BLACK_LINE_LENGTH))
    except Exception as exc:  # noqa: BLE001  (a parse error names the file)
        raise ExportError(f"{filename}: cannot be formatted: {exc}") from None


# --------------------------------------------------------------------------------------------------------------
# Data source


#: ``dataset_path`` of a benchmark that is not on the hub, in an export without ``--dataset-repo`` for it: a hub id to
#: replace (never a path of the exporting machine); the README says how to build and upload the dataset.
PLACEHOLDER = "ORG/{bench}"


def dataset_path(bench: str, data_root: str, out_bench: str, repos: dict | None = None) -> str:
    """``repos[bench]`` (``--dataset-repo``) first; ``hub``: the hub id, else :data:`PLACEHOLDER`; ``sample``: the copy
    beside the tasks; else ``<dir>/<bench>``, or the hub id where the benchmark is not prepared there."""
    from hanyi.data import sources

    hub_id = sources.SOURCES[bench].hub_id
    if (repos or {}).get(bench):
        return repos[bench]
    if data_root == "sample":
        return os.path.join(os.path.abspath(out_bench), "sample")
    if data_root == "hub":
        return hub_id or PLACEHOLDER.format(bench=bench)
    prepared = os.path.join(os.path.abspath(os.path.expanduser(data_root)), bench)
    if hub_id and not os.path.isfile(os.path.join(prepared, sources.MANIFEST)):
        return hub_id
    return prepared


def is_placeholder(bench: str, path_value: str) -> bool:
    """Whether ``path_value`` is :data:`PLACEHOLDER` (no hub copy of the dataset to load)."""
    return path_value == PLACEHOLDER.format(bench=bench)


def placeholder_module(bench: str, path_value: str, host: str = "lmms_eval") -> str:
    """The folder's ``dataset.py`` where ``dataset_path`` is a placeholder: the YAMLs keep ``dataset_path: !function
    dataset.path``, so a task stops at load with one line saying what to do, instead of failing inside ``datasets``
    on a hub id that does not exist."""
    from hanyi.data.hub_card import RELEASES

    release = RELEASES[bench]
    where = f"lmms_eval/tasks/{bench}/README.md" if host == "lmms_eval" else f"lm_eval/tasks/{bench}/README.md"
    if release.redistribute:
        todo = (f"build the dataset folder as {where} (Data access) says, upload it as a dataset repository and set "
                f"dataset_path in the {bench} YAMLs to its hub id (or to the local folder)")  # fmt: skip
    else:
        todo = (f"its licence forbids hosting a converted copy: request the release ({release.official}), build a "
                f"local copy as {where} (Data access) says and set dataset_path in the {bench} YAMLs to it")  # fmt: skip
    message = f"{bench}: dataset_path is the placeholder {path_value}, which does not exist; {todo}."
    logger = ("from loguru import logger\n" if host == "lmms_eval" else
              "import logging\n\nlogger = logging.getLogger(__name__)\n")  # fmt: skip
    return (f'"""Where {bench}\'s data comes from (``dataset_path: !function dataset.path``): no hub copy yet, so '
            'loading a task stops here and says what to do."""\n\n'
            f"{logger}\nMESSAGE = {json.dumps(message, ensure_ascii=False)}\n"
            "# logged on its own line: the harness reports the error below as a failed import\nlogger.error(MESSAGE)\n"
            "raise FileNotFoundError(MESSAGE)\n")  # fmt: skip


def rewrite_yaml(text: str, bench: str, path_value: str, filename: str, target: Target = LMMS) -> str:
    def source(m):
        if m.group(1) not in (None, bench):
            raise ExportError(f"{filename}: dataset_path names another benchmark ({m.group(1)})")
        if is_placeholder(bench, path_value):  # the folder's dataset.py (placeholder_module) says what to do
            return "!function dataset.path"
        return json.dumps(path_value, ensure_ascii=False)

    out = _SOURCE_RE.sub(source, text)
    other = _FUNCTION_RE.search(out)
    if other:
        raise ExportError(f"{filename}: '!function {other.group(1)}' points into hanyi; move it into the folder glue")
    try:
        return native_mentions(settings_map.rename(out, filename), target)
    except settings_map.SettingsRewriteError as exc:
        raise ExportError(str(exc)) from None


# --------------------------------------------------------------------------------------------------------------
# Export


#: What an export wrote, kept in ``--out`` beside the folders and never copied upstream: an exported file names no
#: exporter (no marker line), so a re-export knows its own folders from this list.
MANIFEST = ".hanyi-export.json"
#: First lines of the files of older exports, which marked them in place; still recognised as ours.
MARKER = f"<!-- {GENERATED}; re-export instead of editing -->"
PR_MARKER = f"<!-- {GENERATED}: PULL_REQUEST.md; re-export instead of editing -->"


def _manifest(out: str) -> set[str]:
    try:
        with open(os.path.join(out, MANIFEST), encoding="utf-8") as f:
            return set(json.load(f).get("written") or [])
    except (OSError, ValueError, AttributeError):
        return set()


def record(out: str, paths) -> None:
    """Add ``paths`` (relative to ``out``) to ``out``'s :data:`MANIFEST`."""
    written = sorted(_manifest(out) | {p.replace(os.sep, "/") for p in paths})
    with open(os.path.join(out, MANIFEST), "w", encoding="utf-8") as f:
        json.dump({"written": written}, f, indent=1)
        f.write("\n")


def _owned(path: str, legacy_file: str = "", legacy_marker: str = "") -> bool:
    """True for a path an earlier export wrote: listed in the manifest of its parent or grandparent (the shared
    ``_task_utils/cultural_utils``), or, from an older export, starting with its marker line."""
    path = os.path.abspath(path)
    for out in (os.path.dirname(path), os.path.dirname(os.path.dirname(path))):
        if os.path.relpath(path, out).replace(os.sep, "/") in _manifest(out):
            return True
    try:
        with open(os.path.join(path, legacy_file) if legacy_file else path, encoding="utf-8") as f:
            return f.readline().strip() == legacy_marker
    except (OSError, UnicodeDecodeError):
        return False


def _is_export(folder: str) -> bool:
    """True for a folder an earlier export wrote."""
    return os.path.isdir(folder) and _owned(folder, "README.md", MARKER)


def _is_generated_pr(path: str) -> bool:
    return _owned(path, "", PR_MARKER)


def preflight(out: str, benchmarks, force: bool = False) -> None:
    """Check every path the export would write before anything is written; raises :class:`ExportError` (one line).

    Refused: ``out`` that is a file (or a symlink); a ``<out>/<bench>`` that is a symlink, not a folder, or a folder
    no earlier export wrote; an earlier exported ``<out>/<other bench>`` left out of ``benchmarks`` (the shared code
    would no longer serve it); a ``_task_utils/cultural_utils`` hanyi did not write; a ``PULL_REQUEST.md`` that is a
    symlink, or that hanyi did not write (unless ``force``).
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
    others = [b for b in BENCHMARKS if b not in benchmarks and _is_export(os.path.join(out, b))]
    if others:
        raise ExportError(f"{out} holds earlier exported folders ({', '.join(others)}) that share "
                          f"{LIB_DIR}/ with these; export them together (--benchmarks ... {' '.join(others)}) or "
                          "remove them (nothing was written)")  # fmt: skip
    lib = os.path.join(out, LIB_DIR)
    if os.path.islink(lib) or (os.path.exists(lib) and not _is_generated_lib(lib)):
        raise ExportError(f"{lib} exists and was not written by hanyi export; refusing to replace it (nothing was "
                          "written)")  # fmt: skip
    pr = os.path.join(out, "PULL_REQUEST.md")
    if os.path.islink(pr):
        raise ExportError(f"{pr} is a symbolic link; refusing to write through it (nothing was written)")
    if os.path.exists(pr) and not force and not _is_generated_pr(pr):
        raise ExportError(f"{pr} is yours (hanyi did not write it); keeping it. Use --force to replace it (nothing "
                          "was written)")  # fmt: skip


def _is_generated_lib(folder: str) -> bool:
    return os.path.isdir(folder) and _owned(folder, "__init__.py", LIB_MARKER)


def export_benchmark(out: str, bench: str, data_root: str, repos: dict | None = None) -> dict:
    """Write ``<out>/<bench>/``: YAMLs, resources, the folder modules its YAMLs reach (formatted), the README."""
    src = os.path.join(TASKS_DIR, bench)
    dst = os.path.join(out, bench)
    if os.path.exists(dst):
        if os.path.islink(dst) or not _is_export(dst):
            raise ExportError(f"{dst} exists and was not written by hanyi export; refusing to replace it")
        shutil.rmtree(dst)
    path_value = dataset_path(bench, data_root, dst, repos)
    modules = {os.path.relpath(module_path(m), src) for m in folder_modules(bench)}
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in sorted(files):
            relf = os.path.normpath(os.path.join(rel, f))
            if (rel == "." and f in _SKIP_FILES) or f.endswith(".pyc") or (f.endswith(".py") and relf not in modules):
                continue
            s, d = os.path.join(root, f), os.path.join(dst, rel, f)
            if f.endswith(".py"):
                with open(s, encoding="utf-8") as fh:
                    text = exported_text(fh.read(), s)
            elif f.endswith(".yaml") or f.endswith("_yaml"):
                with open(s, encoding="utf-8") as fh:
                    text = without_history(rewrite_yaml(fh.read(), bench, path_value, s))
            else:
                shutil.copyfile(s, d)
                continue
            with open(d, "w", encoding="utf-8") as fh:
                fh.write(text)
    if is_placeholder(bench, path_value):
        with open(os.path.join(dst, "dataset.py"), "w", encoding="utf-8") as fh:
            fh.write(formatted(placeholder_module(bench, path_value), f"{bench}/dataset.py"))
    if data_root == "sample" and not (repos or {}).get(bench):  # for tests; not for the PR (CII's data/ is ignored)
        shutil.copytree(os.path.join(PACKAGE_DIR, "data", "sample", bench), os.path.join(dst, "sample"))
    return {"folder": dst, "dataset_path": path_value}


def export_shared(out: str, benchmarks, dataset_paths: dict, target: Target = LMMS, **closure_args) -> list[str]:
    """Write ``<out>/<target.lib_dir>/``: the statements of ``hanyi`` the folders reach; the module names."""
    found = shared_closure(benchmarks, dataset_paths, target=target, **closure_args)
    dst = os.path.join(out, target.lib_dir)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    for mod in sorted(found.kept):
        s = module_path(mod)
        d = os.path.join(dst, lib_file(mod, target))
        os.makedirs(os.path.dirname(d), exist_ok=True)
        source = found.source_of(mod)
        if mod == ROOT:  # the package's docstring is the project's; exported, the package is the folders' shared code
            source = with_docstring(source, LIB_DOC)
        text = exported_text(source, s, target)
        if not text.strip():  # an empty package file: upstream's end-of-file-fixer empties a lone newline
            text = ""
        with open(d, "w", encoding="utf-8") as fh:
            fh.write(text)
    settings = settings_map.generated_module().replace(
        LMMS.tasks_dir.replace("_os.", "os."), target.tasks_dir.replace("_os.", "os.")
    )
    with open(os.path.join(dst, settings_map.MODULE + ".py"), "w", encoding="utf-8") as fh:
        fh.write(formatted(settings, settings_map.MODULE))
    names = [exported_module(m, target) for m in sorted(found.kept)]
    return names + [f"{target.lib_package}.{settings_map.MODULE}"]


def export(out: str, benchmarks=BENCHMARKS, data_root: str = "hub", force: bool = False, repos=None) -> dict:
    """Write ``<out>/<bench>/`` for each benchmark, ``<out>/_task_utils/cultural_utils/`` and ``<out>/PULL_REQUEST.md``;
    returns what was written. Every path is checked first (:func:`preflight`), so a refusal leaves ``out`` as it was."""
    from hanyi.export import pr, readme

    preflight(out, benchmarks, force)
    for bench in benchmarks:  # a README without its paper is refused before anything is written
        try:
            readme._doc(bench)
        except readme.IncompleteReadme as exc:
            raise ExportError(str(exc)) from exc
    formatters()
    os.makedirs(out, exist_ok=True)
    written = {bench: export_benchmark(out, bench, data_root, repos) for bench in benchmarks}
    shared = export_shared(out, benchmarks, {b: w["dataset_path"] for b, w in written.items()})
    for bench, entry in written.items():
        with open(os.path.join(entry["folder"], "README.md"), "w", encoding="utf-8") as fh:
            text = readme.folder_readme(bench, entry["folder"], entry["dataset_path"])
            fh.write(native_mentions(settings_map.rename(text, f"{bench}/README.md")))
        with open(os.path.join(entry["folder"], readme.DETAILS), "w", encoding="utf-8") as fh:
            text = settings_map.rename(readme.folder_details(bench, entry["folder"]), f"{bench}/{readme.DETAILS}")
            fh.write(native_mentions(text))
    with open(os.path.join(out, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
        fh.write(pr.pull_request(out, list(benchmarks), data_root, shared))
    record(out, [*benchmarks, LIB_DIR, "PULL_REQUEST.md"])
    return {**written, "shared": {"folder": os.path.join(out, LIB_DIR), "modules": shared}}


def _tree(root: str) -> set[str]:
    found = set()
    for r, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
        found.update(os.path.relpath(os.path.join(r, f), root) for f in files if not f.endswith(".pyc"))
    return found


def check_export(out: str, benchmarks=BENCHMARKS, data_root: str = "hub", repos=None) -> list[str]:
    """Differences between ``out`` and a fresh export of the current source (empty when they match)."""
    drift = []
    with tempfile.TemporaryDirectory(prefix="hanyi-export-check-") as tmp:
        export(tmp, benchmarks, data_root, repos=repos)
        for bench in [*benchmarks, LIB_DIR, None]:
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
