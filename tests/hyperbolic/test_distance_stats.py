"""Table 3's distance statistics: neighbours per space, sorted rows, the distribution summary."""

import torch

from hyperrag.hyperbolic.distance_stats import distance_table, markdown
from hyperrag.hyperbolic.projection import EuclideanToBall


def test_distance_table_rows_are_nearest_neighbour_statistics():
    torch.manual_seed(0)
    p_emb = torch.nn.functional.normalize(torch.randn(50, 16), dim=1)
    q_emb = torch.nn.functional.normalize(p_emb[:5] + 0.1 * torch.randn(5, 16), dim=1)
    proj = EuclideanToBall(16).fit(p_emb, init_radius=0.8)
    t = distance_table(proj(q_emb), proj(p_emb), q_emb, p_emb)
    e1 = torch.cdist(q_emb.double(), p_emb.double()).min(1).values
    assert abs(t["euclidean"]["top-1"]["mean"] - float(e1.mean())) < 1e-9
    for space in ("hyperbolic", "euclidean"):
        rows = t[space]
        assert rows["top-1"]["min"] == rows["top-3"]["min"] == rows["top-10"]["min"]
        assert rows["top-1"]["mean"] <= rows["top-3"]["mean"] <= rows["top-10"]["mean"]
        assert rows["top-1"]["max"] <= rows["top-10"]["max"] and rows["all"]["gap_1_10"] > 0
    text = markdown(t, "toy")
    assert "| Top-3 |" in text and "skewness" in text
