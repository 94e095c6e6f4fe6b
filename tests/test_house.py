"""The shape of the house, checked from the source: what the next engineer relies on without reading every file.

* No import cycle between hanyi's modules, counting every import (those inside functions too, since a cycle that
  only a function-level import hides still ties the two files together for whoever changes one of them).
* One results layer: the leaderboard and ``hanyi submit`` read runs through :mod:`hanyi.results` and import nothing
  from :mod:`hanyi.report`, which only lays results out.
* Sizes a reader can take in: the report's section builder, the README and the CHANGELOG.
* Comments say why, not which ticket: no issue numbers in the code, the tests or the benchmarks.
"""

from __future__ import annotations

import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "hanyi")


def modules() -> dict[str, str]:
    """``{dotted module name: path}`` of every module of the package."""
    found = {}
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path[:-3], ROOT).replace(os.sep, ".")
                found[dotted.removesuffix(".__init__")] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` over hanyi's own modules. ``from pkg import sub`` is an edge to the module
    ``pkg.sub`` when there is one (to ``pkg`` otherwise), so a package's ``__init__`` is not made a party to every
    import of its submodules."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                graph[mod] |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for alias in node.names:
                    target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base
                    if target in mods:
                        graph[mod].add(target)
        graph[mod].discard(mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_hanyis_modules():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_leaderboard_and_submit_read_results_through_the_results_layer_only():
    graph = import_graph()
    for view in ("hanyi.leaderboard", "hanyi.submit"):
        reaches = {
            target
            for mod, targets in graph.items()
            if mod == view or mod.startswith(view + ".")
            for target in targets
            if target == "hanyi.report" or target.startswith("hanyi.report.")
        }
        assert not reaches, f"{view} imports {sorted(reaches)}"
    results = {t for m, ts in graph.items() if m.startswith("hanyi.results") for t in ts}
    assert not {t for t in results if t.startswith(("hanyi.report", "hanyi.leaderboard"))}


def _size(path: str) -> int:
    return os.path.getsize(os.path.join(ROOT, path))


def test_sizes_a_reader_can_take_in():
    with open(os.path.join(PACKAGE, "report", "build.py"), encoding="utf-8") as f:
        assert len(f.readlines()) <= 400
    assert _size("README.md") <= 10 * 1024
    assert _size("CHANGELOG.md") <= 30 * 1024


TICKET = re.compile(r"\b[Ii]ssues? #?\d+|\b[Ii]ssue-\d+")


def test_no_issue_numbers_in_code_tests_or_benchmarks():
    named = []
    for top in ("hanyi", "tests", "benchmarks", "tools"):
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "sample", "snapshots", "fixtures")]
            for name in files:
                if not name.endswith((".py", ".yaml", ".jinja", ".txt", "_yaml")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if TICKET.search(line):
                            named.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()[:80]}")
    # this file's own pattern is written so that it does not match itself
    assert not named, f"{len(named)} line(s) name an issue instead of the reason:\n" + "\n".join(named[:40])
