"""Clean venvs for the upstream dry run (``benchmarks/upstream_dry_run.py``): one per upstream checkout and per set of
packages a pull request declares, with nothing of hanyi in them, cached by a hash of what went in.

A venv is a :class:`Spec`: the upstream and its commit, the Python, the torch build, the checkout's own extras (what
its CI installs for the test that runs), the packages the pull request declares (lmms-eval: the ``pip install`` line
of each folder README's "Requirements"; lm-evaluation-harness: the extra the pull request adds to ``pyproject.toml``),
the test runner, and the releases held back because they break the upstream itself (:data:`HOST_FIXES`). Its
directory is ``<root>/<host>-<key>``, ``key`` a hash of the spec, marked built last (a build that stops half way is
redone). A spec with packages or fixes starts from a hard-linked copy of the venv of the same spec without them
(``cp -al``: pip unlinks a file before writing it, so the copy never changes the original), so a pull request's venv
costs only its own packages. Every command runs through ``<venv>/bin/python -m ...`` (a copied venv's scripts still
name the original's interpreter).

Torch: lmms-eval imports torchvision, and PyPI's torch for x86_64 is a CUDA build, which imports and runs on a CPU;
the torch/torchvision pair of :data:`TORCH` is installed first, from ``--torch-index`` when given (a local index of
those wheels) else from pip's configured indexes. lm-evaluation-harness imports no torchvision: a CPU build of torch
(``+cpu``, from pip's configured indexes or find-links) keeps its venv small.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

#: The torch wheels of each upstream's venv, and why (printed with the venv).
TORCH = {
    "lmms_eval": ("torch==2.14.1", "torchvision==0.29.1"),
    "lm_eval": ("torch==2.13.0+cpu",),
}
TORCH_WHY = {
    "lmms_eval": "lmms-eval imports torchvision: the torch/torchvision pair of the same release (CUDA builds; they "
    "import and run on a CPU)",
    "lm_eval": "lm-eval imports no torchvision: the CPU build of torch",
}
#: The checkout's extras its CI installs for the task test (lm-eval's ``new_tasks.yml``: ``dev`` brings pytest,
#: ``hf`` the model backend; its other extras, ifeval, unitxt, math, longbench, serve other tasks). lmms-eval's CI
#: (``lint.yml``) installs none; its own dependencies carry the tasks.
CHECKOUT_EXTRAS = {"lm_eval": ("dev", "hf"), "lmms_eval": ()}
#: What runs the checkout's tests where its extras do not bring it.
TOOLS = {"lm_eval": (), "lmms_eval": ("pytest",)}
#: Releases newer than the upstream commit that break the upstream itself, held back (a fresh install of the
#: checkout alone fails the same way), each with the line that breaks.
HOST_FIXES = {"lmms_eval": ("filelock<4.3",), "lm_eval": ()}
FIX_WHY = {
    "filelock<4.3": "lmms-eval's evaluator.py (_enable_reentrant_filelocks) imports filelock._api, gone in filelock "
    "4.3: every lmms-eval run stops there",
}
PYPI = "https://pypi.org/simple"


@dataclasses.dataclass(frozen=True)
class Spec:
    """What goes into one venv; its :meth:`key` names the cached directory."""

    host: str  # "lmms_eval" or "lm_eval"
    upstream: str  # the checkout's commit
    python: str
    torch: tuple
    extras: tuple  # the checkout's extras
    packages: tuple = ()  # declared by the pull request
    tools: tuple = ()
    fixes: tuple = ()  # HOST_FIXES

    def key(self) -> str:
        return hashlib.sha256(json.dumps(dataclasses.asdict(self), sort_keys=True).encode()).hexdigest()[:12]

    def base(self) -> Spec:
        """The same venv without the pull request's packages and the fixes (what a venv with them is copied
        from)."""
        return dataclasses.replace(self, packages=(), fixes=())

    def describe(self, why: bool = True) -> str:
        """One line: what went in; ``why``: with the reason of each held-back release."""
        target = "." + (f"[{','.join(self.extras)}]" if self.extras else "")
        return (f"python {self.python}, {' '.join(self.torch)}, pip install '{target}' (checkout "
                f"{self.upstream[:9]})" + (f" {' '.join(self.tools)}" if self.tools else "")
                + (f"; declared by the pull request: {' '.join(self.packages)}" if self.packages
                   else "; nothing declared beyond the checkout")
                + "".join(f"; held back: {f}" + (f" ({FIX_WHY.get(f, '')})" if why else "")
                          for f in self.fixes))  # fmt: skip


def spec_for(host: str, upstream: str, packages=()) -> Spec:
    """The venv of ``host`` at commit ``upstream`` with the pull request's declared ``packages``."""
    return Spec(host, upstream, ".".join(map(str, sys.version_info[:3])), TORCH[host], CHECKOUT_EXTRAS[host],
                tuple(sorted(set(packages))), TOOLS[host], HOST_FIXES[host])  # fmt: skip


_REQUIREMENTS = re.compile(r"^## Requirements\n(.*?)(?=^## |\Z)", re.M | re.S)


def readme_packages(readme: str) -> list[str]:
    """The packages a lmms-eval task README declares: the ``pip install ...`` of its "Requirements" section (lmms-eval
    declares a task's extra packages in its README); none when the section says there are none."""
    m = _REQUIREMENTS.search(readme)
    if not m:
        return []
    found = re.findall(r"`pip install ([^`]+)`", m.group(1))
    return sorted({p for line in found for p in line.split() if not p.startswith("-")})


