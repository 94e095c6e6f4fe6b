"""The README's commands run as written in a clone after ``make install``.

Every ``bash`` block of README.md is preceded by a ``<!-- readme-commands: ... -->`` line that says whether this file
runs it or, if not, why (a template, a download, a GPU). A block said to run is run whole, as written, from the
repository root in one ``bash -e``; the demo is run through ``make demo``. A README command that stops working, or a
new block that says nothing about itself, fails here, so the first commands a newcomer copies are the ones CI ran.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(REPO, "README.md")
MARK = re.compile(r"<!-- readme-commands: (.*?) -->")
RUN = "run by tests/test_readme_commands.py"


def readme_blocks() -> list[tuple[str, str]]:
    """``[(marker text, block)]`` for each ```` ```bash ```` block, the marker being the line just before it."""
    with open(README, encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != "```bash":
            continue
        end = lines.index("```", i + 1)
        found = MARK.fullmatch(lines[i - 1].strip()) if i else None
        blocks.append((found.group(1) if found else "", "\n".join(lines[i + 1 : end])))
    return blocks


def test_every_bash_block_says_whether_it_runs_here_and_why_not():
    blocks = readme_blocks()
    assert blocks and any(mark == RUN for mark, _ in blocks)
    for mark, block in blocks:
        assert mark == RUN or re.fullmatch(r"not run by the tests: \S.{10,}", mark), (mark, block[:80])


def _venv() -> str:
    activate = os.path.join(REPO, ".venv", "bin", "activate")
    if not os.path.isfile(activate):
        pytest.skip("no .venv in the clone: the README's commands start from `make install`")
    return activate


@pytest.mark.slow
def test_the_try_it_commands_run_as_written(tmp_path):
    _venv()
    out = os.path.join(REPO, "out", "try")
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HANYI_", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path)  # nothing from the developer's caches or settings helps the commands
    for mark, block in readme_blocks():
        if mark != RUN:
            continue
        done = subprocess.run(
            ["bash", "-e", "-c", block], cwd=REPO, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, (block, done.stdout[-3000:], done.stderr[-3000:])
    [results] = glob.glob(os.path.join(out, "*", "*_results.json"))
    with open(results, encoding="utf-8") as f:
        got = json.load(f)["results"]["punrebus_matching"]
    # 12 recorded answers: 9 right, 2 wrong, 1 naming no option (left out of the paper's accuracy, wrong in ours)
    assert got["accuracy,none"] == pytest.approx(9 / 11) and got["accuracy_robust,none"] == pytest.approx(9 / 12)
    assert os.path.getsize(os.path.join(out, "report", "report.html")) > 1000
    shutil.rmtree(out, ignore_errors=True)


@pytest.mark.slow
def test_make_demo():
    _venv()
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "demo"], cwd=REPO, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    assert "report: out/demo/report/report.html" in done.stdout
    for bench in ("punrebus", "cvlue", "cii", "unpie", "vulca"):
        assert re.search(rf"^\|{bench}", done.stdout, re.M), bench
