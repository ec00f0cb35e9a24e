"""The LLM-free stand-ins for HugRAG's causal path filter (``path_selection.llm_free``), by hand."""

import pytest
import torch

from hyperrag.expansion.linearize import Table
from hyperrag.expansion.path_selection import first_rows, llm_free_selection, similar_rows


def table(rows):
    n = len(rows)
    return Table([("node", i) for i in range(n)], ["node"] * n, [f"N{i + 1}" for i in range(n)], rows,
                 [[i] for i in range(n)])


class Lookup:
    """An encoder of fixed unit vectors per text (each distinct text asked once)."""

    def __init__(self, vectors):
        self.vectors, self.asked = vectors, []

    def encode(self, texts, desc=""):
        self.asked.append(list(texts))
        return torch.stack([self.vectors[t] for t in texts])


def test_similar_rows_keeps_the_nearest_best_first_ties_by_row_order():
    q = torch.tensor([1.0, 0.0])
    rows = torch.tensor([[0.0, 1.0], [0.6, 0.8], [1.0, 0.0], [0.6, 0.8]])
    sel = similar_rows(q, rows, 3)
    assert sel.ok and sel.kept == [2, 1, 3] and sel.draft == "" and sel.spurious == []
    empty = similar_rows(q, rows[:0], 3)
    assert not empty.ok and empty.kept == [] and empty.error == "empty subgraph"


def test_first_rows_is_the_walk_prefix():
    assert first_rows(table(["a", "b", "c"]), 2).kept == [0, 1]
    sel = first_rows(table([]), 2)
    assert not sel.ok and sel.error == "empty"


def test_llm_free_selection_embeds_each_distinct_row_once():
    v = {"a": torch.tensor([1.0, 0.0]), "b": torch.tensor([0.0, 1.0]), "c": torch.tensor([0.8, 0.6])}
    enc = Lookup(v)
    queries = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    sels = llm_free_selection("similarity", queries, [table(["a", "b", "c"]), table(["c", "a"])], enc, 2)
    assert [s.kept for s in sels] == [[1, 2], [1, 0]]
    assert enc.asked == [["a", "b", "c"]]
    assert [s.kept for s in llm_free_selection("first", queries, [table(["a", "b", "c"])], enc, 2)] == [[0, 1]]


def test_no_stand_in_is_refused():
    with pytest.raises(ValueError, match="llm_free=none"):
        llm_free_selection("none", torch.zeros(1, 2), [table(["a"])], Lookup({}), 1)
