"""A dry run of the upstream pull requests: each one applied to an upstream checkout and checked as a maintainer would.

    git clone /path/to/lmms-eval /tmp/lmms-eval          # any checkout (the fetch tool's mirror, a fork, ...)
    python benchmarks/upstream_dry_run.py --lmms-eval /tmp/lmms-eval [--lm-eval /tmp/lm-evaluation-harness]

The exports are made from an installed hanyi: a wheel of this tree (hatchling, the build backend) unpacked into a
temporary ``site`` directory, exported in a subprocess whose ``hanyi`` is that copy, so what the clone has and the
wheel lacks (``docs/``) shows. Each pull request is applied to a scratch clone (``git clone --shared``) as
:func:`hanyi.export.pr.apply` lands it (the folders, the upstream task list, lm-eval's ``pyproject.toml`` extras; the
description stays outside) and committed; then, one line each:

* lmms-eval, the series (``hanyi export lmms-eval --series``: the shared code first, then one pull request per
  benchmark): each pull request's Python lines against the cap of 2,500;
* lmms-eval, one self-contained pull request per benchmark (``hanyi export lmms-eval --benchmarks B``): its Python lines against
  the cap of 2,500; its README (paper, BibTeX, data access, requirements, nothing of hanyi); no file ignored by the
  checkout's ``.gitignore``; the checkout's whole ``.pre-commit-config.yaml``, run as its CI runs it on the changed
  files with the hooks at the pinned versions (:mod:`hanyi.export.hooks`; a venv of the pins from PyPI, built here
  or named with ``--hooks-python``), passes and changes nothing;
* lmms-eval, the sample export of all five in place and ``hanyi`` blocked: the checkout's
  ``test/eval/test_task_pipeline.py`` fails nothing it does not fail without the export, and every group loads and
  scores with lmms-eval's ``dummy`` model (``--limit 4``), the checkout's lmms-eval first on ``PYTHONPATH``;
* lm-evaluation-harness, one pull request per benchmark (``hanyi export lm-eval --benchmarks B``): the same size,
  README, ignore and whole pre-commit checks; then
  the checkout's ``tests/test_tasks.py`` over every exported YAML (as its CI lists changed files; groups included),
  ``hanyi`` blocked, the tasks pointed at synthetic data built for the run (size 48: at least 10 docs a task, lm-eval's
  default test limit).

Not done here: a fresh venv per upstream with only the declared extras (torch from PyPI is the multi-GB CUDA build);
the runs use this venv with ``hanyi`` blocked. Exit status 1 when a check fails. Nothing is written outside a
temporary directory.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")
SHADOW = 'raise ImportError("hanyi is blocked: an exported task folder tried to import it")\n'


def run(cmd, cwd=None, env=None, timeout=1800):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def line(ok, check: str, detail: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {check}: {detail}", flush=True)
    return bool(ok)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PR_PYTHON_LINES = 2500  # the most Python lines of one pull request, shared code included
EXPORT = r"""
import sys
import hanyi
from hanyi.export import lm_eval_tasks, lmms_eval_tasks, series
assert hanyi.__file__.startswith(sys.argv[1]), hanyi.__file__
kind, out, data_root, benchmarks = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
if kind == "series":
    series.export_series(out, data_root)
elif kind == "lmms-eval":
    lmms_eval_tasks.export(out, benchmarks, data_root)
else:
    lm_eval_tasks.export(out, data_root, only=benchmarks or None)
