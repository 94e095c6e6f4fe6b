"""`make test-latest`: the fast tests against the newest releases that pyproject.toml allows, without the lock.

Builds a throwaway venv the way a user installs hanyi (README, "Install": the CPU torch first, then `pip install
-c constraints.txt .[test,lm-eval]`, no lock), prints every package whose version differs from
requirements/lock.txt, then runs the fast tests (`-m "not slow"`) there and prints the ones that fail. Run it before
every release and record what it prints in CHANGELOG.md. Not part of CI: what it finds is news about the registry,
not about a commit. Exit status: pytest's (0 when the fast tests pass with the newest releases).

Standard library only, so it runs with any Python >= 3.10.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(lock: str, python_bin: str) -> dict[str, str]:
    """``{package: version}`` that ``lock`` pins for the venv's Python (markers evaluated by that interpreter)."""
    code = (
        "import json, sys\n"
        "from packaging.markers import Marker\n"
        "pins = {}\n"
        "for line in open(sys.argv[1], encoding='utf-8'):\n"
        "    if not line[:1].isalpha():\n"
        "        continue\n"
        "    spec, _, marker = line.split(' \\\\')[0].strip().partition(' ; ')\n"
        "    if marker and not Marker(marker).evaluate():\n"
        "        continue\n"
        "    name, version = spec.split('==')\n"
        "    pins[name] = version\n"
        "print(json.dumps(pins))\n"
    )
    out = subprocess.run([python_bin, "-c", code, lock], check=True, capture_output=True, text=True).stdout
    return {_canonical(k): v for k, v in json.loads(out).items()}


def installed(python_bin: str) -> dict[str, str]:
    out = subprocess.run(
        [python_bin, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return {_canonical(p["name"]): p["version"] for p in json.loads(out)}


def differences(pins: dict[str, str], have: dict[str, str]) -> list[str]:
    """One line per package whose installed version differs from the lock, or that only one side has.

    >>> differences({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2.1", "d": "4"})
    ['b: lock 2, newest 2.1', 'c: lock 3, newest (not installed)', 'd: lock (not locked), newest 4']
    """
    lines = []
    for name in sorted(set(pins) | set(have)):
        lock, new = pins.get(name), have.get(name)
        if lock != new:
            lines.append(f"{name}: lock {lock or '(not locked)'}, newest {new or '(not installed)'}")
    return lines


def failed_tests(pytest_output: str) -> list[str]:
    """The ``FAILED`` / ``ERROR`` node ids of pytest's ``-rfE`` summary.

    >>> failed_tests("x\\nFAILED tests/a.py::t - KeyError: 'k'\\nERROR tests/b.py::u\\n1 failed")
    ['tests/a.py::t', 'tests/b.py::u']
    """
    return re.findall(r"^(?:FAILED|ERROR) (\S+)", pytest_output, flags=re.M)


def build(venv: str, python: str) -> str:
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", venv], check=True)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q"]
    # Only the torch pins of constraints.txt: its host-package pins are the tested releases, the newest are the point.
    constraints = os.path.join(venv, "torch-constraints.txt")
    with open(os.path.join(ROOT, "constraints.txt"), encoding="utf-8") as f:
        torch_pins = [line for line in f if line.startswith(("torch==", "torchvision=="))]
    with open(constraints, "w", encoding="utf-8") as f:
        f.writelines(torch_pins)
    subprocess.run([*pip, "-c", constraints, "torch==2.13.0"], check=True)
    subprocess.run([*pip, "-c", constraints, "-e", f"{ROOT}[test,lm-eval]"], check=True)
    # As README "Install": PyPI's torchvision does not import beside the CPU torch, and timm needs it.
    subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "uninstall", "-y", "-q", "torchvision", "timm"])
    return os.path.join(venv, "bin", "python")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="make test-latest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", default=os.path.join(ROOT, "out", "latest-venv"))
    ap.add_argument("--lock", default=os.path.join(ROOT, "requirements", "lock.txt"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter to build the venv with")
    args = ap.parse_args(argv)
    python_bin = build(args.venv, args.python)
    diff = differences(lock_pins(args.lock, python_bin), installed(python_bin))
    diff = [d for d in diff if not d.startswith(("hanyi:", "torch:", "pip:"))]
    print(f"test-latest: {len(diff)} package(s) differ from {os.path.relpath(args.lock, ROOT)}:")
    print("\n".join(f"  {d}" for d in diff) or "  (none)")
    proc = subprocess.run(
        [python_bin, "-m", "pytest", "-q", "-m", "not slow", "-rfE", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    tail = proc.stdout.strip().splitlines()[-1:] or ["(no pytest summary)"]
    failed = failed_tests(proc.stdout)
    print(f"test-latest: fast tests with the newest releases: {tail[0]}")
    print("\n".join(f"  FAILED {t}" for t in failed) or "  (no test failed)")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
