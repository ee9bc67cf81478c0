"""The packages stay layered: import-linter's contracts in pyproject.toml hold, and no two sub-packages import
each other (directly or round a longer loop), counting imports inside functions too.

Both read the source without importing it (grimp parses it), so they take about a second and need no torch or
Qt. The torch-free and Qt-free rules for what loads at import time are tests/core/test_imports.py's.
"""

from __future__ import annotations

import contextlib
import io
from collections import deque
from pathlib import Path

import grimp
import importlinter.api  # noqa: F401 - configures import-linter (its file readers and graph builder)
from importlinter.application import use_cases

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "gui")


def test_the_import_contracts_hold() -> None:
    report = io.StringIO()
    with contextlib.redirect_stdout(report):  # `lint-imports`' own report: each broken contract and its imports
        kept = use_cases.lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    text = report.getvalue()
    broken = [line.removesuffix(" BROKEN") for line in text.splitlines() if line.endswith(" BROKEN")]
    assert kept, f"broken import contracts: {', '.join(broken) or '(none: the configuration is wrong)'}\n{text}"
    assert "Contracts: 3 kept, 0 broken" in text  # every contract was read and checked


def _package(module: str) -> str:
    """`gpu_train_monitor.store.recorder` -> `gpu_train_monitor.store`: the sub-package (or top-level module, like
    gpu_train_monitor.gui.app) it belongs to."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Sub-package -> the sub-packages it imports, from every module-level import between them."""
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if _package(module) != _package(imported):
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


def test_no_import_cycle_between_sub_packages() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    edges = package_graph(graph)
    assert {p for p in edges if p.startswith("core.")} and {p for p in edges if p.startswith("gui.")}
    lines = []
    for group in package_cycles(edges):
        loop = shortest_cycle(edges, group)
        lines.append(f"{' -> '.join(loop)} (a loop among {', '.join(group)}):")
        for importer_package, imported_package in zip(loop, loop[1:]):
            module, imported = next(
                (m, i)
                for m in sorted(graph.modules)
                if _package(m) == importer_package
                for i in sorted(graph.find_modules_directly_imported_by(m))
                if _package(i) == imported_package
            )
            details = graph.get_import_details(importer=module, imported=imported)
            lines.append(f"  {module} -> {imported} (line {', '.join(str(d['line_number']) for d in details)})")
    assert not lines, "import cycles between sub-packages:\n" + "\n".join(lines)


def test_core_imports_itself_relatively_so_it_also_loads_as_gpu_train_monitor() -> None:
    # core installs a second time as `gpu_train_monitor` (pyproject's package-dir): one `from core.x import y`
    # inside it would import the `core` a research folder has of its own, or bring ours into a watched script
    import re

    absolute = re.compile(r"^\s*(from|import)\s+core(\.|\s|$)", re.MULTILINE)
    files = sorted((ROOT / "core").rglob("*.py"))
    offenders = [str(path.relative_to(ROOT)) for path in files if absolute.search(path.read_text())]
    assert offenders == []
