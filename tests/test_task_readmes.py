"""Each task folder's README.md is a real README (lm-eval style) whose links work in the repo and in a wheel."""

from __future__ import annotations

import os
import re

import pytest

from hanyi import BENCHMARKS, TASKS_DIR
from hanyi.cli import _benchmark_of, _task_index

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ("## Paper", "### Citation", "## Groups and tasks", "## Headline metrics", "## Checklist")


def _readme(bench: str) -> str:
    with open(os.path.join(TASKS_DIR, bench, "README.md"), encoding="utf-8") as f:
        return f.read()


def _wheel_docs_target() -> str:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        include = tomllib.load(f)["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    return include.get("docs", "")


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_readme_has_the_lm_eval_sections_and_the_docs_bibtex(bench):
    text = _readme(bench)
    for section in SECTIONS:
        assert section in text, f"{bench}: README lacks {section!r}"
    with open(os.path.join(REPO, "docs", f"{bench}.md"), encoding="utf-8") as f:
        bibtex = re.search(r"```bibtex\n.*?```", f.read(), re.S).group(0)
    assert bibtex in text, f"{bench}: the README's BibTeX differs from docs/{bench}.md"
    assert "- [x]" in text or "* [x]" in text


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_readme_names_every_group_and_only_real_ones(bench):
    text = _readme(bench)
    index = _task_index()
    groups = {n for n, e in index.items() if e["type"] == "group" and _benchmark_of(e["yaml_path"]) == bench}
    sub = {t for e in index.values() if e["type"] == "group" for t in e["tasks"]}
    for group in groups - sub:  # top-level groups, the ones a user types
        assert f"`{group}`" in text, f"{bench}: README does not name group {group}"
    for name in re.findall(r"--tasks (\w+)", text):  # a task, a group or a tag (CII's `cii`)
        assert name in index, f"{bench}: README runs unknown task {name}"


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_readme_links_resolve_in_the_source_tree_and_in_the_wheel(bench):
    # In the wheel, docs/ ships as hanyi/docs/ (pyproject force-include), so ../../docs/<bench>.md from
    # hanyi/tasks/<bench>/ resolves there; ../../../docs/<bench>.md resolves in a checkout.
    assert _wheel_docs_target() == "hanyi/docs"
    folder = os.path.join("hanyi", "tasks", bench)
    links = [t for t in re.findall(r"\]\(([^)#\s]+)", _readme(bench)) if not re.match(r"[a-z]+://", t)]
    assert links
    in_source = in_wheel = 0
    for target in links:
        rel = os.path.normpath(os.path.join(folder, target))
        ok_source = os.path.isfile(os.path.join(REPO, rel))
        ok_wheel = rel.startswith(os.path.join("hanyi", "docs") + os.sep) and os.path.isfile(
            os.path.join(REPO, "docs", os.path.relpath(rel, os.path.join("hanyi", "docs")))
        )
        assert ok_source or ok_wheel, f"{bench}: link {target} resolves nowhere"
        in_source += ok_source
        in_wheel += ok_wheel
    assert in_source and in_wheel, f"{bench}: needs a docs link for the checkout and one for the installed package"


LM_EVAL_BENCHMARKS = ("cii", "punrebus", "unpie")


@pytest.mark.parametrize("bench", LM_EVAL_BENCHMARKS)
def test_lm_eval_folder_readme_is_a_card_naming_its_tasks_with_working_links(bench):
    """Issue 27 item 15: the lm-eval task READMEs were two-line stubs; they are lm-eval cards now (paper, BibTeX,
    groups and tasks, headline metrics, checklist), naming every lm-eval task and group of the folder."""
    from hanyi import LM_EVAL_TASKS_DIR

    folder = os.path.join(LM_EVAL_TASKS_DIR, bench)
    with open(os.path.join(folder, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for section in SECTIONS:
        assert section in text, f"{bench}: lm-eval README lacks {section!r}"
    with open(os.path.join(REPO, "docs", f"{bench}.md"), encoding="utf-8") as f:
        assert re.search(r"```bibtex\n.*?```", f.read(), re.S).group(0) in text
    assert "**main**" in text and "* [x]" in text
    names = set()
    for name in os.listdir(folder):
        if name.endswith(".yaml"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                names.update(re.findall(r"(?m)^(?:task|group): (\w+)$", f.read()))
    assert names
    for name in names:
        stem = re.sub(r"_(homo|hetero)$", "", name)
        assert (
            f"`{name}`" in text
            or f"`{stem}_{{homo,hetero}}`" in text
            or stem.rsplit("_", 1)[0] + "_{de,fr,ko}_{homo,hetero}`" in text
        ), name
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        rel = os.path.normpath(os.path.join("hanyi", "lm_eval_tasks", bench, target))
        wheel = rel.startswith(os.path.join("hanyi", "docs") + os.sep)
        path = os.path.join(REPO, "docs", os.path.relpath(rel, os.path.join("hanyi", "docs"))) if wheel else rel
        assert os.path.isfile(os.path.join(REPO, path)), f"{bench}: link {target} resolves nowhere"
