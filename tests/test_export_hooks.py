"""The exports survive each upstream's whole pre-commit config unchanged, and the prompts still render byte for byte.

Each export is committed into a temporary git repository laid out as the upstream (``lm_eval/tasks/``,
``lmms_eval/tasks/``) and the upstream's recorded ``.pre-commit-config.yaml`` (``docs/upstream/``) runs on the
changed files as its CI runs it (:mod:`hanyi.export.hooks`: the hooks installed from PyPI, no network). Then the
templates are rendered from the hooked tree and compared with the official repositories' prompt strings: a hook that
strips a trailing space (``meaning: ``) or a final newline would change a prompt labelled byte-for-byte.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess

import pytest

from hanyi import BENCHMARKS
from hanyi.export import hooks
from hanyi.export import lmms_eval_tasks as lt
from hanyi.tasks._common import render

pytest.importorskip("pre_commit", reason="pre-commit is not installed (hanyi's test extra)")

ROOT = pathlib.Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "docs" / "upstream"
OFFICIAL = ROOT / "tests" / "fixtures" / "punrebus" / "code_exact_prompts.json"
GIT = ["git", "-c", "user.email=export@example.invalid", "-c", "user.name=export", "-c", "commit.gpgsign=false"]
STORY = "安居图"


def _commit(repo: pathlib.Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", message], cwd=repo, check=True)


def _hooked(tmp: pathlib.Path, name: str, tasks: str, export) -> tuple[pathlib.Path, int, str, list]:
    repo = tmp / name
    (repo / tasks).mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", "-b", "add-benchmarks"], cwd=repo, check=True)
    if name == "lm-evaluation-harness":  # what its hooks read from the repository root
        shutil.copyfile(UPSTREAM / "lm-evaluation-harness.ruff.toml", repo / "ruff.toml")
        (repo / "ignore.txt").write_text("", encoding="utf-8")  # codespell's word list; empty is the strictest
    _commit(repo, "base")
    export(repo / tasks)
    _commit(repo, "export")
    rc, output, problems = hooks.run(str(UPSTREAM / f"{name}.pre-commit-config.yaml"), str(repo))
    return repo, rc, output, problems


@pytest.fixture(scope="module")
def hooked(tmp_path_factory):
    from hanyi.export import lm_eval_tasks

    tmp = tmp_path_factory.mktemp("hooks")

    def lmms(dst):
        out = tmp / "lmms-export"
        lt.export(str(out), [b for b in ("punrebus", "cvlue", "cii", "unpie", "vulca") if b in BENCHMARKS])
        shutil.copytree(out, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("PULL_REQUEST.md"))
        shutil.copyfile(out / "PULL_REQUEST.md", dst.parent.parent / "PULL_REQUEST.md")

    def lm(dst):
        lm_eval_tasks.export(str(dst))

    return {
        "lmms-eval": _hooked(tmp, "lmms-eval", "lmms_eval/tasks", lmms),
        "lm-evaluation-harness": _hooked(tmp, "lm-evaluation-harness", "lm_eval/tasks", lm),
    }


@pytest.mark.parametrize("upstream", ["lmms-eval", "lm-evaluation-harness"])
def test_upstream_pre_commit_changes_no_exported_file(hooked, upstream):
    repo, _, output, problems = hooked[upstream]
    assert not [p for p in problems if "not installed" in p or "no PyPI" in p], problems
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    assert not changed, f"{upstream}'s pre-commit rewrote exported files:\n{changed}\n{output[-3000:]}"


@pytest.mark.parametrize("upstream", ["lmms-eval", "lm-evaluation-harness"])
def test_upstream_pre_commit_passes(hooked, upstream):
    """Every hook passes (lm-eval's ruff-check with its rules too; the ruff version may differ from the pin here,
    ``benchmarks/upstream_dry_run.py`` runs the pinned one)."""
    _, rc, output, _ = hooked[upstream]
    failed = [line for line in output.splitlines() if line.endswith("Failed")]
    assert rc == 0, f"{upstream}'s pre-commit: {failed}\n{output[-3000:]}"


def _environment(folder: pathlib.Path):
    """Jinja as the exported ``_common.py`` sets it up (checked below): only what affects the rendered bytes."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined, keep_trailing_newline=False
    )


@pytest.mark.parametrize("upstream", ["lmms-eval", "lm-evaluation-harness"])
def test_prompts_render_the_official_bytes_after_the_hooks(hooked, upstream):
    repo = hooked[upstream][0]
    if upstream == "lmms-eval":
        lib, folders = repo / "lmms_eval/tasks/_task_utils/cultural_utils", repo / "lmms_eval/tasks"
    else:
        lib = repo / "lm_eval/tasks/cultural_utils"
        folders = lib / "tasks"
    common = (lib / "tasks" / "_common.py").read_text(encoding="utf-8")
    assert "keep_trailing_newline=False" in common and "StrictUndefined" in common
    official = json.loads(OFFICIAL.read_text(encoding="utf-8"))
    env = _environment(folders / "punrebus" / "templates")
    for name, expected in official.items():
        text = env.get_template(f"{name}.jinja").render(doc={"story_zh": STORY})
        assert text == expected.replace("{chinese_word}", STORY if name.startswith("textonly") else ""), name
    system = _environment(folders / "cii" / "templates").get_template("ctc_judge_system.jinja").render()
    assert system == render("cii", "ctc_judge_system.jinja") and "\n  \n" in system


def test_source_templates_are_hook_clean():
    """No template line ends in a space or tab and every template ends with one newline: the exported copies are
    byte-identical, so upstream's ``trailing-whitespace`` and ``end-of-file-fixer`` have nothing to change. A
    trailing space the prompt needs is written as a Jinja expression (``{{ " " }}``)."""
    bad = []
    for path in sorted((ROOT / "hanyi" / "tasks").glob("*/templates/*.jinja")):
        data = path.read_bytes()
        lines = data.split(b"\n")
        if (
            any(line.endswith((b" ", b"\t", b"\r")) for line in lines)
            or not data.endswith(b"\n")
            or data.endswith(b"\n\n")
        ):
            bad.append(os.path.relpath(path, ROOT))
    assert not bad, bad
