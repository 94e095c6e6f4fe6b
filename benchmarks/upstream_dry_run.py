"""A dry run of the upstream pull requests: the exports copied into upstream checkouts, checked as a maintainer would.

    git clone /path/to/lmms-eval /tmp/lmms-eval          # any checkout (the fetch tool's mirror, a fork, ...)
    python benchmarks/upstream_dry_run.py --lmms-eval /tmp/lmms-eval [--lm-eval /tmp/lm-evaluation-harness]

For lmms-eval it exports (hub mode, what the pull request holds) into a scratch copy of the checkout's work tree
(``git worktree``-free: ``git clone --shared``), then checks, one line each:

* ``git add --dry-run``: every exported file is staged (upstream's own ``.gitignore``);
* formatters: black and isort at the versions and arguments of the checkout's ``.pre-commit-config.yaml`` change
  nothing (a version other than the installed one is reported, not installed);
* the checkout's ``test/eval/test_task_pipeline.py`` fails no test with the exported tasks present that it does not
  fail without them (it checks upstream's mainstream tasks through a ``TaskManager`` that indexes every folder);
* every group, with the sample export (``--data-root sample``) in place and ``hanyi`` blocked, loads and scores with
  lmms-eval's ``dummy`` model (``--limit 4``), with the checkout's lmms-eval first on ``PYTHONPATH``.

For lm-evaluation-harness (``hanyi export lm-eval``): ``git add --dry-run``; ruff format and ruff check with the
checkout's config (the version its pre-commit pins is reported when another is installed); the checkout's
``tests/test_tasks.py`` on the exported task YAMLs (listed as CI lists changed files; group YAMLs left out, as
lm-eval's TaskManager refuses a group loaded beside its tasks), ``hanyi`` blocked, with the tasks
pointed at synthetic data built for the run (size 48: at least 10 docs a task) (the bundled samples hold 3-6 docs a task, under
lm-eval's default test limit of 10). Exit status 1 when a check fails. Nothing is written outside a temporary directory.
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


def export(out: str, data_root: str) -> None:
    from hanyi.export import lmms_eval_tasks as lt

    lt.export(out, data_root=data_root)


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


def precommit_versions(checkout: str) -> dict:
    """``{hook: (rev, args)}`` of black and isort in the checkout's ``.pre-commit-config.yaml``."""
    import yaml

    with open(os.path.join(checkout, ".pre-commit-config.yaml"), encoding="utf-8") as f:
        config = yaml.safe_load(f)
    out = {}
    for repo in config.get("repos", []):
        for hook in repo.get("hooks", []):
            if hook.get("id") in ("black", "isort"):
                out[hook["id"]] = (str(repo.get("rev", "")).lstrip("v"), hook.get("args", []))
    return out


PIPELINE_TEST = os.path.join("test", "eval", "test_task_pipeline.py")


def pipeline_test(work: str, env: dict) -> tuple[str, list[str]]:
    """The checkout's task-pipeline test: its summary line and the failing test ids."""
    proc = run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", PIPELINE_TEST], cwd=work, env=env
    )
    summary = (proc.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    return summary, re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)


def check_lmms_eval(checkout: str, tmp: str) -> bool:
    ok = True
    work = os.path.join(tmp, "lmms-eval")
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    head = run(["git", "rev-parse", "--short", "HEAD"], cwd=work).stdout.strip()
    print(f"lmms-eval checkout at {head}", flush=True)
    tasks = os.path.join(work, "lmms_eval", "tasks")
    env = blocked_env(tmp, work)
    before = pipeline_test(work, env)[1] if os.path.isfile(os.path.join(work, PIPELINE_TEST)) else []
    hub = os.path.join(tmp, "export-hub")
    export(hub, "hub")
    copied = copy_in(hub, tasks)
    staged = run(["git", "add", "--dry-run", "--", *sorted({p.split(os.sep)[0] for p in copied})],
                 cwd=tasks).stdout  # fmt: skip
    staged = {m.group(1) for m in re.finditer(r"^add '(.+)'$", staged, flags=re.M)}
    missing = [p for p in copied if f"lmms_eval/tasks/{p}" not in staged]
    ok &= line(not missing, "lmms-eval git add --dry-run", f"{len(copied) - len(missing)} of {len(copied)} exported "
               f"files staged" + (f"; left out: {', '.join(missing[:5])}" if missing else ""))  # fmt: skip
    import black
    import isort

    wanted = precommit_versions(work)
    py = [os.path.join(tasks, p) for p in copied if p.endswith(".py")]
    for tool, module, installed in (("black", "black", black.__version__), ("isort", "isort", isort.__version__)):
        rev, args = wanted.get(tool, ("", []))
        proc = run([sys.executable, "-m", module, "--check", "--quiet", *args, *py], cwd=work)
        same = rev == installed
        ok &= line(proc.returncode == 0 and same, f"lmms-eval {tool} {' '.join(args)}",
                   f"{len(py)} files unchanged" if proc.returncode == 0 else f"would change files: "
                   f"{proc.stderr.strip().splitlines()[:3]}")  # fmt: skip
        if not same:
            print(f"     (configured {tool} {rev}, installed {installed})", flush=True)
    # the sample export replaces the hub one for the runs (the data is offline)
    sample = os.path.join(tmp, "export-sample")
    export(sample, "sample")
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


