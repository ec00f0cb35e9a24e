"""Reconstruction mean rank and MAP on hand-made cases and against gensim's formula."""

import pytest
import torch

from hyperrag.hyperbolic.distance import pairwise_poincare_distance
from hyperrag.hyperbolic.evaluation import reconstruction_metrics
from tests.conftest import withPackage


def line(*xs):
    return torch.tensor([[x, 0.0] for x in xs])


def test_hand_made_ranks_and_average_precision():
    # node 0 at the origin; 1, 2, 3 further and further away along one axis; 0 -> 2 and 0 -> 3 are relations:
    # the negative 1 is closer than both, so both rank 2; AP = mean(1/2, 2/3) = 7/12
    m = reconstruction_metrics(line(0.0, 0.1, 0.2, 0.3), torch.tensor([[0, 0], [2, 3]]))
    assert m == {"mean_rank": 2.0, "map": pytest.approx(7 / 12), "num_relations": 2, "num_sources": 1}


def test_perfect_and_worst_cases():
    pts = line(0.0, 0.1, 0.2, 0.3, -0.6)
    perfect = reconstruction_metrics(pts, torch.tensor([[0, 0], [1, 2]]))
    assert perfect["mean_rank"] == 1.0 and perfect["map"] == 1.0
    worst = reconstruction_metrics(pts, torch.tensor([[0], [4]]))  # the farthest of 4 candidates
    assert worst["mean_rank"] == 4.0 and worst["map"] == pytest.approx(1 / 4)


def test_duplicates_self_loops_and_symmetric():
    pts = line(0.0, 0.1, 0.2, 0.3)
    m = reconstruction_metrics(pts, torch.tensor([[0, 0, 0, 1], [2, 2, 0, 1]]))
    assert m["num_relations"] == 1 and m["mean_rank"] == 2.0
    sym = reconstruction_metrics(pts, torch.tensor([[0], [2]]), symmetric=True)
    assert sym["num_sources"] == 2 and sym["num_relations"] == 2


@pytest.mark.parametrize("block", [1 << 24, 100])
@withPackage("gensim")
def test_matches_gensim_formula_without_self(block):
    from gensim.models.poincare import ReconstructionEvaluation

    gen = torch.Generator().manual_seed(0)
    n = 50
    pts = torch.randn(n, 5, generator=gen, dtype=torch.float64) * 0.2
    edges = torch.randint(0, n, (2, 300), generator=gen)
    ours = reconstruction_metrics(pts, edges, max_block_elements=block)
    dist = pairwise_poincare_distance(pts, pts).numpy()
    relations: dict[int, set[int]] = {}
    for a, b in edges.T.tolist():
        if a != b:
            relations.setdefault(a, set()).add(b)
    ranks, aps = [], []
    for u, vs in relations.items():
        others = [w for w in range(n) if w != u]  # gensim counts u itself as a negative; N & K do not
        r, ap = ReconstructionEvaluation.get_positive_relation_ranks_and_avg_prec(
            dist[u][others], [others.index(v) for v in vs])
        ranks += r
        aps.append(ap)
    assert ours["mean_rank"] == pytest.approx(sum(ranks) / len(ranks))
    assert ours["map"] == pytest.approx(sum(aps) / len(aps))
