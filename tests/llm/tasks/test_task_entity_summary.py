"""entity_summary (CatRAG, Table 9): the target entity and its triples in, one narrative summary out."""

from hyperrag.llm.tasks.entity_summary import EntitySummary

INPUTS = {"entity": "warsaw", "facts": [["warsaw", "capital of", "poland"], ["warsaw", "lies on", "vistula"]]}


def test_summary_prompt_and_parse():
    task = EntitySummary()
    user = task.messages(INPUTS)[1]["content"]
    real = user.split("Reply: ")[-1]
    assert 'Target entity: <data>\nwarsaw\n</data>' in real
    assert '[["warsaw", "capital of", "poland"], ["warsaw", "lies on", "vistula"]]' in real
    for rule in ("subject of the summary", "every key relation", "at most 150 tokens", "identity or type",
                 "not a list"):
        assert rule in user, rule
    raw = "{'summary': 'Warsaw is the capital of Poland and lies on the Vistula River.'}"
    assert task.parse(raw, INPUTS).value == "Warsaw is the capital of Poland and lies on the Vistula River."
    long = '{"summary": "' + "word " * 400 + '"}'
    assert len(task.parse(long, INPUTS).value) <= 1000  # clipped, not rejected
