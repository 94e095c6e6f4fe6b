"""The package layout: ``hanyi/data/`` holds builders only, and builders never import task glue."""

import ast
import pathlib

import hanyi

PKG = pathlib.Path(hanyi.__file__).parent


def _imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_data_builders_do_not_import_task_glue():
    offenders = {
        str(path.relative_to(PKG)): sorted(m for m in _imported_modules(path) if m.startswith("hanyi.tasks"))
        for path in sorted((PKG / "data").glob("*.py"))
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert offenders == {}, f"hanyi/data/ must not import hanyi.tasks: {offenders}"


def test_submission_and_report_code_lives_outside_data():
    assert not (PKG / "data" / "cvlue_submit.py").exists()
    assert not (PKG / "data" / "cvlue_breakdown.py").exists()
    from hanyi.report.cvlue_breakdown import category_rows
    from hanyi.submit import SubmissionError, main
    from hanyi.submit.cvlue import predictions_from_samples, vqa_submission

    assert callable(category_rows) and callable(main) and callable(predictions_from_samples)
    assert vqa_submission([{"question_id": 1, "image": "i", "answer": ""}], []) == (
        [{"question_id": 1, "image": "i", "answer": ""}],
        1,
    )
    assert issubclass(SubmissionError, ValueError)


def test_python_m_hanyi_submit_and_report_breakdown_run(tmp_path):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "hanyi.submit", str(tmp_path), "--benchmark", "cvlue"], capture_output=True, text=True
    )
    assert out.returncode == 2 and out.stderr.startswith("python -m hanyi.submit: "), out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "hanyi.report.cvlue_breakdown", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "usage:" in out.stdout, out.stderr


def test_split_modules_stay_within_300_lines():
    split = ["data/cvlue.py", "data/punrebus.py", "data/unpie.py", "submit/__init__.py"]
    sizes = {rel: len((PKG / rel).read_text(encoding="utf-8").splitlines()) for rel in split}
    assert all(n <= 300 for n in sizes.values()), sizes


def test_each_benchmark_utils_py_stays_within_the_style_budget():
    """docs/dev/contributing.md (STYLE): a benchmark's ``utils.py`` holds only the hooks its YAMLs name, under 150 lines;
    aggregation hooks live beside it (``aggregate.py``)."""
    sizes = {
        str(path.relative_to(PKG)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((PKG / "tasks").glob("*/utils.py"))
    }
    assert len(sizes) == len(hanyi.BENCHMARKS) and all(n < 150 for n in sizes.values()), sizes


def test_task_modules_import_no_private_name_of_another_module():
    """A helper two modules of a benchmark folder share has a public name in its own module (``scoring.py``,
    ``loading.py``, ``prompts.py``): ``from hanyi.tasks.<bench>.utils import _helper`` ties a hook module to another's
    internals, and the upstream export copies those modules as they are."""
    offenders = {}
    for path in sorted((PKG / "tasks").glob("*/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hanyi.tasks."):
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    offenders.setdefault(str(path.relative_to(PKG)), []).extend(f"{node.module}.{n}" for n in private)
    assert offenders == {}, offenders
