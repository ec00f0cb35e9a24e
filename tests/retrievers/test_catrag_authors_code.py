"""CatRAG's settings that follow its authors' code or the earlier composition (issue 41), on hand-made graphs:
the global pruned-neighbour set, what the LLM's multiplier scales, the seed ranking and the anchor rule; and
(issue 47) the authors' default score for a neighbour left out or a failed call, their one score map per query
and weak weight on every out-arc, and the count of scored arcs with no relation part."""

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


OURS = {"missing_neighbour": "static", "failed_call": "static", "default_score": 4, "score_scope": "per_seed",
        "arcs": "relation"}


def edge_settings(**overrides) -> EdgeScoringSettings:
    values = {"n_seed": 5, "k_edge": 1, "tau_facts": 3, "weak_multiplier": 0.3, "max_facts_shown": None,
              "score_scale": 1.0, "seed_pool": "facts", "prune_scope": "per_seed", "target": "arc", **OURS}
    return EdgeScoringSettings(**{**values, **overrides})


def scorer(prune_scope="per_seed", target="arc", graph=None, **overrides) -> LLMEdgeScorer:
    graph = graph or triangle()
    w = stored_edge_weights(graph, {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 1.0, EdgeType.CONTEXT: 1.0})
    ppr = PPRGraph.from_edges(w.edge_index, graph.num_nodes, w.weight)
    rel = stored_edge_weights(graph, {EdgeType.RELATION: 1.0, EdgeType.SYNONYM: 0.0, EdgeType.CONTEXT: 0.0})
    s = LLMEdgeScorer(edge_settings(prune_scope=prune_scope, target=target, **overrides))
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
    s = LLMEdgeScorer(edge_settings(prune_scope="global", target="relation"))
    graph = triangle()
    w = stored_edge_weights(graph, {EdgeType.RELATION: 1.0})
    with pytest.raises(ValueError, match="relation"):
        s.bind(graph, torch.eye(3, 2), PPRGraph.from_edges(w.edge_index, graph.num_nodes, w.weight))


# ---- issue 47: the authors' call_llm_score and edge update (kwunhang/CatRAG src/catrag/CatRAG.py) -------------
def with_synonym_only_arc() -> KnowledgeGraph:
    """The triangle plus a synonym-only edge 0~3 (cosine 0.8): entity 3 shares no triple with anyone."""
    g = triangle()
    return KnowledgeGraph(
        entity_names=g.entity_names, passage_ids=g.passage_ids,
        edge_index=torch.cat([g.edge_index, torch.tensor([[0], [3]])], dim=1),
        edge_weight=torch.cat([g.edge_weight, torch.tensor([0.8])]),
        edge_type=torch.cat([g.edge_type, torch.tensor([EdgeType.SYNONYM], dtype=torch.uint8)]),
        facts=g.facts, fact_entities=g.fact_entities, fact_passage_ptr=g.fact_passage_ptr,
        fact_passage_idx=g.fact_passage_idx, entity_passage_ptr=g.entity_passage_ptr,
        entity_passage_idx=g.entity_passage_idx)


def test_a_neighbour_left_out_keeps_its_static_weight_or_gets_the_default_score():
    plans = [SeedPlan(0, 0, [1, 2], [])]
    assert arcs(scorer().delta(plans, [{1: 10}], "cpu")).keys() == {(0, 1)}  # 2 left out: static
    got = arcs(scorer(missing_neighbour="default_score").delta(plans, [{1: 10}], "cpu"))
    assert got[(0, 2)] == pytest.approx(1.0 * 0.2)  # score 4 -> x0.2 (x0.4 at the authors' score_scale 2)
    assert got[(0, 1)] == pytest.approx(5 * 1.9)
    got = arcs(scorer(missing_neighbour="default_score", score_scale=2.0).delta(plans, [{1: 10}], "cpu"))
    assert got[(0, 2)] == pytest.approx(0.4)


def test_a_failed_call_leaves_the_seed_static_or_scores_every_neighbour_the_default():
    plans = [SeedPlan(0, 0, [1], [2])]
    assert scorer().delta(plans, [None], "cpu") is None  # ours: the whole seed static, its pruned arc too
    got = arcs(scorer(failed_call="default_score").delta(plans, [None], "cpu"))
    assert got == pytest.approx({(0, 1): 1.9 * 0.2, (0, 2): 0.3})


