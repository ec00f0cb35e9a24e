"""neighbor_scoring (CatRAG, Table 10): the prompt's parts, the rubric and rules; 0–10 per neighbour ID, clamped,
unknown IDs and names that are not the one shown with the ID dropped."""

import json

from hyperrag.llm.tasks.neighbor_scoring import NeighborScoring

INPUTS = {
    "query": "Which river flows through the city where Marie Curie was born?",
    "entity": "marie curie",
    "facts": [["marie curie", "born in", "warsaw"]],
    "neighbors": [
        {"id": "n:warsaw", "name": "warsaw", "text": "Warsaw is the capital of Poland, on the Vistula.",
         "links": [["marie curie", "born in", "warsaw"]]},
        {"id": "n:paris", "name": "paris", "text": '["paris", "capital of", "france"]',
         "links": [["marie curie", "taught in", "paris"]]},
        {"id": "n:pierre", "name": "pierre curie", "text": '["marie curie", "married", "pierre curie"]',
         "links": [["marie curie", "married", "pierre curie"]]},
    ],
}


def test_prompt_shows_query_entity_verified_facts_and_neighbour_context():
    _system, user = NeighborScoring().messages(INPUTS)
    real = user["content"].split("Now the real input.")[-1]
    assert "<node>\nmarie curie\n</node>" in real
    assert 'RETRIEVED FACTS (trusted):\n<fact>\n["marie curie", "born in", "warsaw"]\n</fact>' in real
    assert ('<item id="N1">\nname: warsaw\nlinking triples: ["marie curie", "born in", "warsaw"]\n'
            "summary: Warsaw is the capital of Poland, on the Vistula.\n</item>") in real
    text = user["content"]
    for rule in ("10 (answer)", "7-9 (bridge)", "4-6 (weak)", "0-3 (noise)", "contradicts any of them scores 0",
                 "character for character", "only when the score is 4 or more"):
        assert rule in text, rule
    assert text.count("Example ") >= 2  # two worked examples before the real input


def test_scores_parse_clamp_and_drop_bad_ids_and_names():
    task = NeighborScoring()
    raw = ('{"scores": [{"id": "N1", "name": "Warsaw", "score": 10, "reason": "birthplace"},'
           ' {"id": "N2", "name": "paris", "score": -3}, {"id": "N3", "name": "pierre curie", "score": 4.6},'
           ' {"id": "N7", "name": "x", "score": 9}, {"id": "N1", "name": "warsaw", "score": 2}]}')
    parsed = task.parse(raw, INPUTS)
    assert parsed.value == {"n:warsaw": 10, "n:paris": 0, "n:pierre": 5}
    assert parsed.dropped_ids == 1
    swapped = '{"scores": [{"id": "N1", "name": "paris", "score": 10}, {"id": "N2", "name": "paris", "score": 1}]}'
    parsed = task.parse(swapped, INPUTS)  # N1 is warsaw: a score given under another name is not trusted
    assert parsed.value == {"n:paris": 1} and parsed.dropped_ids == 1


def test_a_blank_or_overlong_name_is_shown_as_one_a_reply_can_copy():
    """HippoRAG 2's text form makes a name in non-ASCII letters only "" (one node on 2wiki_dev's spaCy graph): the
    reply's name must be 1-200 characters, so copying "" failed the schema and the whole call (13 of 2,490 calls
    of CatRAG's oracle run on 2wiki_dev). Such a neighbour is shown as "(unnamed entity N<k>)", a name over 200
    characters cut to 200; a reply that copies them parses and scores every neighbour."""
    long = "x" * 250
    inputs = {**INPUTS, "neighbors": [*INPUTS["neighbors"],
                                      {"id": "n:blank", "name": "", "text": "", "links": []},
                                      {"id": "n:long", "name": long, "text": "", "links": []}]}
    task = NeighborScoring()
    shown = [name for _, name in task.shown(inputs)]
    assert shown[3:] == ["(unnamed entity N4)", "x" * 200]
    real = task.messages(inputs)[1]["content"].split("Now the real input.")[-1]
    assert "name: (unnamed entity N4)" in real
    raw = json.dumps({"scores": [{"id": f"N{i}", "name": n, "score": 5} for i, n in enumerate(shown, 1)]})
    parsed = task.parse(raw, inputs)
    assert parsed.value == {"n:warsaw": 5, "n:paris": 5, "n:pierre": 5, "n:blank": 5, "n:long": 5}
    assert parsed.dropped_ids == 0
