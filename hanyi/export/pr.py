"""A pull request as it lands in an upstream checkout: the folders, the upstream task list and the host's extras.

``hanyi export`` writes folders and a ``PULL_REQUEST.md`` beside them; :func:`apply` copies what the pull request
changes into a checkout (the description stays out of the tree): the task folders under the tasks directory, one
entry per benchmark in the upstream's task list (lm-eval: a row of ``lm_eval/tasks/README.md``'s table; lmms-eval: an
item of ``docs/advanced/current_tasks.md``), and for lm-eval the extras of ``pyproject.toml`` that the folders'
packages need (:mod:`hanyi.export.requirements`). ``benchmarks/upstream_dry_run.py`` checks the result.
"""

from __future__ import annotations

import json
import os
import re
import shutil

from hanyi.export import readme, requirements

#: The languages of each benchmark's text (lm-eval's task table has a column for them).
LANGUAGES = {
    "cii": "Chinese",
    "punrebus": "Chinese, English",
    "unpie": "English, German, French, Korean",
    "cvlue": "Chinese",
    "vulca": "Chinese, English",
    "vulca_bench": "Chinese, English",
}
TASK_LIST = {"lm_eval": "lm_eval/tasks/README.md", "lmms_eval": "docs/advanced/current_tasks.md"}
#: The section of lmms-eval's task page the entries go under.
LMMS_SECTION = "### Multilingual Benchmarks"


def _title(bench: str) -> str:
    return readme._intro(readme._doc(bench))[0] or bench


def run_names(folder: str) -> list[str]:
    """What a user passes to ``--tasks`` for the folder: its groups, else its tags, else its tasks."""
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


def apply(out: str, checkout: str, host: str, benchmarks: list[str], extras: dict | None = None) -> list[str]:
    """Copy the export ``out`` into the upstream ``checkout`` as its pull request changes it; the paths written.
    ``extras`` (lm-eval): the ``pyproject.toml`` extras to add, where the code of ``out`` alone does not say (a pull
    request of a series, whose shared code came before it)."""
    tasks = os.path.join(checkout, host, "tasks")
    written = []
    for name in sorted(os.listdir(out)):
        src = os.path.join(out, name)
        if os.path.isdir(src):  # the folders (and _task_utils/, which lmms-eval has already)
            shutil.copytree(src, os.path.join(tasks, name), dirs_exist_ok=True)
            written.append(os.path.join(host, "tasks", name))
    if not benchmarks:  # shared code only: no task to list, no extra
        return written
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
        if extras is None:
            extras = {b: pkgs for b in benchmarks} if pkgs else {}
        with open(pyproject, "w", encoding="utf-8") as f:
            f.write(requirements.add_extras(text, extras))
        written.append("pyproject.toml")
    return written


def series_order(prs: str) -> list[str]:
    """The pull requests (folders holding a ``PULL_REQUEST.md``) of the series in ``prs``, in merge order: the shared
    code first (``shared``, or ``shared-1``, ``shared-2``, ...), then the benchmarks."""
    names = sorted(n for n in os.listdir(prs) if os.path.isfile(os.path.join(prs, n, "PULL_REQUEST.md")))
    shared = [n for n in names if n == "shared" or re.fullmatch(r"shared-\d+", n)]
    shared.sort(key=lambda n: int(n.partition("-")[2] or 0))
    return shared + [n for n in names if n not in shared]


def declared_extras(text: str) -> dict[str, list[str]]:
    """The ``pyproject.toml`` extras an lm-eval pull request's description declares (its ``toml`` block)."""
    block = re.search(r"^```toml\n(.*?)^```", text, flags=re.M | re.S)
    lines = block.group(1).splitlines() if block else []
    return {m.group(1): json.loads(m.group(2)) for m in map(re.compile(r"^(\w+) = (\[.*\])$").match, lines) if m}