def test_query_scope_any_seed_s_best_score_wins_on_every_top_seed_s_arc():
    # seed 0 scores 2 high (10), seed 1 scores 2 low (4): per seed each keeps its own; per query both get x5
    plans = [SeedPlan(0, 0, [2], []), SeedPlan(0, 1, [2], [])]
    verdicts = [{2: 10}, {2: 4}]
    per_seed = arcs(scorer().delta(plans, verdicts, "cpu"))
    assert per_seed[(0, 2)] == pytest.approx(5.0) and per_seed[(1, 2)] == pytest.approx(0.2)
    query = arcs(scorer(score_scope="query").delta(plans, verdicts, "cpu"))
    assert query[(0, 2)] == pytest.approx(5.0) and query[(1, 2)] == pytest.approx(5.0)
    # no seed scored 0: seed 1's arc to it is untouched; a seed whose call failed stays static
    assert (1, 0) not in query
    assert arcs(scorer(score_scope="query").delta(plans, [{2: 10}, None], "cpu")).keys() == {(0, 2)}


def test_arcs_all_weakens_a_synonym_only_arc_to_a_skipped_target_from_every_top_seed():
    g = with_synonym_only_arc()
    # seed 0 pruned 2 and 3 (3 listed as pruned to show a synonym-only target: no triple links 0 and 3)
    plans = [SeedPlan(0, 0, [1], [2, 3]), SeedPlan(0, 1, [0], [])]
    verdicts = [{1: 10}, {0: 7}]
    rel = arcs(scorer("global", graph=g).delta(plans, verdicts, "cpu"))
    assert (0, 3) not in rel  # relation neighbours only
    every = arcs(scorer("global", graph=g, arcs="all", score_scope="query").delta(plans, verdicts, "cpu",
                                                                                 top_seeds=[[0, 1, 3]]))
    assert every[(0, 3)] == pytest.approx(0.8 * 0.3)  # the synonym-only arc gets the weak weight
    assert every[(0, 2)] == pytest.approx(0.3) and every[(1, 2)] == pytest.approx(0.3)
    # seed 3 has no relation neighbour (no plan), yet its arc to the scored 0 gets 0's best score (x2)
    assert every[(3, 0)] == pytest.approx(0.8 * 2.0)
    # the scored target 1 wins over the weak weight everywhere; seed 1's arc to 0 takes 0's score
    assert every[(0, 1)] == pytest.approx(5 * 1.9) and every[(1, 0)] == pytest.approx(2 * 1.9)


def test_scored_arcs_with_no_relation_part_are_counted_under_target_relation():
    g = with_synonym_only_arc()
    s = scorer("global", target="relation", graph=g, arcs="all", score_scope="query")
    plans = [SeedPlan(0, 0, [1], [2]), SeedPlan(0, 3, [], [])]
    got = arcs(s.delta(plans, [{1: 10}, None], "cpu", top_seeds=[[0, 3]]))
    # seed 3's only arc leads to 0 (synonym): 0 was not scored, so it is untouched; seed 0 -> 1 scored (x5 on 1.0)
    assert got[(0, 1)] == pytest.approx(5 * 1.0 + 0.9) and (3, 0) not in got
    assert (s.scored_arcs, s.zero_relation_arcs) == (1, 0)
    s3 = scorer("global", target="relation", graph=g, arcs="all", score_scope="query")
    got = arcs(s3.delta([SeedPlan(0, 1, [0], [])], [{0: 10}], "cpu", top_seeds=[[1, 3]]))
    # seed 3's synonym-only arc to the scored 0 is reached but has no relation part: unmoved, and counted
    assert got[(3, 0)] == pytest.approx(0.8) and got[(1, 0)] == pytest.approx(5 * 1.0 + 0.9)
    assert (s3.scored_arcs, s3.zero_relation_arcs) == (2, 1)


def test_authors_code_variant_takes_the_authors_choice_on_every_difference_paper_unchanged():
    from hyperrag.config.compose import METHOD_KEY, configured

    paper = configured(METHOD_KEY, config_overrides=("method=catrag",)).edge_scoring
    code = configured(METHOD_KEY, config_overrides=("method=catrag", "method.retriever.variant=authors_code"))
    c = code.edge_scoring
    assert (c.missing_neighbour, c.failed_call, c.default_score, c.score_scope, c.arcs) == (
        "default_score", "default_score", 4, "query", "all")
    assert (paper.missing_neighbour, paper.failed_call, paper.score_scope, paper.arcs) == (
        "static", "static", "per_seed", "relation")
