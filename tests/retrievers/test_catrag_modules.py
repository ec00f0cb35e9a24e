"""CatRAG's modules form no import circle, even counting imports made only for type annotations (issue 29)."""

import grimp
import pytest

MODULES = ["hyperrag.retrievers.catrag", "hyperrag.retrievers.edge_scoring", "hyperrag.retrievers.hipporag2",
           "hyperrag.retrievers.settings", "hyperrag.retrievers.seeds"]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("hyperrag", exclude_type_checking_imports=False, cache_dir=None)


@pytest.mark.parametrize("module", MODULES)
def test_no_module_reaches_itself(graph, module):
    for other in MODULES:
        if other != module and graph.chain_exists(importer=module, imported=other):
            assert not graph.chain_exists(importer=other, imported=module), f"{module} <-> {other}"


def test_the_edge_scorer_knows_no_retriever(graph):
    for retriever in ("hyperrag.retrievers.catrag", "hyperrag.retrievers.hipporag2", "hyperrag.retrievers.base"):
        assert not graph.chain_exists(importer="hyperrag.retrievers.edge_scoring", imported=retriever)
