"""How a perfect model answers each LLM task, from what the task shows plus the gold of its query.

One function per task name, ``(task, inputs, gold) -> reply``: the reply is the JSON object the task's output
schema asks for, written with the *display IDs the prompt showed* (``F1``, ``P2``, ``N3``...), so it goes through
the task's own parser, validation and ID checks like a real model's reply. A function never adds a passage,
fact or ID that the task did not show.

Tasks without gold (OpenIE, summaries, gates, causal pair verification, relevancy judging, ...) and calls whose
question is not in the query file raise :class:`NoGold`; the oracle backend turns that into a failed call
(``error_kind = "no_gold"``), so the method takes its documented fallback and the usage table counts it.

A call may name the question it descends from (:data:`ORIGIN`): CDF-RAG's refinement chains (a second action, the
feedback loop's re-query) refine a *rewrite* of the question, whose text is in no query file. The input is not
shown to a model (a model refines the query it is shown); the oracle finds the gold by it, so every action of a
chain gets the question's gold, and the backend folds it into the cache key.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hyperrag.llm.oracle.gold import GoldIndex, GoldPassage, Hop, QueryGold, item_sources, normalize
from hyperrag.llm.prompting import Item
from hyperrag.llm.tasks.base import ID_LIST_MAX, NAME_MAX, Task
from hyperrag.utils.answers import mentions, option_letter
from hyperrag.utils.stopwords import is_stopword

UNKNOWN = "unknown"
#: answers that are no entity: a neighbour whose name holds the word is not the answer
YES_NO = ("yes", "no")


class NoGold(Exception):
    """The oracle cannot answer this call (no gold for the task, or the question is not in the query file)."""


Reply = dict[str, Any]
#: ``fn(task, inputs, gold, refinement=...)``: the oracle's settings come as keywords (``refinement``: the reading of
#: CDF-RAG's refinement actions); a function takes those it reads and leaves the rest (``**_``)
OracleFn = Callable[..., Reply]
#: task name -> its oracle: every task the oracle answers, and only those
ORACLES: dict[str, OracleFn] = {}


def oracle_for(*names: str) -> Callable[[OracleFn], OracleFn]:
    def register(fn: OracleFn) -> OracleFn:
        for name in names:
            ORACLES[name] = fn
        return fn

    return register


def oracle_reply(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, *, refinement: str) -> Reply:
    """The perfect reply to one call; raises :class:`NoGold` when there is none.

    Args:
        refinement: the reading of CDF-RAG's refinement actions (:data:`REFINEMENT_READINGS`; the backend passes
            ``llm/oracle.yaml``'s ``refinement``).
    """
    fn = ORACLES.get(task.name)
    if fn is None:
        raise NoGold(f"the oracle has no gold for task {task.name!r}")
    return fn(task, inputs, gold, refinement=refinement)


# ---- finding the query ------------------------------------------------------------------------------------
#: the input naming the question a call descends from (a refinement chain's question; the query itself at the first
#: step): not shown to a model, read by the oracle only (:func:`origin_gold`) and part of the oracle's cache key
ORIGIN = "origin"


def question_of(inputs: Mapping[str, Any]) -> str:
    for key in ("query", "question"):
        if isinstance(inputs.get(key), str):
            return inputs[key]
    raise NoGold("the task shows no question")


def query_gold(inputs: Mapping[str, Any], gold: GoldIndex) -> QueryGold:
    question = question_of(inputs)
    found = gold.find(question)
    if found is None:
        raise NoGold(f"question not in the query file: {question[:80]!r}")
    return found


def origin_gold(inputs: Mapping[str, Any], gold: GoldIndex) -> QueryGold:
    """The gold of the question the call descends from: :data:`ORIGIN` when the caller names it, else the question
    the task shows (:func:`query_gold`)."""
    origin = inputs.get(ORIGIN)
    if origin is None:
        return query_gold(inputs, gold)
    found = gold.find(origin)
    if found is None:
        raise NoGold(f"question not in the query file: {str(origin)[:80]!r}")
    return found


def query_or_hop(inputs: Mapping[str, Any], gold: GoldIndex) -> tuple[QueryGold, Hop | None]:
    question = question_of(inputs)
    found = gold.find(question)
    if found is not None:
        return found, None
    hop = gold.find_hop(question)
    if hop is None:
        raise NoGold(f"question not in the query file: {question[:80]!r}")
    return hop


# ---- is a shown item gold? --------------------------------------------------------------------------------
def shown(task: Task, inputs: Mapping[str, Any], key: str) -> list[tuple[Item, Any]]:
    """The task's display items with the raw values they were made from."""
    return list(zip(task.items(inputs), list(inputs[key])))  # type: ignore[attr-defined]


