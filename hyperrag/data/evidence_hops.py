"""2WikiMultiHopQA's gold hops from its Wikidata evidence triples and question type, as
:class:`~hyperrag.data.types.SubQuestion` s: what MuSiQue's ``question_decomposition`` gives the oracle.

* ``compositional`` / ``inference``: a chain; each triple after the first asks about the previous one's object
  (the bridge), so its sub-question names it ``#k`` (k: that hop's position, 1-based), resolved to its answer.
* ``comparison``: parallel look-ups (one per triple; "who lived longer" carries birth and death per person, a
  film of several countries one triple per country), then a comparison hop.
* ``bridge_comparison``: two chains (the first two triples are their roots; each later triple continues the
  root whose object names its subject) and a comparison hop.
* any other type: a triple continues the earliest earlier triple whose object names its subject, else it is a
  root look-up.

A look-up hop's sub-question is rendered from its triple, ``What is the <relation> of <subject>?``; its answer
is the triple's object. The comparison hop lists the look-ups (``Given: <subject> <relation> #k; ...``); its
answer is the question's; it has no passage of its own (it needs all of them).

Each look-up hop's gold passage is the supporting title that names its subject. Names differ between the
evidence and the titles ("Maurice of Nassau" vs "Maurice, Prince of Orange", "Henry I" vs "Henry I of France",
"David Pigot" vs "David Pigot (cricketer, born 1929)"), so the question's distinct subject entities (a root's
subject; for a chain, the bridge) are matched one-to-one to its 2–4 titles by the best total score
(:func:`scipy.optimize.linear_sum_assignment`: elimination): normalised names (the title also without its
parenthetical), :mod:`rapidfuzz` token-set similarity, whether the title's passage states the hop's answer,
and whether the question names the title (a root is named there, a bridge is not).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hyperrag.data.types import SubQuestion
from hyperrag.utils.answers import mentions

CHAIN_TYPES = ("compositional", "inference")
COMPARISON_TYPES = ("comparison", "bridge_comparison")

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)\s*")
#: score weights: name similarity in [0, 1], plus these
ANSWER_IN_PASSAGE = 0.5
ROOT_NAMED_IN_QUESTION = 0.25


def normalize(text: str) -> str:
    """Lower-cased NFKD text without accents, every run of non-word characters one space."""
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


@dataclass(frozen=True)
class Link:
    """One triple's place in the decomposition: ``parent`` is the hop whose answer is its subject (``None``: a
    root look-up whose subject the question names)."""

    subject: str
    relation: str
    answer: str
    parent: int | None


def link_triples(evidences: Sequence[tuple[str, str, str]], qtype: str) -> list[Link]:
    """Each triple with the earlier hop it continues (see the module docstring for the rule per type)."""
    from rapidfuzz import fuzz

    links: list[Link] = []
    for i, (s, r, o) in enumerate(evidences):
        parent: int | None = None
        if qtype in CHAIN_TYPES:
            parent = i - 1 if i else None
        elif qtype == "bridge_comparison":
            if i >= 2:
                same = next((j for j, link in enumerate(links) if link.parent is not None
                             and normalize(link.subject) == normalize(s)), None)
                parent = links[same].parent if same is not None else max(
                    (0, 1), key=lambda j: fuzz.token_set_ratio(normalize(s), normalize(evidences[j][2])))
        elif qtype != "comparison":
            parent = next((j for j in range(i) if normalize(evidences[j][2]) == normalize(s)), None)
        links.append(Link(s, r, o, parent))
    return links


def entity_keys(links: Sequence[Link]) -> list[tuple[str, str]]:
    """The subject entity each hop asks about: ``("root", name)`` or ``("bridge", <root hop of the chain's
    link>)``: hops about the same entity (birth and death of one person) share a key."""
    return [("root", normalize(link.subject)) if link.parent is None else ("bridge", str(link.parent))
            for link in links]


def match_titles(links: Sequence[Link], question: str, titles: Sequence[str],
                 texts: Sequence[str]) -> list[int | None]:
    """Per hop, the position in ``titles`` of its gold passage (``None``: no title left for it).

    Args:
        links: the hops (:func:`link_triples`).
        question: the question's text (a root's title is named there).
        titles: the question's supporting titles; ``texts``: their passages' texts.
    """
    import numpy as np
    from rapidfuzz import fuzz
    from scipy.optimize import linear_sum_assignment

    keys = entity_keys(links)
    entities = list(dict.fromkeys(keys))
    names: dict[tuple[str, str], set[str]] = {e: set() for e in entities}
    answers: dict[tuple[str, str], set[str]] = {e: set() for e in entities}
    for link, key in zip(links, keys):
        names[key].add(normalize(link.subject))
        if link.parent is not None:
            names[key].add(normalize(links[link.parent].answer))
        answers[key].add(normalize(link.answer))
    q = normalize(question)
    forms = [{normalize(t), normalize(_PARENTHETICAL.sub(" ", t))} - {""} for t in titles]
    bodies = [normalize(t) for t in texts]
    score = np.zeros((len(entities), len(titles)))
    for a, entity in enumerate(entities):
        for b, title_forms in enumerate(forms):
            similarity = max((fuzz.token_set_ratio(n, f) / 100 for n in names[entity] for f in title_forms
                              if n), default=0.0)
            if names[entity] & title_forms:
                similarity = 1.0 + 0.01  # an exact (normalised) name beats any fuzzy one
            stated = any(mentions(bodies[b], ans) for ans in answers[entity] if ans)
            named = any(mentions(q, f) for f in title_forms)
            root = entity[0] == "root"
            score[a, b] = similarity + ANSWER_IN_PASSAGE * stated + ROOT_NAMED_IN_QUESTION * (named if root
                                                                                               else -named)
    rows, cols = linear_sum_assignment(score, maximize=True)
    chosen: dict[tuple[str, str], int] = {entities[a]: int(b) for a, b in zip(rows, cols)}
    for a, entity in enumerate(entities):  # more entities than titles: the best title, shared
        if entity not in chosen and titles:
            chosen[entity] = int(score[a].argmax())
    return [chosen.get(key) for key in keys]


def render(link: Link, subject: str) -> str:
    """A look-up's sub-question from its triple: ``What is the <relation> of <subject>?``."""
    return f"What is the {link.relation} of {subject}?"


