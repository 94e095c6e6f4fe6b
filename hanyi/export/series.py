"""Pull requests a maintainer can review: every one at most :data:`PR_LINES` lines of Python, shared code included.

``hanyi export lmms-eval --benchmarks B ...`` writes one self-contained pull request when what the selection needs fits
under the cap (:func:`export_prs`). It does not for the judged benchmarks: the judge client with its cache, retries and
breaker, the backbone checks, the secret redaction and the image checks are reached at run time by their scores, and
the closure (:mod:`hanyi.export.closure`) already keeps only the statements the folders reach, each the source's own
definition. Such a selection is written as a series instead, split from the full export (every benchmark) by file:

* ``<out>/shared/``: every file of ``_task_utils/cultural_utils/`` that two or more benchmarks reach, with the content
  the full export gives it. It is the same pull request whichever benchmark comes first, so a maintainer reviews it
  once for all of them, and no later pull request rewrites one of its files;
* ``<out>/<bench>/``: the benchmark's folder and the shared-code files only it reaches, its ``PULL_REQUEST.md`` naming
  the shared pull request as its prerequisite.

Should the shared code outgrow the cap, it is cut like lm-eval's below (``shared-1/``, ``shared-2/``, ...). ``--series``
always writes the series. Every exported file lands in exactly one pull request, and the series of all
benchmarks together is the full export, byte for byte. Each directory is copied into ``lmms_eval/tasks/`` in order
and holds its ``PULL_REQUEST.md`` beside the folders.

lm-evaluation-harness (:func:`export_lm_eval`): its UNPIE tasks need the judge, METEOR and the data checks, more than
the cap. There the code of ``cultural_utils/`` that is not one benchmark's glue is split in dependency order (a module
after every module it imports at load), into as few pull requests as the cap allows; the last of them also carries the
benchmark when one benchmark is exported, else each benchmark follows in its own. Each pull request imports on its
own once the ones before it are merged.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import tempfile

from hanyi import BENCHMARKS
from hanyi.export import lmms_eval_tasks as lt
from hanyi.export import pr, settings_map
from hanyi.export.naming import LIB_DIR, LIB_PACKAGE

#: Lines of Python one pull request may hold: what a maintainer reviews in one piece.
PR_LINES = 2_500
SHARED = "shared"
#: The line of a later pull request's description that names the ones to merge before it.
PREREQUISITE = "**Prerequisite:** merge first the pull request{s} written to {names} (this series, in order)."


def _lib_files(bench: str) -> set[str]:
    """The files of ``_task_utils/cultural_utils/`` (relative to it) that ``bench``'s folder reaches."""
    found = lt.shared_closure([bench], {})
    return {lt.lib_file(m) for m in found.kept} | {settings_map.MODULE + ".py"}


def python_lines(folder: str) -> int:
    """Lines of the ``.py`` files under ``folder`` (bundled samples left out)."""
    total = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in ("sample", "__pycache__")]
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    total += len(fh.read().splitlines())
    return total


def _file_lines(path: str) -> int:
    if not path.endswith(".py") or f"{os.sep}sample{os.sep}" in path:
        return 0
    with open(path, encoding="utf-8") as fh:
        return len(fh.read().splitlines())


