"""``hanyi export lmms-eval --series``: the contribution as a shared pull request and one per benchmark, each under
the review cap, every exported file in exactly one of them, the series together the full export."""

from __future__ import annotations

import filecmp
import pathlib
import shutil
import subprocess
import sys

import pytest

from hanyi import BENCHMARKS
from hanyi.export import lmms_eval_tasks as lt
from hanyi.export import series

from .test_export import _shadow_env


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("series") / "prs"
    sizes = series.export_series(str(out))
    full = tmp_path_factory.mktemp("full")
    lt.export(str(full), BENCHMARKS)
    return out, full, sizes


def _files(root: pathlib.Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != "PULL_REQUEST.md"}


def test_every_pull_request_of_the_series_is_under_the_cap(made):
    out, _, sizes = made
    shared = [n for n in sizes if series.is_shared(n)]
    assert shared and list(sizes) == [*shared, *BENCHMARKS]
    assert all(0 < n <= series.PR_LINES for n in sizes.values()), sizes
    assert sizes == {name: series.python_lines(str(out / name)) for name in sizes}
    for bench in BENCHMARKS:  # each names the shared pull request as its prerequisite
        text = (out / bench / "PULL_REQUEST.md").read_text(encoding="utf-8")
        assert series.prerequisite(shared) in text, bench
    first = "".join((out / n / "PULL_REQUEST.md").read_text(encoding="utf-8") for n in shared)
    assert "reviewed once for all" in first and "- `metrics/judge/client.py`:" in first


def test_the_series_is_the_full_export_each_file_once(made):
    out, full, sizes = made
    seen: dict[str, str] = {}
    for pr in sizes:
        for rel in _files(out / pr):
            assert rel not in seen, f"{rel} in both {seen[rel]} and {pr}"
            seen[rel] = pr
            assert filecmp.cmp(out / pr / rel, full / rel, shallow=False), rel
    assert set(seen) == _files(full) - {lt.MANIFEST}


