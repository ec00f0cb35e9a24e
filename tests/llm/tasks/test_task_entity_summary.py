"""entity_summary: merged description, parsed from a recorded reply."""

from hyperrag.llm.tasks.entity_summary import EntitySummary


def test_summary_prompt_and_parse():
    task = EntitySummary()
    inputs = {"entity": "Warsaw", "descriptions": ["Capital of Poland.", "City on the Vistula.", "Capital of Poland."]}
    user = task.messages(inputs)[1]["content"]
    assert user.count("<data>") == 4 and "at most 80 words" in user
    raw = "{'summary': 'Warsaw is the capital of Poland and lies on the Vistula River.'}"
    assert task.parse(raw, inputs).value == "Warsaw is the capital of Poland and lies on the Vistula River."
