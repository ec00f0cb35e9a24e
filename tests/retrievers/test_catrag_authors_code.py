"""CatRAG's settings that follow its authors' code or the earlier composition (issue 41), on hand-made graphs:
the global pruned-neighbour set, what the LLM's multiplier scales, the seed ranking and the anchor rule."""

import pytest
import torch

from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.reference_weights import stored_edge_weights
from hyperrag.ops.ppr import PPRGraph
from hyperrag.retrievers.edge_scoring import EdgeScoringSettings, LLMEdgeScorer, SeedPlan


def triangle() -> KnowledgeGraph:
    """Entities 0, 1, 2 related pairwise (one triple each), 3 alone; a synonym edge 0~1 (0.9); passage node 4."""
    rel = [[0, 0, 1], [1, 2, 2]]
    edge_index = torch.tensor([rel[0] + [0, 0], rel[1] + [1, 4]])
    edge_type = torch.tensor([EdgeType.RELATION] * 3 + [EdgeType.SYNONYM, EdgeType.CONTEXT], dtype=torch.uint8)
    return KnowledgeGraph(
        entity_names=["a", "b", "c", "d"], passage_ids=["p0"], edge_index=edge_index,
        edge_weight=torch.tensor([1.0, 1.0, 1.0, 0.9, 1.0]), edge_type=edge_type,
        facts=[("a", "r", "b"), ("a", "r", "c"), ("b", "r", "c")], fact_entities=torch.tensor([[0, 1], [0, 2], [1, 2]]),
        fact_passage_ptr=torch.tensor([0, 1, 2, 3]), fact_passage_idx=torch.tensor([0, 0, 0]),
        entity_passage_ptr=torch.tensor([0, 1, 1, 1, 1]), entity_passage_idx=torch.tensor([0]))


def scorer(prune_scope="per_seed", target="arc") -> LLMEdgeScorer:
    graph = triangle()
    w = stored_edge_weights(graph, {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 1.0, EdgeType.CONTEXT: 1.0})
    ppr = PPRGraph.from_edges(w.edge_index, graph.num_nodes, w.weight)
    rel = stored_edge_weights(graph, {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 0.0, EdgeType.CONTEXT: 0.0})
    s = LLMEdgeScorer(EdgeScoringSettings(n_seed=5, k_edge=1, tau_facts=3, weak_multiplier=0.3, max_facts_shown=None,
                                          score_scale=1.0, seed_pool="facts", prune_scope=prune_scope, target=target))
    s.bind(graph, torch.eye(3, 2), ppr, rel)
    return s


def arcs(delta) -> dict[tuple[int, int], float]:
    return {(s, t): w for s, t, w in zip(delta.src.tolist(), delta.dst.tolist(), delta.weight.tolist())}


# seed 0 scored 1 (score 10 -> x5) and pruned 2; seed 1 scored 0 (score 7 -> x2) and has 2 as an unscored neighbour
PLANS = [SeedPlan(0, 0, [1], [2]), SeedPlan(0, 1, [0], [])]
VERDICTS = [{1: 10}, {0: 7}]


def test_per_seed_pruning_leaves_another_seed_s_unscored_neighbour_static():
    got = arcs(scorer("per_seed").delta(PLANS, VERDICTS, "cpu"))
    assert got[(0, 2)] == pytest.approx(0.3)  # seed 0's own pruned neighbour: weak
    assert (1, 2) not in got  # seed 1 did not prune 2


def test_global_pruning_weakens_every_seed_s_arc_to_a_neighbour_any_seed_pruned():
    got = arcs(scorer("global").delta(PLANS, VERDICTS, "cpu"))
    assert got[(0, 2)] == pytest.approx(0.3) and got[(1, 2)] == pytest.approx(0.3)
    # a scored neighbour keeps its score; a neighbour of a seed without a verdict stays static
    assert got[(0, 1)] == pytest.approx(5 * 1.9)
    assert (1, 2) not in arcs(scorer("global").delta(PLANS, [{1: 10}, None], "cpu"))


def test_target_relation_scales_only_the_relation_part_of_the_arc():
    whole = arcs(scorer(target="arc").delta(PLANS, VERDICTS, "cpu"))
    rel = arcs(scorer(target="relation").delta(PLANS, VERDICTS, "cpu"))
    assert whole[(0, 1)] == pytest.approx(5 * (1.0 + 0.9))  # relation 1 + synonym 0.9, all x5
    assert rel[(0, 1)] == pytest.approx(5 * 1.0 + 0.9)  # the synonym share stays
    assert rel[(1, 0)] == pytest.approx(2 * 1.0 + 0.9) and rel[(0, 2)] == pytest.approx(0.3)
    # an arc with no relation part (here: to the passage node) keeps its whole weight, without an error
    s = scorer(target="relation")
    assert s.relation_weight(torch.tensor([0, 0]), torch.tensor([4, 1])).tolist() == [0.0, 1.0]


def test_target_relation_needs_the_relation_weights():
    s = LLMEdgeScorer(EdgeScoringSettings(n_seed=5, k_edge=1, tau_facts=3, weak_multiplier=0.3, max_facts_shown=None,
                                          score_scale=1.0, seed_pool="facts", prune_scope="global", target="relation"))
    graph = triangle()
    w = stored_edge_weights(graph, {EdgeType.RELATION: 1.0})
    with pytest.raises(ValueError, match="relation"):
        s.bind(graph, torch.eye(3, 2), PPRGraph.from_edges(w.edge_index, graph.num_nodes, w.weight))
