"""``hanyi export lm-eval``: every pull request under the review cap. UNPIE's tasks need more than the cap (the judge,
METEOR and BLEU, the data checks), so an export holding them is a series: the shared code in dependency order, then
the benchmarks; the series together is the one-pull-request export, byte for byte, and each pull request imports
with only the ones before it merged."""

from __future__ import annotations

import filecmp
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("lm_eval", reason="the lm-eval extra is not installed (pip install 'hanyi[lm-eval]')")

from hanyi.export import lm_eval_tasks, pr, series  # noqa: E402
from hanyi.export import main as export_main  # noqa: E402

from .test_export import _shadow_env  # noqa: E402

CASES = {"unpie": ["unpie"], "all": None}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm-series")
    found = {}
    for key, only in CASES.items():
        prs, tree = root / f"prs-{key}", root / f"tree-{key}"
        written = series.export_lm_eval(str(prs), only=only)
        lm_eval_tasks.export(str(tree), only=only)
        found[key] = (prs, tree, written)
    return found


def _files(root: pathlib.Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "PULL_REQUEST.md"}


@pytest.mark.parametrize("key", CASES)
def test_every_lm_eval_pull_request_is_under_the_cap_and_names_the_ones_before_it(made, key):
    prs, _, written = made[key]
    chosen = CASES[key] or lm_eval_tasks.benchmarks()
    order = list(written["python_lines"])
    assert written["series"] and written["self_contained_lines"] > series.PR_LINES
    assert order[-len(chosen) :] == chosen and all(map(series.is_shared, order[: -len(chosen)]))
    assert sorted(order) == sorted(p.name for p in prs.iterdir() if p.is_dir())
    for i, name in enumerate(order):
        assert 0 < written["python_lines"][name] == series.python_lines(str(prs / name)) <= series.PR_LINES
        text = (prs / name / "PULL_REQUEST.md").read_text(encoding="utf-8")
        before = [n for n in order[:i] if series.is_shared(n)]
        if before:
            assert series.prerequisite(before) in text, name
    first = (prs / order[0] / "PULL_REQUEST.md").read_text(encoding="utf-8")
    assert "dependency order" in first and f"{series.PR_LINES:,} lines" in first  # why the code comes first


@pytest.mark.parametrize("key", CASES)
def test_the_lm_eval_series_is_the_one_pull_request_export_each_file_once(made, key):
    prs, tree, written = made[key]
    seen: dict[str, str] = {}
    for name in written["python_lines"]:
        for rel in _files(prs / name):
            assert rel not in seen, f"{rel} in both {seen[rel]} and {name}"
            seen[rel] = name
            assert filecmp.cmp(prs / name / rel, tree / rel, shallow=False), rel
    assert set(seen) == _files(tree) - {".hanyi-export.json"}
    if key == "unpie":  # the benchmark's description, extras included, as for one pull request
        ours = (prs / "unpie" / "PULL_REQUEST.md").read_text(encoding="utf-8")
        assert lm_eval_tasks.pull_request(str(tree), ["unpie"]).split("\n", 1)[1] in ours
    else:  # each benchmark declares the packages of its own code, not those of the code the others need
        declared = {b: pr.declared_extras((prs / b / "PULL_REQUEST.md").read_text(encoding="utf-8"))
                    for b in lm_eval_tasks.benchmarks()}  # fmt: skip
        assert declared["cii"] == {} and "nltk" in declared["unpie"]["unpie"], declared  # METEOR: its WordNet


IMPORT = r"""
import importlib, os, sys
import lm_eval.tasks
root = sys.argv[1]
lm_eval.tasks.__path__.append(root)
for dirpath, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        if f.endswith(".py") and f != "dataset.py":  # a placeholder dataset_path's module raises at load, by design
            rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].replace(os.sep, ".")
            importlib.import_module("lm_eval.tasks." + rel.removesuffix(".__init__"))
assert not [m for m in sys.modules if m == "hanyi" or m.startswith("hanyi.")]
print("ok")
"""


@pytest.mark.parametrize("key", CASES)
def test_each_lm_eval_pull_request_imports_with_only_the_ones_before_it(made, key, tmp_path):
    """Merged in order, every module of the pull requests merged so far imports with hanyi unimportable (the first
    pull request alone included): no module needs, at load, one that comes later."""
    prs, _, written = made[key]
    env = _shadow_env(str(tmp_path))
    merged = tmp_path / "merged"
    merged.mkdir()
    for name in written["python_lines"]:
        shutil.copytree(prs / name, merged, dirs_exist_ok=True, ignore=shutil.ignore_patterns("PULL_REQUEST.md"))
        proc = subprocess.run([sys.executable, "-c", IMPORT, str(merged)], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", (name, proc.stderr[-3000:])


def test_an_lm_eval_benchmark_under_the_cap_stays_one_pull_request(tmp_path, capsys):
    assert export_main(["lm-eval", "--out", str(tmp_path / "cii"), "--benchmarks", "cii"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["series"] is False and printed["python_lines"]["."] <= series.PR_LINES
    assert (tmp_path / "cii" / "PULL_REQUEST.md").is_file()


def test_applying_the_lm_eval_series_lands_every_pull_request_in_order(made, tmp_path):
    """:func:`pr.apply_series` lands the shared pull requests, then each benchmark with its row in the task list and
    the extras its description declares: the checkout then holds the one-pull-request export."""
    import tomllib

    from .test_export_pr import _checkout

    prs, tree, written = made["all"]
    assert pr.series_order(str(prs)) == list(written["python_lines"])
    checkout = _checkout(tmp_path / "lm-eval", "lm_eval")
    pr.apply_series(str(prs), str(checkout), "lm_eval")
    tasks = checkout / "lm_eval" / "tasks"
    assert _files(tasks) - {"README.md"} == _files(tree) - {".hanyi-export.json"}
    families = re.findall(r"^\| \[(\w+)\]", (tasks / "README.md").read_text(encoding="utf-8"), re.M)
    assert {"cii", "punrebus", "unpie"} <= set(families)
    extras = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "nltk" in extras["unpie"] and "cii" not in extras  # cii's own code needs nothing beyond lm-eval
