"""A pull request as it lands in an upstream checkout: the folders, the upstream task list and the host's extras.

``hanyi export`` writes folders and a ``PULL_REQUEST.md`` beside them; :func:`apply` copies what the pull request
changes into a checkout (the description stays out of the tree): the task folders under the tasks directory, one
entry per benchmark in the upstream's task list (lm-eval: a row of ``lm_eval/tasks/README.md``'s table; lmms-eval: an
item of ``docs/advanced/current_tasks.md``), and for lm-eval the extras of ``pyproject.toml`` that the folders'
packages need (:mod:`hanyi.export.requirements`). ``benchmarks/upstream_dry_run.py`` checks the result.
"""

from __future__ import annotations

import os
import re
import shutil

from hanyi.export import requirements

#: The languages of each benchmark's text (lm-eval's task table has a column for them).
LANGUAGES = {
    "cii": "Chinese",
    "punrebus": "Chinese, English",
    "unpie": "English, German, French, Korean",
    "cvlue": "Chinese",
    "vulca": "Chinese, English",
}
TASK_LIST = {"lm_eval": "lm_eval/tasks/README.md", "lmms_eval": "docs/advanced/current_tasks.md"}
#: The section of lmms-eval's task page the entries go under.
LMMS_SECTION = "### Multilingual Benchmarks"


def _title(bench: str) -> str:
    from hanyi.export import readme

    return readme._intro(readme._doc(bench))[0] or bench


def run_names(folder: str) -> list[str]:
    """What a user passes to ``--tasks`` for the folder: its groups, else its tags, else its tasks."""
    from hanyi.export import readme

    index = readme._index(folder)
    groups = [n for n, e in index.items() if e["type"] == "group"]
    return groups or sorted(readme.tags(folder)) or [n for n, e in index.items() if e["type"] == "task"]


def task_list_entry(bench: str, host: str, names: list[str]) -> str:
    """The line(s) of the upstream task list for ``bench`` (``names``: its groups, or its tasks if none)."""
    title = _title(bench)
    if host == "lm_eval":
        return f"| [{bench}]({bench}/README.md) | {title}: {', '.join(names)}. | {LANGUAGES.get(bench, '')} |"
    link = f"../../lmms_eval/tasks/{bench}/README.md"
    return f"- [{title}]({link}) ({bench})\n" + "\n".join(f"  - {n}" for n in names)


def add_task_list_entries(text: str, entries: dict[str, str], host: str) -> str:
    """``text`` (the upstream task list) with ``entries`` (``{bench: entry}``) added: lm-eval's table rows in
    alphabetical order, lmms-eval's items at the end of :data:`LMMS_SECTION`."""
    lines = text.split("\n")
    for bench, entry in sorted(entries.items()):
        if host == "lm_eval":
            rows = [i for i, line in enumerate(lines) if line.startswith("| [")]
            if not rows:
                raise ValueError("no task table in lm_eval/tasks/README.md")
            after = [i for i in rows if re.match(r"\| \[([^\]]+)\]", lines[i]).group(1).lower() > bench]
            lines.insert(after[0] if after else rows[-1] + 1, entry)
        else:
            start = lines.index(LMMS_SECTION)
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            lines[end:end] = entry.split("\n")
    return "\n".join(lines)


def apply(out: str, checkout: str, host: str, benchmarks: list[str]) -> list[str]:
    """Copy the export ``out`` into the upstream ``checkout`` as its pull request changes it; the paths written."""
    tasks = os.path.join(checkout, host, "tasks")
    written = []
    for name in sorted(os.listdir(out)):
        src = os.path.join(out, name)
        if os.path.isdir(src):  # the folders (and _task_utils/, which lmms-eval has already)
            shutil.copytree(src, os.path.join(tasks, name), dirs_exist_ok=True)
            written.append(os.path.join(host, "tasks", name))
    entries = {bench: task_list_entry(bench, host, run_names(os.path.join(out, bench))) for bench in benchmarks}
    path = os.path.join(checkout, TASK_LIST[host])
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(add_task_list_entries(text, entries, host))
    written.append(TASK_LIST[host])
    if host == "lm_eval":
        pkgs = requirements.extra_packages([os.path.join(out, d) for d in os.listdir(out)], host)
        pyproject = os.path.join(checkout, "pyproject.toml")
        with open(pyproject, encoding="utf-8") as f:
            text = f.read()
        with open(pyproject, "w", encoding="utf-8") as f:
            f.write(requirements.add_extras(text, {b: pkgs for b in benchmarks} if pkgs else {}))
        written.append("pyproject.toml")
    return written
