"""PoincareEmbedding: geoopt parameter and optimiser, collapse of the paper's loss, Lightning = fast path."""

import geoopt
import lightning as L
import pytest
import torch

from hyperrag.config import task_arguments
from hyperrag.hyperbolic import EdgeDataModule, PoincareEmbedding, reconstruction_metrics
from hyperrag.hyperbolic.distance import pairwise_poincare_distance
from hyperrag.hyperbolic.poincare_model import lr_factor
from tests.conftest import onlyCUDA


def unit_embeddings(n, dim=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(n, dim, generator=gen), dim=1)


def spread(points):
    return float(pairwise_poincare_distance(points.double(), points.double()).mean())


def ball(n, **kw):
    """A ball with ``task=poincare_openie``'s settings (Adam's betas, no burn-in, constant rate, seed 0), the anchor
    off and rate 0.1 unless ``kw`` says otherwise."""
    return PoincareEmbedding(n, **task_arguments("poincare_openie", **{"anchor_weight": 0.0, "lr": 0.1, **kw}))


def quiet_trainer(**kw):
    return L.Trainer(logger=False, enable_progress_bar=False, enable_checkpointing=False,
                     enable_model_summary=False, accelerator="cpu", devices=1, **kw)


def test_geoopt_parameter_and_riemannian_adam():
    model = ball(7, dim=3, curvature=0.5)
    assert isinstance(model.embeddings, geoopt.ManifoldParameter)
    assert isinstance(model.embeddings.manifold, geoopt.PoincareBall)
    assert model.embeddings.manifold.c.item() == pytest.approx(0.5)
    opt = model.configure_optimizers()["optimizer"]
    assert isinstance(opt, geoopt.optim.RiemannianAdam)
    assert opt.param_groups[0]["params"] == [model.embeddings]


def test_edge_distance_collapses_nickel_kiela_with_anchor_does_not(small_tree):
    edges, n = small_tree
    init = unit_embeddings(n)
    plain = ball(n, loss="edge_distance", anchor_weight=0.0, lr=0.05, init_embeddings=init)
    ours = ball(n, loss="nickel_kiela", anchor_weight=0.1, lr=0.05, init_embeddings=init)
    start = spread(plain.points)
    assert start == pytest.approx(spread(ours.points))
    for model in (plain, ours):
        model.fit_fast(EdgeDataModule(edges, n, batch_size=64, num_negatives=10), 100)
    assert spread(plain.points) < 0.05 * start  # every node pulled onto one point
    assert spread(ours.points) > start  # negatives keep the nodes apart
    random_map = reconstruction_metrics(ours.anchor, edges)["map"]
    got = reconstruction_metrics(ours.points, edges)
    assert random_map < 0.3 and got["map"] > 0.8 and got["mean_rank"] < 3.0


@pytest.mark.parametrize("c", [1.0, 2.0])
def test_points_stay_inside_the_ball(small_tree, c):
    edges, n = small_tree
    model = ball(n, dim=2, curvature=c, lr=0.5)  # a large rate drives nodes to the boundary
    model.fit_fast(EdgeDataModule(edges, n, batch_size=32, num_negatives=5), 30)
    norms = model.points.norm(dim=1) * c ** 0.5
    assert torch.isfinite(model.points).all()
    assert float(norms.max()) < 1.0 and float(norms.max()) > 0.9


def test_projection_initialisation_keeps_cosine_neighbours():
    emb = unit_embeddings(50, 32)
    model = ball(50, init_embeddings=emb, init_radius=0.2)
    cosine_rank = torch.argsort(emb @ emb.T, dim=1, descending=True)[:, 1:6]
    hyper_rank = torch.argsort(pairwise_poincare_distance(model.points, model.points), dim=1)[:, 1:6]
    assert torch.equal(cosine_rank, hyper_rank)
    torch.testing.assert_close(model.embed(emb), model.points)  # queries mapped the same way
    radius = 2 * torch.atanh(model.points.norm(dim=1))
    assert float(radius.mean()) == pytest.approx(0.2, rel=1e-3)
    reduced = ball(50, dim=4, init_embeddings=emb)
    assert reduced.points.shape == (50, 4) and reduced.embed(emb[:3]).shape == (3, 4)


def test_lightning_fit_equals_fast_path_and_checkpoint_round_trip(small_tree, tmp_path):
    edges, n = small_tree
    kw = {"init_embeddings": unit_embeddings(n), "anchor_weight": 0.1, "lr": 0.05, "burn_in_epochs": 2,
          "lr_schedule": "linear"}
    data = {"batch_size": 16, "num_negatives": 4, "negative_group_size": 2}
    fast = ball(n, **kw)
    fast.fit_fast(EdgeDataModule(edges, n, **data), 6)
    slow = ball(n, **kw)
    trainer = quiet_trainer(max_epochs=6)
    trainer.fit(slow, EdgeDataModule(edges, n, **data))
    torch.testing.assert_close(slow.points, fast.points, rtol=0, atol=0)
    trainer.save_checkpoint(tmp_path / "m.ckpt")
    loaded = PoincareEmbedding.load_from_checkpoint(tmp_path / "m.ckpt")
    assert isinstance(loaded.embeddings, geoopt.ManifoldParameter)
    torch.testing.assert_close(loaded.points, slow.points)
    torch.testing.assert_close(loaded.embed(unit_embeddings(n)), slow.anchor)


