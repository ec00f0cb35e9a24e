"""missing_concepts (HyperRAG): sufficiency flag and what to retrieve next."""

from hyperrag.llm.tasks.missing_concepts import MissingConcepts


def test_missing_concepts():
    task = MissingConcepts()
    inputs = {"query": "Which river flows through Marie Curie's birthplace?",
              "passages": ["Marie Curie was born in Warsaw."]}
    assert "Evidence so far" in task.messages(inputs)[1]["content"]
    assert "(no evidence yet)" in task.messages({"query": "q"})[1]["content"]
    raw = ('{"sufficient": false, "missing_concepts": ["Warsaw rivers", "warsaw rivers", "Vistula"],'
           ' "follow_up_questions": ["Which river flows through Warsaw?"]}')
    out = task.parse(raw, inputs).output
    assert out.sufficient is False and out.missing_concepts == ["Warsaw rivers", "Vistula"]
