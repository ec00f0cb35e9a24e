"""HippoRAG 2's PPR edge weights (hyperrag.graph.reference_weights) on a hand-made graph."""

import math

import pytest
import torch

from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.reference_weights import reference_edge_weights, stored_edge_weights


def tiny_graph() -> tuple[KnowledgeGraph, torch.Tensor]:
    """Entities 0 "alpha city", 1 "alpha town", 2 "ab" (2 alphanumerics: lists no synonyms), 3 "beta";
    passages 4, 5. Relations: 0–3 from 2 triples, 0–1 from 1 triple. Cosines: 0~1 0.9, 0~2 0.85, others < 0.8."""
    names = ["alpha city", "alpha town", "ab", "beta"]
    emb = torch.tensor([[1.0, 0.0], [0.9, math.sqrt(1 - 0.81)], [0.85, -math.sqrt(1 - 0.85**2)], [0.0, 1.0]])
    edge_index = torch.tensor([[0, 0, 0, 1, 2, 3], [1, 3, 4, 4, 5, 5]])
    edge_weight = torch.tensor([1.0, 2.0, 1.0, 1.0, 1.0, 1.0])
    edge_type = torch.tensor([EdgeType.RELATION, EdgeType.RELATION] + [EdgeType.CONTEXT] * 4, dtype=torch.uint8)
    facts = [("alpha city", "near", "alpha town"), ("alpha city", "in", "beta"), ("beta", "has", "alpha city")]
    graph = KnowledgeGraph(
        entity_names=names, passage_ids=["p0", "p1"], edge_index=edge_index, edge_weight=edge_weight,
        edge_type=edge_type, facts=facts, fact_entities=torch.tensor([[0, 1], [0, 3], [3, 0]]),
        fact_passage_ptr=torch.tensor([0, 1, 2, 3]), fact_passage_idx=torch.tensor([0, 1, 1]),
        entity_passage_ptr=torch.tensor([0, 2, 3, 4, 5]), entity_passage_idx=torch.tensor([0, 1, 0, 1, 1]))
    return graph, emb


def as_dict(w) -> dict[tuple[int, int], float]:
    out: dict[tuple[int, int], float] = {}
    for (u, v), x in zip(w.edge_index.T.tolist(), w.weight.tolist()):
        key = (min(u, v), max(u, v))
        out[key] = out.get(key, 0.0) + x
    return out


MULT = {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 1.0, EdgeType.CONTEXT: 1.0}


def test_keys_in_both_directions_synonyms_replace_relations_and_one_sided_lists():
    graph, emb = tiny_graph()
    w = as_dict(reference_edge_weights(graph, emb, threshold=0.8, max_neighbours=101, min_chars=3, multipliers=MULT))
    assert w[(0, 3)] == pytest.approx(4.0)  # 2 triples, counted under (0, 3) and (3, 0)
    assert w[(0, 1)] == pytest.approx(1.8)  # both lists hold the pair: 2 x 0.9, the triple count replaced
    assert w[(0, 2)] == pytest.approx(0.85)  # only "alpha city" lists "ab" ("ab" lists nothing)
    assert (1, 2) not in w and (1, 3) not in w
    assert w[(0, 4)] == w[(1, 4)] == w[(2, 5)] == w[(3, 5)] == 1.0


def test_neighbour_cap_and_per_key_multipliers():
    graph, emb = tiny_graph()
    w = as_dict(reference_edge_weights(graph, emb, threshold=0.8, max_neighbours=1, min_chars=3, multipliers=MULT))
    assert (0, 2) not in w  # "alpha city" keeps only its best synonym ("alpha town", 0.9)
    mult = {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 3.0, EdgeType.CONTEXT: 0.5}
    w = as_dict(reference_edge_weights(graph, emb, threshold=0.8, max_neighbours=101, min_chars=3, multipliers=mult))
    assert w[(0, 1)] == pytest.approx(5.4) and w[(0, 2)] == pytest.approx(2.55) and w[(0, 4)] == 0.5
    assert w[(0, 3)] == pytest.approx(4.0)


def test_single_weighting_keeps_the_stored_weights():
    graph, _ = tiny_graph()
    w = as_dict(stored_edge_weights(graph, {EdgeType.RELATION: 2.0}))
    assert w[(0, 3)] == 4.0 and w[(0, 1)] == 2.0 and w[(0, 4)] == 1.0 and (0, 2) not in w


