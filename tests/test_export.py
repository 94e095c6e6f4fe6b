"""``hanyi export lmms-eval``: folders that import nothing from hanyi, stay in step with the source, and score alike.

The equivalence test (slow) runs lmms-eval's own ``dummy`` model over the five benchmark groups twice, once through
hanyi's tasks in this process and once through the exported folders in a subprocess where ``hanyi`` is a shadow
package that raises on import and the start-up hook is off, and requires identical results. The exported folders sit
in ``lmms_eval/tasks/`` once merged; the subprocesses stand for that by adding the export directory to
``lmms_eval.tasks.__path__`` (so ``lmms_eval.tasks._task_utils.cultural_utils`` and ``lmms_eval.tasks.<bench>`` import).
"""

from __future__ import annotations

import ast
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import pytest

from hanyi import BENCHMARKS, TASKS_DIR, floats
from hanyi.export import lmms_eval_tasks as lt
from hanyi.export import settings_map

from .conftest import DEMO_GROUPS

#: Beyond the five groups: tasks whose glue reaches further (5-shot exemplars through the vendored data source,
#: circular expansion, likelihood ranking, the text-only LM mode, VULCA ablations).
EXTRA_TASKS = ("punrebus_matching_5shot", "cii_circular", "cvlue_ranking", "unpie_text", "vulca_ablations")
SHADOW_INIT = 'raise ImportError("hanyi is blocked: an exported task folder tried to import it")\n'


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("export"))
    lt.export(out, BENCHMARKS, data_root="sample")
    return out