def gold_passage_item(qg: QueryGold, item: Item, raw: Any) -> bool:
    sources = item_sources(raw)
    if sources is not None:
        return qg.is_gold_source(sources)
    return qg.passage_of_text(item.text) is not None


def gold_candidate_item(qg: QueryGold, item: Item, raw: Any) -> bool:
    """A candidate row (fact, path, node): from a gold passage by its provenance, else by its text."""
    sources = item_sources(raw)
    if sources is not None:
        return qg.is_gold_source(sources)
    text = normalize(item.text)
    return qg.passage_of_text(item.text) is not None or any(
        len(p.title) >= 4 and mentions(text, normalize(p.title)) for p in qg.passages)


def covers(qg: QueryGold, hop: Hop | None, items: Sequence[tuple[Item, Any]]) -> bool:
    """Whether the shown evidence holds every gold passage the (sub-)question needs."""
    needed = [hop.passage] if hop is not None and hop.passage is not None else qg.passages
    return all(any(shows(qg, p, item, raw) for item, raw in items) for p in needed)


def shows(qg: QueryGold, passage: GoldPassage, item: Item, raw: Any) -> bool:
    """Whether a shown item is ``passage`` (by its provenance, else by its text)."""
    sources = item_sources(raw)
    if sources is not None:
        return passage.id in {str(s) for s in sources}
    return qg.passage_of_text(item.text) is passage


