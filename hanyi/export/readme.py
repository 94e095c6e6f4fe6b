"""The README of each exported folder and the export's PULL_REQUEST.md, rendered from the source tree.

Paper, BibTeX, metric definitions and deviations come from ``docs/<bench>.md`` (its sections are found by their
headings); groups, tasks and metric keys from the task YAMLs; data access from :mod:`hanyi.data.sources`; the
upstream patches from ``docs/upstream/*.patch``. Nothing is written twice by hand.
"""

from __future__ import annotations

import glob
import os
import re

from hanyi import TASKS_DIR
from hanyi.export import settings_map
from hanyi.export.naming import LIB_PACKAGE, without_history

REPO_ROOT = os.path.dirname(os.path.dirname(TASKS_DIR))
PACKAGE_DIR = os.path.dirname(TASKS_DIR)


def _docs_dir() -> str:
    """``hanyi/docs`` of an installed wheel (``pyproject.toml`` force-includes ``docs/`` there), else the clone's
    ``docs/``. The package's own copy comes first: an installed hanyi's parent is ``site-packages``, where a ``docs/``
    would be some other distribution's."""
    for path in (os.path.join(PACKAGE_DIR, "docs"), os.path.join(REPO_ROOT, "docs")):
        if os.path.isfile(os.path.join(path, "upstream.md")):
            return path
    return os.path.join(PACKAGE_DIR, "docs")


DOCS_DIR = _docs_dir()
#: Headings of docs/<bench>.md whose sections go into the README, by README section.
METRIC_HEADINGS = ("metric",)
DEVIATION_HEADINGS = ("deviation", "inconsistenc", "silent", "open point")


class IncompleteReadme(ValueError):
    """The page a README is rendered from is missing or lacks its paper or BibTeX: no README is written."""


def _doc(bench: str) -> str:
    """``docs/<bench>.md``; refuses (:class:`IncompleteReadme`) when it is missing or has no title or BibTeX, since a
    README without its paper is not one a maintainer merges."""
    path = os.path.join(DOCS_DIR, f"{bench}.md")
    if not os.path.isfile(path):
        raise IncompleteReadme(f"{path} is missing: the {bench} README is rendered from it (a hanyi installed without "
                               "its docs? reinstall the wheel, or export from the source tree); nothing was written")  # fmt: skip
    with open(path, encoding="utf-8") as f:
        text = f.read()
    from hanyi.data.hub_card import RELEASES

    if bench not in RELEASES:
        raise IncompleteReadme(f"{bench} has no official release in hanyi/data/hub_card.py (RELEASES): its README "
                               "would have no data source or licence; nothing was written")  # fmt: skip
    if not bibtex(text) or not _intro(text)[0]:
        raise IncompleteReadme(f"{path} has no title or no ```bibtex block: the {bench} README would have no paper "
                               "or citation; nothing was written")  # fmt: skip
    return text


def sections(markdown: str) -> list[tuple[str, str]]:
    """``[(heading, body)]`` of the ``## `` sections, in order; the text before the first is heading ``""``."""
    parts = re.split(r"^## +(.+)$", markdown, flags=re.M)
    out = [("", parts[0])]
    out += [(parts[i].strip(), parts[i + 1].strip("\n")) for i in range(1, len(parts), 2)]
    return out


def _pick(markdown: str, keywords) -> str:
    chunks = [
        f"### {head}\n\n{body.strip()}\n"
        for head, body in sections(markdown)[1:]
        if any(k in head.lower() for k in keywords)
    ]
    return "\n".join(chunks) if chunks else "_Not documented in the source page._\n"


def bibtex(markdown: str) -> str:
    m = re.search(r"```bibtex\n(.*?)```", markdown, flags=re.S)
    return m.group(1).strip() if m else ""


def _intro(markdown: str) -> tuple[str, str]:
    head = sections(markdown)[0][1]
    title = re.search(r"^# +(.+)$", head, flags=re.M)
    text = re.sub(r"```bibtex\n.*?```", "", head, flags=re.S)
    text = re.sub(r"\n{3,}", "\n\n", re.sub(r"^# +.+$", "", text, flags=re.M)).strip()
    return (title.group(1).strip() if title else ""), text


def _index(folder: str) -> dict:
    """``{name: entry}`` of the exported folder's YAMLs (groups, tags and tasks with merged config)."""
    import yaml

    from hanyi.cli import _load_yaml

    class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml: an export reads each YAML many times
        pass

    _Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")
    index = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".yaml"):
            continue
        cfg = _load_yaml(os.path.join(folder, name), _Loader)
        if isinstance(cfg.get("task"), list) and cfg.get("group"):
            index[cfg["group"]] = {"type": "group", "tasks": cfg["task"]}
        elif isinstance(cfg.get("task"), str):
            index[cfg["task"]] = {"type": "task", "config": cfg}
    return index


