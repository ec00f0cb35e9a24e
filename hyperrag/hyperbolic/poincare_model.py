"""Poincaré embeddings of a graph's nodes as a LightningModule (geoopt manifold + Riemannian Adam).

The node table is a :class:`geoopt.ManifoldParameter` on :class:`geoopt.PoincareBall` (curvature ``c``),
optimised (``optimizer``) by :class:`geoopt.optim.RiemannianAdam` (``riemannian_adam``: a Riemannian step that stays
inside the ball; its normalised step moves a point about ``lr`` of hyperbolic length) or by plain
:class:`torch.optim.Adam` on the ball's coordinates (``adam``: every coordinate moves about ``lr`` per step, then the
points are projected back inside the ball, :class:`ProjectedAdam` — the paper's "Adam optimizer", read literally).
Two initialisations:

* ``init_embeddings`` given (passages, queries): the sentence embeddings are mapped into the ball by
  :class:`~hyperrag.hyperbolic.projection.EuclideanToBall` (centre, optional PCA, scale to a mean hyperbolic
  radius ``init_radius``, ``expmap0``, ``projx``); the fitted map is part of the model, so queries are mapped
  the same way (:meth:`PoincareEmbedding.embed`).
* none: uniform in ``[-init_scale, init_scale]^D`` near the origin (Nickel & Kiela 2017; gensim).

Losses (:mod:`hyperrag.hyperbolic.losses`): ``nickel_kiela`` (softmax over negatives of ``-d``; negatives
may be shared by groups of relations, see :class:`~hyperrag.hyperbolic.datamodule.EdgeBatches`) or the
paper's ``edge_distance`` (collapses; kept for the demonstration), plus
``anchor_weight · mean_i d(x_i, x_i⁰)`` over all nodes (an O(N·D) term, like the optimiser step itself).
A batch gathers its rows with one ``index_select``; the Nickel & Kiela term and the anchor term are
autograd nodes with analytic backwards. The first ``burn_in_epochs`` run at ``lr · burn_in_lr_factor``
(Nickel & Kiela's burn-in); ``lr_schedule`` may then decay the rate.

:meth:`PoincareEmbedding.fit_fast` runs the very same loss, optimiser and schedule in a plain loop (no
Trainer hooks, batches built on the model's device) for benchmarks and tight inner loops.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any, Literal

import geoopt
import lightning as L
import torch

from hyperrag.config.validation import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
)
from hyperrag.hyperbolic.datamodule import EdgeBatches, EdgeDataModule
from hyperrag.hyperbolic.distance import paired_distance, poincare_distance
from hyperrag.hyperbolic.losses import LOSSES, anchor_loss, edge_distance_loss, nickel_kiela_grouped
from hyperrag.hyperbolic.projection import EuclideanToBall

LR_SCHEDULES = ("constant", "linear", "cosine")
OPTIMIZERS = ("riemannian_adam", "adam")


class ProjectedAdam(torch.optim.Adam):
    """Plain Adam on the Euclidean coordinates of ball points, each step followed by ``manifold.projx`` (points
    pushed past the boundary are put back just inside it). A zero gradient from a fresh optimiser is a zero step,
    so frozen rows (:meth:`PoincareEmbedding.set_trainable`) do not move.

    Args:
        params: the ball's node table (a :class:`geoopt.ManifoldParameter`).
        manifold: the :class:`geoopt.PoincareBall` to project onto.
        lr, betas: Adam's.
    """

    def __init__(self, params: Any, manifold: geoopt.PoincareBall, lr: float, betas: tuple[float, float]) -> None:
        super().__init__(params, lr=lr, betas=betas)
        self.manifold = manifold

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        loss = super().step(closure)
        for group in self.param_groups:
            for p in group["params"]:
                p.copy_(self.manifold.projx(p))
        return loss


def lr_factor(epoch: int, max_epochs: int | None, burn_in_epochs: int, burn_in_lr_factor: float,
              schedule: str) -> float:
    """Learning-rate multiplier of an epoch: burn-in, then constant or decaying to 0 at ``max_epochs``."""
    if epoch < burn_in_epochs:
        return burn_in_lr_factor
    if schedule == "constant" or not max_epochs or max_epochs <= burn_in_epochs:
        return 1.0
    progress = min(1.0, (epoch - burn_in_epochs) / (max_epochs - burn_in_epochs))
    if schedule == "linear":
        return 1.0 - progress
    return 0.5 * (1.0 + math.cos(math.pi * progress))


class PoincareEmbedding(L.LightningModule):
    """Node embeddings in the Poincaré ball.

    The settings (``dim`` to ``negative_gradients``) are required: their values live in the YAML that builds the
    ball — ``model`` of ``hydra_configs/task/poincare_tree.yaml`` / ``poincare_openie.yaml``, or HyperRAG's
    ``method.retriever.model`` (:class:`~hyperrag.retrievers.settings.PoincareModelSettings`). By hand:
    ``PoincareEmbedding(n, **task_arguments("poincare_tree", lr=0.05))`` (:mod:`hyperrag.config`).

    Args:
        num_nodes: N.
        dim: ball dimension; default the embedding dimension when ``init_embeddings`` is given (smaller: PCA).
        curvature: ``c > 0`` of ``PoincareBall(c)``.
        loss: ``nickel_kiela`` or ``edge_distance``.
        anchor_weight: weight of ``mean_i d(x_i, x_i⁰)`` over all nodes; 0 disables.
        query_anchor_weight: anchor weight of the nodes from ``num_passages`` on (query nodes), when both are
            given; the term is then ``mean_i w_i d(x_i, x_i⁰)`` with ``w_i = anchor_weight`` for passages and
            ``query_anchor_weight`` for query nodes — weak, so query nodes move towards their linked passages
            while passages stay near their semantic start.
        num_passages: nodes ``0..num_passages-1`` are passages (see ``query_anchor_weight``).
        lr: the optimiser's learning rate.
        betas: Adam betas.
        optimizer: ``riemannian_adam`` (geoopt) or ``adam`` (plain Adam on the coordinates, projected back into
            the ball after each step: :class:`ProjectedAdam`). Checkpoints from before this setting load as
            ``riemannian_adam``.
        burn_in_epochs: epochs at ``lr · burn_in_lr_factor`` first.
        burn_in_lr_factor: the burn-in learning-rate factor.
        lr_schedule: after burn-in ``constant``, or ``linear`` / ``cosine`` decay towards 0 at the last epoch.
        init_embeddings: FloatTensor [N, input_dim] Euclidean embeddings to start from (not a hyperparameter;
            the fitted projection and the initial points are saved as buffers).
        init_radius: mean hyperbolic distance from the origin of the projected initialisation.
        center: subtract the embeddings' mean before projecting.
        init_scale: half-width of the uniform random initialisation.
        input_dim: dimension of the Euclidean inputs (set automatically; needed to rebuild from a checkpoint).
        stabilize: geoopt's ``stabilize`` (project the points back every that many steps); ``None``: never.
        seed: seed of the random initialisation.
        negative_gradients: the sampled negatives move too (Nickel & Kiela); ``False``: they are fixed
            reference points, so only the endpoints of relations ever move — nodes outside the graph keep their
            initial (semantic) positions exactly.
    """

    def __init__(self, num_nodes: int, *, dim: PositiveInt | None, curvature: PositiveFloat,
                 loss: Literal["nickel_kiela", "edge_distance"], anchor_weight: NonNegativeFloat,
                 query_anchor_weight: NonNegativeFloat | None, lr: PositiveFloat,
                 betas: tuple[Probability, Probability], burn_in_epochs: NonNegativeInt,
                 burn_in_lr_factor: PositiveFloat, lr_schedule: Literal["constant", "linear", "cosine"],
                 init_radius: PositiveFloat, center: bool, init_scale: PositiveFloat, stabilize: PositiveInt | None,
                 seed: int, negative_gradients: bool, optimizer: Literal["riemannian_adam", "adam"],
                 num_passages: int | None = None,
                 init_embeddings: torch.Tensor | None = None, input_dim: int | None = None) -> None:
        super().__init__()
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
        if lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {lr_schedule!r}")
        if curvature <= 0:
            raise ValueError(f"curvature must be > 0, got {curvature}")
        if init_embeddings is not None:
            init_embeddings = torch.as_tensor(init_embeddings, dtype=torch.float32)
            if init_embeddings.shape[0] != num_nodes:
                raise ValueError(f"init_embeddings has {init_embeddings.shape[0]} rows for {num_nodes} nodes")
            input_dim = int(init_embeddings.shape[1])
        if dim is None:
            if input_dim is None:
                raise ValueError("give dim (random initialisation) or init_embeddings")
            dim = input_dim
        self.save_hyperparameters({
            "num_nodes": int(num_nodes), "dim": int(dim), "curvature": float(curvature), "loss": loss,
            "anchor_weight": float(anchor_weight),
            "query_anchor_weight": None if query_anchor_weight is None else float(query_anchor_weight),
            "num_passages": None if num_passages is None else int(num_passages), "lr": float(lr), "betas": tuple(float(b) for b in betas),
            "burn_in_epochs": int(burn_in_epochs), "burn_in_lr_factor": float(burn_in_lr_factor),
            "lr_schedule": lr_schedule,
            "init_radius": float(init_radius), "center": bool(center), "init_scale": float(init_scale),
            "input_dim": input_dim, "stabilize": stabilize, "seed": int(seed),
            "negative_gradients": bool(negative_gradients), "optimizer": optimizer,
        })
        self.curvature = float(curvature)
        self.manifold = geoopt.PoincareBall(c=self.curvature)
        self.projection = EuclideanToBall(input_dim, dim, self.curvature) if input_dim is not None else None
        if init_embeddings is not None:
            assert self.projection is not None
            x0 = self.projection.fit(init_embeddings, init_radius=init_radius, center=center)(init_embeddings)
        else:
            gen = torch.Generator().manual_seed(seed)
            x0 = (torch.rand(num_nodes, dim, generator=gen) * 2.0 - 1.0) * init_scale
            x0 = self.manifold.projx(x0)
        self.embeddings = geoopt.ManifoldParameter(x0.clone(), manifold=self.manifold)
        self.register_buffer("anchor", x0.clone())
        self._fit_epochs: int | None = None  # schedule length outside a Trainer (fit_fast)
        self._grad_hook: Any = None  # gradient mask of frozen nodes (streaming updates)

    # ----------------------------------------------------------------------------------------- geometry
    @property
    def points(self) -> torch.Tensor:
        """[N, D] current node positions (detached)."""
        return self.embeddings.detach()

    def distance(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return poincare_distance(x, y, self.curvature)

    @torch.no_grad()
    def embed(self, embeddings: torch.Tensor) -> torch.Tensor:
        """Map new Euclidean embeddings (queries, new passages) into the ball with the fitted projection."""
        if self.projection is None:
            raise RuntimeError("this model was initialised randomly; it has no Euclidean → ball map")
        return self.projection(embeddings.to(self.anchor.device))

    # ----------------------------------------------------------------------------------------- streaming
    def set_trainable(self, mask: torch.Tensor | None) -> None:
        """Freeze nodes: rows where ``mask`` [N] is False get a zero gradient (``None``: train every node).

        With a fresh Riemannian Adam (as every ``fit``/``fit_fast`` creates) a zero gradient is a zero step,
        so frozen nodes do not move at all — the anchor term included.
        """
        if self._grad_hook is not None:
            self._grad_hook.remove()
            self._grad_hook = None
        if mask is None:
            return
        keep = mask.to(self.embeddings.device, torch.bool).unsqueeze(1)
        self._grad_hook = self.embeddings.register_hook(lambda g: g * keep)

    @torch.no_grad()
    def remap_nodes(self, source: torch.Tensor, new_points: torch.Tensor | None = None) -> None:
        """Rebuild the node table: row ``i`` becomes old row ``source[i]``, or the next new point where -1.

        Adds nodes (streaming: new passages, new query nodes) and drops them (stale query nodes) in one step;
        the anchors follow the same rows, new nodes are anchored where they start.

        Args:
            source: LongTensor [N'] of old row ids, -1 for a new node.
            new_points: FloatTensor [#(-1), D] ball points of the new nodes, in order.
        """
        source = source.to(self.anchor.device)
        is_new = source < 0
        old = self.embeddings.data
        table = old[source.clamp_min(0)].clone()
        anchor = self.anchor[source.clamp_min(0)].clone()
        if bool(is_new.any()):
            if new_points is None or new_points.shape[0] != int(is_new.sum()):
                raise ValueError("new_points must hold one row per -1 in source")
            pts = self.manifold.projx(new_points.to(old.device, old.dtype))
            table[is_new] = pts
            anchor[is_new] = pts
        self.set_trainable(None)
        self.embeddings = geoopt.ManifoldParameter(table, manifold=self.manifold)
        self.anchor = anchor
        self.hparams["num_nodes"] = int(source.shape[0])

    # ----------------------------------------------------------------------------------------- training
    def compute_loss(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The objective on one batch (``u``, ``v``, ``neg``, ``neg_valid``): ``loss`` and its parts."""
        x = self.embeddings
        u, v = batch["u"], batch["v"]
        b = u.shape[0]
        nk = self.hparams.loss == "nickel_kiela"
        nodes = torch.cat([u, v, batch["neg"].reshape(-1)]) if nk else torch.cat([u, v])
        pts = x.index_select(0, nodes)  # one gather; its backward is one index_add
        if nk:
            neg_pts = pts[2 * b:].view(*batch["neg"].shape, -1)  # [G, k, D]
            if not self.hparams.negative_gradients:  # negatives are fixed reference points
                neg_pts = neg_pts.detach()
            main = nickel_kiela_grouped(pts[:b], pts[b:2 * b], neg_pts, batch.get("neg_valid"),
                                        self.curvature)
        else:
            main = edge_distance_loss(self.distance(pts[:b], pts[b:]))
        out = {"main": main}
        loss = main
        hp = self.hparams
        split = hp.get("num_passages")
        q_weight = hp.get("query_anchor_weight")
        if q_weight is not None and split is not None and split < x.shape[0]:
            d = paired_distance(x, self.anchor, self.curvature)
            out["anchor"] = anchor_loss(d[:split]) if split else d.new_zeros(())
            out["query_anchor"] = anchor_loss(d[split:])
            loss = loss + (hp.anchor_weight * split * out["anchor"]
                           + q_weight * (x.shape[0] - split) * out["query_anchor"]) / x.shape[0]
        elif hp.anchor_weight > 0:
            out["anchor"] = anchor_loss(paired_distance(x, self.anchor, self.curvature))
            loss = loss + hp.anchor_weight * out["anchor"]
        out["loss"] = loss
        return out

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        out = self.compute_loss(batch)
        bs = int(batch["u"].shape[0])
        self.log("train/loss", out["loss"], on_step=False, on_epoch=True, prog_bar=True, batch_size=bs)
        if "anchor" in out:
            self.log("train/anchor", out["anchor"], on_step=False, on_epoch=True, batch_size=bs)
        return out["loss"]

    @classmethod
    def restore(cls, path: str, map_location: str = "cpu") -> PoincareEmbedding:
        """``load_from_checkpoint`` that also reads checkpoints written before ``optimizer`` was a setting
        (issue 37): those were trained with geoopt's Riemannian Adam."""
        saved = torch.load(path, map_location="cpu", weights_only=True).get("hyper_parameters", {})
        extra = {} if "optimizer" in saved else {"optimizer": "riemannian_adam"}
        return cls.load_from_checkpoint(path, map_location=map_location, **extra)

    def configure_optimizers(self) -> dict[str, Any]:
        hp = self.hparams
        optimizer: torch.optim.Optimizer
        if hp.get("optimizer", "riemannian_adam") == "adam":
            optimizer = ProjectedAdam([self.embeddings], self.manifold, lr=hp.lr, betas=tuple(hp.betas))
        else:
            optimizer = geoopt.optim.RiemannianAdam([self.embeddings], lr=hp.lr, betas=tuple(hp.betas),
                                                    stabilize=hp.stabilize)
        max_epochs = self._trainer.max_epochs if self._trainer is not None else self._fit_epochs
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, functools.partial(lr_factor, max_epochs=max_epochs, burn_in_epochs=hp.burn_in_epochs,
                                         burn_in_lr_factor=hp.burn_in_lr_factor, schedule=hp.lr_schedule))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}

    def fit_fast(self, data: EdgeDataModule | EdgeBatches, max_epochs: int) -> dict[str, float]:
        """Train with the same loss, optimiser and burn-in schedule as ``Trainer.fit``, in a plain loop.

        Batches are built on the model's device (no ``DataLoader``, no copies); nothing is logged.
        Returns ``epochs``, ``steps``, ``seconds``, ``edge_updates_per_s`` and the last batch's ``loss``.
        """
        batches = data.batches(self.device) if isinstance(data, EdgeDataModule) else data.to(self.device)
        self._fit_epochs = max_epochs
        conf = self.configure_optimizers()
        optimizer, scheduler = conf["optimizer"], conf["lr_scheduler"]["scheduler"]
        self.train()
        steps, loss = 0, torch.zeros(())
        t0 = time.perf_counter()
        for _ in range(max_epochs):
            for batch in batches:
                optimizer.zero_grad(set_to_none=True)
                loss = self.compute_loss(batch)["loss"]
                loss.backward()
                optimizer.step()
                steps += 1
            scheduler.step()
        last = float(loss.detach())  # syncs the device once
        seconds = time.perf_counter() - t0
        return {"epochs": max_epochs, "steps": steps, "seconds": seconds,
                "edge_updates_per_s": batches.num_edges * max_epochs / max(seconds, 1e-9), "loss": last}