"""
_SITE: dict = {}


def installed_site(tmp: str) -> str:
    """A wheel of this tree, unpacked (what ``pip install`` puts in site-packages); built once per run."""
    if "site" not in _SITE:
        import zipfile

        from hatchling.build import build_wheel

        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            name = build_wheel(os.path.join(tmp, "dist"))
        finally:
            os.chdir(cwd)
        site = os.path.join(tmp, "site")
        with zipfile.ZipFile(os.path.join(tmp, "dist", name)) as whl:
            whl.extractall(site)
        _SITE["site"] = site
        docs = os.path.isfile(os.path.join(site, "hanyi", "docs", "upstream.md"))
        print(f"{'PASS' if docs else 'FAIL'} exports from an installed wheel ({name}): docs shipped as hanyi/docs: "
              f"{'yes' if docs else 'no'}", flush=True)  # fmt: skip
    return _SITE["site"]


def export(out: str, data_root: str, tmp: str, kind: str = "lmms-eval", benchmarks=()) -> None:
    site = installed_site(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    env.update(PYTHONPATH=site, HANYI_NO_AUTOHOOK="1")
    proc = run([sys.executable, "-c", EXPORT, site, kind, out, data_root, *benchmarks], cwd=tmp, env=env)
    if proc.returncode:
        raise SystemExit(f"export from the wheel failed: {proc.stderr.strip()[-800:]}")


def python_lines(out: str) -> int:
    return sum(
        sum(1 for _ in open(os.path.join(r, f), encoding="utf-8"))
        for r, _, files in os.walk(out)
        for f in files
        if f.endswith(".py")
    )


_HANYI_LEFTOVERS = re.compile(
    r"\bissues? \d+|\(#\d+\)|\.\./docs/|re-export instead|and re-export|hanyi export|"
    r"\.cache/hanyi"
)


def check_content(out: str, label: str, host: str) -> bool:
    """README content (paper, BibTeX, data access, requirements) and no hanyi leftovers in any exported file."""
    ok = True
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name, "README.md")
        if not os.path.isfile(path) or name in ("_task_utils", "cultural_utils"):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        paper = text.split("## Paper", 1)[1].split("\n## ", 1)[0] if "## Paper" in text else ""
        prose = re.sub(r"```bibtex.*?```|###.*", "", paper, flags=re.S).strip()
        missing = [what for what, good in (("paper", len(prose) > 80), ("BibTeX", re.search(r"```bibtex\n@", text)),
                   ("data access", "The official release:" in text), ("requirements", "## Requirements" in text))
                   if not good]  # fmt: skip
        ok &= line(not missing, f"{label} {name}/README.md", "paper, BibTeX, data access and requirements"
                   if not missing else f"lacks {', '.join(missing)}")  # fmt: skip
    found = []
    for root, _, files in os.walk(out):
        for f in files:
            if f.endswith((".py", ".md", ".yaml", "_yaml", ".jinja")) and f != "PULL_REQUEST.md":
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    found += [f"{os.path.relpath(os.path.join(root, f), out)}: {m.group(0)}"
                              for m in _HANYI_LEFTOVERS.finditer(fh.read())]  # fmt: skip
    ok &= line(not found, f"{label} nothing of hanyi in exported files (issue numbers, links into its docs, "
               "re-export notices, its cache)", f"{len(found)} found" + (f": {'; '.join(found[:4])}" if found else ""))  # fmt: skip
    return ok


def apply_pr(checkout: str, out: str, host: str, benchmarks, tmp: str, name: str, hooks_python: str) -> tuple:
    """Clone, commit the pull request as :func:`hanyi.export.pr.apply` lands it, check ignore and pre-commit."""
    from hanyi.export import hooks, pr

    work = os.path.join(tmp, name)
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    pr.apply(out, work, host, list(benchmarks))
    label = "lmms-eval" if host == "lmms_eval" else "lm-eval"
    ignored = run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--", f"{host}/tasks"],
                  cwd=work).stdout.split()  # fmt: skip
    files = run(["git", "ls-files", "--others", "--exclude-standard", "--", f"{host}/tasks"], cwd=work).stdout.split()
    ok = line(not ignored, f"{label} {name}: git add stages every file", f"{len(files)} new files, "
              f"{len(ignored)} ignored" + (f": {', '.join(ignored[:4])}" if ignored else ""))  # fmt: skip
    git = ["git", "-c", "user.email=dry-run@example.invalid", "-c", "user.name=dry run", "-c", "commit.gpgsign=false"]
    run([*git, "add", "-A"], cwd=work).check_returncode()
    run([*git, "commit", "-q", "-m", f"Add {name}"], cwd=work).check_returncode()
    rc, output, problems = hooks.run(os.path.join(work, ".pre-commit-config.yaml"), work, python=hooks_python)
    changed = run(["git", "status", "--porcelain"], cwd=work).stdout.split("\n")
    changed = [c.strip() for c in changed if c.strip()]
    failed = [h.split(".")[0] for h in output.splitlines() if h.endswith("Failed")]
    passed = len([h for h in output.splitlines() if h.endswith("Passed")])
    ok &= line(rc == 0 and not changed and not problems, f"{label} {name}: whole .pre-commit-config.yaml (pinned "
               "hooks, on the changed files, as CI)", f"{passed} hooks passed" + (f"; failed: {', '.join(failed)}"
               if failed else "") + (f"; files changed: {', '.join(changed[:4])}" if changed else "")
               + (f"; {'; '.join(problems)}" if problems else ""))  # fmt: skip
    if failed:
        print("     " + "\n     ".join(output.strip().splitlines()[-12:]), flush=True)
    return ok, work


def hooks_venv(tmp: str, configs: list[str]) -> str:
    """A venv with the hooks of ``configs`` at their pins and pre-commit, from PyPI; its python."""
    from hanyi.export import hooks

    venv = os.path.join(tmp, "hooks-venv")
    run([sys.executable, "-m", "venv", venv]).check_returncode()
    py = os.path.join(venv, "bin", "python")
    pins = sorted({p for c in configs for p in hooks.pins(c)})
    proc = run([py, "-m", "pip", "install", "-q", "pre-commit", *pins])
    if proc.returncode:
        raise SystemExit(f"cannot install the pinned hooks ({' '.join(pins)}): {proc.stderr.strip()[-400:]}")
    return py


def copy_in(export_dir: str, tasks_dir: str) -> list[str]:
    """Copy the export's folders into ``lmms_eval/tasks/``; returns the copied files, relative to ``tasks_dir``."""
    copied = []
    for name in sorted(os.listdir(export_dir)):
        src = os.path.join(export_dir, name)
        if not os.path.isdir(src):
            continue
        shutil.copytree(src, os.path.join(tasks_dir, name), dirs_exist_ok=True)
        for root, _, files in os.walk(src):
            copied += [os.path.relpath(os.path.join(root, f), export_dir) for f in files]
    return sorted(copied)