def _metric_rows(config: dict) -> list[str]:
    rows = []
    for m in config.get("metric_list") or []:
        agg = m.get("aggregation", "")
        agg = agg.removeprefix("!function ") if isinstance(agg, str) else agg
        rows.append(f"`{m.get('metric')}` ({agg}, higher is better: {m.get('higher_is_better', '?')})")
    return rows


def _variant_line(folder: str, name: str, cfg: dict) -> str:
    """``- `task` (output type, config): what the variant is``, from the first comment line of the task's YAML."""
    what = ""
    path = os.path.join(folder, f"{name}.yaml")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            first = f.readline().strip()
        what = first.lstrip("#").strip() if first.startswith("#") else ""
    config = cfg.get("dataset_name") or "default"
    return f"- `{name}` ({cfg.get('output_type', '?')}, config `{config}`)" + (f": {what}" if what else "")


def _task_set(names: list, tasks) -> str:
    """``names`` in few words: ``prefix*`` when they are exactly the tasks starting with their common prefix; else
    ``prefix*_{a,b}`` when they are those ending in ``_a`` or ``_b``; else ``prefix*`` but ``*_{c,d}`` when they are
    those not ending so (UNPIE's one-split tasks ``..._{homo,hetero}`` beside its both-splits tasks); else a list.

    >>> _task_set(["x_de", "x_fr", "x_sm_de"], ["x_de", "x_fr", "x_sm_de", "x_de_homo", "x_fr_homo", "x_sm_de_homo"])
    '`x_*_{de,fr}` (3 tasks)'
    """
    prefix, n = os.path.commonprefix(names), len(names)
    family = {t for t in tasks if t.startswith(prefix)}
    end = {t: t.rsplit("_", 1)[-1] for t in family}
    ends, rest = sorted({end[t] for t in names}), sorted({end[t] for t in family - set(names)})
    if n > 2 and family == set(names):
        return f"`{prefix}*` ({n} tasks)"
    if n > 2 and len(ends) < n and {t for t in family if end[t] in ends} == set(names):
        return f"`{prefix}*_{{{','.join(ends)}}}` ({n} tasks)"
    if n > 2 and {t for t in family if end[t] not in rest} == set(names):
        return f"`{prefix}*` but `*_{{{','.join(rest)}}}` ({n} tasks)"
    return ", ".join(f"`{t}`" for t in names)


def _metrics_once(tasks: dict) -> list[str]:
    """One table row per metric (key, aggregation, direction) and the tasks that emit it."""
    rows: dict = {}
    for name, entry in tasks.items():
        for m in entry["config"].get("metric_list") or []:
            agg = m.get("aggregation", "")
            agg = agg.removeprefix("!function ") if isinstance(agg, str) else agg
            rows.setdefault((m.get("metric"), agg, m.get("higher_is_better", "?")), []).append(name)
    out = ["| metric | aggregation | higher is better | tasks |", "|---|---|---|---|"]
    for (metric, agg, higher), names in rows.items():
        which = "all" if len(names) == len(tasks) else _task_set(names, tasks)
        out.append(f"| `{metric}` | `{agg}` | {higher} | {which} |")
    return out


#: The page beside each exported README with what a README of upstream's size (at most 8 KB) leaves out.
DETAILS = "DETAILS.md"
README_LIMIT = 8192


_LOCAL_LINK = re.compile(r"\[([^\]\n]+)\]\((?!https?://|#|README\.md|DETAILS\.md)[^)\s]*\)")


def unlink(markdown: str) -> str:
    """Relative links of the source pages (``[judge.md](judge.md)``, ``../hanyi/...``) as their text: they point into
    hanyi's repository, which the upstream tree does not have."""
    return without_history(_LOCAL_LINK.sub(lambda m: m.group(1), markdown))


def folder_details(bench: str, folder: str) -> str:
    """``DETAILS.md``: one line per task variant, the metric definitions and the deviations from the paper."""
    doc = _doc(bench)
    title, _ = _intro(doc)
    tasks = {n: e for n, e in _index(folder).items() if e["type"] == "task"}
    lines = [f"# {title or bench}: tasks, metric definitions, deviations", "", "[Back to the README](README.md)", ""]
    lines += ["## Task variants", ""] + [_variant_line(folder, name, e["config"]) for name, e in tasks.items()]
    lines += ["", "## Metric keys", ""] + _metrics_once(tasks)
    lines += ["", "## Metrics: definitions", "", _pick(doc, METRIC_HEADINGS), ""]
    lines += ["## Deviations from the paper", "", _pick(doc, DEVIATION_HEADINGS)]
    return unlink("\n".join(lines)).rstrip("\n") + "\n"  # one final newline, as end-of-file-fixer leaves it


