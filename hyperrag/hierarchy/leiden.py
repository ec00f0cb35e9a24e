"""Leiden community detection behind one interface: cuGraph on a GPU, a CPU library otherwise.

    part = leiden(edge_index, edge_weight, num_nodes, resolution=1.0, seed=0)
    part.membership   # LongTensor [N], communities numbered 0..C-1 in order of their smallest node
    part.modularity   # float, computed here (same formula for every backend)

Backends:
  * ``graspologic`` — graspologic-native (Rust), zero-copy on a CSR matrix: the fast CPU path;
  * ``leidenalg``   — igraph + leidenalg (C++), the reference implementation;
  * ``cugraph``     — RAPIDS cuGraph on a cudf edge list (GPU only; imported lazily);
  * ``cpu``         — graspologic when installed, else leidenalg;
  * ``auto``        — cugraph when a CUDA device and cuGraph are both present, else ``cpu``.

The graph is undirected: give each edge once (either direction); parallel edges are summed, self loops are
dropped, nodes without edges become singleton communities. Same seed, same graph → same partition on the
CPU backends (cuGraph's ``random_state`` is documented as reproducible on the same GPU and version).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hyperrag.graph.utils import undirected_edges
from hyperrag.utils.availability import cuda_available, package_available

BACKENDS = ("auto", "cpu", "graspologic", "leidenalg", "cugraph")


@dataclass
class Partition:
    """Result of one Leiden run.

    Attributes:
        membership: LongTensor [N] (CPU), community of every node, 0..C-1 numbered by smallest member.
        modularity: modularity of ``membership`` at ``resolution`` (see :func:`modularity`).
        backend: the backend that ran (``graspologic``, ``leidenalg`` or ``cugraph``).
    """

    membership: torch.Tensor
    modularity: float
    backend: str

    @property
    def num_communities(self) -> int:
        return int(self.membership.max()) + 1 if self.membership.numel() else 0


# ---- helpers --------------------------------------------------------------------------------------------
def canonical_labels(labels: torch.Tensor) -> torch.Tensor:
    """Renumber community labels 0..C-1 in order of each community's smallest node index.

    Args:
        labels: LongTensor [N] of arbitrary non-negative labels.
    Returns:
        LongTensor [N] on the same device.
    """
    if labels.numel() == 0:
        return labels.clone()
    uniq, inverse = torch.unique(labels, return_inverse=True)
    n = labels.shape[0]
    first = torch.full((uniq.shape[0],), n, dtype=torch.long, device=labels.device)
    first.scatter_reduce_(0, inverse, torch.arange(n, device=labels.device), reduce="amin")
    rank = torch.empty_like(first)
    rank[torch.argsort(first)] = torch.arange(first.shape[0], device=labels.device)
    return rank[inverse]


def _clean_edges(edge_index: torch.Tensor, edge_weight: torch.Tensor | None,
                 num_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Undirected simple edge list: u < v, one entry per pair (weights summed), no self loops, w > 0."""
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must be [2, M], got {tuple(edge_index.shape)}")
    src, dst = edge_index[0].long(), edge_index[1].long()
    weight = (torch.ones(src.shape[0], dtype=torch.float64, device=src.device) if edge_weight is None
              else edge_weight.to(torch.float64))
    if weight.shape[0] != src.shape[0]:
        raise ValueError(f"edge_weight has {weight.shape[0]} entries for {src.shape[0]} edges")
    if src.numel() and (int(torch.minimum(src, dst).min()) < 0 or int(torch.maximum(src, dst).max()) >= num_nodes):
        raise ValueError(f"edge_index refers to nodes outside 0..{num_nodes - 1}")
    if src.numel() and bool((weight < 0).any()):
        raise ValueError("Leiden modularity needs non-negative edge weights")
    keep = weight > 0
    return undirected_edges(torch.stack([src[keep], dst[keep]]), weight[keep], num_nodes, "sum")


def modularity(edge_index: torch.Tensor, edge_weight: torch.Tensor | None, membership: torch.Tensor,
               num_nodes: int | None = None, resolution: float = 1.0) -> float:
    """Newman modularity of an undirected weighted graph (each edge given once, self loops ignored).

    ``Q = Σ_c [ L_c / m − γ (K_c / 2m)² ]`` with ``m`` the total edge weight, ``L_c`` the weight inside ``c``
    and ``K_c`` the summed degree of ``c`` — the value igraph's ``Graph.modularity`` returns.
    """
    n = int(num_nodes if num_nodes is not None else membership.shape[0])
    ei, w = _clean_edges(edge_index, edge_weight, n)
    m = float(w.sum())
    if m == 0.0:
        return 0.0
    memb = membership.to(ei.device).long()
    ncom = int(memb.max()) + 1
    inside = memb[ei[0]] == memb[ei[1]]
    internal = torch.zeros(ncom, dtype=torch.float64, device=ei.device).index_add_(0, memb[ei[0]][inside], w[inside])
    degree = torch.zeros(n, dtype=torch.float64, device=ei.device)
    degree.index_add_(0, ei[0], w).index_add_(0, ei[1], w)
    total = torch.zeros(ncom, dtype=torch.float64, device=ei.device).index_add_(0, memb, degree)
    return float((internal / m - resolution * (total / (2 * m)) ** 2).sum())


