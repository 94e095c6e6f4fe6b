"""A dry run of the upstream pull requests: each one applied to an upstream checkout and checked as a maintainer would,
in a clean venv per upstream that has only what the pull request declares.

    git clone /path/to/lmms-eval /tmp/lmms-eval          # any checkout (the fetch tool's mirror, a fork, ...)
    python benchmarks/upstream_dry_run.py --lmms-eval /tmp/lmms-eval [--lm-eval /tmp/lm-evaluation-harness] \
        [--venvs DIR] [--torch-index URL ...]

The exports are made from an installed hanyi: a wheel of this tree (hatchling, the build backend) unpacked into a
temporary ``site`` directory (what ``pip install`` of the wheel puts in site-packages), exported in a subprocess whose
``hanyi`` is that copy, so what the clone has and the wheel lacks shows. Each pull request is applied to a scratch
clone (``git clone --shared``) as :func:`hanyi.export.pr.apply` lands it (the folders, the upstream task list,
lm-eval's ``pyproject.toml`` extra; the description stays outside) and committed; then, one line each:

* lmms-eval, the series (``hanyi export lmms-eval --series``): each pull request's Python lines against the cap;
* per pull request (``hanyi export lmms-eval --benchmarks B``, ``hanyi export lm-eval --benchmarks B``; hub mode,
  what the pull request holds): its Python lines against the cap of 2,500; its README (paper, BibTeX, dataset source,
  requirements) and nothing of hanyi in any file; no file ignored by the checkout's ``.gitignore``; the checkout's
  whole ``.pre-commit-config.yaml`` at its pinned versions (:mod:`hanyi.export.hooks`, hooks from PyPI in a venv of
  their own, as pre-commit gives each hook) on the changed files, passing and changing nothing;
* per pull request, its venv (:mod:`upstream_venvs`): ``python -m venv`` with the torch build that imports on this
  CPU, the checkout installed with the extras its CI installs, and the packages the pull request declares (lmms-eval:
  the README's ``pip install`` line; lm-eval: the extra the pull request adds): no hanyi in it, torch runs;
* in that venv, with the checkout first on ``PYTHONPATH``: lmms-eval's ``test/eval/test_task_pipeline.py`` fails
  nothing it does not fail without the pull request, and the benchmark's group loads and scores with the ``dummy``
  model (``--limit 4``); lm-eval's CI task test ``tests/test_tasks.py`` over every file the pull request changes under
  ``lm_eval/tasks/`` (as its CI lists them; the group YAMLs included), with ``PIL`` and ``cv2`` unimportable (text-only
  tasks import no image library).

Data: a pull request names hub ids (or placeholders that stop at load), which an offline run cannot reach; only the
``dataset_path`` of the applied files (and the shared ``EXPORTED_DATASET_PATHS``) is pointed at a local folder of the
hub layout, built by hanyi's deterministic sample builders (lmms-eval: the bundled samples; lm-eval: size 48, every
task >= 10 docs, lm-eval's test limit). Venvs are cached under ``--venvs`` by a hash of what went in (a rerun builds
nothing). Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile


def _beside(name: str):
    """A module of this folder (upstream_venvs.py), loaded by path: putting benchmarks/ on sys.path would let every
    script here shadow an installed package of its name in the process that imports this one (the tests)."""
    import importlib.util

    key = f"hanyi_bench_{name}"  # not the bare name: a module registered under it would be found as installed
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            key, os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        )
        sys.modules[key] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[key]


uv = _beside("upstream_venvs")

GROUPS = ("punrebus", "cvlue", "cii", "unpie", "vulca")


def run(cmd, cwd=None, env=None, timeout=1800):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def line(ok, check: str, detail: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'} {check}: {detail}", flush=True)
    return bool(ok)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PR_PYTHON_LINES = 2500  # the most Python lines of one pull request, shared code included
EXPORT = r"""
import json
import sys
import hanyi
from hanyi.export import series
assert hanyi.__file__.startswith(sys.argv[1]), hanyi.__file__
kind, out, data_root, benchmarks = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
if kind == "series":  # hanyi export lmms-eval --series
    written = {"python_lines": series.export_series(out, data_root), "series": True}