PIPELINE_TEST = os.path.join("test", "eval", "test_task_pipeline.py")
#: lm-eval's ``tests/test_tasks.py`` tests the tasks CI lists as changed, in this file (``tests/utils.py``).
CHANGED = os.path.join(".github", "outputs", "tasks_all_changed_and_modified_files.txt")
LM_EVAL_DOCS = 48  # synthetic size per benchmark: every lm-eval task has >= 10 docs, lm-eval's default test limit


def pipeline_test(work: str, env: dict) -> tuple[str, list[str]]:
    """The checkout's task-pipeline test: its summary line and the failing test ids."""
    proc = run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", PIPELINE_TEST], cwd=work, env=env
    )
    summary = (proc.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    return summary, re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)


def check_lmms_eval(checkout: str, tmp: str, hooks_python: str) -> bool:
    ok = True
    head = run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout).stdout.strip()
    print(f"lmms-eval checkout at {head}", flush=True)
    prs = os.path.join(tmp, "series")  # the series: shared code first, then one pull request per benchmark
    export(prs, "hub", tmp, "series")
    for name in sorted(os.listdir(prs)):
        n = python_lines(os.path.join(prs, name))
        ok &= line(n <= PR_PYTHON_LINES, f"lmms-eval series PR {name}: size", f"{n:,} Python lines "
                   f"(cap {PR_PYTHON_LINES:,}; hanyi export lmms-eval --series)")  # fmt: skip
    for bench in GROUPS:  # one self-contained pull request per benchmark, hub mode (what the pull request holds)
        out = os.path.join(tmp, f"pr-{bench}")
        export(out, "hub", tmp, "lmms-eval", [bench])
        n = python_lines(out)
        ok &= line(n <= PR_PYTHON_LINES, f"lmms-eval PR {bench}: size", f"{n:,} Python lines, shared code included "
                   f"(cap {PR_PYTHON_LINES:,}); {sum(len(f) for _, _, f in os.walk(out))} files")  # fmt: skip
        ok &= check_content(out, f"lmms-eval PR {bench}:", "lmms_eval")
        ok &= apply_pr(checkout, out, "lmms_eval", [bench], tmp, f"lmms-eval-{bench}", hooks_python)[0]
    work = os.path.join(tmp, "lmms-eval")
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    tasks = os.path.join(work, "lmms_eval", "tasks")
    env = blocked_env(tmp, work)
    before = pipeline_test(work, env)[1] if os.path.isfile(os.path.join(work, PIPELINE_TEST)) else []
    # the sample export of all five (the data is offline) for the runs
    sample = os.path.join(tmp, "export-sample")
    export(sample, "sample", tmp, "lmms-eval", GROUPS)
    copy_in(sample, tasks)
    if os.path.isfile(os.path.join(work, PIPELINE_TEST)):
        summary, failed = pipeline_test(work, env)
        new = sorted(set(failed) - set(before))
        ok &= line(not new, f"lmms-eval {PIPELINE_TEST}", f"{summary}; " + (f"new failures: {', '.join(new)}" if new
                   else f"failing without the export too: {', '.join(before) or 'none'}"))  # fmt: skip
    for group in GROUPS:
        proc = run([sys.executable, "-m", "lmms_eval", "--model", "dummy", "--tasks", group, "--limit", "4"],
                   cwd=tmp, env=env)  # fmt: skip
        rows = len(re.findall(r"^\|.*\|\s*$", proc.stdout, flags=re.M))
        err = (proc.stderr.strip().splitlines() or [""])[-1][:200]
        ok &= line(proc.returncode == 0 and rows > 2, f"lmms-eval --tasks {group} --model dummy (hanyi blocked)",
                   f"{rows} table rows" if proc.returncode == 0 else f"exit {proc.returncode}: {err}")  # fmt: skip
    return ok