def test_burn_in_and_schedules():
    assert lr_factor(0, 10, 2, 0.1, "constant") == 0.1
    assert lr_factor(5, 10, 2, 0.1, "constant") == 1.0
    assert lr_factor(2, 10, 2, 0.1, "linear") == 1.0
    assert lr_factor(6, 10, 2, 0.1, "linear") == pytest.approx(0.5)
    assert lr_factor(6, 10, 2, 0.1, "cosine") == pytest.approx(0.5)
    with pytest.raises(ValueError):
        ball(3, dim=2, loss="sum")


@onlyCUDA
def test_cuda_training_and_retrieval(small_tree):
    from hyperrag.hyperbolic import topk_poincare

    edges, n = small_tree
    model = ball(n, dim=5, lr=0.05).cuda()
    data = EdgeDataModule(edges, n, batch_size=32, num_negatives=5, negative_group_size=4)
    stats = model.fit_fast(data, 50)
    assert model.points.is_cuda and stats["steps"] == 50 * 4
    assert reconstruction_metrics(model.points, edges.cuda())["map"] > 0.5
    idx, _ = topk_poincare(model.points, model.points, 5)
    ref, _ = topk_poincare(model.points.cpu(), model.points.cpu(), 5)
    assert torch.equal(idx.cpu(), ref)


def test_query_nodes_get_their_own_anchor_weight():
    """Passages (rows < num_passages) keep the strong anchor; query nodes with a weak one move to their links."""
    torch.manual_seed(0)
    init = torch.randn(12, 6)
    edges = torch.tensor([[10, 10, 11, 11, 0, 2], [0, 1, 2, 3, 10, 11]])  # query nodes 10, 11 ↔ passages
    moved = {}
    for q_weight in (50.0, 0.0):
        m = ball(12, init_embeddings=init, anchor_weight=50.0, query_anchor_weight=q_weight,
                              num_passages=10, lr=0.05, init_radius=1.0)
        m.fit_fast(EdgeDataModule(edges, 12, batch_size=16, num_negatives=4, exclude="both"), 30)
        d = pairwise_poincare_distance(m.points, m.anchor).diagonal()
        moved[q_weight] = (float(d[:10].mean()), float(d[10:].mean()))
        assert m.hparams.num_passages == 10
    assert moved[0.0][1] > 3 * moved[50.0][1]  # free query nodes move much further
    assert moved[0.0][0] < moved[0.0][1]  # passages stay near their semantic start


def test_fixed_negatives_leave_nodes_outside_the_relations_in_place():
    """negative_gradients=False: only endpoints of relations move (the anchor term is zero at the start)."""
    torch.manual_seed(0)
    init = torch.nn.functional.normalize(torch.randn(40, 8), dim=1)
    edges = torch.tensor([[0, 1, 2], [1, 2, 3]])
    for fixed in (True, False):
        m = ball(40, init_embeddings=init, anchor_weight=0.3, lr=0.05, negative_gradients=not fixed)
        m.fit_fast(EdgeDataModule(edges, 40, batch_size=8, num_negatives=10), 20)
        moved = (m.points - m.anchor).norm(dim=1) > 0
        assert moved[:4].all()
        assert bool(moved[4:].any()) is (not fixed)  # Nickel & Kiela's negatives move; fixed ones do not


def test_a_checkpoint_from_before_the_optimizer_setting_restores_as_riemannian_adam(tmp_path):
    """Checkpoints written before ``optimizer`` was a setting (issue 37) were trained with geoopt's Riemannian Adam:
    ``restore`` reads them so; a newer checkpoint keeps its own choice."""
    import torch

    from hyperrag.utils.resume import save_module_checkpoint

    old = ball(6, dim=3, optimizer="adam")
    path = save_module_checkpoint(old, tmp_path / "new.ckpt")
    assert PoincareEmbedding.restore(str(path)).hparams.optimizer == "adam"
    state = torch.load(path, map_location="cpu", weights_only=True)
    del state["hyper_parameters"]["optimizer"]
    torch.save(state, tmp_path / "old.ckpt")
    restored = PoincareEmbedding.restore(str(tmp_path / "old.ckpt"))
    assert restored.hparams.optimizer == "riemannian_adam"
    assert torch.equal(restored.embeddings.detach(), old.embeddings.detach())
