"""The causal graph of a corpus: directed cause → effect triples with provenance, as tensors, cached on disk.

Build (:func:`build_causal_graph`):
  1. candidate span pairs per sentence (:mod:`hyperrag.causal.candidates`): explicit connectives and causal
     OpenIE relations;
  2. scoring — with a trained pair classifier (:class:`~hyperrag.causal.classifier.CausalPairClassifier`)
     each candidate is read in both orders (strong connectives verbatim, weak connectives and OpenIE
     relations masked as ``[C]``, so those are judged by their content), ``p_fwd = P(cause → effect)`` and ``p_rev``; it is reoriented when
     ``p_rev > p_fwd`` and accepted when ``max(p_fwd, p_rev) >= accept_threshold``. Without a classifier the
     rule priors decide (strong connective 1.0, OpenIE causal relation ``openie_prior``, weak connective
     ``weak_prior``);
  3. verification — with an LLM, the ``verify_max_pairs`` best accepted pairs go through
     ``causal_pair_verification``: "none" drops the pair (``llm_drop_rejected``), "b_causes_a" reorients it,
     and the weight becomes the mean of the score and the LLM's confidence;
  4. nodes are the canonical span texts (one node per distinct cause/effect), embedded with the encoder for
     semantic lookup; ``alias`` links join nodes whose embeddings are at least ``alias_threshold`` similar, so
     that a path can continue from an effect to a differently worded cause of another triple.

Stored (:class:`CausalGraph`): ``node_names`` [N], ``node_emb`` [N, D], ``edge_index`` [2, M] (cause → effect),
``edge_weight`` [M], ``edge_passage`` [M] (corpus position), per-edge provenance (sentence, connective,
source, classifier and LLM scores), ``alias_index`` [2, A] / ``alias_weight`` [A]. The index directory is keyed
by corpus, OpenIE file, encoder, settings, classifier checkpoint and verifying LLM.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from hyperrag.causal.candidates import CandidatePair, extract_candidates, normalize_span
from hyperrag.causal.labels import llm_verdicts, mark_candidate
from hyperrag.data.types import Dataset
from hyperrag.embedding.encoder import TextEncoder, default_cache_dir
from hyperrag.index.store import IndexDirectory, fingerprint, sha256_file
from hyperrag.ops.knn import topk_cosine_neighbors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CausalGraphSettings:
    accept_threshold: float = 0.5
    weak_prior: float = 0.0  # rule-only weight of weak connectives (after/since...): 0 = not accepted
    openie_prior: float = 0.6  # rule-only weight of causal OpenIE relations
    use_openie: bool = True
    max_span_words: int = 14
    alias_threshold: float = 0.8
    alias_topk: int = 5
    verify: bool = True  # LLM verification when an LLM is available
    verify_max_pairs: int = 200
    llm_drop_rejected: bool = True


@dataclass
class CausalGraph:
    """Directed causal triples as tensors (see the module docstring)."""

    node_names: list[str]
    node_emb: torch.Tensor  # [N, D]
    edge_index: torch.Tensor  # [2, M] cause -> effect
    edge_weight: torch.Tensor  # [M]
    edge_passage: torch.Tensor  # [M] corpus positions
    edge_info: list[dict[str, Any]]  # [M] provenance: sentence, connective, source, scores, passage_id
    alias_index: torch.Tensor  # [2, A] both directions
    alias_weight: torch.Tensor  # [A]
    passage_ids: list[str]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_edges(self) -> int:
        return int(self.edge_index.shape[1])

    def triple(self, e: int) -> tuple[str, str]:
        """``(cause, effect)`` names of edge ``e``."""
        u, v = self.edge_index[:, e].tolist()
        return self.node_names[u], self.node_names[v]

    def edge_text(self, e: int) -> str:
        cause, effect = self.triple(e)
        return f"{cause} → causes → {effect}"

    TENSORS = ("node_emb", "edge_index", "edge_weight", "edge_passage", "alias_index", "alias_weight")

    def save(self, directory: str | Path) -> list[str]:
        directory = Path(directory)
        torch.save({k: getattr(self, k) for k in self.TENSORS}, directory / "causal_graph.pt")
        meta = {"node_names": self.node_names, "edge_info": self.edge_info, "passage_ids": self.passage_ids,
                "stats": self.stats}
        (directory / "causal_graph.json").write_text(json.dumps(meta, ensure_ascii=False))
        return ["causal_graph.pt", "causal_graph.json"]

    @classmethod
    def load(cls, directory: str | Path) -> CausalGraph:
        directory = Path(directory)
        tensors = torch.load(directory / "causal_graph.pt", weights_only=True)
        meta = json.loads((directory / "causal_graph.json").read_text())
        return cls(**meta, **tensors)


def _score_candidates(pairs: list[CandidatePair], classifier: Any, settings: CausalGraphSettings,
                      batch_size: int = 64) -> list[dict[str, Any]]:
    """Per candidate: ``{"score", "reverse", "p_fwd", "p_rev"}`` (classifier) or the rule prior."""
    if classifier is None:
        prior = {"strong": 1.0, "openie": settings.openie_prior, "weak": settings.weak_prior}
        return [{"score": prior.get(p.strength, 0.0), "reverse": False, "rule": p.strength} for p in pairs]
    hparams = getattr(classifier, "hparams", None) or {}
    trained_masked = float(hparams.get("mask_rate", 0.5)) > 0
    fwd_texts, rev_texts, ok = [], [], []
    for i, p in enumerate(pairs):
        # strong connectives are shown as they are; weak/OpenIE ones masked: their word decides nothing
        mask = trained_masked and p.strength != "strong"
        f, r = mark_candidate(p, mask_connective=mask), mark_candidate(p, reverse=True, mask_connective=mask)
        if f is not None and r is not None:
            fwd_texts.append(f)
            rev_texts.append(r)
            ok.append(i)
    probs = classifier.predict_proba(fwd_texts + rev_texts, batch_size=batch_size) if ok else torch.empty(0)
    out = [{"score": 0.0, "reverse": False, "p_fwd": None, "p_rev": None} for _ in pairs]
    for j, i in enumerate(ok):
        pf, pr = float(probs[j]), float(probs[len(ok) + j])
        out[i] = {"score": max(pf, pr), "reverse": pr > pf, "p_fwd": round(pf, 4), "p_rev": round(pr, 4)}
    return out


def build_causal_graph(dataset: Dataset, encoder: TextEncoder, settings: CausalGraphSettings | None = None,
                       classifier: Any = None, llm: Any = None,
                       openie_triples: list[list[tuple[str, str, str]]] | None = None) -> CausalGraph:
    """Candidates → scores → LLM verification → nodes, edges, embeddings (see the module docstring)."""
    t0 = time.perf_counter()
    s = settings or CausalGraphSettings()
    cands = extract_candidates(dataset.corpus, openie_triples if s.use_openie else None, max_words=s.max_span_words)
    pairs = cands.pairs
    scores = _score_candidates(pairs, classifier, s)
    accepted: list[tuple[str, str, CandidatePair, dict[str, Any]]] = []
    for p, sc in zip(pairs, scores):
        if sc["score"] >= s.accept_threshold and sc["score"] > 0:
            cause, effect = (p.effect, p.cause) if sc["reverse"] else (p.cause, p.effect)
            accepted.append((cause, effect, p, dict(sc, weight=sc["score"])))
    verified = dropped = reoriented = 0
    if s.verify and getattr(llm, "available", False) and accepted:
        order = sorted(range(len(accepted)), key=lambda i: -accepted[i][3]["score"])[: s.verify_max_pairs]
        todo = [accepted[i] for i in order]
        as_pairs = [CandidatePair(c, e, p.sentence, p.passage, p.sentence_index, p.connective, p.source, p.strength)
                    for c, e, p, _ in todo]
        drop: set[int] = set()
        for i, verdict in zip(order, llm_verdicts(llm, as_pairs)):
            if verdict is None:
                continue
            verified += 1
            cause, effect, p, sc = accepted[i]
            sc["llm"] = verdict
            if not verdict["causal"]:
                if s.llm_drop_rejected:
                    drop.add(i)
                    dropped += 1
                continue
            if verdict["direction"] == "b->a":
                cause, effect = effect, cause
                reoriented += 1
            sc["weight"] = 0.5 * (sc["score"] + verdict["confidence"])
            accepted[i] = (cause, effect, p, sc)
        accepted = [a for i, a in enumerate(accepted) if i not in drop]

    key_to_node: dict[str, int] = {}
    names: list[str] = []

    def node(text: str) -> int:
        k = normalize_span(text)
        if k not in key_to_node:
            key_to_node[k] = len(names)
            names.append(text)
        return key_to_node[k]

    src, dst, weight, passage, info = [], [], [], [], []
    for cause, effect, p, sc in accepted:
        u, v = node(cause), node(effect)
        if u == v:
            continue
        src.append(u)
        dst.append(v)
        weight.append(float(sc["weight"]))
        passage.append(p.passage)
        info.append({"passage_id": dataset.corpus[p.passage].id, "sentence": p.sentence, "connective": p.connective,
                     "source": p.source, "strength": p.strength,
                     **{k: v for k, v in sc.items() if k not in ("weight",)}})
    emb = encoder.encode(names, desc="causal nodes") if names else torch.empty(0, 0)
    alias_index, alias_weight = torch.empty(2, 0, dtype=torch.long), torch.empty(0)
    if len(names) > 1:
        a, b, sim = topk_cosine_neighbors(emb, s.alias_topk, s.alias_threshold)
        pairs_ab = torch.cat([torch.stack([a, b]), torch.stack([b, a])], dim=1)
        key, inv = torch.unique(pairs_ab[0] * len(names) + pairs_ab[1], return_inverse=True)
        w = torch.zeros(key.numel()).scatter_reduce(0, inv, torch.cat([sim, sim]).float(), "amax", include_self=False)
        alias_index, alias_weight = torch.stack([key // len(names), key % len(names)]), w
    graph = CausalGraph(
        node_names=names, node_emb=emb.float(), edge_index=torch.tensor([src, dst], dtype=torch.long).reshape(2, -1),
        edge_weight=torch.tensor(weight, dtype=torch.float32), edge_passage=torch.tensor(passage, dtype=torch.long),
        edge_info=info, alias_index=alias_index, alias_weight=alias_weight.float(), passage_ids=dataset.corpus.ids,
    )
    graph.stats = {"candidates": cands.count(), "accepted": len(accepted), "nodes": graph.num_nodes,
                   "edges": graph.num_edges, "alias_links": int(alias_index.shape[1]) // 2,
                   "passages_with_edges": int(graph.edge_passage.unique().numel()),
                   "classifier": classifier is not None, "llm_verified": verified, "llm_dropped": dropped,
                   "llm_reoriented": reoriented, "seconds": round(time.perf_counter() - t0, 3)}
    log.info("causal graph: %s", graph.stats)
    return graph


@dataclass
class CausalIndex:
    graph: CausalGraph
    directory: Path
    built: bool
    seconds: float


def _checkpoint_id(path: str | Path | None) -> dict[str, Any] | None:
    if not path:
        return None
    p = Path(path)
    st = p.stat()
    return {"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def load_or_build_causal_index(dataset: Dataset, encoder: TextEncoder, settings: CausalGraphSettings | None = None,
                               classifier_path: str | Path | None = None, llm: Any = None,
                               root: str | Path | None = None) -> CausalIndex:
    """Load the causal index for (dataset, OpenIE file, encoder, settings, classifier, LLM) or build it once."""
    from hyperrag.index.kg_index import corpus_fingerprint

    t0 = time.perf_counter()
    s = settings or CausalGraphSettings()
    verifier = None
    if s.verify and getattr(llm, "available", False):
        verifier = {"kind": getattr(llm, "kind", "?"), "model": getattr(llm, "model", None)}
    inputs = {"corpus": corpus_fingerprint(dataset),
              "openie": sha256_file(dataset.openie_path) if (dataset.openie_path and s.use_openie) else None,
              "encoder": encoder.model_key, "classifier": _checkpoint_id(classifier_path), "verifier": verifier}
    settings_dict = asdict(s)
    key = fingerprint({"inputs": inputs, "settings": settings_dict, "kind": "causal"})
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{dataset.name}-causal-{key[:12]}")
    if directory.matches(key):
        graph = CausalGraph.load(directory.path)
        log.info("loaded causal index %s", directory.path)
        return CausalIndex(graph, directory.path, False, time.perf_counter() - t0)
    if directory.path.exists():
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    classifier = None
    if classifier_path:
        from hyperrag.causal.classifier import CausalPairClassifier

        classifier = CausalPairClassifier.load_from_checkpoint(str(classifier_path), map_location="cpu")
    triples = None
    if dataset.openie_path is not None and s.use_openie:
        from hyperrag.data.openie import read_openie

        triples = read_openie(dataset.openie_path, dataset.corpus).triples
    graph = build_causal_graph(dataset, encoder, s, classifier=classifier, llm=llm, openie_triples=triples)
    files = graph.save(directory.path)
    directory.write_manifest(key, settings_dict, inputs, files, graph.stats)
    return CausalIndex(graph, directory.path, True, time.perf_counter() - t0)


__all__ = ["CausalGraph", "CausalGraphSettings", "CausalIndex", "build_causal_graph", "load_or_build_causal_index"]