def check_lm_eval(checkout: str, tmp: str, hooks_python: str) -> bool:
    from hanyi.data.build_samples import build
    from hanyi.export import lm_eval_tasks

    head = run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout).stdout.strip()
    print(f"lm-eval checkout at {head}", flush=True)
    ok, benches = True, lm_eval_tasks.benchmarks()
    for bench in benches:  # one pull request per benchmark, hub mode
        out = os.path.join(tmp, f"lm-pr-{bench}")
        export(out, "hub", tmp, "lm-eval", [bench])
        n = python_lines(out)
        ok &= line(n <= PR_PYTHON_LINES, f"lm-eval PR {bench}: size", f"{n:,} Python lines, shared code included (cap "
                   f"{PR_PYTHON_LINES:,}); {sum(len(f) for _, _, f in os.walk(out))} files")  # fmt: skip
        ok &= check_content(out, f"lm-eval PR {bench}:", "lm_eval")
        ok &= apply_pr(checkout, out, "lm_eval", [bench], tmp, f"lm-eval-{bench}", hooks_python)[0]
    work = os.path.join(tmp, "lm-eval")
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    tasks = os.path.join(work, "lm_eval", "tasks")
    # the tasks on a larger synthetic dataset, so that every task has lm-eval's default test limit of 10 docs
    data, synthetic = os.path.join(tmp, "lm-data"), os.path.join(tmp, "lm-export-synthetic")
    for bench in benches:
        build((bench,), root=data, size=LM_EVAL_DOCS, dirname=bench)
    export(synthetic, data, tmp, "lm-eval")
    yamls = [os.path.join("lm_eval", "tasks", p) for p in copy_in(synthetic, tasks) if p.endswith(".yaml")]
    os.makedirs(os.path.dirname(os.path.join(work, CHANGED)), exist_ok=True)
    with open(os.path.join(work, CHANGED), "w", encoding="utf-8") as f:
        f.write(" ".join(yamls))  # every exported YAML, groups included, as CI lists the changed files
    env = blocked_env(tmp, work)
    test = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "tests/test_tasks.py"]
    before = set(re.findall(r"^FAILED \S+::(\w+)\[(\w+)\]", run([*test, "-k", "not TestNewTasksElseDefault"],
                                                              cwd=work, env=env).stdout, flags=re.M))  # fmt: skip
    proc = run(test, cwd=work, env=env)
    summary = (proc.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    failed = [f"{t}[{p}]" for t, p in re.findall(r"^FAILED \S+::(\w+)\[(\w+)\]", proc.stdout, flags=re.M)
              if (t, p) not in before]  # fmt: skip
    if before:
        summary += f"; failing without the export too (hub tests, offline): {', '.join(sorted(p for _, p in before))}"
    errors = re.findall(r"^E\s+(.*Error.*)$", proc.stdout, flags=re.M)[:1]
    ok &= line(not failed and "error" not in summary, f"lm-eval tests/test_tasks.py ({len(yamls)} exported YAMLs, groups "
               f"included, hanyi blocked, synthetic data of size {LM_EVAL_DOCS})", summary + (f"; new failures: "
               f"{', '.join(failed[:5])}" if failed else "") + (f"; {errors[0][:200]}" if errors and failed else ""))  # fmt: skip
    return ok


def blocked_env(tmp: str, work: str) -> dict:
    """The environment of a run with ``hanyi`` unimportable and the checkout first on ``PYTHONPATH``, offline."""
    shadow = os.path.join(tmp, "shadow", "hanyi")
    os.makedirs(shadow, exist_ok=True)
    with open(os.path.join(shadow, "__init__.py"), "w") as f:
        f.write(SHADOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    env.update(PYTHONPATH=os.pathsep.join([os.path.join(tmp, "shadow"), work]), HANYI_NO_AUTOHOOK="1",
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")  # fmt: skip
    return env


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lmms-eval", help="an lmms-eval checkout (git work tree)")
    parser.add_argument("--lm-eval", help="an lm-evaluation-harness checkout (git work tree)")
    parser.add_argument("--hooks-python", help="the python of a venv with pre-commit and the checkouts' hooks at their "
                        "pinned versions (default: one is built from PyPI in the temporary directory)")  # fmt: skip
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="hanyi-dry-run-") as tmp:
        checkouts = [os.path.abspath(c) for c in (args.lmms_eval, args.lm_eval) if c]
        hooks_python = args.hooks_python or hooks_venv(tmp, [os.path.join(c, ".pre-commit-config.yaml")
                                                            for c in checkouts])  # fmt: skip
        if args.lmms_eval:
            ok &= check_lmms_eval(os.path.abspath(args.lmms_eval), tmp, hooks_python)
        if args.lm_eval:
            ok &= check_lm_eval(os.path.abspath(args.lm_eval), tmp, hooks_python)
    print("all checks passed" if ok else "some checks failed", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
