"""The packages stay layered: import-linter's contracts in pyproject.toml hold, no two sub-packages import
each other (directly or round a longer loop), and no two modules do either, counting imports inside functions
too (only imports under `if TYPE_CHECKING:`, which never run, are left out of the modules' loops).

Both read the source without importing it (grimp parses it), laid out as the wheel installs it (gui/ inside
gpu_train_monitor/), in one fresh interpreter that finds that copy first: about two seconds, no torch or Qt. The
torch-free and Qt-free rules for what loads at import time are tests/core/test_imports.py's.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

from tests.support.installed_layout import installed_layout

ROOT = Path(__file__).resolve().parents[1]
GUI = "gpu_train_monitor.gui"
# Run in the fresh interpreter: import-linter's report, and every import between modules with its line numbers.
READ_IMPORTS = """
import contextlib, io, json, sys
import grimp
import importlinter.api  # configures import-linter (its file readers and graph builder)
from importlinter.application import use_cases

report = io.StringIO()
with contextlib.redirect_stdout(report):
    kept = use_cases.lint_imports(config_filename=sys.argv[1], cache_dir=None, no_logo=True)
graph = grimp.build_graph("gpu_train_monitor", cache_dir=None)
imports = [
    [module, imported, [d["line_number"] for d in graph.get_import_details(importer=module, imported=imported)]]
    for module in sorted(graph.modules)
    for imported in sorted(graph.find_modules_directly_imported_by(module))
]
print(json.dumps({"kept": kept, "report": report.getvalue(), "imports": imports}))
"""


@pytest.fixture(scope="module")
def read_imports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    layout = installed_layout(tmp_path_factory.mktemp("installed"))
    env = {**os.environ, "PYTHONPATH": str(layout)}  # before site-packages, so before the editable install's hook
    result = subprocess.run(
        [sys.executable, "-c", READ_IMPORTS, str(ROOT / "pyproject.toml")],
        cwd=layout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout)
    assert any(module.startswith(f"{GUI}.") for module, _, _ in found["imports"])  # gui was read, not only core
    return found


def test_the_import_contracts_hold(read_imports: dict) -> None:
    text = read_imports["report"]
    broken = [line.removesuffix(" BROKEN") for line in text.splitlines() if line.endswith(" BROKEN")]
    assert read_imports["kept"], (
        f"broken import contracts: {', '.join(broken) or '(none: the configuration is wrong)'}\n{text}"
    )
    assert "Contracts: 3 kept, 0 broken" in text  # every contract was read and checked


def _package(module: str) -> str:
    """`gpu_train_monitor.store.recorder` -> `gpu_train_monitor.store`, `gpu_train_monitor.gui.window.parts` ->
    `gpu_train_monitor.gui.window`: the sub-package (or top-level module, like gui.app) it belongs to."""
    depth = 3 if module == GUI or module.startswith(f"{GUI}.") else 2
    return ".".join(module.split(".")[:depth])


def package_graph(imports: list) -> dict[str, set[str]]:
    """Sub-package -> the sub-packages it imports, from every import between their modules."""
    edges: dict[str, set[str]] = {}
    for module, imported, _ in imports:
        if imported.startswith("gpu_train_monitor") and _package(module) != _package(imported):
            edges.setdefault(_package(module), set()).add(_package(imported))
    return edges


def package_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan): each holds at least one import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_the_cycle_finder_finds_a_loop_of_three_and_nothing_in_a_chain() -> None:
    assert package_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert package_cycles({"a": {"b"}, "b": {"c"}}) == []


def shortest_cycle(edges: dict[str, set[str]], group: list[str]) -> list[str]:
    """One shortest loop through `group`'s first package, breadth first: [a, b, ..., a]."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges.get(node, set()) & members):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no loop through {start}")


