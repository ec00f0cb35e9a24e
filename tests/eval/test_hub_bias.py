import torch

from hyperrag.eval.hub_bias import hub_bias, node_strength, plot_hub_bias


def test_hub_bias_known_values(tmp_path):
    # star: node 0 is a hub linked to 1..4; node 5 is a passage (not an entity)
    ei = torch.tensor([[0, 0, 0, 0], [1, 2, 3, 4]])
    strength = node_strength(ei, torch.ones(4), 6)
    assert strength.tolist() == [4, 1, 1, 1, 1, 0]
    ppr = torch.tensor([[0.5, 0.25, 0.25, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0, 0.0, 0.0]])
    out = hub_bias(ppr, strength, num_entities=5, top=2, hub_quantile=0.99)
    # query 0: top-2 = {0 (0.5, deg 4), 1 or 2 (0.25, deg 1)} → (0.5*4 + 0.25*1) / 0.75 = 3.0
    assert torch.allclose(out["s_ppr"], torch.tensor([3.0, 1.0], dtype=torch.float64))
    # super-hub: node 0; query 0 holds 0.5 of its top-2 mass 0.75 there (and 0.5 of all its entity mass)
    assert torch.allclose(out["hub_mass"], torch.tensor([0.5 / 0.75, 0.0], dtype=torch.float64))
    assert torch.allclose(out["hub_mass_all"], torch.tensor([0.5, 0.0], dtype=torch.float64))
    png = plot_hub_bias({"a": out, "b": out}, tmp_path / "h.png")
    assert png.stat().st_size > 1000
