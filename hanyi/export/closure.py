"""What the exported task folders really use of ``hanyi``: a closure over top-level statements, not whole modules.

The exporter (:mod:`hanyi.export.lmms_eval_tasks`) keeps each benchmark folder's own ``.py`` files whole; from the
rest of ``hanyi`` it copies only the top-level statements those files reach. Starting from every name a folder module
uses, it follows:

* a name to the statements of its module that bind it (``def``, ``class``, assignments, imports);
* an import of a ``hanyi`` name to the statements of the module it comes from (``from a.b import c``, relative
  imports included), ``alias.attr`` on an imported module to ``attr`` in that module, a module used bare to all of it;
* every name a kept statement uses (its body, decorators, defaults, base classes, imports inside functions).

Statements that bind nothing (a call at module level, ``if``/``try`` blocks) are kept whenever their module is, and
their names followed, so a module's import-time effects stay; ``if __name__ == "__main__":`` blocks are dropped.
Nothing is listed by hand: a new module under ``hanyi/metrics`` is exported once a task imports it.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

ROOT = "hanyi"


def module_path(package_dir: str, name: str) -> str | None:
    """The source file of module ``hanyi.x.y`` (``x/y.py`` or ``x/y/__init__.py``), or None."""
    parts = name.split(".")[1:]
    base = os.path.join(package_dir, *parts)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def is_hanyi(module: str) -> bool:
    return module == ROOT or module.startswith(ROOT + ".")


def absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module name of a (possibly relative) ``from`` import in ``module``."""
    if not node.level:
        return node.module or ""
    base = (module if is_package else module.rpartition(".")[0]).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _is_main_block(node: ast.stmt) -> bool:
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


@dataclass
class Stmt:
    node: ast.stmt
    binds: set = field(default_factory=set)
    names: set = field(default_factory=set)  # names used bare
    attrs: set = field(default_factory=set)  # (name, attr) uses
    local_names: set = field(default_factory=set)  # the same for a function's own names (a module imported inside)
    local_attrs: set = field(default_factory=set)
    #: (module, [(name, local name)]) of the hanyi imports inside the statement's body (``"*"``: the whole module)
    imports: list = field(default_factory=list)


