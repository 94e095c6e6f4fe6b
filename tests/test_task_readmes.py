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
def test_readme_links_the_docs_in_the_checkout_and_names_the_wheel_copy(bench):
    # Every relative link resolves in the source tree (tests/test_doc_links.py); the copy the wheel
    # ships (docs/ as hanyi/docs/, pyproject force-include) is named as a path, since no link works in both places.
    assert _wheel_docs_target() == "hanyi/docs"
    text = _readme(bench)
    assert f"](../../../docs/{bench}.md)" in text and f"`hanyi/docs/{bench}.md`" in text
    assert os.path.isfile(os.path.join(REPO, "docs", f"{bench}.md"))


LM_EVAL_BENCHMARKS = ("cii", "punrebus", "unpie")


@pytest.mark.parametrize("bench", LM_EVAL_BENCHMARKS)
def test_lm_eval_folder_readme_is_a_card_naming_its_tasks_with_working_links(bench):
    """the lm-eval task READMEs were two-line stubs; they are lm-eval cards now (paper, BibTeX,
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
    assert f"](../../../docs/{bench}.md)" in text and f"`hanyi/docs/{bench}.md`" in text  # links: test_doc_links.py
