"""query_refinement (CDF-RAG Appendix A.4): expand / simplify / decompose, each prompt with every step and guideline
of the paper's template and its constraints."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.query_refinement import QueryRefinement

Q = {"query": "Which river flows through the city where the discoverer of polonium was born?"}


def system(mode: str) -> str:
    return QueryRefinement(mode).messages(Q)[0]["content"]


@pytest.mark.parametrize("mode, instructions, absent", [
    ("decompose", ("causal or explanatory mechanisms", "underlying causal or semantic components", "two to four",
                   "self-contained", "answered independently", "logical order",
                   "building toward the answer of the original question", "do not repeat the same wording",
                   "answerable on its own", "instead of referring to another sub-question or its answer",
                   "no numbering, bullets or explanations"), ("#1", "five")),
    ("expand", ("vague or underspecified", "causal retrieval", "context or assumptions",
                "key entities, the causal mechanisms or factors, and the domain", "targeted, informative",
                "single line", "keep the core topic", "specificity or scope", "preserve the original intent",
                "exactly one"), ("synonym", "alternative")),
    ("simplify", ("complex or ambiguous", "original intent", "ambiguity, compound phrasing or indirect wording",
                  "concise, self-contained question", "understood and answered on its own", "precise language",
                  "avoid abstract or technical phrasing", "do not produce several sub-questions", "one line",
                  "core intent", "exactly one"), ()),
])
def test_every_instruction_of_the_mode(mode, instructions, absent):
    s = system(mode)
    for instruction in instructions:
        assert instruction in s, instruction
    for word in absent:
        assert word not in s, word


def test_optional_context_is_shown_only_when_given():
    user = QueryRefinement("expand").messages({**Q, "context": "Nobel laureates in chemistry"})[1]["content"]
    assert "Provided context:" in user and "Nobel laureates in chemistry" in user
    assert "Provided context" not in QueryRefinement("expand").messages(Q)[1]["content"]
    assert "Multi-hop question:" in QueryRefinement("decompose").messages(Q)[1]["content"]


def test_decompose_keeps_two_to_four_distinct_sub_questions_without_bullets():
    raw = ('{"queries": ["1. Who discovered polonium?", "2) Where was Marie Curie born?", '
           '"- Which river flows through Warsaw?", "Where was Marie Curie born?", "What is polonium?", '
           '"Why is the Vistula in Warsaw?"]}')
    assert QueryRefinement("decompose").parse(raw, Q).value == [
        "Who discovered polonium?", "Where was Marie Curie born?", "Which river flows through Warsaw?",
        "What is polonium?"]
    with pytest.raises(OutputInvalid, match="at least 2"):
        QueryRefinement("decompose").parse('{"queries": ["Who discovered polonium?", "who discovered polonium?"]}', Q)


def test_expand_and_simplify_keep_one_line_and_modes_differ():
    t = QueryRefinement("simplify")
    assert t.parse('{"queries": ["river polonium discoverer birthplace", "extra"]}', Q).value == [
        "river polonium discoverer birthplace"]
    assert QueryRefinement("expand").parse('{"queries": ["a", "b"]}', Q).value == ["a"]
    assert t.key != QueryRefinement("expand").key


def test_empty_is_invalid():
    with pytest.raises(OutputInvalid):
        QueryRefinement("expand").parse('{"queries": []}', Q)