@dataclass
class Module:
    name: str
    path: str
    source: str
    tree: ast.Module
    stmts: list
    #: local name -> ("module", full name) | ("from", module, attr) for hanyi imports; external ones are absent.
    bindings: dict


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _local_names(fn) -> set:
    """The names a function binds itself (parameters, assignments, imports, inner definitions), minus ``global``."""
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None}
    declared_global = set()
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        sub = todo.pop()
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
            todo.extend(sub.decorator_list)
            continue
        if isinstance(sub, ast.Lambda):
            continue
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names.update((x.asname or x.name).split(".")[0] for x in sub.names)
        elif isinstance(sub, ast.Global):
            declared_global.update(sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            names.add(sub.name)
        todo.extend(ast.iter_child_nodes(sub))
    return names - declared_global


def _uses(node: ast.AST, module: str, is_package: bool, stmt: Stmt) -> None:
    """The module-level names ``node`` reads (a function's own locals are not), and the hanyi imports inside it."""

    def visit(sub, local: frozenset) -> None:
        if isinstance(sub, _FUNCTIONS):
            outer = [*getattr(sub, "decorator_list", []), *sub.args.defaults, *[d for d in sub.args.kw_defaults if d]]
            outer += [getattr(sub, "returns", None)] + [
                x.annotation for x in ast.walk(sub.args) if isinstance(x, ast.arg)
            ]
            for child in outer:
                if child is not None:
                    visit(child, local)
            inner = local | _local_names(sub)
            for child in sub.body if isinstance(sub.body, list) else [sub.body]:
                visit(child, inner)
            return
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
            (stmt.local_attrs if sub.value.id in local else stmt.attrs).add((sub.value.id, sub.attr))
            return
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            (stmt.local_names if sub.id in local else stmt.names).add(sub.id)
        elif isinstance(sub, ast.ImportFrom) and sub is not node:
            mod = absolute(sub, module, is_package)
            if is_hanyi(mod):
                stmt.imports.append((mod, [(a.name, a.asname or a.name) for a in sub.names]))
        elif isinstance(sub, ast.Import) and sub is not node:
            stmt.imports.extend((a.name, [("*", "")]) for a in sub.names if is_hanyi(a.name))
        for child in ast.iter_child_nodes(sub):
            visit(child, local)

    visit(node, frozenset())


def _type_checking(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` holding imports only: kept like an import, for the names the kept code annotates with."""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            and not node.orelse and all(isinstance(s, ast.Import | ast.ImportFrom) for s in node.body))  # fmt: skip


def parse_module(package_dir: str, name: str, path: str, source: str | None = None) -> Module:
    if source is None:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    tree = ast.parse(source, filename=path)
    is_package = os.path.basename(path) == "__init__.py"
    stmts, bindings = [], {}
    for node in tree.body:
        stmt = Stmt(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stmt.binds.add(node.name)
            _uses(node, name, is_package, stmt)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                stmt.binds.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            _uses(node, name, is_package, stmt)
            if isinstance(node, ast.AugAssign):
                stmt.names.update(stmt.binds)
        elif isinstance(node, ast.Import | ast.ImportFrom) or _type_checking(node):
            stmt.names.update(["TYPE_CHECKING"] if isinstance(node, ast.If) else [])
            for imp in node.body if isinstance(node, ast.If) else [node]:
                _bind_import(imp, name, is_package, package_dir, stmt, bindings)
        else:
            _uses(node, name, is_package, stmt)
        stmts.append(stmt)
    return Module(name, path, source, tree, stmts, bindings)


def _bind_import(node, module: str, is_package: bool, package_dir: str, stmt: Stmt, bindings: dict) -> None:
    mod = absolute(node, module, is_package) if isinstance(node, ast.ImportFrom) else None
    for a in node.names:
        local = a.asname or (a.name if mod is not None else a.name.split(".")[0])
        stmt.binds.add(local)
        if mod is None and is_hanyi(a.name):
            bindings[local] = ("module", a.name if a.asname else a.name.split(".")[0])
        elif mod is not None and is_hanyi(mod):
            sub = f"{mod}.{a.name}"
            bindings[local] = ("module", sub) if module_path(package_dir, sub) else ("from", mod, a.name)


class Closure:
    """The kept statements of every ``hanyi`` module the given folder modules reach (:meth:`add_module_uses`)."""

    def __init__(self, package_dir: str, overrides: dict | None = None, folders: tuple = ()):
        self.package_dir = package_dir
        #: ``hanyi.tasks.<bench>`` packages: the benchmark folders, exported whole, never followed into.
        self.folders = tuple(folders)
        #: {module: {name: source}}: a generated definition replacing a name's statements (paths in the export).
        self.overrides = overrides or {}
        self.modules: dict[str, Module] = {}
        self.kept: dict[str, set] = {}  # module -> indices of kept statements
        self.used: dict[str, set] = {}  # module -> (stmt index, local name) of kept import aliases
        self.done: set = set()
        self.todo: list = []

    def module(self, name: str) -> Module | None:
        if name not in self.modules:
            path = module_path(self.package_dir, name)
            if path is None:
                return None
            self.modules[name] = parse_module(self.package_dir, name, path)
        return self.modules[name]

    def _in_folder(self, name: str) -> bool:
        return any(name == f or name.startswith(f + ".") for f in self.folders)

    def touch(self, name: str) -> None:
        """Module ``name`` and the packages around it are imported: keep their module-level effects."""
        if self._in_folder(name):
            return
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            mod = ".".join(parts[:i])
            if mod in self.kept:
                continue
            m = self.module(mod)
            if m is None:
                raise LookupError(f"cannot find the source of {mod}")
            self.kept[mod] = set()
            self.used[mod] = set()
            for i_stmt, stmt in enumerate(m.stmts):
                node = stmt.node
                future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
                if (future or not stmt.binds) and not _is_main_block(node):
                    self._keep(mod, i_stmt)
            for text in self.overrides.get(mod, {}).values():
                helper = Stmt(ast.parse(text))
                _uses(helper.node, mod, False, helper)
                self._follow(mod, helper)

    def want(self, module: str, name: str) -> None:
        if not self._in_folder(module):
            self.todo.append((module, name))

    def _keep(self, mod: str, index: int) -> None:
        if index in self.kept[mod]:
            return
        self.kept[mod].add(index)
        self._follow(mod, self.modules[mod].stmts[index])

    def _follow(self, mod: str, stmt: Stmt) -> None:
        m = self.modules[mod]
        for name in stmt.names:
            self.want(mod, name)
            if m.bindings.get(name, ("",))[0] == "module":
                self.want(m.bindings[name][1], "*")
        for base, attr in stmt.attrs:
            self.want(mod, base)
            if m.bindings.get(base, ("",))[0] == "module":
                self.want(m.bindings[base][1], attr)
        self._follow_nested(stmt)

    def _follow_nested(self, stmt: Stmt) -> None:
        """Imports inside a function: a name is wanted; an imported module only for the attributes the statement
        reads from its local name (all of it when the name is used bare)."""
        for target, names in stmt.imports:
            for n, local in names:
                sub = f"{target}.{n}"
                if n != "*" and module_path(self.package_dir, sub):
                    self.touch(sub)
                    for base, attr in stmt.attrs | stmt.local_attrs:
                        if base == local:
                            self.want(sub, attr)
                    if local in stmt.names | stmt.local_names:
                        self.want(sub, "*")
                else:
                    self.want(target, n)

    def run(self) -> None:
        while self.todo:
            mod, name = self.todo.pop()
            if (mod, name) in self.done:
                continue
            self.done.add((mod, name))
            self.touch(mod)
            m = self.modules[mod]
            if name == "*":
                for i in range(len(m.stmts)):
                    if not _is_main_block(m.stmts[i].node):
                        self._keep(mod, i)
                        self.used[mod].update((i, b) for b in m.stmts[i].binds)
                continue
            if name in self.overrides.get(mod, {}):
                continue
            for i, stmt in enumerate(m.stmts):
                if name in stmt.binds:
                    self._keep(mod, i)
                    self.used[mod].add((i, name))
            binding = m.bindings.get(name)
            if binding and binding[0] == "from":
                self.want(binding[1], binding[2])
            elif binding:
                self.touch(binding[1])

    def add_module_uses(self, module: Module) -> None:
        """Every ``hanyi`` name a folder module (kept whole) imports or uses: its imports count even when unused in
        the module, since a YAML may name them (``!function aggregate.x`` bound by ``from ... import x``)."""
        for binding in module.bindings.values():
            if binding[0] == "module":
                self.touch(binding[1])
            else:
                self.want(binding[1], binding[2])
        for stmt in module.stmts:
            for name in stmt.names:
                if module.bindings.get(name, ("",))[0] == "module":
                    self.want(module.bindings[name][1], "*")
            for base, attr in stmt.attrs:
                if module.bindings.get(base, ("",))[0] == "module":
                    self.want(module.bindings[base][1], attr)
            self._follow_nested(stmt)

    # ----------------------------------------------------------------------------------------------------------
    # Writing

    def source_of(self, mod: str) -> str:
        """The kept statements of ``mod`` in their order, comments above each kept; imports reduced to used names."""
        m = self.modules[mod]
        lines = m.source.splitlines()
        out = []
        overrides = dict(self.overrides.get(mod, {}))
        for i, stmt in enumerate(m.stmts):
            node = stmt.node
            replaced = [n for n in stmt.binds if n in overrides]
            if replaced:
                out.extend(overrides.pop(n) for n in replaced)
                continue
            if i not in self.kept[mod]:
                continue
            if (
                _type_checking(node)
                or isinstance(node, ast.Import | ast.ImportFrom)
                and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
            ):
                kept = []
                for imp in node.body if isinstance(node, ast.If) else [node]:
                    names = [a for a in imp.names if (i, a.asname or a.name.split(".")[0]) in self.used[mod]]
                    if names and isinstance(imp, ast.ImportFrom):
                        kept.append(ast.unparse(ast.ImportFrom(module=imp.module, names=names, level=imp.level)))
                    elif names:
                        kept.append(ast.unparse(ast.Import(names=names)))
                if kept and isinstance(node, ast.If):
                    out.append("if TYPE_CHECKING:\n" + "\n".join("    " + k for k in kept))
                elif kept:
                    out.append(kept[0])
                continue
            first = min([node.lineno, *[d.lineno for d in getattr(node, "decorator_list", [])]]) - 1
            while first > 0 and lines[first - 1].lstrip().startswith("#"):
                first -= 1
            out.append("\n".join(lines[first : node.end_lineno]))
        out.extend(overrides.values())
        # a TYPE_CHECKING block belongs with the imports above it: one blank line after it, as after them
        return "".join(p + ("\n\n" if p.startswith("if TYPE_CHECKING:") else "\n\n\n") for p in out).rstrip("\n") + "\n"
