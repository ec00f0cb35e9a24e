"""LinearRAG's semantic bridging: activate entities beyond the question's own through the sentences that name them.

From the seed entities (the graph entities nearest to the question's NER entities, each with its cosine), each
round every active entity whose score reaches ``threshold`` picks its ``top_k`` not-yet-used sentences by their
cosine to the question; every entity those sentences name is activated with ``score × sentence cosine``.
``max_iterations`` counts the seed round: 3 gives two bridging hops.

Two forms, both the authors' (``src/LinearRAG.py``):

* ``iterative`` (``calculate_entity_scores``, their default): entity by entity; a new entity's score is the
  product of one entity and one sentence, kept only when it reaches ``threshold``, added to its weight (an entity
  reached twice in a round is weighed twice, its activation score is the last one); seeds are tier 1, entities
  of round ``i`` tier ``i + 1``;
* ``vectorized`` (``calculate_entity_scores_vectorized``, ``use_vectorized_retrieval``): each round's sentences
  are the union of the active entities' top-k; a sentence carries ``Σ active entity scores naming it × its
  cosine`` (sparse ``E2Sᵀ x``), an entity receives the sum over its selected sentences (sparse ``E2S w``), every
  positive amount is added to its weight, and those reaching ``threshold`` are activated; seeds are tier 0.

Both take the mention matrix ``entity_sentence`` [E, S] as a sparse CSR tensor on any device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

Bridging = Literal["iterative", "vectorized"]


@dataclass
class BridgedEntities:
    """What bridging produced for one question.

    Attributes:
        weight: FloatTensor [E], each entity's PPR reset weight (0 for entities never reached).
        activated: entity id -> (activation score, tier): the entities whose passages earn a bonus.
    """

    weight: torch.Tensor
    activated: dict[int, tuple[float, int]]


@dataclass
class MentionIndex:
    """The mention matrix in both directions, as CSR tensors (rows sliced per entity / sentence).

    Attributes:
        entity_sentence: sparse CSR [E, S].
        sentence_entity: sparse CSR [S, E] (its transpose).
    """

    entity_sentence: torch.Tensor
    sentence_entity: torch.Tensor

    @classmethod
    def from_coo(cls, entity_sentence: torch.Tensor, device: str | torch.device) -> MentionIndex:
        """Both CSR forms of a COO mention matrix [E, S], on ``device``."""
        es = entity_sentence.coalesce().to(device)
        return cls(es.to_sparse_csr(), es.t().coalesce().to_sparse_csr())

    @staticmethod
    def row(csr: torch.Tensor, i: int) -> torch.Tensor:
        """Column ids [k] of row ``i``."""
        crow = csr.crow_indices()
        return csr.col_indices()[int(crow[i]):int(crow[i + 1])]


def _top_sentences(mentions: MentionIndex, entity: int, sentence_sim: torch.Tensor, used: torch.Tensor,
                   top_k: int) -> torch.Tensor:
    """The ``top_k`` sentences [k'] naming ``entity``, not yet used, by cosine to the question."""
    sents = mentions.row(mentions.entity_sentence, entity)
    sents = sents[~used[sents]]
    if sents.numel() == 0 or top_k == 0:
        return sents[:0]
    top = torch.topk(sentence_sim[sents], min(top_k, sents.numel())).indices
    return sents[top]


def bridge_iterative(mentions: MentionIndex, sentence_sim: torch.Tensor, seeds: list[tuple[int, float]],
                     max_iterations: int, threshold: float, top_k: int) -> BridgedEntities:
    """The authors' entity-by-entity bridging (``calculate_entity_scores``).

    Args:
        mentions: the mention matrices.
        sentence_sim: FloatTensor [S], each sentence's cosine to the question.
        seeds: (entity id, cosine) per question entity, in question order (a repeated entity: the last wins).
        max_iterations: rounds, the seed round included.
        threshold: an entity spreads (and a new score counts) only from this score up.
        top_k: sentences per active entity per round.
    """
    num_e = mentions.entity_sentence.shape[0]
    weight = torch.zeros(num_e, dtype=torch.float64)
    activated: dict[int, tuple[float, int]] = {}
    for e, score in seeds:
        activated[e] = (score, 1)
        weight[e] = score
    used = torch.zeros(mentions.sentence_entity.shape[0], dtype=torch.bool, device=sentence_sim.device)
    current = dict(activated)
    iteration = 1
    while current and iteration < max_iterations:
        new: dict[int, tuple[float, int]] = {}
        for e, (score, _) in current.items():
            if score < threshold:
                continue
            top = _top_sentences(mentions, e, sentence_sim, used, top_k)
            used[top] = True
            for s, sim in zip(top.tolist(), sentence_sim[top].tolist()):
                for nxt in mentions.row(mentions.sentence_entity, s).tolist():
                    nscore = score * sim
                    if nscore < threshold:
                        continue
                    weight[nxt] += nscore
                    new[nxt] = (nscore, iteration + 1)
        activated.update(new)
        current = new
        iteration += 1
    return BridgedEntities(weight.to(sentence_sim.device), activated)


def bridge_vectorized(mentions: MentionIndex, sentence_sim: torch.Tensor, seeds: list[tuple[int, float]],
                      max_iterations: int, threshold: float, top_k: int) -> BridgedEntities:
    """The authors' matrix form (``calculate_entity_scores_vectorized``): sparse products per round.

    Args: as :func:`bridge_iterative`.
    """
    es, dev = mentions.entity_sentence, sentence_sim.device
    num_e, num_s = es.shape
    current = torch.zeros(num_e, dtype=torch.float32, device=dev)
    total = torch.zeros(num_e, dtype=torch.float32, device=dev)
    activated: dict[int, tuple[float, int]] = {}
    for e, score in seeds:
        current[e] += score  # the authors' seed vector is a coalesced sparse tensor: a repeated seed sums
        total[e] = score     # their dense accumulator is scattered: one score per entity
        activated[e] = (score, 0)
    used = torch.zeros(num_s, dtype=torch.bool, device=dev)
    sim = sentence_sim.float()
    for iteration in range(1, max_iterations):
        current = torch.where(current >= threshold, current, torch.zeros_like(current))
        active = torch.nonzero(current > 0).flatten()
        if active.numel() == 0:
            break
        activation = (mentions.sentence_entity @ current.unsqueeze(1)).squeeze(1)  # Σ active scores per sentence
        activation = torch.where(used, torch.zeros_like(activation), activation)
        picked = [_top_sentences(mentions, e, sim, used, top_k) for e in active.tolist()]
        picked = [p for p in picked if p.numel()]
        weighted = torch.zeros(num_s, dtype=torch.float32, device=dev)
        if picked:
            chosen = torch.unique(torch.cat(picked))
            used[chosen] = True
            weighted[chosen] = activation[chosen] * sim[chosen]
        weighted = weighted.clamp_min(0.0)  # the authors keep the positive entries only
        nxt = (es @ weighted.unsqueeze(1)).squeeze(1)  # Σ over an entity's selected sentences
        total += nxt
        values = nxt.tolist()
        for e in torch.nonzero(nxt >= threshold).flatten().tolist():
            activated[e] = (values[e], iteration)
        if not bool((nxt > 0).any()):
            break
        current = nxt
    return BridgedEntities(total.double(), activated)


def semantic_bridging(form: Bridging, mentions: MentionIndex, sentence_sim: torch.Tensor,
                      seeds: list[tuple[int, float]], max_iterations: int, threshold: float,
                      top_k: int) -> BridgedEntities:
    """Bridging in the named ``form`` (``iterative`` | ``vectorized``); args as :func:`bridge_iterative`."""
    fn = bridge_vectorized if form == "vectorized" else bridge_iterative
    return fn(mentions, sentence_sim, seeds, max_iterations, threshold, top_k)


__all__ = ["BridgedEntities", "Bridging", "MentionIndex", "bridge_iterative", "bridge_vectorized",
           "semantic_bridging"]