def test_no_import_cycle_between_sub_packages(read_imports: dict) -> None:
    imports = read_imports["imports"]
    edges = package_graph(imports)
    assert {p for p in edges if not p.startswith(GUI)} and {p for p in edges if p.startswith(f"{GUI}.")}
    lines = []
    for group in package_cycles(edges):
        loop = shortest_cycle(edges, group)
        lines.append(f"{' -> '.join(loop)} (a loop among {', '.join(group)}):")
        for importer_package, imported_package in zip(loop, loop[1:]):
            module, imported, line_numbers = next(
                (m, i, n) for m, i, n in imports if _package(m) == importer_package and _package(i) == imported_package
            )
            lines.append(f"  {module} -> {imported} (line {', '.join(str(n) for n in line_numbers)})")
    assert not lines, "import cycles between sub-packages:\n" + "\n".join(lines)


def source_file(module: str) -> Path:
    """The repository's file of `module`: `gpu_train_monitor.gui.x` is gui/x, any other `gpu_train_monitor.x` core/x
    (a module's .py file, or a package's __init__.py)."""
    parts = module.split(".")[1:]
    path = ROOT / "gui" / Path(*parts[1:]) if parts[:1] == ["gui"] else ROOT / "core" / Path(*parts)
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def type_checking_lines(source: str) -> set[int]:
    """The lines of every statement under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): imports there are for
    type hints only and never run, so they close no loop."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and isinstance(test, (ast.Name, ast.Attribute)):
            if (test.id if isinstance(test, ast.Name) else test.attr) == "TYPE_CHECKING":
                for statement in node.body:
                    lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def test_type_checking_lines_are_only_those_under_the_if() -> None:
    source = "from a import b\nif TYPE_CHECKING:\n    from c import (\n        d,\n    )\nelse:\n    import e\n"
    assert type_checking_lines(source) == {3, 4, 5}
    assert type_checking_lines("import typing\nif typing.TYPE_CHECKING:\n    import f\n") == {3}


def module_graph(imports: list) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[int]]]:
    """Module -> the modules it imports where at least one of those imports runs (not under TYPE_CHECKING), and
    the lines of those imports for each pair."""
    edges: dict[str, set[str]] = {}
    lines: dict[tuple[str, str], list[int]] = {}
    skipped: dict[str, set[int]] = {}
    for module, imported, line_numbers in imports:
        if module not in skipped:
            skipped[module] = type_checking_lines(source_file(module).read_text(encoding="utf-8"))
        running = [number for number in line_numbers if number not in skipped[module]]
        if running and imported.startswith("gpu_train_monitor") and imported != module:
            edges.setdefault(module, set()).add(imported)
            lines[module, imported] = running
    return edges, lines


def test_no_import_cycle_between_modules(read_imports: dict) -> None:
    """A loop of modules (in one package or across them) fails, naming its modules, one shortest loop through
    them, and every import among them (each closes a loop: file and line), the ones to break it at."""
    edges, lines = module_graph(read_imports["imports"])
    assert any(module.startswith(f"{GUI}.") for module in edges)  # gui's modules were read, not only core's
    report = []
    for group in package_cycles(edges):
        report.append(f"a loop among {', '.join(group)} (one: {' -> '.join(shortest_cycle(edges, group))}):")
        for module in group:
            where = source_file(module).relative_to(ROOT)
            for imported in sorted(edges[module] & set(group)):
                numbers = ", ".join(map(str, lines[module, imported]))
                report.append(f"  {module} -> {imported} ({where}, line {numbers})")
    assert not report, "import cycles between modules:\n" + "\n".join(report)


def test_nothing_imports_a_top_level_core_or_gui() -> None:
    # one import name is installed, gpu_train_monitor: `core` and `gui` are the repository's folders, never modules.
    # An import of either would take a research folder's own core/ or gui/ (or fail in the installed app).
    absolute = re.compile(r"^\s*(from|import)\s+(core|gui)(\.|\s|$)", re.MULTILINE)
    files = sorted(path for folder in ("core", "gui", "tests") for path in (ROOT / folder).rglob("*.py"))
    offenders = [str(path.relative_to(ROOT)) for path in files if absolute.search(path.read_text(encoding="utf-8"))]
    assert offenders == []
