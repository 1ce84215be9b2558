"""The layout of :mod:`table.rules`: its modules import no project code but their own, and never each other in a circle.

Read from the source with :mod:`ast` (nothing is imported), so an import hidden inside a
function or under ``if TYPE_CHECKING:`` counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

RULES = Path(__file__).resolve().parents[1] / "table" / "rules"
PACKAGE = "table.rules"
#: Project packages: an import of one of these is project code.
PROJECT = ("table", "vision", "calibration")
#: The one project module table.rules may import: the root of every dicetable error (table/errors.py).
ALLOWED_OUTSIDE = {"table.errors"}


def module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


MODULES = {module_name(p): p for p in sorted(RULES.glob("*.py"))}


def imported(path: Path) -> set[str]:
    """Every module `path` imports (``from P import X`` counts as P.X when that is a module, else P)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against table.rules
                base = PACKAGE.rsplit(".", node.level - 1)[0] if node.level > 1 else PACKAGE
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                out.add(sub if sub in MODULES else source)
    return out


def graph() -> dict[str, set[str]]:
    """Module -> the rules modules it imports.

    A name taken from the package itself (``from table.rules import Card``) is an edge to
    ``table.rules``, whose ``__init__`` imports every module: a circle, as it should be.
    """
    return {name: {m for m in imported(path) if m in MODULES and m != name} for name, path in MODULES.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_rules_modules_are_all_read():
    assert {"table.rules", "table.rules.card", "table.rules.core", "table.rules.registry"} <= set(MODULES)


def test_no_import_cycle_among_the_rules_modules():
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or ())


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_table_rules_imports_nothing_of_the_project_outside_itself():
    outside = {
        f"{name}: {m}"
        for name, path in MODULES.items()
        for m in imported(path)
        if m.split(".")[0] in PROJECT and not (m == PACKAGE or m.startswith(PACKAGE + ".")) and m not in ALLOWED_OUTSIDE
    }
    assert not outside, f"table.rules imports project code outside itself: {sorted(outside)}"
