"""No import cycle between hyperrag's FILES, the hidden ones included.

``tests/test_import_layers.py`` checks the subpackages (with grimp, leaving ``TYPE_CHECKING`` imports out). This
check goes one level down and leaves nothing out: it reads every import statement of every ``.py`` file under
``hyperrag/`` with :mod:`ast` — module-level, inside functions and methods (hyperrag's lazy imports), and under
``if TYPE_CHECKING:`` (an annotation's import is still a dependency of the file; a cycle hidden there is one a
refactor turns into an ImportError) — and asserts that the graph of files has no cycle.

Edges: ``import a.b.c`` and ``from a.b.c import x`` are an edge to the file of ``a.b.c`` (or, when ``x`` is a
submodule, to ``a.b.c.x``'s file); relative imports are resolved against the importing file's package. The
packages an import passes through (``a/__init__.py``, ``a/b/__init__.py``) are not edges, as in grimp: a package's
``__init__`` is a dependency only when it is imported, or a name is taken from it. Names a package's lazy
``__getattr__`` maps to modules (``hyperrag.utils.lazy``) are not import statements and are not read.
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "hyperrag"

#: File cycles fixed on another branch, left out here until that branch is merged. The lead removes each entry
#: after merging its fix (issue 40: eval/intervals.py <-> eval/per_query.py is fixed by helper i40a's branch).
_KNOWN_FIXED_ELSEWHERE: set[frozenset[str]] = set()

Edge = tuple[int, str]  # (line number, the statement's text) of the first import of one file by another


def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` file of the package under ``root``."""
    out = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
              modules: dict[str, Path]) -> list[str]:
    """The module names one import statement of ``module`` reaches (before mapping to known files)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: from the importing file's package, one level up per extra dot
        package = module if is_package else module.rpartition(".")[0]
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - (node.level - 1)])
        source = f"{base}.{node.module}" if node.module else base
    else:
        source = node.module or ""
    return [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body`` and of the blocks nested in it (functions, classes, ``if``, ``try``, ``with``,
    loops, ``match``): imports are statements, so no expression needs walking."""
    for stmt in body:
        yield stmt
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(stmt, block, None) or ():
                yield from _statements([child] if isinstance(child, ast.stmt) else child.body)


def _file_of(name: str, modules: dict[str, Path]) -> str | None:
    """The innermost module of ours that ``name`` names (``hyperrag.x.y.Class`` → ``hyperrag.x.y``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path = ROOT) -> dict[str, dict[str, Edge]]:
    """importer → {imported: (line, statement)} over every import statement of every file, wherever it sits."""
    modules = _modules(root)
    graph: dict[str, dict[str, Edge]] = {m: {} for m in modules}
    for module, path in modules.items():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in _statements(ast.parse(source, filename=str(path)).body):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _imported(node, module, path.name == "__init__.py", modules):
                target = _file_of(name, modules)
                if target is not None and target != module and target not in graph[module]:
                    text = " ".join(" ".join(lines[node.lineno - 1: node.end_lineno]).split())
                    graph[module][target] = (node.lineno, text)
    return graph


def _strongly_connected(graph: dict[str, dict[str, Edge]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one file (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start, edges in graph.items():
        if start in index:
            continue
        work = [(start, iter(edges))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _one_cycle(graph: dict[str, dict[str, Edge]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first file, as files in import order (first one repeated)."""
    members, start = set(component), component[0]
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in graph[node]:
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if child in members and child not in previous:
                previous[child] = node
                queue.append(child)
    return [*component, component[0]]  # not reached: a component of two or more files holds a cycle


def cycle_report(graph: dict[str, dict[str, Edge]]) -> list[str]:
    """One block per import cycle between files: each step with the line and statement that makes it."""
    blocks = []
    for component in _strongly_connected(graph):
        cycle = _one_cycle(graph, component)
        steps = [f"  {a}:{graph[a][b][0]}: {graph[a][b][1]}" for a, b in itertools.pairwise(cycle)]
        blocks.append(f"{len(component)} files in a cycle ({', '.join(component)}); one:\n" + "\n".join(steps))
    return blocks


def _without_known(graph: dict[str, dict[str, Edge]]) -> dict[str, dict[str, Edge]]:
    return {a: {b: e for b, e in edges.items() if frozenset({a, b}) not in _KNOWN_FIXED_ELSEWHERE}
            for a, edges in graph.items()}


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, Edge]]:
    return import_graph()


def test_no_import_cycle_between_hyperrag_files(graph: dict[str, dict[str, Edge]]) -> None:
    blocks = cycle_report(_without_known(graph))
    assert not blocks, "import cycles between hyperrag's files:\n" + "\n".join(blocks)


def test_the_walk_reads_function_level_and_type_checking_imports(graph: dict[str, dict[str, Edge]]) -> None:
    """The graph holds imports from inside functions, from ``if TYPE_CHECKING:``, relative ones and
    ``from package import submodule`` (so a cycle hidden in any of them is seen)."""
    # inside load_or_build_causal_index / build_causal_graph
    assert graph["hyperrag.causal.graph"]["hyperrag.causal.classifier"][1].startswith("from hyperrag.causal.classifier")
    # under `if TYPE_CHECKING:`
    assert "hyperrag.protocols" in graph["hyperrag.causal.records"]
    assert "hyperrag.llm.session" in graph["hyperrag.protocols"]


def test_relative_and_submodule_imports_are_resolved(tmp_path: Path) -> None:
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "a.py").write_text("def f():\n    from .. import top\n    from ..sub.b import g\n")
    (pkg / "sub" / "b.py").write_text("def g():\n    pass\n")
    (pkg / "top.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from hyperrag.sub import b, missing\n")
    g = import_graph(tmp_path)
    assert set(g["hyperrag.sub"]) == {"hyperrag.sub.b"}
    assert set(g["hyperrag.sub.a"]) == {"hyperrag.top", "hyperrag.sub.b"}
    assert set(g["hyperrag.top"]) == {"hyperrag.sub.b", "hyperrag.sub"}  # `missing`: a name of the package
    assert not cycle_report(g)


def test_the_check_reports_a_cycle_with_the_imports_that_close_it(tmp_path: Path) -> None:
    """A cycle through a function-level import and a TYPE_CHECKING one is found and named step by step."""
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hyperrag.mid import M\n")
    (pkg / "mid.py").write_text("from hyperrag import high\nM = 1\n")
    (pkg / "high.py").write_text("def f():\n    from .low import x\n")
    blocks = cycle_report(import_graph(tmp_path))
    assert len(blocks) == 1
    assert "3 files in a cycle" in blocks[0]
    assert "hyperrag.high:2: from .low import x" in blocks[0]
    assert "hyperrag.low:3: from hyperrag.mid import M" in blocks[0]
    assert "hyperrag.mid:1: from hyperrag import high" in blocks[0]


def test_the_pairs_fixed_elsewhere_are_the_only_ones_left_out(graph: dict[str, dict[str, Edge]]) -> None:
    """Only the listed pairs are excluded, and only their edges: every other edge of those files is checked."""
    removed = {(a, b) for a, edges in graph.items() for b in edges} - {
        (a, b) for a, edges in _without_known(graph).items() for b in edges}
    assert all(frozenset(edge) in _KNOWN_FIXED_ELSEWHERE for edge in removed)
