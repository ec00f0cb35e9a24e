"""Query-guided implicit edges (HyperRAG §3.1.2; Algorithm 1, lines 1–8): each question's tree, round by round.

For every question ``q`` (node id ``P + q``) and round ``t = 1..T`` (``max_rounds``):

1. **Retrieve** — candidates ``P_t``: in round 1 the dense top-``K`` passages of ``q`` (cosine of the sentence
   embeddings); in later rounds the dense top-``round_top_k`` unseen passages of each *new query* that the
   previous round's missing-concept step produced (the LLM's follow-up questions; its missing concept names
   when it gave none);
2. **SelectRelevant(P_t, q)** — ``passage_selection`` with the question: ``R_t`` is what the LLM judged potentially
   helpful, at most ``max_selected`` per query of the round (``null``: no cap, as in the paper). Empty is empty:
   the question then gains nothing this round;
3. **BuildEdges(R_t, R_{t-1})** — ``passage_relations`` with the question over ``R_{t-1} ∪ R_t``: typed edges
   ``source → target`` (*support* / *complement* / *expand*, the paper's three) that touch ``R_t``. The paper's
   query graph (``query_nodes=False``) stops there: its nodes are passages, its edges passage–passage (§2, ``E_i ⊆
   V_i × V_i``). The labelled *question-root* variant (``query_nodes=True``) adds the question as a node: a passage
   of ``R_1``, or of a later round that no relation reaches, hangs from it (*query* edge). The fused forest offers
   relation edges before query edges (:meth:`~hyperrag.passage_graph.graph.PassageGraph.forest`), so a relation
   chain ``q → p₁ → p₂`` keeps its depth instead of becoming a star;
4. **NeedMoreContext(R_t, q)** — ``missing_concepts`` with the question and every passage kept so far: stop when
   it says the evidence suffices; otherwise its follow-up questions are round ``t+1``'s new queries.

Weights (the forest keeps strong edges first within a rank): query edges ``1 + cos(q, p)``, relation edges
``cos`` of the pair. Passages are shown to the LLM whole (``passage_chars: null``) or clipped to that many characters.

**LLM-free stand-in** (no LLM, or a failed call — the step is then counted in :attr:`QueryGraphBuilder.skipped`,
which the retriever reports as ``llm_steps_skipped``): selection keeps the candidates within ``margin`` of the
best cosine (at most ``max_selected`` when set); relations link the best passage to each other kept one (*support*);
the missing-concept rounds become **pseudo-relevance feedback** (``feedback: keywords``): the new query of round
``t+1`` is the question followed by the YAKE keywords of round ``t``'s best passage that the question lacks
(``question + " " + " ".join(new keywords)``), its ``round_top_k`` best unseen passages are kept and linked
``best passage of round t → passage`` (*expand*). MuSiQue's questions are 2–4-hop bridges: the first passage
names the bridge entity, the feedback query finds the passage about it. It is labelled as a stand-in in the
statistics, never passed off as an LLM's judgement.

Only question text is used; gold passages and answers are never read.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveInt, settings
from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.passage_graph.edges import EdgeSet

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+")
#: the LLM steps of a query graph, as counted in ``skipped``
STEPS = ("passage_selection", "passage_relations", "missing_concepts")


@settings
class ImplicitSettings:
    """Attributes:
        top_k: dense candidates per question in round 1 (K).
        max_rounds: retrieval rounds per question (T ≥ 1; rounds after the first follow the missing concepts).
        round_top_k: dense candidates per new query in later rounds.
        max_concepts: new queries (follow-up questions) followed per round at most.
        max_selected: passages kept per query of a round at most (``None``: no cap — the paper's selection).
        margin: stand-in selection — keep candidates with ``cos ≥ best − margin``.
        relations: ask the LLM how the kept passages relate (else only query edges and the stand-in links).
        passage_chars: characters of each passage shown to the LLM (``None``: the whole passage).
        feedback: LLM-free rounds — ``keywords`` (pseudo-relevance feedback from the best passage's keyword
            set, see the module notes) or ``none`` (one round without an LLM).
        feedback_keywords: keywords of the best passage added to the feedback query at most.
    """

    top_k: PositiveInt
    max_rounds: PositiveInt
    round_top_k: PositiveInt
    max_concepts: NonNegativeInt
    max_selected: PositiveInt | None
    margin: NonNegativeFloat
    relations: bool
    passage_chars: PositiveInt | None
    feedback: Literal["keywords", "none"]
    feedback_keywords: NonNegativeInt


@dataclass
class QueryGraph:
    """What one question contributed: its kept passages per round, its new queries, who decided."""

    query: int  # query index (node id = num_passages + query)
    selected: list[list[int]] = field(default_factory=list)  # R_t per round, passage ids
    queries: list[list[str]] = field(default_factory=list)  # per later round, its new queries (follow-ups / feedback)
    stand_in_steps: Counter = field(default_factory=Counter)  # steps decided by the stand-in, by step
    done: bool = False  # NeedMoreContext said no (or nothing more to follow)

    @property
    def passages(self) -> list[int]:
        return [p for r in self.selected for p in r]

    @property
    def llm(self) -> bool:
        """Every step of this query graph came from the LLM."""
        return not self.stand_in_steps

    def previous(self) -> list[int]:
        """The last non-empty round before the current one (``R_{t-1}``)."""
        return next((r for r in reversed(self.selected[:-1]) if r), [])


AddEdge = Callable[[int, int, float, str], None]


class QueryGraphBuilder:
    """Builds query graphs for batches of questions.

    Args:
        passage_emb: FloatTensor [P, D], unit-norm passage embeddings.
        passage_texts: P texts (shown to the LLM).
        settings: :class:`ImplicitSettings`.
        encoder: embeds the new queries of later rounds (``encode(list[str]) -> [n, D]``).
        llm: the framework's LLM; ``None`` or unavailable → the stand-in (steps counted in :attr:`skipped`).
        keyword_sets: P keyword sets (the explicit graph's YAKE sets), for the LLM-free feedback rounds.
        query_nodes: the question is a node of its graph (the labelled question-root variant: *query* edges to its
            passages); ``False``: the paper's query graph, passages and passage–passage edges only.
    """

    def __init__(self, passage_emb: torch.Tensor, passage_texts: Sequence[str], settings: ImplicitSettings,
                 encoder: Encoder | None = None, llm: LanguageModel | None = None,
                 keyword_sets: Sequence[frozenset[str]] | None = None, query_nodes: bool = True) -> None:
        self.query_nodes = query_nodes
        self.passage_emb = passage_emb.float()
        self.texts = list(passage_texts)
        self.encoder = encoder
        self.llm = llm
        self.s = settings
        self.keyword_sets = list(keyword_sets) if keyword_sets is not None else None
        self.llm_calls = 0
        #: LLM calls that failed, and why the first one did
        self.llm_failed = 0
        self.first_error: str | None = None
        #: configured LLM steps that did not run (no LLM or a failed call), by step
        self.skipped: Counter[str] = Counter()

    @property
    def use_llm(self) -> bool:
        return bool(getattr(self.llm, "available", False))

    def _show(self, pids: Sequence[int]) -> list[tuple[int, str]]:
        """``(passage id, clipped text)`` pairs, the candidates a task shows with short IDs."""
        return [(p, self.texts[p][: self.s.passage_chars]) for p in pids]

    def _ask(self, step: str, rows: list[int], inputs: list[dict[str, Any]], graphs: list[QueryGraph]
             ) -> dict[int, Any]:
        """One LLM step for ``rows`` (graph positions): ``{row: result}`` of the calls that succeeded. Rows
        without an answer (no LLM, failed call) are counted as skipped and marked as decided by the stand-in."""
        ok: dict[int, Any] = {}
        if rows and self.use_llm:
            results = self.llm.complete_structured_batch(step, inputs, progress=step.replace("_", " "))
            self.llm_calls += len(inputs)
            ok = {b: r for b, r in zip(rows, results) if r.ok}
            failed = [r for r in results if not r.ok]
            self.llm_failed += len(failed)
            if failed and self.first_error is None:
                self.first_error = f"{step} {failed[0].error_kind}: {failed[0].error}"
        for b in rows:
            if b not in ok:
                self.skipped[step] += 1
                graphs[b].stand_in_steps[step] += 1
        return ok

    # ---- retrieval ---------------------------------------------------------------------------------------
    def _dense(self, queries: torch.Tensor, k: int, exclude: list[set[int]] | None = None
               ) -> tuple[list[list[int]], list[list[float]]]:
        """Dense top-``k`` per query row, leaving out ``exclude[b]``: (passage ids, cosines) per row."""
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
        """Query graphs of a batch (Algorithm 1, lines 1–8, for every question at once).

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

        qemb = query_emb.float()
        cands, scores = self._dense(qemb, self.s.top_k)
        pools = {b: (c, s) for b, (c, s) in enumerate(zip(cands, scores))}
        for t in range(self.s.max_rounds):
            rows = [b for b in pools if pools[b][0]]
            # round 1: max_selected; a later round: max_selected per new query of that round (None: no cap)
            cap = self.s.max_selected
            caps = {b: cap * (len(graphs[b].queries[-1]) if t else 1) if cap else None for b in rows}
            kept = self._select(questions, graphs, rows, pools, caps)
            for b, g in enumerate(graphs):
                g.selected.append(kept.get(b, []))
            self._build_edges(questions, graphs, t, add, n_pass, qemb)
            if t + 1 == self.s.max_rounds:
                break
            pools = self._next_round(questions, graphs, t)
            if not pools:
                break
        return EdgeSet.from_lists(par, chi, wts, rel), graphs

    def stop_if_nothing_succeeded(self) -> None:
        """Stop (:class:`~hyperrag.llm.errors.StageFailedError`, one line) when every LLM call of this builder's
        query graphs failed — a dead endpoint or a model that cannot do the tasks — instead of training a ball on
        stand-in graphs labelled as the LLM's (the calls that worked come back from the LLM response cache).
        The oracle's ``no_gold`` failures take the stand-in, as designed."""
        stop_if_nothing_succeeded("HyperRAG query graphs (implicit edges)", failed=self.llm_failed,
                                  succeeded=self.llm_calls - self.llm_failed, first_error=self.first_error,
                                  llm=self.llm, unit="LLM calls")

    # ---- SelectRelevant ----------------------------------------------------------------------------------
    def _select(self, questions: list[str], graphs: list[QueryGraph], rows: list[int],
                pools: dict[int, tuple[list[int], list[float]]], caps: dict[int, int | None]) -> dict[int, list[int]]:
        """``R_t`` per graph position: the LLM's selection (empty is empty), the stand-in where it has none."""
        inputs = [{"query": questions[b], "passages": self._show(pools[b][0]),
                   **({"max_selected": caps[b]} if caps[b] else {})} for b in rows]
        answered = self._ask("passage_selection", rows, inputs, graphs)
        out = {}
        for b in rows:
            cands, scores = pools[b]
            if b in answered:
                out[b] = [int(p) for p in answered[b].value][: caps[b]]
            elif len(graphs[b].selected) == 0:  # round 1: the cosine-margin stand-in
                best = scores[0]
                out[b] = [p for p, s in zip(cands, scores) if s >= best - self.s.margin][: self.s.max_selected]
            else:  # later rounds: the feedback query's passages are kept
                out[b] = list(cands)
        return out

    # ---- BuildEdges --------------------------------------------------------------------------------------
    def _pair_cos(self, a: int, b: int) -> float:
        return float(self.passage_emb[a] @ self.passage_emb[b])

    def _build_edges(self, questions: list[str], graphs: list[QueryGraph], t: int, add: AddEdge, n_pass: int,
                     qemb: torch.Tensor) -> None:
        """Typed passage edges touching ``R_t`` (LLM relations over ``R_{t-1} ∪ R_t``, or the stand-in's links)
        and query edges to the passages of ``R_t`` that no relation reaches (all of ``R_1``)."""
        rows = [b for b, g in enumerate(graphs) if g.selected[t] and len(g.previous() + g.selected[t]) > 1]
        answered: dict[int, Any] = {}
        if self.s.relations:
            inputs = [{"query": questions[b], "passages": self._show(graphs[b].previous() + graphs[b].selected[t])}
                      for b in rows]
            answered = self._ask("passage_relations", rows, inputs, graphs)
        for b, g in enumerate(graphs):
            new = g.selected[t]
            if not new:
                continue
            reached: set[int] = set()
            if b in answered:
                fresh = set(new)
                for src, dst, kind, _ in answered[b].value:
                    src, dst = int(src), int(dst)
                    if src in fresh or dst in fresh:
                        add(src, dst, self._pair_cos(src, dst), kind)
                        reached.add(dst)
            elif t == 0:  # stand-in: the best passage supports the others
                for p in new[1:]:
                    add(new[0], p, self._pair_cos(new[0], p), "support")
            else:  # stand-in: the previous round's best passage expands into the new ones
                anchor = g.previous()[0] if g.previous() else None
                for p in new if anchor is not None else ():
                    add(anchor, p, self._pair_cos(anchor, p), "expand")
                    reached.add(p)
            if not self.query_nodes:  # the paper's query graph: passage–passage edges only
                continue
            qnode = n_pass + g.query
            for p in new:
                if t == 0 or p not in reached:
                    add(qnode, p, 1.0 + float(qemb[b] @ self.passage_emb[p]), "query")

    # ---- NeedMoreContext ---------------------------------------------------------------------------------
    def _next_round(self, questions: list[str], graphs: list[QueryGraph], t: int
                    ) -> dict[int, tuple[list[int], list[float]]]:
        """The next round's candidate pools: the dense passages of each question's new queries."""
        rows = [b for b, g in enumerate(graphs) if not g.done]
        inputs = [{"query": questions[b], "passages": self._show(graphs[b].passages)} for b in rows]
        answered = self._ask("missing_concepts", rows, inputs, graphs) if self.encoder is not None else {}
        follow: list[tuple[int, str]] = []
        for b in rows:
            g = graphs[b]
            if b in answered:
                out = answered[b].output
                new = list(out.follow_up_questions) or list(out.missing_concepts)
                if out.sufficient or not new:
                    g.done = True
                    continue
                new = new[: self.s.max_concepts]
            else:
                new = self._feedback(questions[b], g)
                if not new:
                    g.done = True
                    continue
            g.queries.append(new)
            follow.extend((b, q) for q in new)
        if not follow or self.encoder is None:
            return {}
        emb = self.encoder.encode([q for _, q in follow], desc="new queries")
        cands, scores = self._dense(emb, self.s.round_top_k, exclude=[set(graphs[b].passages) for b, _ in follow])
        pools: dict[int, tuple[list[int], list[float]]] = {}
        for (b, _), cs, ss in zip(follow, cands, scores):
            got = pools.setdefault(b, ([], []))
            for p, s in zip(cs, ss):
                if p not in got[0]:
                    got[0].append(p)
                    got[1].append(s)
        return pools

    def _feedback(self, question: str, g: QueryGraph) -> list[str]:
        """The stand-in's new query (pseudo-relevance feedback), or none."""
        last = g.selected[-1] if g.selected and g.selected[-1] else g.previous()
        if self.s.feedback != "keywords" or self.keyword_sets is None or not last:
            return []
        text, new = self.feedback_query(question, last[0])
        return [text] if new else []

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