def with_one_sided_synonym_relation(reverse: bool) -> tuple[KnowledgeGraph, torch.Tensor]:
    """tiny_graph plus a triple between "alpha city" (0) and "ab" (2), a synonym pair that only 0 lists; written
    ("ab", "in", "alpha city") when ``reverse``, else ("alpha city", "has", "ab")."""
    graph, emb = tiny_graph()
    fact = ("ab", "in", "alpha city") if reverse else ("alpha city", "has", "ab")
    graph.edge_index = torch.cat([graph.edge_index, torch.tensor([[0], [2]])], dim=1)
    graph.edge_weight = torch.cat([graph.edge_weight, torch.tensor([1.0])])
    graph.edge_type = torch.cat([graph.edge_type, torch.tensor([EdgeType.RELATION], dtype=torch.uint8)])
    graph.facts = [*graph.facts, fact]
    graph.fact_entities = torch.cat([graph.fact_entities, torch.tensor([[2, 0]] if reverse else [[0, 2]])])
    graph.fact_passage_ptr = torch.tensor([0, 1, 2, 3, 4])
    graph.fact_passage_idx = torch.tensor([0, 1, 1, 0])
    return graph, emb


@pytest.mark.parametrize("reverse, both, subject_object", [
    # (0, 2) from 0's list replaces that key; HippoRAG 2 keeps 1 on (2, 0), the authors' code 2 or nothing
    (False, 0.85 + 1.0, 0.85),        # authors: the +2 sat on (0, 2) and was replaced
    (True, 0.85 + 1.0, 0.85 + 2.0),   # authors: the +2 sits on (2, 0), which no synonym key replaces
])
def test_subject_object_relation_keys_as_the_catrag_authors_code(reverse, both, subject_object):
    graph, emb = with_one_sided_synonym_relation(reverse)
    kw = {"threshold": 0.8, "max_neighbours": 101, "min_chars": 3, "multipliers": MULT}
    hippo = as_dict(reference_edge_weights(graph, emb, **kw))
    authors = as_dict(reference_edge_weights(graph, emb, relation_keys="subject_object", **kw))
    assert hippo[(0, 2)] == pytest.approx(both) and authors[(0, 2)] == pytest.approx(subject_object)
    # without a synonym on the pair both forms weigh 2 x the triple count (0-3: one triple each way)
    assert hippo[(0, 3)] == authors[(0, 3)] == pytest.approx(4.0)
    assert hippo[(0, 1)] == authors[(0, 1)] == pytest.approx(1.8)  # both keys replaced by synonyms


def test_directed_relation_counts_split_the_stored_weight_by_direction():
    from hyperrag.graph.reference_weights import directed_relation_counts

    graph, _ = with_one_sided_synonym_relation(reverse=True)
    u, v, fwd = directed_relation_counts(graph)
    got = {(a, b): f for a, b, f in zip(u.tolist(), v.tolist(), fwd.tolist())}
    assert got == {(0, 1): 1.0, (0, 3): 1.0, (0, 2): 0.0}  # 0-3: one triple 0 -> 3, one 3 -> 0; 0-2: only 2 -> 0
    with pytest.raises(ValueError, match="relation_keys"):
        reference_edge_weights(graph, torch.eye(4, 2), threshold=0.8, max_neighbours=1, min_chars=3,
                               multipliers=MULT, relation_keys="one_way")


def test_synonym_per_pair_shares_the_multiplier_between_a_pair_s_keys():
    """Issue 47: CatRAG's Table 7 "2.0 × similarity" read per synonym edge: a pair listed from both ends weighs
    2.0 × cosine in all (per key: 4.0 × cosine), a pair listed from one end 2.0 × cosine either way."""
    graph, emb = tiny_graph()
    mult = {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 2.0, EdgeType.CONTEXT: 1.0}
    kw = {"threshold": 0.8, "max_neighbours": 101, "min_chars": 3, "multipliers": mult}
    per_key = as_dict(reference_edge_weights(graph, emb, **kw))
    per_pair = as_dict(reference_edge_weights(graph, emb, synonym_per="pair", **kw))
    assert per_key[(0, 1)] == pytest.approx(4 * 0.9) and per_pair[(0, 1)] == pytest.approx(2 * 0.9)
    assert per_key[(0, 2)] == per_pair[(0, 2)] == pytest.approx(2 * 0.85)  # one-sided: one key either way
    assert per_pair[(0, 3)] == per_key[(0, 3)] == pytest.approx(4.0)  # relations untouched
    with pytest.raises(ValueError, match="synonym_per"):
        reference_edge_weights(graph, emb, synonym_per="edge", **kw)
