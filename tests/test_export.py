"""``hanyi export lmms-eval``: folders that import nothing from hanyi, stay in step with the source, and score alike.

The equivalence test (slow) runs lmms-eval's own ``dummy`` model over the five benchmark groups twice, once through
hanyi's tasks in this process and once through the exported folders in a subprocess where ``hanyi`` is a shadow
package that raises on import and the start-up hook is off, and requires identical results.
"""

from __future__ import annotations

import ast
import json
import math
import os
import subprocess
import sys

import pytest

from hanyi import BENCHMARKS, TASKS_DIR
from hanyi.export import lmms_eval_tasks as lt

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
        assert "```bibtex\n@" in readme, bench
        for heading in ("## Groups and tasks", "## Metrics: definitions", "## Deviations", "## Data access"):
            assert heading in readme, (bench, heading)
        assert "- [x] Is the task an existing benchmark in the literature?" in readme
    with open(os.path.join(exported, "PULL_REQUEST.md"), encoding="utf-8") as f:
        pr = f.read()
    for n in ("0001", "0002", "0003"):
        assert f"`{n}-" in pr, n


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


def test_vendored_modules_are_their_source_with_imports_renamed(exported):
    """Drift check by content: each vendored file is its hanyi source, import root renamed, plus generated lines."""
    checked = 0
    for bench in BENCHMARKS:
        lib = lt.lib_name(bench)
        root = os.path.join(exported, bench, lib)
        for mod in lt.needed_modules(bench):
            vendored = os.path.join(root, os.path.relpath(lt.module_path(mod), lt.PACKAGE_DIR))
            with open(vendored, encoding="utf-8") as f:
                text = f.read().split(f"\n\n# --- {lt.GENERATED}")[0]
            with open(lt.module_path(mod), encoding="utf-8") as f:
                source = f.read()
            assert text.replace(lib, "hanyi").rstrip("\n") == source.rstrip("\n"), vendored
            checked += 1
    assert checked > 20


def test_check_reports_drift(exported, tmp_path):
    out = str(tmp_path / "export")
    lt.export(out, ["cii"], data_root="sample")
    assert lt.check_export(out, ["cii"], data_root="sample") == []
    vendored = os.path.join(out, "cii", "_cii_lib", "metrics", "cii_extract.py")
    with open(vendored, "a", encoding="utf-8") as f:
        f.write("# edited by hand\n")
    os.remove(os.path.join(out, "cii", "templates", os.listdir(os.path.join(out, "cii", "templates"))[0]))
    with open(os.path.join(out, "cii", "_cii_lib", "metrics", "stale.py"), "w") as f:
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
    assert written["vulca"]["dataset_path"].endswith(os.path.join("data", "vulca"))  # not on the hub
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


@pytest.mark.parametrize("case", ["out_is_a_file", "foreign_cii_after_others", "symlinked_export", "users_pr"])
def test_export_checks_everything_before_writing_anything(tmp_path, capsys, case):
    """Issue 29 item 12: each of these gave a traceback, some after other folders had already been replaced."""
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
    if case == "users_pr":  # --force replaces it
        assert (
            export_main(["lmms-eval", "--out", str(out), "--benchmarks", "cii", "--data-root", "sample", "--force"])
            == 0
        )
        assert (out / "PULL_REQUEST.md").read_text().startswith(lt.PR_MARKER)
        assert export_main(["lmms-eval", "--out", str(out), "--benchmarks", "cii", "--data-root", "sample"]) == 0


def test_rewrite_refuses_a_bare_hanyi_name():
    with pytest.raises(lt.ExportError, match="x.py:2"):
        lt.rewrite_imports("import hanyi.metrics\nhanyi.metrics.choice\n", "_x_lib", "x.py")
    with pytest.raises(lt.ExportError, match="y.py:3"):
        lt.rewrite_imports("import importlib\n\nimportlib.import_module(f'hanyi.data.{x}')\n", "_x_lib", "y.py")
    out = lt.rewrite_imports("def f():\n    from hanyi.metrics import choice\n    return choice\n", "_x_lib", "x.py")
    assert "from _x_lib.metrics import choice" in out


def test_needed_modules_follow_relative_imports_and_parents():
    mods = lt.needed_modules("cii")
    assert {"hanyi", "hanyi.metrics", "hanyi.metrics.judge", "hanyi.metrics.judge.client"} <= set(mods)
    assert "hanyi.metrics.judge.cache" in mods  # reached only through `from .cache import ...`
    assert not any(m.startswith("hanyi.tasks.cii") for m in mods)  # the folder's own modules stay in the folder


def test_exported_glue_loads_with_hanyi_blocked(exported, tmp_path):
    """Every glue module loads by file (as lmms-eval loads it) with ``hanyi`` unimportable and no network call."""
    script = (
        "import glob, importlib.util, os, socket, sys\n"
        "def _no_network(*args, **kwargs):\n"
        "    raise AssertionError('network call at import')\n"
        "socket.socket.connect = socket.create_connection = socket.getaddrinfo = _no_network\n"
        f"out = {exported!r}\n"
        "for path in sorted(glob.glob(os.path.join(out, '*', '*.py'))):\n"
        "    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "assert not [m for m in sys.modules if m == 'hanyi' or m.startswith('hanyi.')]\n"
        "import _cii_lib\n"
        "from _vulca_lib.data import vulca_embed_reference, vulca_reference\n"
        "assert os.path.isfile(vulca_reference.DEFAULT_OUT) and os.path.isfile(vulca_embed_reference.DEFAULT_OUT)\n"
        "print(_cii_lib.TASKS_DIR)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=str(tmp_path), env=_shadow_env(str(tmp_path)), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == exported


_EXPORT_RUN = """
import json, sys
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
    for task in ours:
        assert ours[task] == theirs[task], task
    assert any(isinstance(v, float) for m in ours.values() for v in m.values())  # real numbers were compared


def test_pull_request_lists_only_lmms_eval_patches_and_the_readme_names_real_variables(tmp_path):
    """Issue 27 item 15: PULL_REQUEST.md listed patch 0004, which patches lm-evaluation-harness, and the exported
    READMEs named a nonexistent ``HANYI_JUDGE_API_KEY``."""
    import re

    from hanyi.export.readme import folder_readme, pull_request
    from hanyi.settings import CHECKS

    pr = pull_request(str(tmp_path), ["cii"], "sample")
    assert "`0001-" in pr and "`0005-" in pr and "`0004-" not in pr
    text = folder_readme("cii", str(tmp_path), "sample", [])
    names = set(re.findall(r"HANYI_[A-Z_]+", text))
    assert names and names <= set(CHECKS), names - set(CHECKS)