def pyproject_extra(pyproject: str, extra: str) -> list[str]:
    """The packages of ``extra`` in ``pyproject`` (lm-eval's ``pyproject.toml`` text after the pull request)."""
    import tomllib

    return sorted(tomllib.loads(pyproject).get("project", {}).get("optional-dependencies", {}).get(extra, []))


def declared_packages(work: str, host: str, benchmarks) -> list[str]:
    """What the pull request applied in ``work`` declares beyond the host, the host's way (see the module doc)."""
    found: set = set()
    for bench in benchmarks:
        if host == "lm_eval":
            with open(os.path.join(work, "pyproject.toml"), encoding="utf-8") as f:
                found.update(pyproject_extra(f.read(), bench))
        else:
            path = os.path.join(work, host, "tasks", bench, "README.md")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    found.update(readme_packages(f.read()))
    return sorted(found)


def pip_commands(spec: Spec, checkout: str, torch_index=()) -> list[list[str]]:
    """The ``python -m pip`` argument lists that build ``spec`` from scratch (torch first, then the checkout)."""
    index = []
    if torch_index:
        index = [
            "--index-url",
            torch_index[0],
            *[a for u in [*torch_index[1:], PYPI] for a in ("--extra-index-url", u)],
        ]
    target = checkout + (f"[{','.join(spec.extras)}]" if spec.extras else "")
    return [
        ["-m", "pip", "install", "-q", *index, *spec.torch],
        ["-m", "pip", "install", "-q", target, *spec.packages, *spec.tools],
    ]


def _pip(python: str, args: list[str], log) -> None:
    proc = subprocess.run([python, *args], capture_output=True, text=True)
    if proc.returncode:
        errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")] or proc.stderr.splitlines()[-3:]
        raise SystemExit(f"venv build failed: python {' '.join(args)}: {' '.join(errors)[-600:]}")


def build(spec: Spec, checkout: str, root: str, torch_index=(), log=print) -> tuple[str, float, bool]:
    """The python of ``spec``'s venv under ``root``, built unless cached: ``(python, seconds, cached)``."""
    path = os.path.join(root, f"{spec.host}-{spec.key()}")
    python = os.path.join(path, "bin", "python")
    marker = os.path.join(path, "spec.json")
    if os.path.isfile(marker):
        return python, 0.0, True
    start = time.monotonic()
    tmp = path + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(root, exist_ok=True)
    if spec.packages or spec.fixes:
        base, _, _ = build(spec.base(), checkout, root, torch_index, log)
        subprocess.run(["cp", "-al", os.path.dirname(os.path.dirname(base)), tmp], check=True)
        _pip(os.path.join(tmp, "bin", "python"), ["-m", "pip", "install", "-q", *spec.fixes, *spec.packages], log)
    else:
        subprocess.run([sys.executable, "-m", "venv", "--clear", tmp], check=True, capture_output=True)
        py = os.path.join(tmp, "bin", "python")
        _pip(py, ["-m", "pip", "install", "-q", "--upgrade", "pip"], log)
        for args in pip_commands(spec, checkout, torch_index):
            _pip(py, args, log)
    record = os.path.join(tmp, "spec.json")
    with open(record + ".new", "w", encoding="utf-8") as f:  # a copied venv's spec.json is the original's inode
        json.dump(dataclasses.asdict(spec), f, indent=1)
    os.replace(record + ".new", record)
    os.rename(tmp, path)
    return python, time.monotonic() - start, False


PROBE = r"""
import importlib.util as u, json, sys
out = {m: bool(u.find_spec(m)) for m in sys.argv[1:]}
import torch
out["torch"] = torch.__version__
out["torch_runs"] = float((torch.ones(3) @ torch.ones(3)).item()) == 3.0
try:
    import torchvision
    out["torchvision"] = torchvision.__version__
except ImportError:
    out["torchvision"] = None
print(json.dumps(out))
"""


def probe(python: str, modules=("hanyi", "PIL")) -> dict:
    """What the venv of ``python`` has: ``{module: importable}`` for ``modules``, torch's version and whether it runs."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    proc = subprocess.run([python, "-c", PROBE, *modules], capture_output=True, text=True, env=env, cwd="/")
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(proc.stdout)


def main(argv=None) -> int:
    """Build (or reuse) one venv ahead of a dry run and print its python and what it holds."""
    import argparse
    import subprocess as sp

    parser = argparse.ArgumentParser(description="Build the clean venv of an upstream checkout for the dry run "
                                     "(python benchmarks/upstream_venvs.py lmms_eval /tmp/lmms-eval).")  # fmt: skip
    parser.add_argument("host", choices=sorted(TORCH))
    parser.add_argument("checkout", help="the upstream checkout (git work tree)")
    parser.add_argument("packages", nargs="*", help="packages a pull request declares")
    parser.add_argument("--venvs", default=os.path.join(os.path.dirname(os.path.dirname(__file__)), "out",
                                                        "upstream-venvs"))  # fmt: skip
    parser.add_argument("--torch-index", action="append", help="a package index to take torch from before PyPI")
    args = parser.parse_args(argv)
    head = sp.run(["git", "rev-parse", "HEAD"], cwd=args.checkout, capture_output=True, text=True, check=True)
    spec = spec_for(args.host, head.stdout.strip(), args.packages)
    python, secs, cached = build(spec, os.path.abspath(args.checkout), os.path.abspath(args.venvs),
                                 tuple(args.torch_index or ()))  # fmt: skip
    print(f"{python}: {spec.describe()}; " + ("cached" if cached else f"built in {secs:.0f} s") + f"; {probe(python)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