# ---- tasks --------------------------------------------------------------------------------------------------
@oracle_for("fact_filter")
def fact_filter(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Keep the shown facts whose triple comes from a gold passage."""
    from hyperrag.llm.tasks.fact_filter import fact_items

    qg = query_gold(inputs, gold)
    keep = []
    for item, raw in zip(fact_items(inputs["facts"]), inputs["facts"]):
        fact = raw[1] if isinstance(raw, tuple) and len(raw) == 2 and not isinstance(raw[1], str) else raw
        if isinstance(fact, (list, tuple)) and len(fact) == 3:
            ok = qg.is_gold_fact(fact)
        else:
            ok = qg.passage_of_text(fact) is not None
        if ok:
            keep.append(item.id)
    return {"relevant_ids": keep}


@oracle_for("neighbor_scoring")
def neighbor_scoring(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The task's four tiers from the gold: 10 for a neighbour that is (or names) the answer, 8 for a bridge of
    the chain (an intermediate hop answer, or the subject of a supporting passage: its title), 5 for any other
    neighbour named in a supporting passage (a true but side link), 0 for the rest. A neighbour carrying
    provenance (``passage_ids``) is judged by it instead: 8 from a supporting passage, else 0."""
    qg = query_gold(inputs, gold)
    answer = normalize(qg.answer)
    if answer in YES_NO:  # a yes / no answer (2Wiki's comparisons) names no neighbour
        answer = ""
    bridges = {normalize(h.answer) for h in qg.hops[:-1]} | {normalize(p.title) for p in qg.passages}
    bridges.discard(answer)
    scores = []
    for (item, name), raw in zip(task.shown(inputs), inputs["neighbors"]):  # type: ignore[attr-defined]
        sources = item_sources(raw)
        norm = normalize(name)
        if sources is not None:
            score = 8 if qg.is_gold_source(sources) else 0
        elif answer and mentions(norm, answer):
            score = 10
        elif any(b and mentions(norm, b) for b in bridges):
            score = 8
        elif qg.is_gold_name(name):
            score = 5
        else:
            score = 0
        reason = {10: "is the answer", 8: "bridge of the supporting chain", 5: "named in a supporting passage"}
        scores.append({"id": item.id, "name": name, "score": score, "reason": reason.get(score, "")})
    return {"scores": scores}


@oracle_for("passage_selection")
def passage_selection(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The shown gold passages (in the order shown)."""
    qg = query_gold(inputs, gold)
    return {"selected_ids": [item.id for item, raw in shown(task, inputs, "passages")
                             if gold_passage_item(qg, item, raw)]}


@oracle_for("context_coverage")
def context_coverage(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The shown gold passages are the needed ones; coverage = 10 × the share of the question's gold passages
    shown (rounded): the gold-informed upper bound of a judge of K's coverage."""
    qg = query_gold(inputs, gold)
    items = shown(task, inputs, "passages")
    needed = [item.id for item, raw in items if gold_passage_item(qg, item, raw)]
    found = sum(any(shows(qg, p, item, raw) for item, raw in items) for p in qg.passages)
    return {"needed_ids": needed, "coverage": round(10 * found / len(qg.passages)) if qg.passages else 0}


@oracle_for("passage_relations")
def passage_relations(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Every pair of shown gold passages is related (earlier hop → later hop); no other pair is."""
    qg = query_gold(inputs, gold)
    order = {p.id: i for i, p in enumerate(qg.passages)}
    gold_items = []
    for item, raw in shown(task, inputs, "passages"):
        sources = item_sources(raw)
        p = (next((g for g in qg.passages if g.id in {str(s) for s in sources}), None) if sources is not None
             else qg.passage_of_text(item.text))
        if p is not None:
            gold_items.append((order[p.id], item.id))
    gold_items.sort()
    kind = relation_type(task)
    return {"relations": [{"source_id": a, "target_id": b, "type": kind, "description": "both needed"}
                          for i, (_, a) in enumerate(gold_items) for _, b in gold_items[i + 1:]]}


def relation_type(task: Task) -> str:
    """The link type a perfect model gives two passages of one reasoning chain (from the task's schema)."""
    model = task.output_model()
    link = typing.get_args(model.model_fields["relations"].annotation)[0]
    allowed = typing.get_args(link.model_fields["type"].annotation)
    for preferred in ("complement", "related", "support", "elaborates"):
        if preferred in allowed:
            return preferred
    return allowed[0]


@oracle_for("missing_concepts")
def missing_concepts(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Sufficient iff every gold passage is shown; otherwise the missing hops' entities and sub-questions."""
    from hyperrag.llm.prompting import make_items

    qg = query_gold(inputs, gold)
    items = list(zip(make_items(list(inputs.get("passages") or []), "P"), list(inputs.get("passages") or [])))
    if covers(qg, None, items):
        return {"sufficient": True, "missing_concepts": [], "follow_up_questions": []}
    missing = [h for h in qg.hops if h.passage is not None
               and not any(shows(qg, h.passage, item, raw) for item, raw in items)]
    return {"sufficient": False,
            "missing_concepts": list(dict.fromkeys(h.subject or h.resolved for h in missing))[:8],
            "follow_up_questions": [h.resolved for h in missing][:4]}


#: the oracle's readings of CDF-RAG's refinement actions (``llm/oracle.yaml`` ``refinement``): each action gets the
#: same gold under one reading, so no action is favoured by what the oracle hands it
REFINEMENT_READINGS: tuple[str, ...] = ("no_answers", "gold_answers")
_HOP_PLACEHOLDER = re.compile(r"#\d+")
#: the longest query the refinement task accepts (``hyperrag.llm.tasks.base.Name``): a longer resolved hop is left out
QUERY_MAX_CHARS = NAME_MAX


def _open(text: str) -> str:
    """A sub-question with its ``#k`` bridge left open (the placeholder dropped)."""
    return " ".join(_HOP_PLACEHOLDER.sub(" ", text).split())


def _new_words(text: str, seen: set[str], *, keep_stopwords: bool = True) -> list[str]:
    """The words of ``text`` (end punctuation stripped) not yet in ``seen`` (compared normalised; ``seen`` grows);
    without ``keep_stopwords`` stop words are skipped."""
    out = []
    for raw in text.split():
        w = raw.strip("?!.,;:\"'()")
        key = normalize(w)
        if key and key not in seen and (keep_stopwords or not is_stopword(key)):
            seen.add(key)
            out.append(w)
    return out


def question_entities(qg: QueryGold) -> list[str]:
    """The question's own entities, from the gold decomposition *unresolved*: each hop's subject as written that
    is not a ``#k`` bridge (MuSiQue's part before ``>>``); a natural-language hop with no bridge in it (the
    first) gives the words it shares with the question instead."""
    question = {normalize(w) for w in qg.query.question.split()}
    out: list[str] = []
    for h in qg.hops:
        if h.raw_subject:
            if not _HOP_PLACEHOLDER.search(h.raw_subject):
                out.append(h.raw_subject)
        elif not _HOP_PLACEHOLDER.search(h.question):
            words = [w.strip("?!.,;:\"'()") for w in h.question.split()]
            shared = [w for w in words if normalize(w) in question and not is_stopword(normalize(w))]
            if shared:
                out.append(" ".join(shared))
    return list(dict.fromkeys(out))


def refinement_queries(qg: QueryGold, mode: str, reading: str) -> list[str]:
    """The oracle's rewrites of the question for one action under one reading.

    ``no_answers`` (no gold answer in any rewrite): expand — the question + the content words (no stop words) of
    the unresolved sub-questions it does not hold (the hops' entities and relations, bridges left open); decompose — the
    sub-questions with the bridge left open (those the task accepts: :data:`QUERY_MAX_CHARS`); simplify — the
    question's own entities (:func:`question_entities`) + the last hop's relation (its unresolved text, bridge dropped).
    ``gold_answers`` (every action may use the gold answers of the hops): expand — the question + the bridge
    answers; decompose — the resolved sub-questions (``#k`` → the gold answer k); simplify — the last hop
    resolved (the one question left once the bridges are known). A resolved hop longer than the task accepts
    (:data:`QUERY_MAX_CHARS`; a 2Wiki comparison hop with its givens) is left out (simplify: the last one that fits).
    """
    if reading not in REFINEMENT_READINGS:
        raise ValueError(f"oracle refinement reading must be one of {REFINEMENT_READINGS}, got {reading!r}")
    hops = qg.hops
    if reading == "gold_answers":
        if mode == "decompose":
            return [h.resolved for h in hops if len(h.resolved) <= QUERY_MAX_CHARS]
        if mode == "expand":
            bridges = [h.answer for h in hops[:-1] if h.answer]
            return [f"{qg.query.question} {' '.join(bridges)}"] if bridges else []
        if mode == "simplify":  # the last hop that fits (a 2Wiki comparison hop lists its givens: too long)
            return next(([h.resolved] for h in reversed(hops) if len(h.resolved) <= QUERY_MAX_CHARS), [])
        return []
    if mode == "decompose":
        return [q for q in (_open(h.question) for h in hops) if len(q) <= QUERY_MAX_CHARS]
    if mode == "expand":
        seen = {normalize(w) for w in qg.query.question.split()}
        extra = [w for h in hops for w in _new_words(_open(h.question), seen, keep_stopwords=False)]
        return [f"{qg.query.question} {' '.join(extra)}"] if extra else []
    if mode == "simplify":
        last = hops[-1]
        entities = question_entities(qg)
        seen = {normalize(w) for e in entities for w in e.split()}
        words = [*entities, *_new_words(_open(last.relation or last.question), seen)]
        return [" ".join(words)] if words else []
    return []


@oracle_for("query_refinement")
def query_refinement(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, *, refinement: str, **_: Any) -> Reply:
    """expand / simplify / decompose of the question from its gold decomposition, under the ``refinement`` reading
    (:func:`refinement_queries`). A rewrite that would say nothing new (``no_answers``' expand of a question that
    holds every sub-question's words) is the query shown, given back: nothing to rewrite. No gold: a question
    without a decomposition, and a gold rewrite longer than the task accepts (a long question + its bridges; every
    resolved hop too long). The question is the call's :data:`ORIGIN` when it names one (a chain's later step refines a rewrite:
    it gets the question's rewrite for its action, the same gold as a first step — a rewrite equal to the query
    shown is the model's "nothing to rewrite"), else the query shown."""
    qg = origin_gold(inputs, gold)
    mode = getattr(task, "mode", "")
    if not qg.hops:
        raise NoGold("the query file has no decomposition for this question")
    queries = [q for q in refinement_queries(qg, mode, refinement) if q.strip()]
    too_few = len(queries) < 2 if mode == "decompose" else (not queries and mode == "simplify"
                                                            and refinement == "gold_answers")
    if too_few:
        raise NoGold(f"fewer hops than the {mode} task needs are within its {QUERY_MAX_CHARS} characters")
    if not queries:  # the gold has nothing to add or take away: a perfect model gives the query back (the refiner
        # reads that as "nothing to rewrite": the query stays as it is; no stand-in runs)
        queries = [question_of(inputs)]
    if any(len(q) > QUERY_MAX_CHARS for q in queries):  # e.g. a long question + its bridges
        raise NoGold(f"the gold {mode} rewrite is longer than the task accepts ({QUERY_MAX_CHARS} characters)")
    return {"queries": queries}


def routing_sub_questions(hops: Sequence[Hop], limit: int) -> list[str]:
    """The gold hops as the router's sub-questions: each distinct one once (a multi-valued look-up — 2Wiki's three
    citizenships of one director — is one question), ``#k`` renumbered to the kept positions, a hop longer than
    a sub-question may be (:data:`QUERY_MAX_CHARS`; a 2Wiki comparison hop listing its givens) left out, as the
    refinement actions leave it out, and at most ``limit`` in reasoning order."""
    kept: list[str] = []
    where: dict[int, int] = {}  # 1-based hop position -> 1-based position among the kept
    for k, h in enumerate(hops, 1):
        text = _HOP_PLACEHOLDER.sub(lambda m: f"#{where.get(int(m.group()[1:]), 0)}", h.question)
        if "#0" in text or len(text) > QUERY_MAX_CHARS:
            continue  # names a hop left out, or too long
        if text not in kept:
            kept.append(text)
        where[k] = kept.index(text) + 1
    return kept[:limit]


@oracle_for("question_routing")
def question_routing(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Multi-hop iff the gold decomposition has two or more hops; then its sub-questions as the task's schema takes
    them (:func:`routing_sub_questions`: distinct, each short enough, at most
    :data:`~hyperrag.llm.tasks.question_routing.MAX_SUB_QUESTIONS`). Before that rule 66 of 2wiki_dev's 499
    replies failed the schema (a long comparison hop, or seven hops) and the router fell back."""
    from hyperrag.llm.tasks.question_routing import MAX_SUB_QUESTIONS

    qg = query_gold(inputs, gold)
    if not qg.hops:
        raise NoGold("the query file has no decomposition for this question")
    multi = len(qg.hops) > 1
    return {"multi_hop": multi, "sub_questions": routing_sub_questions(qg.hops, MAX_SUB_QUESTIONS) if multi else []}


def gold_steps(qg: QueryGold, hop: Hop | None) -> list[str]:
    """The gold hops (the question's, or the one hop asked) as sentences: "<resolved sub-question> <answer>."."""
    return [f"{h.resolved} {h.answer}." for h in (qg.hops if hop is None else [hop]) if h.resolved and h.answer]


def answer_reply(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The gold answer when the evidence holds every gold passage the question needs, else "unknown"."""
    qg, hop = query_or_hop(inputs, gold)
    items = shown(task, inputs, "passages")
    supporting = [item.id for item, raw in items if gold_passage_item(qg, item, raw)]
    if not covers(qg, hop, items):
        if getattr(task, "style", "short") == "explanatory":
            return {"answer": "The passages do not give the answer.", "short_answer": UNKNOWN, "supporting_ids": []}
        return {"answer": UNKNOWN, "supporting_ids": []}
    if hop is not None:
        answer = hop.answer
    elif qg.query.options and qg.query.answer_index is not None:
        answer = qg.query.options[qg.query.answer_index]
    else:
        answer = qg.answer
    reply = {"answer": answer or UNKNOWN, "supporting_ids": supporting}
    if getattr(task, "style", "short") == "explanatory":  # the bare answer apart, an explanation from the gold hops
        reply["short_answer"] = reply["answer"]
        if qg.query.options and qg.query.answer_index is not None:
            reply["short_answer"] = option_letter(qg.query.answer_index)
        steps = gold_steps(qg, hop)
        reply["answer"] = " ".join([f"The answer is {answer}.", *steps]) if answer else UNKNOWN
    return reply


ORACLES["grounded_answer"] = answer_reply
ORACLES["strict_rewrite"] = answer_reply


@oracle_for("hipporag_qa")
def hipporag_qa(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """HippoRAG 2's reader: the reasoning is the gold hops that the shown passages hold, the answer as
    :func:`answer_reply` gives it (gold when every gold passage the question needs is shown, else "unknown")."""
    from hyperrag.llm.tasks.grounded_answer import GroundedAnswer

    short = answer_reply(GroundedAnswer(), inputs, gold)
    qg, hop = query_or_hop(inputs, gold)
    steps = gold_steps(qg, hop)
    known = short["answer"] != UNKNOWN
    thought = " ".join(steps) + f" So the answer is {short['answer']}." if known else \
        "The passages do not give the answer."
    return {"thought": thought.strip(), "answer": short["answer"]}


@oracle_for("claim_extraction")
def claim_extraction(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The answer is the one claim (an abstention makes none)."""
    text = str(inputs["text"]).strip()
    return {"claims": [] if normalize(text) in ("", UNKNOWN) else [text]}


@oracle_for("claim_support")
def claim_support(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Supported iff the claim's text occurs in a shown passage."""
    claim = normalize(inputs["claim"])
    hits = [item.id for item, _ in shown(task, inputs, "passages") if mentions(normalize(item.text), claim)]
    return {"verdict": "supported" if hits else "not_enough_info", "evidence_ids": hits,
            "reason": "stated in the evidence" if hits else "not in the evidence"}


@oracle_for("causal_path_selection")
def causal_path_selection(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """Causal: the candidates that come from gold passages (by their provenance, else their text), in the order
    shown; spurious (spurious-aware variant): the others, least important (last shown) first; draft: the gold
    answer when every gold passage is behind some shown candidate, else "unknown". Written with the keys of the
    task's prompt form (``paper``: precise / ct_precise / p_answer)."""
    qg = query_gold(inputs, gold)
    items = shown(task, inputs, "candidates")
    kept = [item.id for item, raw in items if gold_candidate_item(qg, item, raw)]
    draft = qg.answer if qg.answer and covers(qg, None, items) else UNKNOWN
    causal_key, spurious_key, draft_key = task.fields  # type: ignore[attr-defined]  # the prompt form's keys
    # the lists' lengths as the prompt asks (Fig 5/6's constraints: max_selected / max_spurious; else the schema's
    # bound): a long table (path_selection.max_rows null) must not make the reply invalid
    cap, s_cap = (min(int(inputs.get(k) or ID_LIST_MAX), ID_LIST_MAX) for k in ("max_selected", "max_spurious"))
    if not task.spurious:  # type: ignore[attr-defined]
        return {causal_key: kept[:cap], draft_key: draft}
    spurious = [item.id for item, _ in reversed(items) if item.id not in set(kept)]
    return {causal_key: kept[:cap], spurious_key: spurious[:s_cap], draft_key: draft}


@oracle_for("subgraph_answer")
def subgraph_answer(task: Task, inputs: Mapping[str, Any], gold: GoldIndex, **_: Any) -> Reply:
    """The gold answer when the evidence shows every gold passage the question needs, else "unknown" (the
    draft answer is not trusted)."""
    qg, hop = query_or_hop(inputs, gold)
    explanatory = getattr(task, "style", "short") == "explanatory"
    if not covers(qg, hop, shown(task, inputs, "evidence")):
        if explanatory:
            return {"answer": "The evidence does not give the answer.", "short_answer": UNKNOWN}
        return {"answer": UNKNOWN}
    answer = hop.answer if hop is not None else qg.answer
    if not explanatory:
        return {"answer": answer or UNKNOWN}
    # explanatory: the bare answer apart, an explanation from the gold hops (as the reader's oracle writes it)
    steps = gold_steps(qg, hop)
    return {"answer": " ".join([f"The answer is {answer}.", *steps]) if answer else UNKNOWN,
            "short_answer": answer or UNKNOWN}