elif kind == "lmms-eval":  # hanyi export lmms-eval --benchmarks B
    written = series.export_prs(out, benchmarks, data_root)
else:  # hanyi export lm-eval --benchmarks B
    written = series.export_lm_eval(out, data_root, only=benchmarks or None)
print(json.dumps({"series": written["series"]}))
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


def export(out: str, data_root: str, tmp: str, kind: str = "lmms-eval", benchmarks=()) -> list[str]:
    """Export as ``hanyi export`` does, from the installed wheel; the pull request folders in merge order (``[out]``
    for one pull request, else the series' folders, shared code first)."""
    import json

    from hanyi.export import pr

    site = installed_site(tmp)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HANYI_")}
    env.update(PYTHONPATH=site, HANYI_NO_AUTOHOOK="1")
    proc = run([sys.executable, "-c", EXPORT, site, kind, out, data_root, *benchmarks], cwd=tmp, env=env)
    if proc.returncode:
        raise SystemExit(f"export from the wheel failed: {proc.stderr.strip()[-800:]}")
    if not json.loads(proc.stdout.strip().splitlines()[-1])["series"]:
        return [out]
    return [os.path.join(out, name) for name in pr.series_order(out)]


def python_lines(out: str) -> int:
    return sum(
        sum(1 for _ in open(os.path.join(r, f), encoding="utf-8"))
        for r, _, files in os.walk(out)
        for f in files
        if f.endswith(".py")
    )


_HANYI_DOCS = sorted(re.escape(n[:-3]) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
#: What of hanyi a maintainer would find in an exported file, by kind (each counted on the pull request's line).
LEFTOVERS = {
    "issue numbers": re.compile(r"\bissues? \d+|\(#\d+\)"),
    "links into hanyi's docs": re.compile(r"\.\./docs/|(?<![\w/.])docs/(?:" + "|".join(_HANYI_DOCS) + r")\.md"),
    "re-export notices": re.compile(r"re-export instead|and re-export|hanyi export"),
    "hanyi's cache": re.compile(r"\.cache/hanyi"),
    "'hanyi' in code": re.compile(r"\bhanyi\b"),  # .py, YAML and templates only: a README may say how to prepare data
}
_CODE = (".py", ".yaml", "_yaml", ".jinja")


def leftovers(path: str, text: str) -> list[tuple[str, str]]:
    """``(kind, match)`` of each piece of hanyi in the exported file ``path`` with content ``text``."""
    return [(kind, m.group(0)) for kind, rx in LEFTOVERS.items() if kind != "'hanyi' in code" or path.endswith(_CODE)
            for m in rx.finditer(text)]  # fmt: skip


def check_content(out: str, label: str, host: str, benchmarks=()) -> bool:
    """README content (paper, BibTeX, dataset source, requirements) of every folder of ``out`` (each of
    ``benchmarks`` must have one) and no hanyi leftovers in any exported file."""
    ok = True
    for bench in benchmarks:
        if not os.path.isfile(os.path.join(out, bench, "README.md")):
            ok &= line(False, f"{label} {bench}/README.md", "missing")
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name, "README.md")
        if not os.path.isfile(path) or name in ("_task_utils", "cultural_utils"):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        paper = text.split("## Paper", 1)[1].split("\n## ", 1)[0] if "## Paper" in text else ""
        prose = re.sub(r"```bibtex.*?```|###.*", "", paper, flags=re.S).strip()
        details = os.path.join(out, name, "DETAILS.md")
        if os.path.isfile(details):
            with open(details, encoding="utf-8") as f:
                text += f.read()
        missing = [what for what, good in (("paper", len(prose) > 80), ("BibTeX", re.search(r"```bibtex\n@", text)),
                   ("dataset source", "The official release:" in text), ("requirements", "## Requirements" in text),
                   ("definitions in DETAILS.md", "Not documented in the source page" not in text))
                   if not good]  # fmt: skip
        ok &= line(not missing, f"{label} {name}/README.md", "paper, BibTeX, dataset source, requirements; DETAILS.md defines"
                   if not missing else f"lacks {', '.join(missing)}")  # fmt: skip
    found: dict = {}
    for root, _, files in os.walk(out):
        for f in files:
            if f.endswith((*_CODE, ".md")) and f != "PULL_REQUEST.md":
                path = os.path.join(root, f)
                with open(path, encoding="utf-8") as fh:
                    for kind, what in leftovers(path, fh.read()):
                        found.setdefault(kind, []).append(f"{os.path.relpath(path, out)}: {what}")
    detail = "; ".join(f"{kind} {len(hits)} (e.g. {hits[0]})" for kind, hits in found.items())
    ok &= line(not found, f"{label} nothing of hanyi in exported files ({', '.join(LEFTOVERS)})", detail or "none")
    return ok


