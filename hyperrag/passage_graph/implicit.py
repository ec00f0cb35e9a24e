"""Query-guided implicit edges (HyperRAG's query graph): dense candidates, LLM selection, relations, rounds.

For every query ``q`` (node id ``P + q``):

1. **candidates** — the dense top-``K`` passages of the query (cosine of the sentence embeddings);
2. **selection** — the LLM's ``passage_selection`` keeps the passages that help answer ``q``;
3. **relations** — ``passage_relations`` links pairs of the selected passages; the task's link types map
   onto HyperRAG's three relations: ``same_entity`` → *support*, ``elaborates`` → *expand*, ``causes`` /
   ``precedes`` / ``related`` → *complement* (``contradicts`` gives no edge);
4. **missing concepts** — ``missing_concepts`` names what the evidence still lacks; each concept is a new
   dense query whose top-``K_round`` unseen passages go through selection again — at most ``max_rounds``
   rounds in all, stopping early when the LLM says the evidence suffices.

Edges (parent → child): ``query → selected passage`` (relation *query*, weight ``1 + cos``: a query tree is
rooted at its query), typed passage pairs (weight ``cos`` of the pair), and for a later round
``best passage of the previous round → new passage`` (*expand*, weight ``cos(concept, passage)``).

**LLM-free stand-in** (``llm=none``, or a failed call): selection keeps the candidates whose cosine is within
``margin`` of the query's best candidate (at most ``max_selected``); each kept passage after the best one is
linked ``best → passage`` as *support* (weight = their cosine). The missing-concept rounds become
**pseudo-relevance feedback** (``feedback: keywords``): the missing concepts of round ``t`` are the keywords
(YAKE sets, ``keyword_sets``) of the round's best passage that the question does not already contain; the
round's dense query is the question followed by those keywords (``question + " " + " ".join(new keywords)``),
its ``round_top_k`` best unseen passages are kept and linked ``best passage of round t → passage`` as
*expand*. MuSiQue's questions are 2–4-hop bridges: the first passage names the bridge entity, the feedback
query finds the passage about it. It is documented as a stand-in and labelled as such in the statistics —
never passed off as an LLM's judgement.

Only question text is used; gold passages and answers are never read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveInt, settings
from hyperrag.passage_graph.edges import EdgeSet

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+")

LINK_TO_RELATION = {"same_entity": "support", "elaborates": "expand", "causes": "complement",
                    "precedes": "complement", "related": "complement"}


@settings
class ImplicitSettings:
    """Attributes:
        top_k: dense candidates per query (K).
        max_rounds: retrieval rounds per query (T ≥ 1; rounds after the first need missing concepts).
        round_top_k: new candidates per missing concept in later rounds.
        max_concepts: missing concepts followed per round.
        max_selected: passages kept per round at most.
        margin: stand-in selection — keep candidates with ``cos ≥ best − margin``.
        relations: ask the LLM for pair relations (else only query edges and round links).
        passage_chars: characters of each passage shown to the LLM.
        feedback: LLM-free rounds — ``keywords`` (pseudo-relevance feedback from the best passage's keyword
            set, see the module notes) or ``none`` (one round without an LLM).
        feedback_keywords: keywords of the best passage added to the feedback query at most.
    """

    top_k: PositiveInt
    max_rounds: PositiveInt
    round_top_k: PositiveInt
    max_concepts: NonNegativeInt
    max_selected: PositiveInt
    margin: NonNegativeFloat
    relations: bool
    passage_chars: PositiveInt
    feedback: Literal["keywords", "none"]
    feedback_keywords: NonNegativeInt


@dataclass
class QueryGraph:
    """What one query contributed: its selected passages per round and its edges."""

    query: int  # query index (node id = num_passages + query)
    selected: list[list[int]] = field(default_factory=list)  # per round, passage ids
    concepts: list[str] = field(default_factory=list)
    llm: bool = False  # selection/relations came from the LLM (False: the stand-in)

    @property
    def passages(self) -> list[int]:
        return [p for r in self.selected for p in r]


class QueryGraphBuilder:
    """Builds query graphs for batches of queries.

    Args:
        passage_emb: FloatTensor [P, D], unit-norm passage embeddings.
        passage_texts: P texts (shown to the LLM).
        encoder: embeds missing concepts (``encode(list[str]) -> [n, D]``); only needed with an LLM.
        llm: the framework's LLM; ``None`` or unavailable → the stand-in.
        settings: :class:`ImplicitSettings`.
        keyword_sets: P keyword sets (the explicit graph's YAKE sets), for the LLM-free feedback rounds.
    """

    def __init__(self, passage_emb: torch.Tensor, passage_texts: Sequence[str], settings: ImplicitSettings,
                 encoder: Encoder | None = None, llm: LanguageModel | None = None,
                 keyword_sets: Sequence[frozenset[str]] | None = None) -> None:
        self.passage_emb = passage_emb.float()
        self.texts = list(passage_texts)
        self.encoder = encoder
        self.llm = llm
        self.s = settings
        self.keyword_sets = list(keyword_sets) if keyword_sets is not None else None
        self.llm_calls = 0

    @property
    def use_llm(self) -> bool:
        return bool(getattr(self.llm, "available", False))

    def _show(self, pids: Sequence[int]) -> list[tuple[int, str]]:
        """``(passage id, clipped text)`` pairs, the candidates a task shows with short IDs."""
        return [(p, self.texts[p][: self.s.passage_chars]) for p in pids]

    def _select(self, questions: list[str], cands: list[list[int]], scores: list[list[float]]
                ) -> tuple[list[list[int]], list[bool]]:
        """Selected passage ids per query and whether the LLM chose them."""
        out = [self._stand_in_select(c, s) for c, s in zip(cands, scores)]
        by_llm = [False] * len(questions)
        if not self.use_llm:
            return out, by_llm
        todo = [i for i, c in enumerate(cands) if c]
        inputs = [{"query": questions[i], "passages": self._show(cands[i]), "max_selected": self.s.max_selected}
                  for i in todo]
        results = self.llm.complete_structured_batch("passage_selection", inputs, progress="passage selection")
        self.llm_calls += len(inputs)
        for i, res in zip(todo, results):
            if res.ok and res.value:
                out[i], by_llm[i] = [int(p) for p in res.value][: self.s.max_selected], True
        return out, by_llm

    def _stand_in_select(self, cands: list[int], scores: list[float]) -> list[int]:
        if not cands:
            return []
        best = scores[0]
        return [p for p, s in zip(cands, scores) if s >= best - self.s.margin][: self.s.max_selected]

    def _dense(self, queries: torch.Tensor, k: int, exclude: list[set[int]] | None = None
               ) -> tuple[list[list[int]], list[list[float]]]:
        sims = queries.float() @ self.passage_emb.T  # [B, P]
        extra = max((len(e) for e in exclude), default=0) if exclude else 0
        val, idx = torch.topk(sims, min(k + extra, sims.shape[1]), dim=1)
        cands, scores = [], []
        for b in range(sims.shape[0]):
            ex = exclude[b] if exclude else set()
            pairs = [(int(i), float(v)) for i, v in zip(idx[b].tolist(), val[b].tolist()) if int(i) not in ex][:k]
            cands.append([p for p, _ in pairs])
            scores.append([s for _, s in pairs])
        return cands, scores

    def build(self, questions: Sequence[str], query_emb: torch.Tensor, query_offset: int = 0,
              num_passages: int | None = None) -> tuple[EdgeSet, list[QueryGraph]]:
        """Query graphs of a batch.

        Args:
            questions: B question texts.
            query_emb: FloatTensor [B, D] unit-norm question embeddings.
            query_offset: index of the first question among all query nodes (node id ``P + offset + b``).
            num_passages: P (default: rows of ``passage_emb``).

        Returns:
            ``(edges, graphs)``: the batch's :class:`EdgeSet` and one :class:`QueryGraph` per question.
        """
        questions = list(questions)
        n_pass = num_passages if num_passages is not None else self.passage_emb.shape[0]
        graphs = [QueryGraph(query=query_offset + b) for b in range(len(questions))]
        par: list[int] = []
        chi: list[int] = []
        wts: list[float] = []
        rel: list[str] = []

        def add(p: int, c: int, w: float, r: str) -> None:
            par.append(p)
            chi.append(c)
            wts.append(float(w))
            rel.append(r)

        cands, scores = self._dense(query_emb, self.s.top_k)
        selected, by_llm = self._select(questions, cands, scores)
        for b, g in enumerate(graphs):
            g.selected.append(selected[b])
            g.llm = by_llm[b]
            qnode = n_pass + g.query
            qv = query_emb[b].float()
            for p in selected[b]:
                add(qnode, p, 1.0 + float(qv @ self.passage_emb[p]), "query")
        self._relations(graphs, selected, by_llm, add)
        self._rounds(questions, graphs, add)
        return EdgeSet.from_lists(par, chi, wts, rel), graphs

    def _pair_cos(self, a: int, b: int) -> float:
        return float(self.passage_emb[a] @ self.passage_emb[b])

    def _relations(self, graphs: list[QueryGraph], selected: list[list[int]], by_llm: list[bool], add) -> None:
        llm_rows = [b for b, g in enumerate(graphs) if by_llm[b] and len(selected[b]) > 1 and self.s.relations]
        results: dict[int, Any] = {}
        if llm_rows and self.use_llm:
            inputs = [{"passages": self._show(selected[b])} for b in llm_rows]
            res = self.llm.complete_structured_batch("passage_relations", inputs, progress="passage relations")
            self.llm_calls += len(inputs)
            results = {b: r for b, r in zip(llm_rows, res) if r.ok}
        for b, sel in enumerate(selected):
            if b in results:
                for src, dst, kind, _ in results[b].value:
                    relation = LINK_TO_RELATION.get(kind)
                    if relation is not None:
                        add(int(src), int(dst), self._pair_cos(int(src), int(dst)), relation)
            else:  # stand-in: the best passage supports / is supported by the others
                for p in sel[1:]:
                    add(sel[0], p, self._pair_cos(sel[0], p), "support")

    def feedback_query(self, question: str, passage: int) -> tuple[str, list[str]]:
        """The stand-in's next-round query: ``(question + new keywords, new keywords)``.

        New keywords: the passage's keyword set minus those whose words all occur in the question, in a
        fixed (sorted) order, at most ``feedback_keywords``.
        """
        assert self.keyword_sets is not None
        q_words = set(_WORD.findall(question.casefold()))
        new = [k for k in sorted(self.keyword_sets[passage]) if not set(_WORD.findall(k)) <= q_words]
        new = new[: self.s.feedback_keywords]
        return (question + " " + " ".join(new)).strip(), new

    def _feedback_rounds(self, questions: list[str], graphs: list[QueryGraph], add) -> None:
        """LLM-free missing-concept rounds: pseudo-relevance feedback from each round's best passage."""
        if self.s.feedback != "keywords" or self.keyword_sets is None or self.encoder is None:
            return
        for _ in range(1, self.s.max_rounds):
            active = [b for b, g in enumerate(graphs) if not g.llm and g.selected[-1]]
            if not active:
                return
            texts, rows = [], []
            for b in active:
                text, new = self.feedback_query(questions[b], graphs[b].selected[-1][0])
                if new:
                    texts.append(text)
                    rows.append(b)
                    graphs[b].concepts.extend(new)
            if not rows:
                return
            femb = self.encoder.encode(texts, desc="feedback queries")
            cands, scores = self._dense(femb, self.s.round_top_k, exclude=[set(graphs[b].passages) for b in rows])
            for b, cs, ss in zip(rows, cands, scores):
                anchor = graphs[b].selected[-1][0]
                graphs[b].selected.append(cs)
                for p, sc in zip(cs, ss):
                    add(anchor, p, sc, "expand")

    def _rounds(self, questions: list[str], graphs: list[QueryGraph], add) -> None:
        self._feedback_rounds(questions, graphs, add)
        if not self.use_llm or self.encoder is None:
            return
        for _ in range(1, self.s.max_rounds):
            active = [b for b, g in enumerate(graphs) if g.llm and g.selected[-1]]
            if not active:
                return
            inputs = [{"query": questions[b], "passages": self._show(graphs[b].passages)} for b in active]
            res = self.llm.complete_structured_batch("missing_concepts", inputs, progress="missing concepts")
            self.llm_calls += len(inputs)
            follow = []
            for b, r in zip(active, res):
                if r.ok and not r.output.sufficient and r.output.missing_concepts:
                    concepts = list(r.output.missing_concepts)[: self.s.max_concepts]
                    graphs[b].concepts.extend(concepts)
                    follow.extend((b, c) for c in concepts)
            if not follow:
                return
            cemb = self.encoder.encode([c for _, c in follow], desc="missing concepts")
            seen = [set(graphs[b].passages) for b, _ in follow]
            cands, scores = self._dense(cemb, self.s.round_top_k, exclude=seen)
            per_query: dict[int, tuple[list[int], list[float]]] = {}
            for (b, _), cs, ss in zip(follow, cands, scores):
                got = per_query.setdefault(b, ([], []))
                for p, s in zip(cs, ss):
                    if p not in got[0]:
                        got[0].append(p)
                        got[1].append(s)
            rows = list(per_query)
            sel, _ = self._select([questions[b] for b in rows], [per_query[b][0] for b in rows],
                                  [per_query[b][1] for b in rows])
            for b, new in zip(rows, sel):
                anchor = graphs[b].selected[-1][0]
                score = dict(zip(*per_query[b]))
                graphs[b].selected.append(new)
                for p in new:
                    add(anchor, p, score.get(p, 0.0), "expand")