def folder_readme(bench: str, folder: str, dataset_path: str) -> str:
    doc = _doc(bench)
    title, intro = _intro(doc)
    index = _index(folder)
    groups = {n: e for n, e in index.items() if e["type"] == "group"}
    tasks = {n: e for n, e in index.items() if e["type"] == "task"}
    lines = [f"# {title or bench}", "", "## Paper", "", intro, ""]
    bib = bibtex(doc)
    lines += ["### Citation", "", "```bibtex", bib or "% no BibTeX in docs/" + bench + ".md", "```", ""]
    lines += ["## Groups and tasks", ""]
    lines += [f"- group `{name}`: " + ", ".join(f"`{t}`" for t in entry["tasks"]) for name, entry in groups.items()]
    lines += [f"- tag `{tag}`: {_task_set(names, tasks) if len(names) < 4 else f'{len(names)} tasks'}"
              for tag, names in tags(folder).items()]  # fmt: skip
    keys = dict.fromkeys(m.get("metric") for e in tasks.values() for m in e["config"].get("metric_list") or [])
    lines += ["", "### Metric keys", "", ", ".join(f"`{k}`" for k in keys) + ".", ""]
    lines += [f"{len(tasks)} tasks in all. Each variant in one line, each key's aggregation and tasks, the metric "
              f"definitions and the deviations from the paper: [{DETAILS}]({DETAILS}).", ""]  # fmt: skip
    lines += data_access(bench, dataset_path) + [""] + requirements_section(folder, "lmms_eval") + [""]
    lines += settings_map.readme_section(bench)
    lines += [
        "",
        "## Code in this folder",
        "",
        "The YAMLs, `templates/` and the task modules are this benchmark's; the metric and data code it shares with "
        f"the other benchmarks of this family is `lmms_eval/tasks/_task_utils/cultural_utils/` (`{LIB_PACKAGE}`).",
        "",
        "## Checklist",
        "",
        "For adding novel benchmarks/datasets to the library:",
        "",
        "- [x] Is the task an existing benchmark in the literature?",
        "  - [x] Have you referenced the original paper that introduced the task?",
        "  - [x] If yes, does the original paper provide a reference implementation? If so, have you checked against "
        f"the reference implementation and documented how to run such a test? ({DETAILS}; the official scorer's "
        "cases are pinned by the source project's tests)",
        "",
        "If other tasks on this dataset are already supported:",
        "",
        '- [x] Is the "Main" variant of this task clearly denoted? (the group above runs the paper\'s main setting)',
        "- [x] Have you provided a short sentence in a README on what each new variant adds / evaluates?",
        "- [x] Have you noted which, if any, published evaluation setups are matched by this variant?",
        "",
    ]
    return unlink("\n".join(lines))


def requirements_section(folder: str, host: str, extra: str = "") -> list[str]:
    """The README's "Requirements": the packages the folder and the shared code it imports need beyond the host's
    own dependencies (lmms-eval: named in the README, as its tasks do; lm-eval: the pull request's extra)."""
    from hanyi.export import requirements

    out = os.path.dirname(os.path.abspath(folder))
    shared = [os.path.join(out, "_task_utils", "cultural_utils"), os.path.join(out, "cultural_utils")]
    pkgs = requirements.extra_packages([folder, *[p for p in shared if os.path.isdir(p)]], host)
    lines = ["## Requirements", ""]
    if not pkgs:
        return lines + [f"Nothing beyond {host.replace('_', '-')}'s own dependencies."]
    listed = " ".join(f"`{p}`" for p in pkgs)
    if extra:
        return lines + [f"`pip install -e '.[{extra}]'`: this folder's extra in `pyproject.toml` ({listed})."]
    return lines + [f"Beyond lmms-eval's own dependencies: `pip install {' '.join(pkgs)}`."]


def tags(folder: str) -> dict:
    """``{tag: [task, ...]}`` of the folder's task YAMLs (``tag:``), sorted."""
    out: dict = {}
    for name, entry in _index(folder).items():
        if entry["type"] == "task":
            tag = entry["config"].get("tag") or []
            for t in [tag] if isinstance(tag, str) else tag:
                out.setdefault(t, []).append(name)
    return dict(sorted(out.items()))