def land(checkout: str, prs: list[str], host: str, bench: str, tmp: str, hooks_python: str) -> tuple:
    """Clone ``checkout`` and land the pull requests ``prs`` (merge order) one commit each, as
    :func:`hanyi.export.pr.apply` lands them; per pull request: its size, its README content and no hanyi leftovers,
    nothing ignored by ``git add``, and the whole pre-commit config on its commit. ``(ok, work tree)``."""
    from hanyi.export import hooks, pr

    label = "lmms-eval" if host == "lmms_eval" else "lm-eval"
    work = os.path.join(tmp, f"{label}-{bench}")
    run(["git", "clone", "-q", "--shared", checkout, work]).check_returncode()
    git = ["git", "-c", "user.email=dry-run@example.invalid", "-c", "user.name=dry run", "-c", "commit.gpgsign=false"]
    ok = True
    for folder in prs:
        name = f"{label} PR {bench}" + (f" ({len(prs)} in series) {os.path.basename(folder)}" if len(prs) > 1 else "")
        n = python_lines(folder)
        ok &= line(n <= PR_PYTHON_LINES, f"{name}: size", f"{n:,} Python lines, shared code included (cap "
                   f"{PR_PYTHON_LINES:,}); {sum(len(f) for _, _, f in os.walk(folder))} files")  # fmt: skip
        benchmarks = [bench] if os.path.isdir(os.path.join(folder, bench)) else []
        ok &= check_content(folder, f"{name}:", host, benchmarks)
        extras = None
        if host == "lm_eval" and benchmarks and len(prs) > 1:  # a series: the extra its description declares
            with open(os.path.join(folder, "PULL_REQUEST.md"), encoding="utf-8") as f:
                extras = pr.declared_extras(f.read())
        pr.apply(folder, work, host, benchmarks, extras)
        ignored = run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--", f"{host}/tasks"],
                      cwd=work).stdout.split()  # fmt: skip
        files = run(["git", "ls-files", "--others", "--exclude-standard"], cwd=work).stdout.split()
        ok &= line(not ignored, f"{name}: git add stages every file", f"{len(files)} new files, "
                   f"{len(ignored)} ignored" + (f": {', '.join(ignored[:4])}" if ignored else ""))  # fmt: skip
        run([*git, "add", "-A"], cwd=work).check_returncode()
        run([*git, "commit", "-q", "-m", f"Add {os.path.basename(folder)}"], cwd=work).check_returncode()
        if benchmarks:
            ok &= check_landed(work, host, bench, f"{name}:")
        rc, output, problems = hooks.run(os.path.join(work, ".pre-commit-config.yaml"), work, python=hooks_python)
        changed = [c.strip() for c in run(["git", "status", "--porcelain"], cwd=work).stdout.split("\n") if c.strip()]
        failed = [h.split(".")[0] for h in output.splitlines() if h.endswith("Failed")]
        passed = len([h for h in output.splitlines() if h.endswith("Passed")])
        ok &= line(rc == 0 and not changed and not problems, f"{name}: whole .pre-commit-config.yaml (pinned hooks, "
                   "on its commit's files, as CI)", f"{passed} hooks passed" + (f"; failed: {', '.join(failed)}"
                   if failed else "") + (f"; files changed: {', '.join(changed[:4])}" if changed else "")
                   + (f"; {'; '.join(problems)}" if problems else ""))  # fmt: skip
        if failed or changed:  # where: ruff's locations, the files a fixer changed, else the output's end
            where = [ln.strip() for ln in output.splitlines() if re.match(r"\s*(-->|diff --git|\S+:\d+:\d+: )", ln)]
            print("     " + "\n     ".join(where[:12] or output.strip().splitlines()[-12:]), flush=True)
            run([*git, "checkout", "--", "."], cwd=work)  # the next pull request starts from the commit, not the fix
    return ok, work