def ruff_rev(checkout: str) -> str:
    """The ruff version of the checkout's ``.pre-commit-config.yaml`` (lm-eval formats and lints with ruff)."""
    import yaml

    with open(os.path.join(checkout, ".pre-commit-config.yaml"), encoding="utf-8") as f:
        repos = yaml.safe_load(f).get("repos", [])
    return next((str(r.get("rev", "")).lstrip("v") for r in repos if "ruff" in str(r.get("repo", ""))), "")


#: lm-eval's ``tests/test_tasks.py`` tests the tasks CI lists as changed, in this file (``tests/utils.py``).
CHANGED = os.path.join(".github", "outputs", "tasks_all_changed_and_modified_files.txt")
LM_EVAL_DOCS = 48  # synthetic size per benchmark: every lm-eval task has >= 10 docs, lm-eval's default test limit


def check_lm_eval(checkout: str, tmp: str, ruff: str | None = None) -> bool:
    from hanyi.data.build_samples import build
    from hanyi.export import lm_eval_tasks

    ok = True
    work = os.path.join(tmp, "lm-eval")
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    head = run(["git", "rev-parse", "--short", "HEAD"], cwd=work).stdout.strip()
    print(f"lm-eval checkout at {head}", flush=True)
    tasks = os.path.join(work, "lm_eval", "tasks")
    hub = os.path.join(tmp, "lm-export-hub")
    lm_eval_tasks.export(hub, data_root="hub")
    copied = copy_in(hub, tasks)
    staged = run(["git", "add", "--dry-run", "--", *sorted({p.split(os.sep)[0] for p in copied})], cwd=tasks).stdout
    staged = {m.group(1) for m in re.finditer(r"^add '(.+)'$", staged, flags=re.M)}
    missing = [p for p in copied if f"lm_eval/tasks/{p}" not in staged]
    ok &= line(not missing, "lm-eval git add --dry-run", f"{len(copied) - len(missing)} of {len(copied)} exported "
               f"files staged" + (f"; left out: {', '.join(missing[:5])}" if missing else ""))  # fmt: skip
    py = [os.path.join(tasks, p) for p in copied if p.endswith(".py")]
    rev = ruff_rev(work)
    ruff = [ruff] if ruff else [sys.executable, "-m", "ruff"]
    installed = run([*ruff, "--version"]).stdout.split()[-1]
    for cmd in (["format", "--check"], ["check"]):
        proc = run([*ruff, *cmd, "--no-cache", *py], cwd=work)
        count = re.search(r"Found (\d+) error", proc.stdout)
        detail = (f"{len(py)} files unchanged" if cmd[0] == "format" else f"{len(py)} files clean") if not \
            proc.returncode else (proc.stdout.strip().splitlines() or ["?"])[-1] if not count else f"{count.group(1)} findings"  # fmt: skip
        ok &= line(
            proc.returncode == 0 and rev == installed, f"lm-eval ruff {' '.join(cmd)} (checkout's config)", detail
        )
        if rev != installed:
            print(f"     (configured ruff {rev}, installed {installed})", flush=True)
    # the tasks on a larger synthetic dataset, so that every task has lm-eval's default test limit of 10 docs
    data, synthetic = os.path.join(tmp, "lm-data"), os.path.join(tmp, "lm-export-synthetic")
    for bench in lm_eval_tasks.benchmarks():
        build((bench,), root=data, size=LM_EVAL_DOCS, dirname=bench)
    lm_eval_tasks.export(synthetic, data_root=data)
    # the task YAMLs, not the groups': lm-eval's TaskManager refuses a group loaded beside its own tasks (duplicate)
    yamls = [os.path.join("lm_eval", "tasks", p) for p in copy_in(synthetic, tasks) if p.endswith(".yaml")]
    yamls = [p for p in yamls if not re.search(r"^group:", open(os.path.join(work, p), encoding="utf-8").read(), re.M)]
    os.makedirs(os.path.dirname(os.path.join(work, CHANGED)), exist_ok=True)
    with open(os.path.join(work, CHANGED), "w", encoding="utf-8") as f:
        f.write(" ".join(yamls))
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
    ok &= line(not failed and "error" not in summary, f"lm-eval tests/test_tasks.py ({len(yamls)} exported YAMLs, hanyi blocked, "
               f"synthetic data of size {LM_EVAL_DOCS})", summary + (f"; new failures: {', '.join(failed[:5])}" if failed else ""))  # fmt: skip
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
    parser.add_argument("--ruff", help="a ruff executable at the lm-eval checkout's pre-commit version (default: "
                        "this Python's ruff), e.g. from pip install --target DIR ruff==<rev>")  # fmt: skip
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory(prefix="hanyi-dry-run-") as tmp:
        if args.lmms_eval:
            ok &= check_lmms_eval(os.path.abspath(args.lmms_eval), tmp)
        if args.lm_eval:
            ok &= check_lm_eval(os.path.abspath(args.lm_eval), tmp, args.ruff)
    print("all checks passed" if ok else "some checks failed", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
