"""hyperrag's subpackages form layers: no import cycle between any two of them.

The graph comes from grimp, which reads every import statement of every module, the ones inside functions
(hyperrag's lazy imports of heavy packages) included; imports for type annotations only are left out. A package's ``__main__`` is a command-line entry point,
like ``retrieve.py``: it sits on top of everything and nothing imports it, so it is not part of its folder's
layer.
"""

from __future__ import annotations

import grimp
import pytest


def _library_graph() -> grimp.ImportGraph:
    # imports under `if TYPE_CHECKING:` (annotations such as hyperrag.protocols) never run: not a runtime layer
    g = grimp.build_graph("hyperrag", exclude_type_checking_imports=True, cache_dir=None)
    for module in [m for m in g.modules if m.rsplit(".", 1)[-1] == "__main__"]:
        g.remove_module(module)
    return g


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return _library_graph()


def _cycle_report(g: grimp.ImportGraph, breakers: set[tuple[str, str]]) -> str:
    lines = []
    for importer, imported in sorted(breakers):
        for d in g.get_import_details(importer=importer, imported=imported) or [{}]:
            lines.append(f"{importer}:{d.get('line_number', '?')} imports {imported} "
                         f"({d.get('line_contents', '').strip()}), which imports it back")
    return "\n".join(lines)


def test_no_import_cycle_between_hyperrag_subpackages(graph: grimp.ImportGraph) -> None:
    breakers = graph.nominate_cycle_breakers("hyperrag")
    assert not breakers, "import cycles between hyperrag's subpackages:\n" + _cycle_report(graph, breakers)


def test_training_tasks_sit_above_the_retrievers_they_build(graph: grimp.ImportGraph) -> None:
    # PPOTask builds its CDF-RAG retriever inside a method: function-level imports are in the graph
    assert graph.chain_exists(importer="hyperrag.training.tasks.ppo", imported="hyperrag.retrievers.cdfrag")
    assert not graph.chain_exists(importer="hyperrag.retrievers", imported="hyperrag.training",
                                  as_packages=True)


def test_the_check_reports_a_cycle_with_the_import_that_closes_it() -> None:
    """A low layer importing a high one is reported by name (the check is not blind)."""
    g = _library_graph()
    g.add_import(importer="hyperrag.utils.atomic", imported="hyperrag.retrievers.base", line_number=1,
                 line_contents="from hyperrag.retrievers.base import Retriever")
    breakers = g.nominate_cycle_breakers("hyperrag")
    assert breakers
    assert "hyperrag.utils.atomic" in _cycle_report(g, breakers)