def _copy(src_root: str, rel: str, dst_root: str) -> None:
    """Copy ``src_root/rel`` to ``dst_root/rel``; a text file naming ``src_root`` (a sample ``dataset_path``) names
    ``dst_root`` instead, where the file now is."""
    src, dst = os.path.join(src_root, rel), os.path.join(dst_root, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.isdir(src):
        for root, _, files in os.walk(src):
            for f in files:
                _copy(src_root, os.path.relpath(os.path.join(root, f), src_root), dst_root)
        return
    shutil.copyfile(src, dst)
    if rel.endswith((".yaml", "_yaml", ".py", ".md")):
        with open(dst, encoding="utf-8") as fh:
            text = fh.read()
        old = os.path.abspath(src_root)
        if old in text:
            with open(dst, "w", encoding="utf-8") as fh:
                fh.write(text.replace(old, os.path.abspath(dst_root)))


def _check_out(out: str) -> list[str]:
    """Refuse ``out`` unless it is absent, empty, or an earlier series (a ``shared/`` and every other entry in its
    manifest, so never a one-pull-request export whose folders would be lost); the entries to replace. Checked
    before anything is written, so a refusal leaves ``out`` as it was."""
    if os.path.islink(out) or (os.path.lexists(out) and not os.path.isdir(out)):
        raise lt.ExportError(f"--out {out} exists and is not an empty folder; choose a new one (nothing was written)")
    entries = set(os.listdir(out)) - {lt.MANIFEST} if os.path.isdir(out) else set()
    earlier = any(is_shared(e) for e in entries) and entries <= lt._manifest(out)
    if entries and not earlier:
        raise lt.ExportError(f"--out {out} exists and is not an empty folder; choose a new one (nothing was written)")
    return sorted(entries)


def _replace(out: str, old: list[str]) -> None:
    for name in old:
        path = os.path.join(out, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    if os.path.exists(os.path.join(out, lt.MANIFEST)):
        os.remove(os.path.join(out, lt.MANIFEST))


def export_series(out: str, data_root: str = "hub", repos=None, benchmarks=BENCHMARKS) -> dict:
    """Write ``<out>/shared/`` and ``<out>/<bench>/`` for each of ``benchmarks`` (see the module docstring); returns
    ``{pull request: python lines}`` in merge order."""
    old = _check_out(out)
    benchmarks = [b for b in BENCHMARKS if b in benchmarks]
    users: dict[str, set] = {}
    for bench in BENCHMARKS:
        for rel in _lib_files(bench):
            users.setdefault(rel, set()).add(bench)
    with tempfile.TemporaryDirectory(prefix="hanyi-series-") as full:
        lt.export(full, BENCHMARKS, data_root, repos=repos)
        written = []
        for root, _, files in os.walk(os.path.join(full, LIB_DIR)):
            written += [os.path.relpath(os.path.join(root, f), os.path.join(full, LIB_DIR)) for f in files]
        unknown = sorted(set(written) - set(users))
        if unknown:
            raise lt.ExportError(f"shared files no benchmark reaches on its own: {', '.join(unknown)}")
        _replace(out, old)
        shared = sorted(r for r in written if len(users[r]) > 1)
        layers = _pack(os.path.join(full, LIB_DIR), LIB_PACKAGE, shared)
        names = _shared_names(len(layers))
        for name, layer in zip(names, layers, strict=True):
            for rel in layer:
                _copy(full, os.path.join(LIB_DIR, rel), os.path.join(out, name))
        for bench in benchmarks:
            dst = os.path.join(out, bench)
            _copy(full, bench, dst)
            for rel in sorted(r for r in written if users[r] == {bench}):
                _copy(full, os.path.join(LIB_DIR, rel), dst)
        for bench in benchmarks:
            # what the benchmark's self-contained pull request says (its requirements those of the code it runs)
            with tempfile.TemporaryDirectory(prefix="hanyi-series-alone-") as alone:
                lt.export(alone, [bench], data_root, repos=repos)
                text = pr.pull_request(alone, [bench], data_root, [])
            with open(os.path.join(out, bench, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
                fh.write(_depends(text, bench, names))
        for i, (name, layer) in enumerate(zip(names, layers, strict=True)):
            with open(os.path.join(out, name, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
                fh.write(_shared_text(layer, users, names[:i]))
    lt.record(out, [*names, *benchmarks])
    return {name: python_lines(os.path.join(out, name)) for name in [*names, *benchmarks]}


def prerequisite(before: list[str]) -> str:
    """The line of a pull request's description that names the pull requests ``before`` it (:data:`PREREQUISITE`)."""
    return PREREQUISITE.format(s="s" if len(before) > 1 else "", names=", ".join(f"`{b}/`" for b in before))


def is_shared(name: str) -> bool:
    """Whether ``name`` is a shared-code pull request of a series (``shared``, ``shared-1``, ...)."""
    return name == SHARED or re.fullmatch(rf"{SHARED}-\d+", name) is not None


def _shared_names(count: int) -> list[str]:
    return [SHARED] if count == 1 else [f"{SHARED}-{i}" for i in range(1, count + 1)]


def _pack(lib: str, package: str, files: list[str]) -> list[list[str]]:
    """``files`` (relative to ``lib``) in :func:`dependency_order`, cut into pull requests of at most
    :data:`PR_LINES` lines each: a module never lands before one it imports at load."""
    layers, current, used = [], [], 0
    for f in dependency_order(lib, package, files):
        n = _file_lines(os.path.join(lib, f))
        if current and used + n > PR_LINES:
            layers.append(current)
            current, used = [], 0
        current.append(f)
        used += n
    return [*layers, current] if current else layers


def export_prs(out: str, benchmarks=BENCHMARKS, data_root: str = "hub", repos=None, force: bool = False) -> dict:
    """``hanyi export lmms-eval --benchmarks ...``: one pull request (:func:`lt.export`) when the selection with the
    shared code it needs is at most :data:`PR_LINES` lines, else the series for the selection (:func:`export_series`).
    Returns ``{"python_lines": {pull request: lines}, "cap": ..., "series": bool, ...}``; one pull request is ``"."``,
    ``out`` itself."""
    benchmarks = list(benchmarks)
    try:  # refused at once when neither kind of export may write there (each checks again before it writes)
        lt.preflight(out, benchmarks, force)
    except lt.ExportError as exc:
        try:
            _check_out(out)
        except lt.ExportError:
            raise exc from None
    with tempfile.TemporaryDirectory(prefix="hanyi-measure-") as tmp:
        lt.export(tmp, benchmarks, data_root, repos=repos)
        lines = python_lines(tmp)
    if lines <= PR_LINES:
        written = lt.export(out, benchmarks, data_root, force=force, repos=repos)
        return {**written, "python_lines": {".": lines}, "cap": PR_LINES, "series": False}
    sizes = export_series(out, data_root, repos, benchmarks)
    found = {b: {"folder": os.path.join(out, b, b), "dataset_path": lt.dataset_path(b, data_root,
             os.path.join(out, b, b), repos)} for b in benchmarks}  # fmt: skip
    return {**found, "python_lines": sizes, "cap": PR_LINES, "series": True, "self_contained_lines": lines,
            "why": f"one pull request with the shared code it needs would be {lines:,} lines of Python, over the "
                   f"cap of {PR_LINES:,}: merge {SHARED}/ first, then each benchmark's"}  # fmt: skip


def check_prs(out: str, benchmarks=BENCHMARKS, data_root: str = "hub", repos=None) -> list[str]:
    """What :func:`export_prs` would write now, compared with ``out``: one line per drifted file (empty: in step).
    A single pull request is checked by :func:`lt.check_export`; a series file by file, pull request by pull request."""
    with tempfile.TemporaryDirectory(prefix="hanyi-export-check-") as tmp:
        fresh = os.path.join(tmp, "export")
        if not export_prs(fresh, benchmarks, data_root, repos)["series"]:
            return lt.check_export(out, benchmarks, data_root, repos)
        drift = []
        for name in sorted(set(os.listdir(fresh)) - {lt.MANIFEST}):
            a, b = os.path.join(fresh, name), os.path.join(out, name)
            names_a, names_b = lt._tree(a), (lt._tree(b) if os.path.isdir(b) else set())
            drift += [f"missing: {os.path.join(b, n)}" for n in sorted(names_a - names_b)]
            drift += [f"not in the source any more: {os.path.join(b, n)}" for n in sorted(names_b - names_a)]
            for n in sorted(names_a & names_b):
                with open(os.path.join(a, n), "rb") as x, open(os.path.join(b, n), "rb") as y:
                    ours, theirs = x.read(), y.read()
                if ours.replace(os.path.abspath(fresh).encode(), os.path.abspath(out).encode()) != theirs:
                    drift.append(f"differs from the source: {os.path.join(b, n)}")
        return drift


def _depends(text: str, bench: str, before: list[str]) -> str:
    title, _, rest = text.partition("\n")
    many = len(before) > 1
    note = prerequisite(before)
    note += f" Part of a series: {'they add' if many else 'it adds'} the code this one imports; this one adds "
    note += f"`{bench}/` and the rest of the code it needs.\n"
    return title + "\n\n" + note + rest


def _shared_text(shared: list[str], users: dict, before: list[str] = ()) -> str:
    lines = ["# Shared code for the cultural and implied-meaning benchmarks (first of a series)", ""]
    if before:
        lines[0] = f"# Shared code for the cultural and implied-meaning benchmarks (part {len(before) + 1} of a series)"
        lines += [prerequisite(before), ""]
    lines += [f"`lmms_eval/tasks/{LIB_DIR}/`: the code two or more of the benchmark folders of the following pull "
              f"requests use ({', '.join(BENCHMARKS)}), one pull request per benchmark, each under {PR_LINES:,} lines "
              "of Python; this one adds no task. Each file and the benchmarks that use it:", ""]  # fmt: skip
    lines += [f"- `{rel}`: {', '.join(sorted(users[rel]))}" for rel in sorted(shared)]
    lines += ["", "## Why one shared pull request first", "",
              f"A self-contained pull request for one benchmark would carry this code too, and for the judged "
              f"benchmarks (Pun Rebus, CII, UNPIE, VULCA) that is over the {PR_LINES:,} lines a reviewer takes in one "
              "piece: the judge client with its cache, retries and breaker, the backbone checks, the secret redaction "
              "and the image checks are what their scores run on. Each pull request would also write these files "
              "again, with different content. As one common first pull request it is reviewed once for all of the "
              "benchmarks, and each benchmark's pull request after it adds only its folder and the code only it "
              "uses.", ""]  # fmt: skip
    lines += ["## Judged metrics", "", pr.readme.JUDGE_REASON, ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------------
# lm-evaluation-harness


def _module_of(rel: str, package: str) -> str:
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


def _load_imports(path: str, package: str) -> set[str]:
    """The modules of ``package`` that the file imports when it is loaded (top-level imports; a ``from a import b``
    counts ``a`` and ``a.b``)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m == package or m.startswith(package + ".")}


def dependency_order(lib: str, package: str, files: list[str]) -> list[str]:
    """``files`` (relative to ``lib``, the folder of ``package``), each after the files it imports at load and after
    its packages' ``__init__.py``; otherwise in sorted order."""
    by_module = {_module_of(f, package): f for f in files if f.endswith(".py")}
    needs: dict[str, set] = {}
    for f in files:
        deps = set()
        if f.endswith(".py"):
            mod = _module_of(f, package)
            parts = mod.split(".")
            deps.update(by_module[p] for i in range(1, len(parts)) if (p := ".".join(parts[:i])) in by_module)
            deps.update(by_module[m] for m in _load_imports(os.path.join(lib, f), package) if m in by_module)
        else:
            parent = os.path.join(os.path.dirname(f), "__init__.py")
            deps.update([parent] if parent in files else [])
        needs[f] = deps - {f}
    order, seen = [], set()

    def visit(f: str) -> None:
        if f in seen:
            return
        seen.add(f)
        for d in sorted(needs[f]):
            visit(d)
        order.append(f)

    for f in sorted(files):
        visit(f)
    return order


def export_lm_eval(out: str, data_root: str = "hub", repos=None, only=None) -> dict:
    """``hanyi export lm-eval``: the folders as one pull request when they fit under :data:`PR_LINES` lines (the
    export of :func:`hanyi.export.lm_eval_tasks.export`), else a series (module docstring). Returns
    ``{"python_lines": {pull request: lines}, "cap": ..., "series": bool, ...}``."""
    from hanyi.export import lm_eval_tasks as lm

    chosen = [b for b in lm.benchmarks() if not only or b in only]
    if len(set(only or ())) > len(chosen):
        lm.export(out, data_root, repos, only=only)  # its one-line refusal of an unknown benchmark
    with tempfile.TemporaryDirectory(prefix="hanyi-measure-") as tmp:
        lm.export(tmp, data_root, repos, only=only)
        lines = python_lines(tmp)
        if lines > PR_LINES:
            old = _check_out(out)
            _replace(out, old)
            sizes = _split_lm_eval(tmp, out, chosen, data_root)
            lt.record(out, list(sizes))
            found = {b: {"folder": os.path.join(out, b, b)} for b in chosen}
            return {**found, "python_lines": sizes, "cap": PR_LINES, "series": True, "self_contained_lines": lines,
                    "why": f"one pull request would be {lines:,} lines of Python, over the cap of {PR_LINES:,}: "
                           "merge the pull requests in this order"}  # fmt: skip
    written = lm.export(out, data_root, repos, only=only)
    return {**written, "python_lines": {".": lines}, "cap": PR_LINES, "series": False}


def _split_lm_eval(full: str, out: str, benchmarks: list[str], data_root: str) -> dict:
    from hanyi.export import lm_eval_tasks as lm

    lib_dir, package = lm.LM_EVAL.lib_dir, lm.LM_EVAL.lib_package
    lib = os.path.join(full, lib_dir)
    files = sorted(os.path.relpath(os.path.join(r, f), lib) for r, _, fs in os.walk(lib) for f in fs)
    glue = {b: [f for f in files if f.startswith(os.path.join("tasks", b) + os.sep)] for b in benchmarks}
    common = [f for f in files if not any(f in g for g in glue.values())]
    units = {b: [os.path.join(b, os.path.relpath(os.path.join(r, f), os.path.join(full, b)))
                 for r, _, fs in os.walk(os.path.join(full, b)) for f in fs] + [os.path.join(lib_dir, f) for f in glue[b]]
             for b in benchmarks}  # fmt: skip
    size = {b: sum(_file_lines(os.path.join(full, f)) for f in units[b]) for b in benchmarks}
    layers = [[os.path.join(lib_dir, f) for f in layer] for layer in _pack(lib, package, common)]
    used = sum(_file_lines(os.path.join(full, f)) for f in layers[-1]) if layers else 0
    prs: dict[str, list] = {}
    alone = len(benchmarks) == 1 and used + size[benchmarks[0]] <= PR_LINES
    current = layers.pop() if alone and layers else []
    names = _shared_names(len(layers)) if layers else []
    prs.update(zip(names, layers, strict=True))
    for bench in benchmarks:
        prs[bench] = (current if alone else []) + units[bench]
    for name, rels in prs.items():
        for rel in rels:
            _copy(full, rel, os.path.join(out, name))
    order = list(prs)
    for i, name in enumerate(order):
        if name in benchmarks:
            text = _depends(_lm_bench_text(full, name, benchmarks, data_root), name, names)
        else:
            text = _lm_shared_text(name, i, names, prs[name], benchmarks, lib_dir)
        with open(os.path.join(out, name, "PULL_REQUEST.md"), "w", encoding="utf-8") as fh:
            fh.write(text)
    return {name: python_lines(os.path.join(out, name)) for name in order}


def _lm_bench_text(full: str, bench: str, benchmarks: list[str], data_root: str) -> str:
    """The benchmark's own description: with others in the export, its packages (the extras it declares) are those
    of its own export, not of the code the others need."""
    from hanyi.export import lm_eval_tasks as lm

    if benchmarks == [bench]:
        return lm.pull_request(full, [bench])
    with tempfile.TemporaryDirectory(prefix="hanyi-lm-pr-") as alone:
        lm.export(alone, data_root, only=[bench])
        return lm.pull_request(alone, [bench])


def _lm_shared_text(name: str, i: int, names: list[str], rels: list[str], benchmarks: list[str], lib_dir: str) -> str:
    part = f"part {i + 1} of {len(names)} of the shared code, " if len(names) > 1 else ""
    lines = [f"# Shared code for the {', '.join(benchmarks)} tasks ({part}first of a series)", ""]
    if i:
        lines += [prerequisite(names[:i]), ""]
    lines += [f"`lm_eval/tasks/{lib_dir}/`: the metric, prompt and data code the task folders of the following pull "
              f"requests import ({', '.join(benchmarks)}); this one adds no task. The tasks need more than the "
              f"{PR_LINES:,} lines of Python a reviewer takes in one piece (the judge client with its cache, retries "
              "and breaker, METEOR and BLEU, the data checks), so the code comes first, in dependency order: every "
              "module after the modules it imports, so each pull request imports on its own once the ones before it "
              "are merged. Files:", ""]  # fmt: skip
    lines += [f"- `{os.path.relpath(r, lib_dir)}`" for r in rels]
    lines += ["", "## Judged metrics", "", pr.readme.JUDGE_REASON.replace("_task_utils/cultural_utils/", lib_dir + "/"),
              ""]  # fmt: skip
    return "\n".join(lines)