def test_the_shared_pull_request_imports_on_its_own_and_each_benchmark_on_top(made, tmp_path):
    """Merged in order (shared, then one benchmark), every module imports with hanyi unimportable; the shared pull
    request alone imports too (a shared file never needs a benchmark's own file at import)."""
    out, _, sizes = made
    script = (
        "import importlib, importlib.util, os, sys\n"
        "import lmms_eval.tasks\n"
        "root = sys.argv[1]\n"
        "lmms_eval.tasks.__path__.append(root)\n"
        "lib = os.path.join(root, '_task_utils', 'cultural_utils')\n"
        "for dirpath, _, files in sorted(os.walk(lib)):\n"
        "    for f in sorted(files):\n"
        "        if f.endswith('.py'):\n"
        "            rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].replace(os.sep, '.')\n"
        "            importlib.import_module('lmms_eval.tasks.' + rel.removesuffix('.__init__'))\n"
        "for path in sys.argv[2:]:\n"
        "    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "assert not [m for m in sys.modules if m == 'hanyi' or m.startswith('hanyi.')]\n"
        "print('ok')\n"
    )
    env = _shadow_env(str(tmp_path))
    for bench in [None, *BENCHMARKS]:
        merged = tmp_path / (bench or "shared-only")
        for shared in [n for n in sizes if series.is_shared(n)]:
            shutil.copytree(out / shared, merged, dirs_exist_ok=True, ignore=shutil.ignore_patterns("PULL_REQUEST.md"))
        if bench:
            shutil.copytree(out / bench, merged, dirs_exist_ok=True, ignore=shutil.ignore_patterns("PULL_REQUEST.md"))
        glue = [str(p) for p in (merged / bench).glob("*.py") if p.name != "dataset.py"] if bench else []
        proc = subprocess.run([sys.executable, "-c", script, str(merged), *sorted(glue)], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.strip() == "ok", (bench, proc.stderr[-3000:])


def test_the_series_refuses_a_folder_that_is_not_empty(made, tmp_path, capsys):
    """An earlier series is replaced (re-export after a change); anything else that is not empty is refused."""
    from hanyi.export import main as export_main

    out, _, _ = made
    (tmp_path / "mine.txt").write_text("mine")
    assert export_main(["lmms-eval", "--series", "--out", str(tmp_path)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    earlier = tmp_path / "earlier"
    lt.export(str(earlier), ["cvlue"])  # one pull request: its folder is not a series' to replace
    assert export_main(["lmms-eval", "--series", "--benchmarks", "cvlue", "--out", str(earlier)]) == 2
    assert "not an empty folder" in capsys.readouterr().err


def test_one_benchmark_over_the_cap_is_the_shared_pull_request_then_its_own(made, tmp_path):
    """``--benchmarks cii`` (over the cap on its own) writes the series' ``shared/`` and ``cii/``, byte for byte: the
    common first pull request is the same whichever benchmark comes first. An earlier series in ``--out`` is replaced,
    and ``--check`` finds a hand edit in it."""
    out, _, sizes = made
    dst = tmp_path / "cii-prs"
    for _ in range(2):  # the second time over the first
        written = series.export_prs(str(dst), ["cii"])
        shared = [n for n in sizes if series.is_shared(n)]
        assert written["series"] and list(written["python_lines"]) == [*shared, "cii"]
    for pr in (*shared, "cii"):
        theirs = {*_files(out / pr), "PULL_REQUEST.md"}
        assert {*_files(dst / pr), "PULL_REQUEST.md"} == theirs
        for rel in theirs:
            assert filecmp.cmp(dst / pr / rel, out / pr / rel, shallow=False), (pr, rel)
    assert sorted(p.name for p in dst.iterdir()) == sorted([lt.MANIFEST, "cii", *shared])
    alone = tmp_path / "cii-alone"  # its description says what the self-contained pull request would
    lt.export(str(alone), ["cii"])
    section = [t.read_text(encoding="utf-8").split("## Requirements", 1)[1].split("\n## Data", 1)[0]
               for t in (dst / "cii" / "PULL_REQUEST.md", alone / "PULL_REQUEST.md")]  # fmt: skip
    assert section[0] == section[1], section  # the packages of all the code cii runs, shared code included
    assert "cultural_utils/` ()" not in (dst / "cii" / "PULL_REQUEST.md").read_text(encoding="utf-8")
    edited = dst / "cii" / "cii" / "utils.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "# by hand\n", encoding="utf-8")
    assert series.check_prs(str(dst), ["cii"]) == [f"differs from the source: {edited}"]


def test_shared_code_over_the_cap_is_cut_in_dependency_order(made, monkeypatch):
    """Should the shared code outgrow the cap, it is cut into ``shared-1/``, ``shared-2/``, ...: each part under the
    cap, and no module in a part before one it imports at load (so each part imports once the earlier are merged)."""
    from hanyi.export.naming import LIB_DIR, LIB_PACKAGE

    out, _, sizes = made
    lib = out / series.SHARED / LIB_DIR
    files = sorted(str(p.relative_to(lib)) for p in lib.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    cap = sizes[series.SHARED] // 3
    monkeypatch.setattr(series, "PR_LINES", cap)
    layers = series._pack(str(lib), LIB_PACKAGE, files)
    assert len(layers) >= 3 and sorted(f for layer in layers for f in layer) == files
    where = {f: i for i, layer in enumerate(layers) for f in layer}
    modules = {series._module_of(f, LIB_PACKAGE): f for f in files if f.endswith(".py")}
    for f, i in where.items():
        assert sum(series._file_lines(str(lib / g)) for g in layers[i]) <= cap or len(layers[i]) == 1
        if f.endswith(".py"):
            for mod in series._load_imports(str(lib / f), LIB_PACKAGE) & set(modules):
                assert where[modules[mod]] <= i, (f, mod)