def apply_series(prs: str, checkout: str, host: str) -> list[str]:
    """Land every pull request of the series in ``prs`` (:func:`series_order`) in ``checkout``, as :func:`apply`
    lands one; a benchmark's lm-eval extras are the ones its description declares (found over the whole export)."""
    written = []
    for name in series_order(prs):
        folder = os.path.join(prs, name)
        benchmarks = [] if name.startswith("shared") else [name]
        extras = None
        if host == "lm_eval" and benchmarks:
            with open(os.path.join(folder, "PULL_REQUEST.md"), encoding="utf-8") as f:
                extras = declared_extras(f.read())
        written += [p for p in apply(folder, checkout, host, benchmarks, extras) if p not in written]
    return written


def pull_request(out: str, benchmarks: list[str], data_root: str, shared: list[str] = ()) -> str:
    """The description of the lmms-eval pull request (kept beside the folders, not copied into ``lmms_eval/tasks/``)."""
    lines = [
        "# Add cultural and implied-meaning benchmarks: " + ", ".join(benchmarks),
        "",
        "This pull request adds one folder per benchmark under `lmms_eval/tasks/`, exported from hanyi "
        f"(`hanyi export lmms-eval --data-root {data_root}`). Each folder is plain lmms-eval: YAMLs, Jinja prompt "
        "templates, a `utils.py` and the benchmark's own metric code; the code the folders share is one library, "
        "`lmms_eval/tasks/_task_utils/cultural_utils/`"
        + (" (" + ", ".join(f"`{m.rsplit('.', 1)[-1]}`" for m in shared) + ")" if shared else "")
        + ". Nothing imports hanyi. Each folder's README and DETAILS.md give the paper, BibTeX, tasks, metric "
        "definitions, deviations and data access.",
        "",
        "## Folders",
        "",
    ]
    for bench in benchmarks:
        folder = os.path.join(out, bench)
        groups = [n for n, e in readme._index(folder).items() if e["type"] == "group"]
        runs = [f"groups {', '.join(f'`{g}`' for g in groups)}"] if groups else []
        runs += [f"tags {', '.join(f'`{t}`' for t in readme.tags(folder))}"] if readme.tags(folder) else []
        lines.append(f"- `{bench}/`: " + "; ".join(runs))
    pkgs = requirements.extra_packages(
        [os.path.join(out, b) for b in benchmarks] + [os.path.join(out, readme.LIB)], "lmms_eval"
    )
    lines += ["", "## Requirements", "", "Beyond lmms-eval's own dependencies: " + (
        f"`{' '.join(pkgs)}`, named in each folder's README (lmms-eval declares a task's extra packages there)."
        if pkgs else "none.")]  # fmt: skip
    entries = {}
    for bench in benchmarks:
        folder = os.path.join(out, bench)
        names = [n for n, e in readme._index(folder).items() if e["type"] == "group"] or sorted(readme.tags(folder))
        entries[bench] = task_list_entry(bench, "lmms_eval", names)
    lines += ["", f"## Task list ({TASK_LIST['lmms_eval']})", "", "Added under "
              f"\"{LMMS_SECTION.lstrip('# ')}\":", "", "```markdown", *entries.values(), "```"]  # fmt: skip
    if os.path.isdir(os.path.join(out, readme.LIB, "metrics", "judge")):
        lines += ["", "## Judged metrics", "", readme.JUDGE_REASON]
    lines += ["", "## Data", ""] + readme.data_summary(out, benchmarks)
    lines += ["", "## Changes to lmms-eval this contribution needs", ""]
    needed = [
        f"- `{name}`: {subject}" for name, subject in readme.patches() if name.split("-")[0] in readme.NEEDED_PATCHES
    ]
    lines += needed or ["None: every group runs on unpatched lmms-eval (the equivalence run below); fixes found along "
                        "the way are proposed in separate pull requests."]  # fmt: skip
    lines += [
        "",
        "## How it was tested",
        "",
        "With `hanyi` made unimportable and its start-up hook off, `lmms-eval --include_path <export> --model dummy "
        "--tasks <group>` on the bundled sample data gives exactly the metrics of the hanyi tasks (hanyi's "
        "`tests/test_export.py`).",
        "",
    ]
    return "\n".join(lines)