def resolve_backend(backend: str = "auto") -> str:
    """The concrete backend ``backend`` stands for on this machine (``auto`` / ``cpu`` resolved)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown Leiden backend {backend!r}; choose one of {BACKENDS}")
    if backend == "auto":
        backend = "cugraph" if cuda_available() and package_available("cugraph") else "cpu"
    if backend == "cpu":
        if package_available("graspologic_native"):
            return "graspologic"
        if package_available("leidenalg"):
            return "leidenalg"
        raise ImportError("a CPU Leiden backend needs graspologic-native (pip install graspologic-native) "
                          "or leidenalg (pip install leidenalg)")
    if backend == "cugraph" and not (cuda_available() and package_available("cugraph")):
        raise ImportError("backend='cugraph' needs a CUDA device and RAPIDS cuGraph (cugraph-cu12)")
    return backend


# ---- backends: each returns raw labels LongTensor [N] for a cleaned edge list with >= 1 edge ------------
def _graspologic(ei: torch.Tensor, w: torch.Tensor, n: int, resolution: float, seed: int, iterations: int,
                 randomness: float) -> torch.Tensor:
    import graspologic_native as gn
    import scipy.sparse as sp

    src, dst, wt = ei[0].cpu().numpy(), ei[1].cpu().numpy(), w.cpu().numpy()
    adj = sp.csr_matrix((np.concatenate([wt, wt]), (np.concatenate([src, dst]), np.concatenate([dst, src]))),
                        shape=(n, n))
    _, mapping = gn.leiden_csr(adj.indptr.astype(np.int64), adj.indices.astype(np.int32),
                               adj.data.astype(np.float64), n, resolution=resolution, randomness=randomness,
                               iterations=iterations, use_modularity=True, seed=seed)
    labels = np.full(n, -1, dtype=np.int64)
    labels[np.fromiter(mapping.keys(), dtype=np.int64, count=len(mapping))] = np.fromiter(
        mapping.values(), dtype=np.int64, count=len(mapping))
    return torch.from_numpy(labels)


def _leidenalg(ei: torch.Tensor, w: torch.Tensor, n: int, resolution: float, seed: int,
               iterations: int) -> torch.Tensor:
    import igraph as ig
    import leidenalg

    graph = ig.Graph(n=n, edges=ei.T.cpu().numpy(), directed=False)
    part = leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition, weights=w.cpu().tolist(),
                                    resolution_parameter=resolution, n_iterations=iterations, seed=seed)
    return torch.tensor(part.membership, dtype=torch.long)


def _cugraph(ei: torch.Tensor, w: torch.Tensor, n: int, resolution: float, seed: int,
             max_iter: int, theta: float) -> torch.Tensor:
    """cugraph.leiden on a cudf edge list built from the CUDA tensors (zero-copy through DLPack)."""
    import cudf
    import cugraph
    import cupy

    device = torch.device("cuda", torch.cuda.current_device()) if ei.device.type != "cuda" else ei.device
    src = ei[0].to(device=device, dtype=torch.int32).contiguous()
    dst = ei[1].to(device=device, dtype=torch.int32).contiguous()
    wt = w.to(device=device, dtype=torch.float32).contiguous()
    frame = cudf.DataFrame({"src": cupy.from_dlpack(src), "dst": cupy.from_dlpack(dst),
                            "weight": cupy.from_dlpack(wt)})
    graph = cugraph.Graph(directed=False)
    graph.from_cudf_edgelist(frame, source="src", destination="dst", edge_attr="weight", renumber=True)
    parts, _ = cugraph.leiden(graph, max_iter=max_iter, resolution=resolution, random_state=seed, theta=theta)
    vertex = torch.from_dlpack(parts["vertex"].values).long()
    partition = torch.from_dlpack(parts["partition"].values).long()
    labels = torch.full((n,), -1, dtype=torch.long, device=vertex.device)
    labels[vertex] = partition
    return labels.cpu()


def leiden(edge_index: torch.Tensor, edge_weight: torch.Tensor | None = None, num_nodes: int | None = None, *,
           resolution: float = 1.0, seed: int = 0, backend: str = "auto", iterations: int = 2,
           randomness: float = 0.001, max_iter: int = 100, theta: float = 1.0) -> Partition:
    """Modularity-optimising Leiden partition of an undirected weighted graph.

    Args:
        edge_index: LongTensor [2, M], any device; each undirected edge once (either direction).
        edge_weight: FloatTensor [M] of non-negative weights (default 1).
        num_nodes: N (default ``edge_index.max() + 1``).
        resolution: γ of the modularity; higher → more, smaller communities.
        seed: random seed (same seed, same graph → same partition).
        backend: ``auto`` | ``cpu`` | ``graspologic`` | ``leidenalg`` | ``cugraph``.
        iterations: full Leiden passes on the CPU backends (leidenalg's default is 2).
        randomness: graspologic's refinement randomness (Leiden's θ on the CPU path).
        max_iter, theta: cuGraph's level cap and refinement θ.

    Returns:
        :class:`Partition` with ``membership`` LongTensor [N] on the CPU.
    """
    n = int(num_nodes if num_nodes is not None else (int(edge_index.max()) + 1 if edge_index.numel() else 0))
    name = resolve_backend(backend)
    ei, w = _clean_edges(edge_index, edge_weight, n)
    if n == 0:
        return Partition(torch.empty(0, dtype=torch.long), 0.0, name)
    if ei.shape[1] == 0:  # no edges: every node alone
        return Partition(torch.arange(n), 0.0, name)
    if name == "graspologic":
        labels = _graspologic(ei, w, n, resolution, seed, iterations, randomness)
    elif name == "leidenalg":
        labels = _leidenalg(ei, w, n, resolution, seed, iterations)
    else:
        labels = _cugraph(ei, w, n, resolution, seed, max_iter, theta)
    missing = labels < 0  # nodes a backend left out (isolated): one community each
    if bool(missing.any()):
        labels[missing] = int(labels.max()) + 1 + torch.arange(int(missing.sum()))
    membership = canonical_labels(labels)
    return Partition(membership, modularity(ei, w, membership, n, resolution), name)