def _shadow_env(tmp: str) -> dict:
    shadow = os.path.join(tmp, "shadow")
    os.makedirs(os.path.join(shadow, "hanyi"), exist_ok=True)
    with open(os.path.join(shadow, "hanyi", "__init__.py"), "w") as f:
        f.write(SHADOW_INIT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    env.update(PYTHONPATH=shadow, HANYI_NO_AUTOHOOK="1")
    return env


def _imports(path: str) -> set[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add(node.module or "")
    return names


def test_export_writes_five_folders_without_hanyi(exported):
    for bench in BENCHMARKS:
        folder = os.path.join(exported, bench)
        assert os.path.isfile(os.path.join(folder, "utils.py")), bench
        assert os.path.isdir(os.path.join(folder, "templates")), bench
        assert os.path.isfile(os.path.join(folder, "sample", "README.md")), bench
        for root, _, files in os.walk(folder):
            for f in files:
                path = os.path.join(root, f)
                if f.endswith(".py"):
                    bad = {n for n in _imports(path) if n == "hanyi" or n.startswith("hanyi.")}
                    assert not bad, f"{path} imports {bad}"
                elif f.endswith(".yaml") or f.endswith("_yaml"):
                    text = open(path, encoding="utf-8").read()
                    assert "!function hanyi." not in text, path
        with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        with open(os.path.join(folder, "DETAILS.md"), encoding="utf-8") as f:
            details = f.read()
        assert "```bibtex\n@" in readme and "](DETAILS.md)" in readme, bench
        for heading in ("## Groups and tasks", "### Metric keys", "## Data access"):
            assert heading in readme, (bench, heading)
        for heading in ("## Task variants", "## Metrics: definitions", "## Deviations"):
            assert heading in details, (bench, heading)
        assert "- [x] Is the task an existing benchmark in the literature?" in readme


def test_readmes_are_of_upstreams_size_and_the_pull_request_lists_what_runs(exported):
    """READMEs were 12-20 KB (upstream's largest task README is 7.7 KB); PULL_REQUEST.md rendered
    "`cii/`: groups " with nothing after it (CII runs as a tag) and listed host patches that no run needs (every group
    runs on unpatched lmms-eval: the equivalence run below)."""
    from hanyi.export import readme

    for bench in BENCHMARKS:
        size = os.path.getsize(os.path.join(exported, bench, "README.md"))
        assert size <= 8192, (bench, size)
    with open(os.path.join(exported, "PULL_REQUEST.md"), encoding="utf-8") as f:
        pr = f.read()
    assert "- `cii/`: tags `cii`, `cii_prompts`" in pr
    for line in pr.splitlines():
        assert not line.endswith(": groups ") and not line.endswith(": "), line
    assert readme.NEEDED_PATCHES == () and not re.search(r"`\d{4}-", pr)
    assert "None: every group runs on unpatched lmms-eval" in pr


def _strings(path: str) -> list[str]:
    """The string constants of a module, docstrings left out."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]  # fmt: skip


def test_exported_messages_name_what_an_upstream_user_does(exported):
    """exported messages told upstream users to run ``hanyi setup`` / ``hanyi prepare``; they name a
    model id, NLTK's downloader or the dataset instead. And a judge that is not configured names, in the start-up
    line, no benchmark's metrics (a punrebus-only run listed those of unpie, cii and vulca): each task's own warning
    names its own."""
    from hanyi import backbones

    found = []
    for root, _, files in os.walk(exported):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(root, f)
                found += [(path, s) for s in _strings(path) if re.search(r"hanyi (setup|prepare)", s)]
    assert found == []
    with open(os.path.join(exported, lt.LIB_DIR, "backbones.py"), encoding="utf-8") as f:
        text = f.read()
    assert "huggingface-cli download BAAI/bge-large-zh-v1.5 (or set vulca_embed_model to a local copy)" in text
    judge = backbones.BACKBONES["judge"]
    line = backbones.Resolution(
        "judge", False, "none", "no judge configured", "x", dict(judge.fallbacks)
    ).fallback_line()
    assert not [b for b in BENCHMARKS if b in line], line
    wordnet = backbones.Resolution("wordnet", False, "none", "-", "x", dict(backbones.BACKBONES["wordnet"].fallbacks))
    assert "meteor -> meteor_exact_stem" in wordnet.fallback_line()  # one benchmark's keys: still named


UPSTREAM_IGNORE = os.path.join(os.path.dirname(TASKS_DIR), os.pardir, "docs", "upstream", "lmms-eval.gitignore")


def ignored_by_upstream(tree: str, ignore_file: str, prefix: str) -> tuple[list[str], list[str]]:
    """``(files, ignored)``: the files of ``tree`` (``__pycache__`` aside) and those that git's own matching ignores
    when ``tree`` is copied to ``prefix`` of a repository whose ``.gitignore`` is ``ignore_file``."""
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = os.path.join(os.path.dirname(tree.rstrip(os.sep)), "upstream-repo")
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(tree, os.path.join(repo, prefix), ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ignore_file, os.path.join(repo, ".gitignore"))
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args) -> list[str]:
        proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
        return sorted(line for line in proc.stdout.splitlines() if line.startswith(prefix))

    git("init", "-q")
    everything = git("ls-files", "--others")
    ignored = git("ls-files", "--others", "--ignored", "--exclude-standard")
    return everything, ignored


@pytest.fixture(scope="module")
def exported_hub(tmp_path_factory) -> str:
    """The export for a pull request: hub mode (no sample copied), one benchmark's hub id given."""
    out = str(tmp_path_factory.mktemp("hub") / "export")
    lt.export(out, BENCHMARKS, data_root="hub", repos={"vulca": "my-org/VULCA"})
    return out


def test_git_add_stages_every_exported_file(exported_hub):
    """upstream's ``.gitignore`` has ``data/``, so ``git add`` left ``cultural_utils/data/`` (12 files
    that every folder imports) out of the pull request. Git's own matching, with upstream's ignore rules (a dated copy
    in ``docs/upstream/lmms-eval.gitignore``), on the export copied into ``lmms_eval/tasks/``: nothing is ignored.
    (``--data-root sample`` copies the samples for local tests; CII's keeps the hub's ``data/`` layout its YAML
    globs, so a sample export is not one to commit.)"""
    files, ignored = ignored_by_upstream(exported_hub, UPSTREAM_IGNORE, "lmms_eval/tasks/")
    assert len(files) > 100 and any(f.endswith("/sources.py") for f in files)
    assert ignored == []


def test_export_holds_no_path_of_the_exporting_machine(exported_hub):
    """in hub mode the ``dataset_path`` of punrebus, cvlue and vulca was the exporter's own
    ``~/.cache/hanyi/data/<bench>``, expanded. The export for a pull request (hub mode) holds neither the home
    directory, the temporary directory, the user name nor the output directory; ``--dataset-repo`` sets a hub id."""
    import getpass
    import tempfile

    out = pathlib.Path(exported_hub)
    home, user = os.path.expanduser("~"), getpass.getuser()
    needles = {home, os.path.realpath(home), tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), str(out)}
    needles = {n for n in needles if len(n) > 1}
    checked = 0
    for path in sorted(out.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            text = path.read_bytes().decode("utf-8", errors="replace")
            assert not [n for n in needles if n in text], (path, [n for n in needles if n in text])
            assert not re.search(rf"[/\\]{re.escape(user)}(?![\w.-])", text), (path, user)  # as a path part
            checked += 1
    assert checked > 200
    paths = {b: lt.dataset_path(b, "hub", str(out / b), {"vulca": "my-org/VULCA"}) for b in BENCHMARKS}
    assert paths == {"punrebus": "ORG/punrebus", "cvlue": "ORG/cvlue", "cii": "m-a-p/CII-Bench",
                     "unpie": "jiwan-chung/VisualPun_UNPIE", "vulca": "my-org/VULCA",
                     "vulca_bench": "harryHURRY/vulca-bench"}  # fmt: skip
    assert '"my-org/VULCA"' in (out / "vulca" / "_default_template_yaml").read_text()


_HANYI_PAGES = sorted(re.escape(n[:-3]) for n in os.listdir(os.path.join(os.path.dirname(TASKS_DIR), "..", "docs"))
                      if n.endswith(".md"))  # fmt: skip
#: What of hanyi a maintainer would find in a file that lands in the upstream tree: the name itself (a module path,
#: a command, a thread name, "hanyi's"), a pointer to one of hanyi's pages, a ticket number.
_LEFTOVER = re.compile(r"(?i)hanyi|(?<![\w/.])docs/(?:" + "|".join(_HANYI_PAGES) + r")\.md|\bissues? \d+|\(#\d+\)")
#: The description and the manifest sit beside the folders, never in the upstream tree: they may name the source.
_BESIDE = ("PULL_REQUEST.md", lt.MANIFEST)


def _upstream_files(out: str):
    for root, dirs, files in os.walk(out):
        dirs[:] = sorted(d for d in dirs if d not in ("sample", "__pycache__"))
        for f in sorted(files):
            if f not in _BESIDE:
                yield os.path.join(root, f)


def _dangling(out: str, path: str, text: str, host: str) -> list[str]:
    """Module and file names of the host tree that ``text`` mentions and the export does not hold (a logger's name
    aside): a reworded mention must point at what the pull request adds, not at a file hanyi kept."""
    prefix = host.replace(".", "/")
    pattern = re.compile(rf"(?<![\w./])(?<!getLogger\(\")(?<!get_logger\(\"){re.escape(host)}((?:\.\w+)+)"
                         rf"|(?<![\w./]){re.escape(prefix)}/((?:\w+/)*\w+(?:\.\w+)?)")  # fmt: skip
    bad = []
    for m in pattern.finditer(text):
        parts = m.group(1)[1:].split(".") if m.group(1) else m.group(2).removesuffix(".py").split("/")
        if m.group(2) and not m.group(2).endswith(".py") and "." in parts[-1]:
            ok = os.path.exists(os.path.join(out, *parts))  # README.md, a YAML, a template
        else:
            n = next((n for n in range(len(parts), 0, -1) if os.path.exists(os.path.join(out, *parts[:n]) + ".py")
                      or os.path.isdir(os.path.join(out, *parts[:n]))), 0)  # fmt: skip
            base = os.path.join(out, *parts[:n])
            module = base + ".py" if os.path.isfile(base + ".py") else os.path.join(base, "__init__.py")
            rest = parts[n:]  # an attribute of the module: defined there
            ok = n > 0 and (not rest or (os.path.isfile(module) and len(rest) <= 2 and re.search(
                rf"^\s*(?:def |class |async def )?{rest[0]}\b", open(module, encoding="utf-8").read(), re.M)))  # fmt: skip
        if not ok:
            bad.append(f"{os.path.relpath(path, out)}: {m.group(0)}")
    return bad


def hanyi_leftovers(out: str, host: str) -> list[str]:
    """Each line of a file ``out`` would add to the upstream tree that names hanyi, a page of hanyi's docs or a
    ticket, and each mention of a module or file the export does not hold."""
    found = []
    for path in _upstream_files(out):
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for no, line in enumerate(text.splitlines(), 1):
            if _LEFTOVER.search(line):
                found.append(f"{os.path.relpath(path, out)}:{no}: {line.strip()[:160]}")
        found += _dangling(out, path, text, host)
    return found


def test_no_exported_file_names_hanyi(exported_hub):
    """A maintainer reads the pull request as their own tree's code: no file that lands in ``lmms_eval/tasks/``
    names hanyi (its modules, commands, thread names, User-Agent, "hanyi's"), its pages or its tickets, and every
    module or file a comment names is one the export holds. ``PULL_REQUEST.md`` beside the folders may name the source.
    Found 279 lines of hanyi in the two exports before they were reworded."""
    found = hanyi_leftovers(exported_hub, "lmms_eval.tasks")
    assert not found, f"{len(found)} leftovers, the first:\n" + "\n".join(found[:25])


def test_export_reads_no_hanyi_variable(exported):
    """no ``HANYI_`` name anywhere in the exported code, YAMLs or READMEs; every ``os.environ`` read
    goes through the generated ``task_settings.environ``; each hanyi setting the code reads has a source."""
    from hanyi.settings import CHECKS

    for root, _, files in os.walk(exported):
        for f in files:
            if f.endswith((".py", ".yaml", "_yaml", ".md", ".jinja")):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    text = fh.read()
                assert "HANYI_" not in text, os.path.join(root, f)
                if f.endswith(".py") and f != settings_map.MODULE + ".py":  # the one place that reads os.environ
                    assert "os.environ" not in text and "os.getenv" not in text, os.path.join(root, f)
    assert set(CHECKS) <= set(settings_map.SETTINGS), set(CHECKS) - set(settings_map.SETTINGS)
    with pytest.raises(lt.ExportError, match="HANYI_NEW_THING has no source"):
        lt.exported_text('X = "HANYI_NEW_THING"\n', "new.py")
    with pytest.raises(lt.ExportError, match="writes os.environ"):
        lt.exported_text('import os\nos.environ["A"] = "1"\n', "new.py")


def test_exported_metric_keys_and_tasks_match_the_source(exported):
    """Same task names, same metric_list (keys, aggregations, directions) as hanyi's YAMLs."""
    from hanyi.export.readme import _index

    for bench in BENCHMARKS:
        source, export = _index(os.path.join(TASKS_DIR, bench)), _index(os.path.join(exported, bench))
        assert sorted(source) == sorted(export), bench
        for name, entry in source.items():
            if entry["type"] == "task":
                assert entry["config"].get("metric_list") == export[name]["config"].get("metric_list"), name
            else:
                assert entry["tasks"] == export[name]["tasks"], name


def _definitions(source: str) -> dict:
    """``{name: ast dump}`` of the top-level functions and classes of ``source``, docstrings left out."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for sub in ast.walk(node):
                body = getattr(sub, "body", None)
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body:
                    if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                        sub.body = body[1:] or [ast.Pass()]
            out[node.name] = ast.dump(node, include_attributes=False)
    return out


def _sources(source: str) -> dict:
    """``{name: source text}`` of the top-level functions and classes of ``source``, decorators included."""
    lines = source.splitlines()
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out[node.name] = "\n".join(lines[first - 1 : node.end_lineno]) + "\n"
    return out


def test_shared_code_is_its_source_with_imports_renamed(exported):
    """Drift check by content: each function and class of the shared library is its hanyi source's (imports
    renamed, settings read from their upstream sources, docstrings shortened, formatting aside); the generated
    definitions are the only others."""
    lib = os.path.join(exported, lt.LIB_DIR)
    checked = 0
    for root, _, files in os.walk(lib):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            if os.path.relpath(path, lib) == settings_map.MODULE + ".py":
                continue  # generated: where the settings are read (test_mapped_settings_reach_the_exported_code)
            rel = os.path.relpath(path, lib).split(os.sep)
            inverse = {new: old for old, new in lt.RENAMED.items()}
            source_path = os.path.join(lt.PACKAGE_DIR, *(inverse.get(p, p) for p in rel))
            with open(path, encoding="utf-8") as fh:
                ours = _definitions(fh.read())
            with open(source_path, encoding="utf-8") as fh:
                theirs = _sources(fh.read())
            for name, dump in ours.items():
                if name == "resolve" and f == "sources.py":
                    continue  # generated: the exported dataset_path
                assert name in theirs, f"{path}: {name}"
                expected = _definitions(settings_map.rename(lt.rewrite_source(theirs[name], source_path), path))
                assert dump == expected[name], f"{path}: {name}"
                checked += 1
    assert checked > 100


#: Lines of Python one pull request may hold, its shared code included: what a maintainer reviews in one piece.
PR_LINES = 2_500


def _python_lines(folder) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in pathlib.Path(folder).rglob("*.py")
               if "sample" not in p.parts)  # fmt: skip


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_every_pull_request_of_a_one_benchmark_export_is_under_the_review_cap(bench, tmp_path, capsys):
    """``hanyi export lmms-eval --benchmarks B``: one self-contained pull request where B and the shared statements it
    reaches fit in :data:`PR_LINES` lines of Python; else two, ``shared/`` (the common first pull request, whose text
    says why) and ``B/``, whose text names ``shared/`` as its prerequisite. Every directory holding a
    ``PULL_REQUEST.md`` is one pull request."""
    from hanyi.export import main as export_main
    from hanyi.export import series

    assert export_main(["lmms-eval", "--out", str(tmp_path), "--benchmarks", bench]) == 0
    printed = json.loads(capsys.readouterr().out)
    prs = sorted(p.parent for p in tmp_path.rglob("PULL_REQUEST.md"))
    sizes = {str(p.relative_to(tmp_path)): _python_lines(p) for p in prs}
    assert all(0 < n <= PR_LINES for n in sizes.values()), sizes
    if printed["series"]:
        order = list(printed["python_lines"])
        shared = order[:-1]
        assert order[-1] == bench and shared and all(map(series.is_shared, shared)) and printed["python_lines"] == sizes
        assert printed["self_contained_lines"] > PR_LINES  # a series only where one pull request would be over
        first = (tmp_path / shared[0] / "PULL_REQUEST.md").read_text(encoding="utf-8")
        assert "## Why one shared pull request first" in first and "reviewed once for all" in first
        last = (tmp_path / bench / "PULL_REQUEST.md").read_text(encoding="utf-8")
        assert series.prerequisite(shared) in last.split("\n", 3)[2]
    else:
        assert sizes == {".": printed["python_lines"]["."]}


def test_a_pull_request_keeps_only_its_benchmarks_backbones(tmp_path):
    """The backbone registry of a one-benchmark export lists only the models that benchmark's metrics check, so the
    other benchmarks' scorer modules (VULCA's zero-shot NLI for a Pun Rebus pull request) are not carried."""
    lt.export(str(tmp_path), ["punrebus"])
    lib = tmp_path / lt.LIB_DIR
    text = (lib / "backbones.py").read_text(encoding="utf-8")
    assert re.findall(r'Backbone\(\s*"(\w+)"', text) == ["wordnet", "sbert", "judge"]
    assert not (lib / "metrics" / "zeroshot_nli.py").exists()
    assert lt.registry_for("hanyi.backbones", "BACKBONES", BENCHMARKS) is None  # a full export keeps every entry


def test_export_is_small_formatted_as_upstream_and_shared_once(exported, tmp_path):
    """black (line length 240) and isort (profile black), as upstream's pre-commit runs them, change nothing; the
    shared code is one folder, and no benchmark folder carries a library of its own (the size is checked per pull
    request)."""
    black = pytest.importorskip("black")
    isort = pytest.importorskip("isort")
    for root, dirs, files in os.walk(exported):
        dirs[:] = [d for d in dirs if d not in ("sample", "__pycache__")]
        for f in files:
            path = os.path.join(root, f)
            if not f.endswith(".py"):
                continue
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            assert black.format_str(text, mode=black.Mode(line_length=240)) == text, path
            assert isort.check_code(text, show_diff=False, profile="black", known_first_party=["lmms_eval"]), path
    for bench in BENCHMARKS:
        folder = os.path.join(exported, bench)
        assert not [d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)) and d.endswith("_lib")]
    assert os.path.isfile(os.path.join(exported, lt.LIB_DIR, "metrics", "vulca_aggregations.py"))  # found by import
    for cut in ("report", "cli.py", "submit", "host", "export", "data", os.path.join("task_data", "prepare.py")):
        assert not os.path.exists(os.path.join(exported, lt.LIB_DIR, cut)), cut


def test_check_reports_drift(exported, tmp_path):
    out = str(tmp_path / "export")
    lt.export(out, ["cii"], data_root="sample")
    assert lt.check_export(out, ["cii"], data_root="sample") == []
    vendored = os.path.join(out, lt.LIB_DIR, "metrics", "cii_extract.py")
    with open(vendored, "a", encoding="utf-8") as f:
        f.write("# edited by hand\n")
    os.remove(os.path.join(out, "cii", "templates", os.listdir(os.path.join(out, "cii", "templates"))[0]))
    with open(os.path.join(out, lt.LIB_DIR, "metrics", "stale.py"), "w") as f:
        f.write("")
    drift = lt.check_export(out, ["cii"], data_root="sample")
    assert any(d.startswith("differs from the source:") and d.endswith("cii_extract.py") for d in drift), drift
    assert any(d.startswith("missing:") and "templates" in d for d in drift), drift
    assert any(d.startswith("not in the source any more:") and d.endswith("stale.py") for d in drift), drift


def test_cli_export_data_root_choices(tmp_path, capsys):
    from hanyi.cli import main

    assert main(["export", "lmms-eval", "--out", str(tmp_path), "--benchmarks", "cii", "vulca"]) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["cii"]["dataset_path"] == "m-a-p/CII-Bench"  # on the hub
    assert written["vulca"]["dataset_path"] == "ORG/vulca"  # not on the hub: a placeholder, no local path
    prepared = tmp_path / "prepared"
    (prepared / "cii").mkdir(parents=True)
    (prepared / "cii" / "README.md").write_text("---\nconfigs: []\n---\n")
    assert main(["export", "lmms-eval", "--out", str(tmp_path / "o2"), "--benchmarks", "cii", "unpie",
                 "--data-root", str(prepared)]) == 0  # fmt: skip
    written = json.loads(capsys.readouterr().out)
    assert written["cii"]["dataset_path"] == str(prepared / "cii")
    assert written["unpie"]["dataset_path"] == "jiwan-chung/VisualPun_UNPIE"  # not prepared there: the hub
    assert main(["export", "lmms-eval", "--out", str(tmp_path), "--benchmarks", "cii", "vulca", "--check"]) == 0


def test_export_never_replaces_a_folder_it_did_not_write(tmp_path):
    (tmp_path / "cii").mkdir()
    (tmp_path / "cii" / "keep.txt").write_text("mine")
    with pytest.raises(lt.ExportError, match="not written by hanyi export"):
        lt.export(str(tmp_path), ["cii"], data_root="sample")
    assert (tmp_path / "cii" / "keep.txt").read_text() == "mine"
    lt.export(str(tmp_path / "again"), ["cii"], data_root="sample")
    lt.export(str(tmp_path / "again"), ["cii"], data_root="sample")  # its own earlier export is replaced


def _snapshot(root) -> dict:
    return {str(p.relative_to(root)): (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink() else b"")
            for p in sorted(root.rglob("*"))}  # fmt: skip


@pytest.mark.parametrize(
    "case", ["out_is_a_file", "foreign_cii_after_others", "symlinked_export", "users_pr", "earlier_folder_left_out"]
)
def test_export_checks_everything_before_writing_anything(tmp_path, capsys, case):
    """each of these gave a traceback, some after other folders had already been replaced."""
    from hanyi.export import main as export_main

    out = tmp_path / "out"
    out.mkdir()
    if case == "out_is_a_file":
        out = tmp_path / "a-file"
        out.write_text("not a folder")
    elif case == "foreign_cii_after_others":
        lt.export(str(out), ["punrebus", "cvlue"], data_root="sample")  # earlier exports: would be replaced first
        (out / "cii").mkdir()
        (out / "cii" / "mine.txt").write_text("mine")
    elif case == "symlinked_export":
        elsewhere = tmp_path / "elsewhere"
        lt.export(str(elsewhere), ["cii"], data_root="sample")
        (out / "cii").symlink_to(elsewhere / "cii", target_is_directory=True)
    elif case == "earlier_folder_left_out":  # the shared code would no longer serve vulca/
        lt.export(str(out), ["vulca"], data_root="sample")
    else:
        (out / "PULL_REQUEST.md").write_text("# my own pull request text\n")
    before = _snapshot(tmp_path)
    code = export_main(
        ["lmms-eval", "--out", str(out), "--benchmarks", "punrebus", "cvlue", "cii", "--data-root", "sample"]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("hanyi export: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "nothing was written" in err
    assert _snapshot(tmp_path) == before  # every file as it was
    if case == "users_pr":  # --force replaces it (cvlue: one pull request, under the review cap)
        assert (
            export_main(["lmms-eval", "--out", str(out), "--benchmarks", "cvlue", "--data-root", "sample", "--force"])
            == 0
        )
        assert "PULL_REQUEST.md" in json.loads((out / lt.MANIFEST).read_text())["written"]  # ours now
        assert export_main(["lmms-eval", "--out", str(out), "--benchmarks", "cvlue", "--data-root", "sample"]) == 0


def test_rewrite_refuses_a_bare_hanyi_name():
    with pytest.raises(lt.ExportError, match="x.py:2"):
        lt.rewrite_imports("from hanyi import metrics\nhanyi.metrics.choice\n", "x.py")
    with pytest.raises(lt.ExportError, match="y.py:3"):
        lt.rewrite_imports("import importlib\n\nimportlib.import_module(f'hanyi.data.{x}')\n", "y.py")
    with pytest.raises(lt.ExportError, match="binds the name"):
        lt.rewrite_imports("import hanyi.metrics\n", "z.py")
    out = lt.rewrite_imports("def f():\n    from hanyi.metrics import choice\n    return choice\n", "x.py")
    assert "from lmms_eval.tasks._task_utils.cultural_utils.metrics import choice" in out
    out = lt.rewrite_imports("from hanyi.tasks.cii import utils\n", "x.py")
    assert out == "from lmms_eval.tasks.cii import utils\n"


def test_needed_modules_follow_imports_relative_ones_and_parents():
    mods = lt.needed_modules("cii")
    assert {"hanyi", "hanyi.metrics", "hanyi.metrics.judge", "hanyi.metrics.judge.client"} <= set(mods)
    assert "hanyi.metrics.judge.cache" in mods  # reached only through `from .cache import ...`
    assert not any(m.startswith("hanyi.tasks.cii") for m in mods)  # the folder's own modules stay in the folder
    assert not {"hanyi.cli", "hanyi.report", "hanyi.metrics.from_samples"} & set(mods)


def test_closure_keeps_only_the_statements_the_folders_reach(tmp_path):
    """A module's unused definitions, an unused import name and a ``__main__`` block are left out; a name used only
    through ``module.attr`` is kept, as is a module-level call and what it uses."""
    from hanyi.export import closure

    pkg = tmp_path / "hanyi"
    (pkg / "tasks" / "demo").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "tasks" / "__init__.py").write_text("")
    (pkg / "lib.py").write_text(
        "import os\nimport re\n\nREGISTRY = []\n\n\ndef used():\n    return os.sep\n\n\ndef unused():\n"
        "    return re\n\n\ndef registered():\n    return 1\n\n\nREGISTRY.append(registered)\n\n"
        "if __name__ == '__main__':\n    unused()\n"
    )
    (pkg / "other.py").write_text("def by_attr():\n    return 2\n\n\ndef not_by_attr():\n    return 3\n")
    glue = pkg / "tasks" / "demo" / "utils.py"
    glue.write_text(
        "from hanyi import other\nfrom hanyi.lib import used\n\n\ndef f():\n    return used(), other.by_attr()\n"
    )
    found = closure.Closure(str(pkg), folders=["hanyi.tasks.demo"])
    found.add_module_uses(closure.parse_module(str(pkg), "hanyi.tasks.demo.utils", str(glue)))
    found.run()
    lib = found.source_of("hanyi.lib")
    assert "def used" in lib and "import os" in lib and "REGISTRY.append(registered)" in lib and "def registered" in lib
    assert "def unused" not in lib and "import re" not in lib and "__main__" not in lib
    other = found.source_of("hanyi.other")
    assert "def by_attr" in other and "not_by_attr" not in other


#: As if the export were copied into lmms_eval/tasks/ (module names lmms_eval.tasks.<bench>, ..._task_utils...).
_AS_IF_MERGED = "import lmms_eval.tasks\nlmms_eval.tasks.__path__.append({out!r})\n"


def test_exported_glue_loads_with_hanyi_blocked(exported, tmp_path):
    """Every folder module loads by file (as lmms-eval loads it) with ``hanyi`` unimportable and no network call."""
    script = (
        "import glob, importlib.util, os, socket, sys\n"
        "def _no_network(*args, **kwargs):\n"
        "    raise AssertionError('network call at import')\n"
        "socket.socket.connect = socket.create_connection = socket.getaddrinfo = _no_network\n"
        + _AS_IF_MERGED.format(out=exported)
        + f"out = {exported!r}\n"
        "for path in sorted(glob.glob(os.path.join(out, '*', '*.py'))):\n"
        "    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "assert not [m for m in sys.modules if m == 'hanyi' or m.startswith('hanyi.')]\n"
        "from lmms_eval.tasks._task_utils import cultural_utils\n"
        "from lmms_eval.tasks._task_utils.cultural_utils.task_data import vulca_embed_reference, vulca_reference\n"
        "assert os.path.isfile(vulca_reference.DEFAULT_OUT) and os.path.isfile(vulca_embed_reference.DEFAULT_OUT)\n"
        "print(cultural_utils.TASKS_DIR)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=str(tmp_path), env=_shadow_env(str(tmp_path)), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == exported


_SETTINGS_PROBE = """
import json, os, sys
import lmms_eval.tasks
lmms_eval.tasks.__path__.append(sys.argv[1])  # as if the export were copied into lmms_eval/tasks/
from lmms_eval.tasks._task_utils.cultural_utils import settings
from lmms_eval.tasks._task_utils.cultural_utils.metrics import reference_choice
from lmms_eval.tasks._task_utils.cultural_utils.metrics.judge.config import JudgeConfig
from lmms_eval.tasks._task_utils.cultural_utils.metrics.zeroshot_nli import NLIConfig
judge = JudgeConfig.from_env()
try:
    settings.value("cvlue_loglik")
    loglik = "accepted"
