"""Every benchmark command the docs give runs as documented (``python benchmarks/<name>.py``), ``--help`` at least.

``benchmarks/multiprocess.py`` shadowed the ``multiprocess`` package (``datasets`` imports it), so
``python benchmarks/punrebus_parity.py`` died with "'multiprocess' is not a package" before printing anything.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: ``python benchmarks/x.py`` or ``.venv/bin/python benchmarks/x.py`` in a doc, the README or a script's usage line.
COMMAND = re.compile(r"python\s+(benchmarks/[\w]+\.py)")


def documented_scripts() -> list[str]:
    texts = glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)
    texts += [os.path.join(REPO, "README.md"), *glob.glob(os.path.join(REPO, "benchmarks", "*.py"))]
    found = set()
    for path in texts:
        with open(path, encoding="utf-8") as f:
            found.update(COMMAND.findall(f.read()))
    return sorted(found)


def test_every_script_in_benchmarks_is_documented_and_none_shadows_an_installed_package():
    import importlib.util

    scripts = {f"benchmarks/{os.path.basename(p)}" for p in glob.glob(os.path.join(REPO, "benchmarks", "*.py"))}
    assert set(documented_scripts()) == scripts
    for path in scripts:
        name = os.path.basename(path)[:-3]
        assert importlib.util.find_spec(name) is None, f"{path} shadows the installed package {name!r}"


@pytest.mark.parametrize("script", documented_scripts())
def test_documented_benchmark_command_runs_with_help(script):
    proc = subprocess.run([sys.executable, script, "--help"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.lstrip().startswith("usage:"), proc.stdout[:500]