def evidence_decomposition(question: str, answer: str, qtype: str, evidences: Sequence[tuple[str, str, str]],
                           titles: Sequence[str], title_ids: Mapping[str, str],
                           title_texts: Mapping[str, str]) -> tuple[SubQuestion, ...]:
    """The gold hops of one 2WikiMultiHopQA question.

    Args:
        question, answer, qtype: the question, its gold answer and its ``type``.
        evidences: its ``[subject, relation, object]`` triples, one per hop.
        titles: its supporting titles; ``title_ids`` / ``title_texts``: each title's passage id and text.
    Returns the look-up hops (:func:`chain_order`) and, for a comparison, the comparison hop last.
    """
    if not evidences:
        return ()
    links = link_triples(evidences, qtype)
    where = match_titles(links, question, titles, [title_texts[t] for t in titles])
    order = chain_order(links)
    position = {i: k for k, i in enumerate(order)}  # evidence index -> hop position
    hops = []
    for i in order:
        link, b = links[i], where[i]
        subject = link.subject if link.parent is None else f"#{position[link.parent] + 1}"
        gold = title_ids[titles[b]] if b is not None else None
        hops.append(SubQuestion(render(link, subject), link.answer, gold, subject=subject))
    if qtype in COMPARISON_TYPES:
        given = "; ".join(f"{h.subject} {links[i].relation} #{k + 1}" for k, (h, i) in enumerate(zip(hops, order)))
        hops.append(SubQuestion(f"{question.strip()} Given: {given}.", answer, None))
    return tuple(hops)


def chain_order(links: Sequence[Link]) -> list[int]:
    """The hops in reasoning order: each root look-up (evidence order) followed by the hops that continue it,
    depth first, so that consecutive hops of a chain are consecutive (bridge comparison: film 1, its director,
    film 2, its director) — what "consecutive gold hops" means to HugRAG's oracle gates."""
    children: dict[int | None, list[int]] = {}
    for i, link in enumerate(links):
        children.setdefault(link.parent, []).append(i)
    order: list[int] = []

    def visit(i: int) -> None:
        order.append(i)
        for j in children.get(i, []):
            visit(j)

    for root in children.get(None, []):
        visit(root)
    return order