except SystemExit as exc:
    loglik = str(exc)
print(json.dumps({
    "judge": judge and [judge.base_url, judge.model, judge.api_key_env],
    "nli": [NLIConfig.from_env().model, NLIConfig.from_env().batch_size],
    "bertscore": list(reference_choice.bertscore_settings()),
    "loglik": loglik,
}))
"""


def test_mapped_settings_reach_the_exported_code(exported, tmp_path):
    """Set the upstream way, a setting reaches the exported code with hanyi blocked: the judge from upstream's
    ``OPENAI_API_URL`` / ``MODEL_VERSION`` (``HANYI_JUDGE_*`` ignored), scorer models from ``metadata:`` of the
    folder's ``_default_template_yaml`` (hanyi's defaults when absent), validated as in hanyi."""
    import shutil

    out = str(tmp_path / "export")
    shutil.copytree(exported, out, ignore=shutil.ignore_patterns("sample"))

    def probe(**env_extra) -> dict:
        env = _shadow_env(str(tmp_path))
        env = {k: v for k, v in env.items() if k not in ("OPENAI_API_URL", "MODEL_VERSION")} | env_extra
        proc = subprocess.run(
            [sys.executable, "-c", _SETTINGS_PROBE, out], cwd=str(tmp_path), env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    before = probe(HANYI_JUDGE_BASE_URL="http://127.0.0.1:9/v1", HANYI_JUDGE_MODEL="m", HANYI_VULCA_NLI_MODEL="x")
    assert before["judge"] is None  # hanyi's variables do not reach the export
    assert before["nli"] == ["MoritzLaurer/mDeBERTa-v3-base-mnli-xnli", 32]  # hanyi's defaults
    assert before["loglik"] == "accepted"
    for bench, extra in (
        ("vulca", "  vulca_nli_model: my/nli\n  vulca_nli_batch_size: 4\n"),
        ("unpie", "  unpie_bertscore_model: my/bert\n  unpie_bertscore_layers: 7\n"),
        ("cvlue", "  cvlue_loglik: sideways\n"),
    ):
        path = os.path.join(out, bench, "_default_template_yaml")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert "\nmetadata:\n" in text, bench
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("\nmetadata:\n", "\nmetadata:\n" + extra, 1))
    after = probe(OPENAI_API_URL="http://127.0.0.1:9/v1", MODEL_VERSION="judge-model")
    assert after["judge"] == ["http://127.0.0.1:9/v1", "judge-model", "OPENAI_API_KEY"]
    assert after["nli"] == ["my/nli", 4]
    assert after["bertscore"][:2] == ["my/bert", 7]
    assert "cvlue_loglik='sideways'" in after["loglik"] and "expected one of auto, nll, logprob" in after["loglik"]


_LOG_PROBE = """
import json, sys
import lmms_eval.tasks
lmms_eval.tasks.__path__.append(sys.argv[1])  # as if the export were copied into lmms_eval/tasks/
from loguru import logger
from lmms_eval.tasks._task_utils.cultural_utils.metrics import circular
from lmms_eval.tasks._task_utils.cultural_utils.metrics.judge.config import JudgeConfig
seen = []
logger.add(lambda m: seen.append([m.record["level"].name, m.record["name"], m.record["message"]]), level="DEBUG")
circular.complete_questions([{"qid": "a", "rotation": 0, "n_rotations": 2}], warn=True)
JudgeConfig.from_env({"judge_colour": "blue"})
print(json.dumps(seen))
"""


def test_exported_code_logs_through_lmms_evals_eval_logger(exported, tmp_path):
    """the exported code logs as lmms-eval's tasks do, through loguru (``eval_logger``), from the
    calling module, each message %-formatted (loguru formats with ``{}``: no ``%d`` or ``%r`` left in the text); no
    module logs through :mod:`logging` (httpx's own loggers are only quietened)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LOG_PROBE, exported], cwd=str(tmp_path), env=_shadow_env(str(tmp_path)),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    lib = lt.LIB_PACKAGE + ".metrics."
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [
        ["WARNING", lib + "circular", "circular: 1 question(s) lack some rotations (--limit?) and are left out; "
         "0 scored"],
        ["WARNING", lib + "judge.config", "judge: ignoring unknown override key 'judge_colour'"],  # no "hanyi" prefix
    ]  # fmt: skip
    for root, _, files in os.walk(exported):
        for name in [f for f in files if f.endswith(".py")]:
            with open(os.path.join(root, name), encoding="utf-8") as fh:
                assert set(re.findall(r"getLogger\((.*?)\)", fh.read())) <= {'"httpx"', '"httpcore"'}, name


_EXPORT_RUN = """
import json, sys
import lmms_eval.tasks
lmms_eval.tasks.__path__.append(sys.argv[1])  # as if the export were copied into lmms_eval/tasks/
from lmms_eval import evaluator
from lmms_eval.tasks import TaskManager
tm = TaskManager("WARNING", include_path=sys.argv[1], include_defaults=False)
results = evaluator.simple_evaluate(model="dummy", tasks=sys.argv[2].split(","), task_manager=tm, bootstrap_iters=0)
with open(sys.argv[3], "w") as f:
    json.dump(results["results"], f, default=str)
"""


def _comparable(results: dict) -> dict:
    out = {}
    for task, metrics in results.items():
        out[task] = {
            k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in metrics.items() if k != "alias"
        }
    return out


@pytest.mark.slow
def test_exported_groups_score_exactly_like_hanyi(exported, evaluate, tmp_path):
    """lmms-eval's dummy model on the sample data: one evaluator run per side, five groups + extras, equal results."""
    tasks = [*DEMO_GROUPS, *EXTRA_TASKS]
    ours = evaluate(tasks, "dummy", log_samples=False)["results"]
    path = str(tmp_path / "export_results.json")
    env = _shadow_env(str(tmp_path))
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-c", _EXPORT_RUN, exported, ",".join(tasks), path],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-5000:]
    with open(path) as f:
        theirs = json.load(f)
    ours = json.loads(json.dumps(_comparable(ours), default=str))
    theirs = _comparable(theirs)
    assert sorted(ours) == sorted(theirs)
    # exactly, but for a backbone value (element_sim): another process, whose MiniLM encoded other batches (this
    # worker's earlier tests filled its cache), within the float rule (docs/dev/contributing.md)
    assert floats.differences(ours, theirs) == []
    assert any(isinstance(v, float) for m in ours.values() for v in m.values())  # real numbers were compared


def test_pull_request_lists_only_lmms_eval_patches_and_the_readme_names_real_variables(tmp_path):
    """PULL_REQUEST.md listed patch 0004, which patches lm-evaluation-harness, and the exported
    READMEs named a nonexistent ``HANYI_JUDGE_API_KEY``."""
    import re

    from hanyi.export.readme import folder_readme, patches
    from hanyi.settings import CHECKS

    assert "0004-lm-eval-task-and-model-entry-points.patch" not in [name for name, _ in patches()]
    assert "0001-read-task-plugins-before-indexing.patch" in [name for name, _ in patches()]
    text = folder_readme("cii", str(tmp_path), "sample")
    names = set(re.findall(r"HANYI_[A-Z_]+", text))
    assert names and names <= set(CHECKS), names - set(CHECKS)
    assert names <= set(settings_map.SETTINGS)  # the export renames each (test_export_reads_no_hanyi_variable)


_LOAD_TASK = """
import sys
import lmms_eval.tasks
lmms_eval.tasks.__path__.append(sys.argv[1])  # as if the export were copied into lmms_eval/tasks/
from lmms_eval.tasks import TaskManager, get_task_dict
tm = TaskManager("WARNING", include_path=sys.argv[1], include_defaults=False)
print(len(get_task_dict(["vulca_baseline"], tm)["vulca_baseline"].test_docs()))
"""


def test_prepare_hub_folder_writes_an_uploadable_dataset_the_export_loads(tmp_path, capsys):
    """``hanyi prepare BENCH --hub-folder DIR`` writes parquet shards and a dataset card (licence,
    citation, the official release); ``datasets.load_dataset(DIR)`` loads it, it names no path of this machine, and
    the exported tasks load it (hanyi blocked) when ``dataset_path`` names it."""
    import datasets

    from hanyi.cli import main
    from hanyi.data.hub_card import RELEASES
    from hanyi.data.images import synthetic_image

    images, hub = tmp_path / "paintings", tmp_path / "hub" / "vulca"
    images.mkdir()
    for month in range(1, 13):
        synthetic_image(f"m{month}").save(images / f"{month:02d}.jpg", format="JPEG")
    assert main(["prepare", "vulca", "--images", str(images), "--hub-folder", str(hub)]) == 0
    assert "--dataset-repo vulca=ORG/NAME" in capsys.readouterr().out
    card = (hub / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: cc-by-4.0\npretty_name:") and "configs:" in card
    assert "National Palace Museum" in card and "```bibtex\n@" in card and "yha9806/VULCA-EMNLP2025" in card
    for path in hub.rglob("*"):
        if path.suffix in (".md", ".json"):
            assert str(tmp_path) not in path.read_text(encoding="utf-8"), path
    assert len(datasets.load_dataset(str(hub), "whole", split="test")) == 12
    assert not RELEASES["cvlue"].redistribute and "Google Form" in RELEASES["cvlue"].official + RELEASES["cvlue"].terms
    out = tmp_path / "export"
    lt.export(str(out), ["vulca"], data_root=str(hub.parent))
    assert f'"{hub}"' in (out / "vulca" / "_default_template_yaml").read_text()
    env = _shadow_env(str(tmp_path))
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", _LOAD_TASK, str(out)], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "12"


@pytest.mark.parametrize("value", ["vulca", "nope=org/name", "vulca=no-slash", "vulca=a/b/c"])
def test_dataset_repo_refuses_what_is_not_bench_org_name(tmp_path, capsys, value):
    from hanyi.export import main as export_main

    assert export_main(["lmms-eval", "--out", str(tmp_path / "o"), "--dataset-repo", value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hanyi export: --dataset-repo ") and "expected BENCH=ORG/NAME" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("missing", ["black", "ruff"])
def test_missing_formatters_name_the_export_extra_with_the_constraints(tmp_path, capsys, monkeypatch, missing):
    """The export formats with black and isort at lmms-eval's pins and ruff for lm-eval; without them the one-line
    error names the install that brings exactly these (no torch): ``pip install -c constraints.txt 'hanyi[export]'``.
    """
    import importlib.util

    from hanyi.export import main as export_main

    if missing == "black":
        monkeypatch.setitem(sys.modules, "black", None)  # import black raises ImportError
    else:
        find_spec = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util, "find_spec", lambda name, *a: None if name == "ruff" else find_spec(name, *a)
        )
    assert export_main(["lmms-eval", "--out", str(tmp_path / "out"), "--benchmarks", "cii"]) == 2
    err = capsys.readouterr().err
    assert "pip install -c constraints.txt 'hanyi[export]'" in err and missing in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
