"""Run an upstream's ``.pre-commit-config.yaml`` on an export with hooks installed from PyPI.

pre-commit installs each hook from its git repository, which an offline machine cannot fetch. The hooks themselves
are PyPI packages (pre-commit-hooks, ruff, codespell, pymarkdownlnt, black, isort), so the config is rewritten as a
``repo: local`` config whose hooks run the installed entry points (``language: system``) with the upstream's own
``args``, ``files``/``exclude`` and the file types each hook repository declares (:data:`MANIFEST`, from their
``.pre-commit-hooks.yaml`` at the pinned revisions). pre-commit then selects the files and runs the hooks as in the
upstream's CI (``pre-commit run --from-ref ... --to-ref HEAD`` with ``SKIP=no-commit-to-branch,mypy``).

A hook whose package is not installed, or installed at another version than the config pins, is reported, not run
silently at the wrong version.
"""

from __future__ import annotations

import os
import subprocess
import sys

#: ``hook id: manifest entry`` as the hook repositories declare them (``entry`` is run from this interpreter's
#: ``bin`` directory). ``types``/``types_or``/``files`` select files the way pre-commit does.
MANIFEST: dict = {
    "check-added-large-files": {"entry": "check-added-large-files"},
    "check-ast": {"entry": "check-ast", "types": ["python"]},
    "fix-byte-order-marker": {"entry": "fix-byte-order-marker", "types": ["text"]},
    "check-case-conflict": {"entry": "check-case-conflict"},
    "check-json": {"entry": "check-json", "types": ["json"]},
    "check-merge-conflict": {"entry": "check-merge-conflict", "types": ["text"]},
    "check-symlinks": {"entry": "check-symlinks", "types": ["symlink"]},
    "check-yaml": {"entry": "check-yaml", "types": ["yaml"]},
    "destroyed-symlinks": {"entry": "destroyed-symlinks", "types": ["file"]},
    "detect-private-key": {"entry": "detect-private-key", "types": ["text"]},
    "end-of-file-fixer": {"entry": "end-of-file-fixer", "types": ["text"]},
    "no-commit-to-branch": {"entry": "no-commit-to-branch", "pass_filenames": False, "always_run": True},
    "requirements-txt-fixer": {"entry": "requirements-txt-fixer", "files": r"(requirements|constraints).*\.txt$"},
    "trailing-whitespace": {"entry": "trailing-whitespace-fixer", "types": ["text"]},
    "mixed-line-ending": {"entry": "mixed-line-ending", "types": ["text"]},
    "ruff-check": {"entry": "ruff check --force-exclude", "types_or": ["python", "pyi", "jupyter"]},
    "ruff-format": {"entry": "ruff format --force-exclude", "types_or": ["python", "pyi", "jupyter"]},
    "codespell": {"entry": "codespell", "types": ["text"]},
    "pymarkdown": {"entry": "pymarkdown", "types": ["markdown"]},
    "black": {"entry": "black", "types_or": ["python", "pyi"], "require_serial": True},
    "isort": {"entry": "isort", "types_or": ["cython", "pyi", "python"], "require_serial": True},
}
#: The PyPI distribution of each hook repository (its version must equal the config's ``rev``).
PACKAGES = {
    "pre-commit/pre-commit-hooks": "pre-commit-hooks",
    "astral-sh/ruff-pre-commit": "ruff",
    "codespell-project/codespell": "codespell",
    "jackdewinter/pymarkdown": "pymarkdownlnt",
    "psf/black": "black",
    "PyCQA/isort": "isort",
}
#: What the upstream CI skips (lm-evaluation-harness's ``unit_tests.yml``: ``SKIP: "no-commit-to-branch,mypy"``).
CI_SKIP = "no-commit-to-branch,mypy"
_KEYS = ("args", "files", "exclude", "types", "types_or", "exclude_types", "always_run", "pass_filenames")


def versions(python: str = sys.executable) -> dict:
    """``{distribution: version}`` of the hook packages installed for ``python`` (absent ones left out)."""
    import json

    code = (f"import json, importlib.metadata as m\nout = {{}}\nfor d in {sorted(PACKAGES.values())!r}:\n"
            "    try: out[d] = m.version(d)\n    except m.PackageNotFoundError: pass\nprint(json.dumps(out))")  # fmt: skip
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def local_config(config: dict, python: str = sys.executable) -> tuple[dict, list[str]]:
    """The ``repo: local`` form of ``config`` (hooks run from ``python``'s ``bin`` directory) and one line per hook
    that cannot run at the pinned version."""
    bin_dir = os.path.dirname(python)
    installed = versions(python)
    hooks, problems = [], []
    for repo in config.get("repos") or []:
        url = str(repo.get("repo", ""))
        name = url.removeprefix("https://github.com/").removesuffix(".git")
        dist, rev = PACKAGES.get(name), str(repo.get("rev", "")).removeprefix("v")
        have = installed.get(dist) if dist else None
        for hook in repo.get("hooks") or []:
            hid = hook["id"]
            spec = MANIFEST.get(hid)
            if spec is None or have is None:
                problems.append(f"{hid} ({url}@{rev}): " + ("no PyPI entry point known" if spec is None
                                                             else f"{dist} is not installed"))  # fmt: skip
                continue
            if have != rev:
                problems.append(f"{hid}: {dist} {have} installed, the config pins {rev}")
            entry, _, rest = spec["entry"].partition(" ")
            local = {"id": hid, "name": hid, "language": "system", "entry": " ".join([os.path.join(bin_dir, entry),
                                                                                      rest]).strip()}  # fmt: skip
            local.update({k: v for k, v in spec.items() if k not in ("entry",)})
            local.update({k: hook[k] for k in _KEYS if k in hook})
            hooks.append(local)
    out = {"repos": [{"repo": "local", "hooks": hooks}]}
    for key in ("exclude", "files", "fail_fast"):
        if key in config:
            out[key] = config[key]
    return out, problems


def run(
    config_path: str, repo_dir: str, from_ref: str = "HEAD~1", to_ref: str = "HEAD", python: str = sys.executable
) -> tuple[int, str, list]:
    """Run the hooks of ``config_path`` in the git work tree ``repo_dir`` on the files changed between the refs, as
    the upstream CI does; ``(exit status, output, problems)``. The work tree is left as the hooks leave it."""
    import tempfile

    import yaml

    with open(config_path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    local, problems = local_config(config, python)
    with tempfile.TemporaryDirectory(prefix="hanyi-hooks-") as tmp:
        path = os.path.join(tmp, "pre-commit-config.yaml")
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(local, f, sort_keys=False)
        env = {**os.environ, "SKIP": CI_SKIP, "PRE_COMMIT_HOME": os.path.join(tmp, "home"), "NO_COLOR": "1"}
        proc = subprocess.run(
            [python, "-m", "pre_commit", "run", "--config", path, "--from-ref", from_ref, "--to-ref", to_ref,
             "--show-diff-on-failure", "--color", "never"],
            cwd=repo_dir, capture_output=True, text=True, env=env,
        )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr, problems


def pins(config_path: str) -> list[str]:
    """``dist==version`` of every hook repository of ``config_path`` (what a hooks venv installs from PyPI)."""
    import yaml

    with open(config_path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    out = []
    for repo in config.get("repos") or []:
        dist = PACKAGES.get(str(repo.get("repo", "")).removeprefix("https://github.com/").removesuffix(".git"))
        if dist:
            out.append(f"{dist}=={str(repo.get('rev', '')).removeprefix('v')}")
    return out