def data_access(bench: str, dataset_path: str) -> list[str]:
    """The README's "Data access" lines: what ``dataset_path`` names, and where the data comes from."""
    from hanyi.data.hub_card import RELEASES

    lines = ["## Data access", "", f"`dataset_path` in these YAMLs: `{dataset_path}`."]
    if dataset_path.startswith("ORG/"):
        lines[-1] = (f"`dataset_path` in these YAMLs: `!function dataset.path`, the placeholder `{dataset_path}`: "
                     "`dataset.py` stops a task at load with one line saying what to do.")  # fmt: skip
    release = RELEASES[bench]
    # The converter of a release into the hub layout is the source project's command, which the pull request's
    # description names (data_summary); the README, which stays in the upstream tree, says what to build.
    if dataset_path.startswith("ORG/") and release.redistribute:
        lines += ["", f"`{dataset_path}` is a placeholder: this dataset is not on the Hugging Face hub yet. Convert the "
                  "official release (below) into a dataset folder of the layout these YAMLs read (the pull request "
                  "that added this folder names the converter), upload it as a dataset repository and set "
                  "`dataset_path` to its id."]  # fmt: skip
    elif dataset_path.startswith("ORG/"):
        lines += ["", f"`{dataset_path}` is a placeholder: the licence does not allow redistributing this dataset. "
                  f"Each user requests the release ({release.official}), converts it into a local dataset folder of "
                  "the layout these YAMLs read (the pull request that added this folder names the converter) and "
                  "sets `dataset_path` to that folder (or a private hub repository)."]  # fmt: skip
    lines += ["", f"The official release: {release.official}. Licence: {release.terms}"]
    return lines


#: Host patches (``docs/upstream/NNNN-*.patch``) that a run of the exported groups needs: none. Checked by running
#: without any: ``tests/test_export.py`` runs every group on the installed, unpatched lmms-eval with hanyi blocked, and
#: ``benchmarks/upstream_dry_run.py`` on an upstream checkout.
NEEDED_PATCHES: tuple = ()


def patches(package: str = "lmms_eval") -> list[tuple[str, str]]:
    """``[(file name, subject)]`` of the ``docs/upstream/*.patch`` files that patch ``package`` (lmms-eval by default;
    ``0004`` patches lm-evaluation-harness, ``lm_eval``, and belongs in no lmms-eval pull request)."""
    out = []
    for path in sorted(glob.glob(os.path.join(DOCS_DIR, "upstream", "*.patch"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if not re.search(rf"^\+\+\+ b/{package}/", text, flags=re.M):
            continue
        m = re.search(r"^Subject: (?:\[PATCH[^\]]*\] *)?(.+)$", text, flags=re.M)
        out.append((os.path.basename(path), m.group(1).strip() if m else ""))
    return out


LIB = os.path.join("_task_utils", "cultural_utils")
#: Why the judged metrics keep their own client instead of ``lmms_eval/llm_judge`` (the reason a reviewer asks for).
JUDGE_REASON = (
    "The judged metrics are configured the way `lmms_eval/llm_judge` is (`OPENAI_API_URL`, `MODEL_VERSION`, "
    "`OPENAI_API_KEY`) and emitted only when both are set, but they keep their own client "
    "(`_task_utils/cultural_utils/metrics/judge/`): `llm_judge` retries and bounds concurrency, yet has no on-disk cache "
    "of judgements keyed by the request (a rerun or a resumed run would pay, and may get different verdicts, for "
    "every request again), no circuit breaker that stops a run against a failing endpoint after a few consecutive "
    "errors, and no total deadline per request (a server dripping headers holds a request past its timeout). The "
    "client requests temperature 0 and records the judge model with each item, so the scores are reproducible from "
    "the cache. Moving it onto `llm_judge` once it has these is a follow-up, not part of this pull request."
)


def data_summary(out: str, benchmarks) -> list[str]:
    """One line per benchmark of the pull request: what ``dataset_path`` loads and what the licence allows."""
    from hanyi.data.hub_card import RELEASES

    lines = []
    for bench in benchmarks:
        release = RELEASES[bench]
        cfg = next((e["config"] for e in _index(os.path.join(out, bench)).values() if e["type"] == "task"), {})
        path = cfg.get("dataset_path", "")
        if not isinstance(path, str) or os.path.isfile(os.path.join(out, bench, "dataset.py")):
            path = f"ORG/{bench}"  # the placeholder's dataset.py (!function dataset.path) says what to do
        if path and not path.startswith(("ORG/", "/")):
            what = f"`{path}` loads from the hub (licence {release.licence}: the authors' own copy)"
        elif not release.redistribute:
            what = (f"local only: the licence ({release.licence}) forbids hosting a converted copy, so no hub id can "
                    f"ever load it; each user requests the release ({release.official}) and points `dataset_path` at "
                    "a private copy (README, Data access)")  # fmt: skip
        elif path.startswith("ORG/"):
            what = (f"`{path}` is a placeholder until a maintainer hosts the data (licence {release.licence}); "
                    "README, Data access, says how to build it")  # fmt: skip
        else:
            what = f"`{path}`: a prepared local copy (README, Data access)"
        if path.startswith("ORG/"):  # the converter the README leaves unnamed: the description, beside, names it
            what += (f"; the converter: `hanyi prepare {bench} --hub-folder DIR` (`pip install hanyi`), which writes "
                     "the folder these YAMLs read from the official release")  # fmt: skip
        lines.append(f"- `{bench}`: {what}.")
    return lines
