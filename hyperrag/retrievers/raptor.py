"""RAPTOR (Sarthi et al., 2024): retrieval over a recursive tree of cluster summaries.

Index: the tree of :mod:`hyperrag.tree.summary_tree` — leaves are the corpus passages (embedded with the run's
encoder), each layer above soft-clusters the one below (UMAP + Gaussian mixtures, BIC-chosen components,
threshold assignment) and summarises every cluster (``raptor_summary`` task; without an LLM the extractive
stand-in, counted as skipped ``cluster_summary`` steps).

Query (``retrieval``):
  * ``collapsed`` (RAPTOR's better variant): every node of every layer ranked by cosine to the query; nodes are
    taken best first until ``top_k`` nodes or ``max_context_tokens`` tokens;
  * ``traversal``: the ``top_k`` nodes of the top layer, then the ``top_k`` best among their children, layer by
    layer down to the leaves; every chosen node joins the context (within ``max_context_tokens``).
With an LLM the ``grounded_answer`` task answers from the selected nodes' texts (``details["answer"]``).

Passage ranking: the ranked nodes in order, each standing for the leaves under it (a leaf for itself), leaves
of one node by cosine; then the rest of the corpus by dense similarity (reciprocal-rank scores). The leaves are
the corpus passages as they are: RAPTOR splits text into 100-token chunks, the benchmarks here come as passages
of about that size and every baseline ranks the same passages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.generation.context import ContextItem, answer_from_context
from hyperrag.hierarchy.tokens import make_token_counter
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, complete_ranking, rank_scores
from hyperrag.retrievers.settings import RaptorSettings
from hyperrag.tree.summary_tree import SummaryTree, load_or_build_tree


class RaptorRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.RaptorSettings` (tree, retrieval variant, ``top_k``,
            ``max_context_tokens``, answer).
        encoder: embeds passages, summaries and queries.
        llm: writes the cluster summaries and the answer; ``None`` / ``llm=none``: extractive stand-ins.
        index_dir: a knowledge-graph index directory (its passages and passage embeddings); the tree goes to
            ``<index_dir>/derived``.
    """

    name = "raptor"
    supports_index_dir = True
    uses_triples = False  # the tree is built from the passages alone: the runner extracts no triples for it
    settings: RaptorSettings

    def __init__(self, settings: RaptorSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.tree: SummaryTree | None = None
        self.tree_dir: Path | None = None
        self.count = make_token_counter(settings.tree.token_counter)

    def index(self, dataset: Dataset) -> None:
        s = self.settings
        texts = [p.content for p in dataset.corpus.passages]
        if self.index_dir:
            kg = self.open_index_dir(dataset)
            assert kg is not None
            leaf_emb = kg.embeddings.passage
            root: str | Path | None = Path(self.index_dir) / "derived"
            name = "raptor"
        else:
            leaf_emb = self.encoder.encode(texts, desc="passages")
            root, name = s.index_root, dataset.name
        self.tree, self.tree_dir, self.tree_built = load_or_build_tree(dataset.corpus.ids, texts, leaf_emb, self.encoder,
                                                             self.llm, s.tree, root, name)
        self.skip("cluster_summary", int(self.tree.stats.get("stand_in", 0)))
        self.node_emb = self.tree.embeddings.to(self.device)
        self.node_tokens = [self.count(t) for t in self.tree.texts]
        self.passage_ids = list(dataset.corpus.ids)

    # ---- node selection ------------------------------------------------------------------------------------
    def collapsed(self, scores: torch.Tensor) -> tuple[list[int], list[int]]:
        """(nodes ranked by ``scores`` [N], the selected prefix within ``top_k`` and the token budget)."""
        ranked = torch.argsort(scores, descending=True, stable=True).tolist()
        chosen, used = [], 0
        for n in ranked[: self.settings.top_k]:
            if used + self.node_tokens[n] > self.settings.max_context_tokens:
                break
            chosen.append(n)
            used += self.node_tokens[n]
        return ranked, chosen

    def traversal(self, scores: torch.Tensor) -> tuple[list[int], list[int]]:
        """(the chosen nodes, top layer first, then every node by score; the chosen within the budget)."""
        tree = self.tree
        assert tree is not None
        k = self.settings.top_k
        layer = (tree.layer == tree.num_layers).nonzero().squeeze(1)
        picked: list[int] = []
        while layer.numel():
            best = layer[torch.argsort(scores[layer], descending=True, stable=True)[:k]]
            picked.extend(best.tolist())
            children = [tree.children(int(n)) for n in best]
            layer = torch.unique(torch.cat(children)) if children else layer[:0]
        chosen, used = [], 0
        for n in picked:
            if used + self.node_tokens[n] > self.settings.max_context_tokens:
                break
            chosen.append(n)
            used += self.node_tokens[n]
        # leaves the traversal reached first (best first), then the other chosen nodes, then the rest
        leaves = sorted((n for n in picked if tree.layer[n] == 0), key=lambda n: -float(scores[n]))
        rest = torch.argsort(scores, descending=True, stable=True).tolist()
        return list(dict.fromkeys(leaves + picked + rest)), chosen

    def leaf_order(self, nodes: list[int], scores: torch.Tensor, k: int) -> list[int]:
        """The leaves under ``nodes``, node by node (leaves of one node by score), until ``k`` distinct."""
        tree = self.tree
        assert tree is not None
        out: dict[int, None] = {}
        for n in nodes:
            leaves = tree.leaves(n)
            for leaf in leaves[torch.argsort(scores[leaves], descending=True, stable=True)].tolist():
                out.setdefault(leaf, None)
            if len(out) >= k:
                break
        return list(out)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        tree = self.tree
        assert tree is not None, "call index() first"
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        scores = (q @ self.node_emb.T).cpu()
        leaves = tree.num_leaves
        rankings, contexts, details = [], [], []
        select = self.collapsed if self.settings.retrieval == "collapsed" else self.traversal
        for b in range(len(questions)):
            ranked, chosen = select(scores[b])
            order = self.leaf_order(ranked, scores[b], top_k)
            rankings.append(complete_ranking(order, scores[b, :leaves], top_k))
            contexts.append([ContextItem(f"passage:{self.passage_ids[n]}", tree.texts[n], self.passage_ids[n])
                             if n < leaves else ContextItem(f"node:{n}", f"Summary: {tree.texts[n]}")
                             for n in chosen])
            details.append({"retrieval": self.settings.retrieval,
                            "selected": [[n, int(tree.layer[n]), round(float(scores[b, n]), 4)] for n in chosen],
                            "selected_layers": sorted({int(tree.layer[n]) for n in chosen}),
                            "context_passages": [self.passage_ids[n] for n in chosen if n < leaves]})
        if self.settings.answer and self.llm_available:
            for d, ans in zip(details, answer_from_context(self.llm, questions, contexts)):
                d.update(ans)
        idx = torch.tensor(rankings, dtype=torch.long).reshape(len(questions), -1)
        return RetrievalOutput(idx, rank_scores(idx), details)

    def describe(self) -> dict[str, Any]:
        s = self.settings
        info: dict[str, Any] = {"method": self.name, "retrieval": s.retrieval, "top_k": s.top_k,
                                "max_context_tokens": s.max_context_tokens,
                                "answer": bool(s.answer and self.llm_available)}
        if self.tree is not None:
            info.update({"tree": self.tree.stats, "tree_dir": str(self.tree_dir),
                         "tree_status": "built" if self.tree_built else "loaded"})
        return info
