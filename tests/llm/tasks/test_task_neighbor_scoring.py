"""neighbor_scoring (CatRAG): 0–10 per neighbour ID, clamped, unknown IDs dropped."""

from hyperrag.llm.tasks.neighbor_scoring import NeighborScoring

INPUTS = {"query": "Which river flows through the city where Marie Curie was born?", "node": "Warsaw",
          "neighbors": [("n:vistula", "flows through: Vistula"), ("n:museum", "has museum: Curie Museum"),
                        ("n:poland", "capital of: Poland")]}


def test_scores_parse():
    task = NeighborScoring()
    assert '<item id="N3">\ncapital of: Poland' in task.messages(INPUTS)[1]["content"]
    raw = ('{"scores": [{"id": "N1", "score": 10}, {"id": "N2", "score": -3}, {"id": "N3", "score": 4.6},'
           ' {"id": "N7", "score": 9}, {"id": "N1", "score": 2}]}')
    parsed = task.parse(raw, INPUTS)
    assert parsed.value == {"n:vistula": 1.0, "n:museum": 0.0, "n:poland": 0.5}
    assert parsed.dropped_ids == 1
