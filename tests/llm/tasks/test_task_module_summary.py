"""module_summary: title, summary, keywords for a graph community."""

from hyperrag.llm.tasks.module_summary import ModuleSummary


def test_module_report_parse():
    task = ModuleSummary()
    inputs = {"entities": [("Marie Curie", "physicist"), "Pierre Curie: physicist"],
              "relations": ["Marie Curie married Pierre Curie"], "child_summaries": ["The Curie family."]}
    user = task.messages(inputs)[1]["content"]
    assert '<item id="E1">\nMarie Curie: physicist' in user and '<item id="R1">' in user and '<item id="S1">' in user
    raw = ('{"title": "The Curies", "summary": "Marie and Pierre Curie, married physicists who shared '
           'research on radioactivity.", "keywords": ["Curie", "radioactivity", "physics"]}')
    out = task.parse(raw, inputs).output
    assert out.title == "The Curies" and out.keywords == ["Curie", "radioactivity", "physics"]
