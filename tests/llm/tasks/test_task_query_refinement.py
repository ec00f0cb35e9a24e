"""query_refinement (CDF-RAG): expand / simplify / decompose."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.query_refinement import QueryRefinement

Q = {"query": "Which river flows through the city where the discoverer of polonium was born?"}


def test_decompose():
    raw = ('{"queries": ["Who discovered polonium?", "Where was #1 born?", "Which river flows through #2?",'
           ' "Where was #1 born?"]}')
    assert QueryRefinement("decompose").parse(raw, Q).value == [
        "Who discovered polonium?", "Where was #1 born?", "Which river flows through #2?"]


def test_simplify_keeps_one_and_modes_differ():
    t = QueryRefinement("simplify")
    assert t.parse('{"queries": ["river polonium discoverer birthplace", "extra"]}', Q).value == [
        "river polonium discoverer birthplace"]
    assert t.key != QueryRefinement("expand").key
    assert "alternative" in QueryRefinement("expand").messages(Q)[0]["content"]


def test_empty_is_invalid():
    with pytest.raises(OutputInvalid):
        QueryRefinement("expand").parse('{"queries": []}', Q)