def check_landed(work: str, host: str, bench: str, label: str) -> bool:
    """The benchmark's commit in ``work``: the upstream task list names it, the description stays out of the tree."""
    from hanyi.export import pr

    files = run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=work).stdout.split()
    listed = run(["git", "show", "HEAD", "--", pr.TASK_LIST[host]], cwd=work).stdout
    entry = any(ln.startswith("+") and bench in ln for ln in listed.splitlines()[1:])
    inside = [f for f in files if os.path.basename(f) == "PULL_REQUEST.md"]
    return line(entry and not inside, f"{label} task list and description", (f"{pr.TASK_LIST[host]} gains its entry"
                if entry else f"no entry for {bench} in {pr.TASK_LIST[host]}") + ("; PULL_REQUEST.md committed: "
                + ", ".join(inside) if inside else "; PULL_REQUEST.md stays outside the tree"))  # fmt: skip


def hooks_venv(root: str, configs: list[str]) -> str:
    """A venv with the hooks of ``configs`` at their pins and pre-commit, from PyPI (cached under ``root`` by the
    pins); its python."""
    import hashlib

    from hanyi.export import hooks

    pins = sorted({p for c in configs for p in hooks.pins(c)})
    venv = os.path.join(root, "hooks-" + hashlib.sha256(" ".join(pins).encode()).hexdigest()[:12])
    py = os.path.join(venv, "bin", "python")
    if not os.path.isfile(os.path.join(venv, "pins.txt")):
        run([sys.executable, "-m", "venv", "--clear", venv]).check_returncode()
        proc = run([py, "-m", "pip", "install", "-q", "pre-commit", *pins])
        if proc.returncode:
            raise SystemExit(f"cannot install the pinned hooks ({' '.join(pins)}): {proc.stderr.strip()[-400:]}")
        with open(os.path.join(venv, "pins.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(pins) + "\n")
    return py


PIPELINE_TEST = os.path.join("test", "eval", "test_task_pipeline.py")
#: lm-eval's ``tests/test_tasks.py`` tests the tasks CI lists as changed, in this file (``tests/utils.py``).
CHANGED = os.path.join(".github", "outputs", "tasks_all_changed_and_modified_files.txt")
LM_EVAL_DOCS = 48  # synthetic size per benchmark: every lm-eval task has >= 10 docs, lm-eval's default test limit
#: Image libraries a text-only task must not import (made unimportable for lm-eval's task test).
IMAGE_MODULES = ("PIL", "cv2")
_DATASET_PATH = re.compile(r"^dataset_path:.*$", re.M)


def changed_task_files(work: str, host: str) -> list[str]:
    """The files the last commit of ``work`` changed under ``<host>/tasks/``, as lm-eval's CI lists them
    (``tj-actions/changed-files`` on ``lm_eval/tasks/**``: every file, group YAMLs and ``_yaml`` templates included;
    its ``tests/utils.py`` keeps the ``.yaml`` ones)."""
    proc = run(["git", "diff", "--name-only", "--diff-filter=AM", "HEAD~1", "HEAD", "--", f"{host}/tasks"], cwd=work)
    proc.check_returncode()
    return sorted(proc.stdout.split())


def point_at_local(tasks: str, bench: str, local: str) -> list[str]:
    """Point the applied pull request's ``dataset_path`` of ``bench`` (its YAMLs, and the shared
    ``EXPORTED_DATASET_PATHS``) at the local folder ``local``; nothing else changes. The files changed."""
    changed = []
    for root, _, files in os.walk(tasks):
        for name in files:
            path = os.path.join(root, name)
            in_bench = os.path.relpath(path, tasks).split(os.sep)[0] == bench
            if in_bench and name.endswith((".yaml", "_yaml")):
                new = lambda t: _DATASET_PATH.sub(f'dataset_path: "{local}"', t)  # noqa: E731
            elif name == "sources.py" and os.path.basename(root) == "task_data":
                new = lambda t: re.sub(rf'("{bench}":\s*)"[^"]*"', lambda m: f'{m.group(1)}"{local}"', t)  # noqa: E731
            else:
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if new(text) != text:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new(text))
                changed.append(os.path.relpath(path, tasks))
    return sorted(changed)


def upstream_env(work: str, tmp: str, block=()) -> dict:
    """The environment of a run in an upstream venv: the checkout first on ``PYTHONPATH`` (after stubs that make
    ``block`` unimportable), offline, no ``HANYI_*`` variable."""
    paths = [work]
    if block:
        stubs = os.path.join(tmp, "blocked-" + "-".join(block))
        for mod in block:
            os.makedirs(os.path.join(stubs, mod), exist_ok=True)
            with open(os.path.join(stubs, mod, "__init__.py"), "w", encoding="utf-8") as f:
                f.write(f'raise ImportError("{mod} is blocked: a text-only task imported an image library")\n')
        paths.insert(0, stubs)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HANYI_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PYTHONPATH=os.pathsep.join(paths), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1", HF_HUB_DISABLE_PROGRESS_BARS="1")  # fmt: skip
    return env


def upstream_venv(label: str, host: str, checkout: str, packages, args, why: bool = False) -> str:
    """Build (or reuse) the venv of ``host`` with the declared ``packages``, print what it is (``why``: with the
    reasons for torch and the held-back releases); its python."""
    spec = uv.spec_for(host, git_head(checkout), packages)
    python, secs, cached = uv.build(spec, checkout, args.venvs, tuple(args.torch_index or ()))
    have = uv.probe(python)
    ok = "error" not in have and not have.get("hanyi") and have.get("torch_runs")
    detail = (f"{spec.describe(why)}; " + ("cached" if cached else f"built in {secs:.0f} s") + "; "
              + (have["error"] if "error" in have else f"torch {have['torch']} runs on this CPU"
                 f"{', torchvision ' + have['torchvision'] if have['torchvision'] else ', no torchvision'}"
                 + (f" ({uv.TORCH_WHY[host]})" if why else "")
                 + f"; hanyi importable: {'yes' if have.get('hanyi') else 'no'}; "
                 f"PIL importable: {'yes' if have.get('PIL') else 'no'}"))  # fmt: skip
    line(ok, f"{label}: clean venv", detail)
    return python


def git_head(checkout: str) -> str:
    return run(["git", "rev-parse", "HEAD"], cwd=checkout).stdout.strip()


def pipeline_test(python: str, work: str, env: dict) -> tuple[str, list[str]]:
    """The checkout's task-pipeline test: its summary line and the failing test ids."""
    proc = run([python, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", PIPELINE_TEST], cwd=work, env=env)
    summary = (proc.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
    return summary, re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)


def local_sample(bench: str, tmp: str) -> str:
    """A local copy of hanyi's bundled sample of ``bench`` (the hub layout)."""
    from hanyi.data.sources import SAMPLE_DIR

    dst = os.path.join(tmp, "data-lmms", bench)
    if not os.path.isdir(dst):
        shutil.copytree(os.path.join(SAMPLE_DIR, bench), dst)
    return dst


def check_lmms_eval(checkout: str, tmp: str, hooks_python: str, args) -> bool:
    ok = True
    print(f"lmms-eval checkout at {git_head(checkout)[:8]}", flush=True)
    prs = os.path.join(tmp, "series")  # the series: shared code first, then one pull request per benchmark
    for folder in export(prs, "hub", tmp, "series"):
        name, n = os.path.basename(folder), python_lines(folder)
        ok &= line(n <= PR_PYTHON_LINES, f"lmms-eval series PR {name}: size", f"{n:,} Python lines "
                   f"(cap {PR_PYTHON_LINES:,}; hanyi export lmms-eval --series)")  # fmt: skip
    base_python = upstream_venv("lmms-eval (no pull request)", "lmms_eval", checkout, (), args, why=True)
    pristine = os.path.join(tmp, "lmms-eval-pristine")
    run(["git", "clone", "-q", "--shared", checkout, pristine]).check_returncode()
    has_pipeline = os.path.isfile(os.path.join(pristine, PIPELINE_TEST))
    before = pipeline_test(base_python, pristine, upstream_env(pristine, tmp))[1] if has_pipeline else []
    for bench in GROUPS:  # one self-contained pull request per benchmark, hub mode (what the pull request holds)
        label = f"lmms-eval PR {bench}"
        prs = export(os.path.join(tmp, f"pr-{bench}"), "hub", tmp, "lmms-eval", [bench])
        good, work = land(checkout, prs, "lmms_eval", bench, tmp, hooks_python)
        ok &= good
        python = upstream_venv(label, "lmms_eval", checkout, uv.declared_packages(work, "lmms_eval", [bench]), args)
        tasks = os.path.join(work, "lmms_eval", "tasks")
        local = local_sample(bench, tmp)
        point_at_local(tasks, bench, local)
        env = upstream_env(work, tmp)
        if has_pipeline:
            summary, failed = pipeline_test(python, work, env)
            new = sorted(set(failed) - set(before))
            ok &= line(not new, f"{label}: {PIPELINE_TEST} (its venv)", f"{summary}; " + (f"new failures: "
                       f"{', '.join(new)}" if new else f"failing without the pull request too: {len(before)}"))  # fmt: skip
        proc = run([python, "-m", "lmms_eval", "--model", "dummy", "--tasks", bench, "--limit", "4"], cwd=tmp, env=env)
        rows = len(re.findall(r"^\|.*\|\s*$", proc.stdout, flags=re.M))
        said = [ln for ln in proc.stderr.splitlines() if re.search(r"ERROR|Error|not found", ln)]
        err = (said or proc.stderr.strip().splitlines() or [""])[-1][-300:]
        ok &= line(proc.returncode == 0 and rows > 2, f"{label}: lmms-eval --tasks {bench} --model dummy --limit 4 "
                   "(its venv; dataset_path pointed at hanyi's sample of the hub layout)", f"{rows} table rows"
                   + (f"; exit {proc.returncode}: {err}" if proc.returncode or rows <= 2 else ""))  # fmt: skip
    return ok


def check_lm_eval(checkout: str, tmp: str, hooks_python: str, args) -> bool:
    from hanyi.data.build_samples import build
    from hanyi.export import lm_eval_tasks

    print(f"lm-eval checkout at {git_head(checkout)[:9]}", flush=True)
    ok, benches = True, lm_eval_tasks.benchmarks()
    upstream_venv("lm-eval (no pull request)", "lm_eval", checkout, (), args, why=True)
    data = os.path.join(tmp, "lm-data")
    for bench in benches:  # one pull request per benchmark, hub mode
        label = f"lm-eval PR {bench}"
        prs = export(os.path.join(tmp, f"lm-pr-{bench}"), "hub", tmp, "lm-eval", [bench])
        good, work = land(checkout, prs, "lm_eval", bench, tmp, hooks_python)
        ok &= good
        python = upstream_venv(label, "lm_eval", checkout, uv.declared_packages(work, "lm_eval", [bench]), args)
        changed = changed_task_files(work, "lm_eval")  # the benchmark's pull request, the last of a series
        os.makedirs(os.path.join(work, os.path.dirname(CHANGED)), exist_ok=True)
        with open(os.path.join(work, CHANGED), "w", encoding="utf-8") as f:
            f.write(" ".join(changed))  # every changed file, groups included, as CI lists them
        build((bench,), root=data, size=LM_EVAL_DOCS, dirname=bench)
        point_at_local(os.path.join(work, "lm_eval", "tasks"), bench, os.path.join(data, bench))
        env = upstream_env(work, tmp, block=IMAGE_MODULES)
        test = [python, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "tests/test_tasks.py"]
        failing = r"^FAILED \S+::(\w+)\[(\w+)\]"
        before = set(re.findall(failing, run([*test, "-k", "not TestNewTasksElseDefault"], cwd=work, env=env).stdout,
                                flags=re.M))  # fmt: skip
        proc = run(test, cwd=work, env=env)
        summary = (proc.stdout.strip().splitlines() or ["no output"])[-1].strip("= ")
        failed = [f"{t}[{p}]" for t, p in re.findall(failing, proc.stdout, flags=re.M) if (t, p) not in before]
        if before:
            summary += f"; failing without the pull request too (hub tests, offline): {len(before)}"
        errors = re.findall(r"^E\s+(.*(?:Error|Exception).*)$", proc.stdout, flags=re.M)[:1]
        yamls = [f for f in changed if f.endswith(".yaml")]
        ok &= line(proc.returncode == 0 or (not failed and "error" not in summary),
                   f"{label}: tests/test_tasks.py over the {len(changed)} changed files ({len(yamls)} YAMLs, groups "
                   f"included; its venv; {', '.join(IMAGE_MODULES)} blocked; dataset_path pointed at hanyi's sample "
                   f"of the hub layout, size {LM_EVAL_DOCS})", summary + (f"; new failures: {', '.join(failed[:5])}"
                   if failed else "") + (f"; {errors[0][:240]}" if errors and (failed or proc.returncode) else ""))  # fmt: skip
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lmms-eval", help="an lmms-eval checkout (git work tree)")
    parser.add_argument("--lm-eval", help="an lm-evaluation-harness checkout (git work tree)")
    parser.add_argument("--venvs", default=os.path.join(ROOT, "out", "upstream-venvs"),
                        help="where the venvs are built and kept (default: out/upstream-venvs; ~6 GB for "
                        "lmms-eval's, ~1.5 GB for lm-eval's)")  # fmt: skip
    parser.add_argument("--torch-index", action="append", help="a package index to take torch from before PyPI "
                        "(repeatable; e.g. a local index of the wheels); default: pip's configured indexes")  # fmt: skip
    parser.add_argument("--hooks-python", help="the python of a venv with pre-commit and the checkouts' hooks at their "
                        "pinned versions (default: one is built from PyPI under --venvs)")  # fmt: skip
    parser.add_argument("--keep", help="work in this folder (emptied first) and keep it: the exports, the landed "
                        "checkouts, the data")  # fmt: skip
    args = parser.parse_args(argv)
    args.venvs = os.path.abspath(args.venvs)
    for var in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(var, "1")  # the sample builders' bars would bury the lines
    ok, start = True, __import__("time").monotonic()
    if args.keep:
        shutil.rmtree(args.keep, ignore_errors=True)
        os.makedirs(args.keep)
    with (
        contextlib.nullcontext(os.path.abspath(args.keep))
        if args.keep
        else tempfile.TemporaryDirectory(prefix="hanyi-dry-run-") as tmp
    ):
        checkouts = [os.path.abspath(c) for c in (args.lmms_eval, args.lm_eval) if c]
        hooks_python = args.hooks_python or hooks_venv(args.venvs, [os.path.join(c, ".pre-commit-config.yaml")
                                                                    for c in checkouts])  # fmt: skip
        if args.lmms_eval:
            ok &= check_lmms_eval(os.path.abspath(args.lmms_eval), tmp, hooks_python, args)
        if args.lm_eval:
            ok &= check_lm_eval(os.path.abspath(args.lm_eval), tmp, hooks_python, args)
    took = __import__("time").monotonic() - start
    print(("all checks passed" if ok else "some checks failed") + f" ({took:.0f} s)", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
