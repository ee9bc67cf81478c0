"""The packages stay layered: import-linter's contracts in pyproject.toml hold, and no two sub-packages import
each other (directly or round a longer loop), counting imports inside functions too.

Both read the source without importing it (grimp parses it), laid out as the wheel installs it (gui/ inside
gpu_train_monitor/), in one fresh interpreter that finds that copy first: about two seconds, no torch or Qt. The
torch-free and Qt-free rules for what loads at import time are tests/core/test_imports.py's.
"""

from __future__ import annotations

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


def test_nothing_imports_a_top_level_core_or_gui() -> None:
    # one import name is installed, gpu_train_monitor: `core` and `gui` are the repository's folders, never modules.
    # An import of either would take a research folder's own core/ or gui/ (or fail in the installed app).
    absolute = re.compile(r"^\s*(from|import)\s+(core|gui)(\.|\s|$)", re.MULTILINE)
    files = sorted(path for folder in ("core", "gui", "tests") for path in (ROOT / folder).rglob("*.py"))
    offenders = [str(path.relative_to(ROOT)) for path in files if absolute.search(path.read_text(encoding="utf-8"))]
    assert offenders == []
