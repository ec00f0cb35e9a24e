"""Causal path identification (HugRAG, its Figs 5 and 6): rerank a linearised subgraph into the causal items
that lead from the question to its answer, name the spurious ones, and write a draft answer.

Candidates are the nodes and edges of a retrieved subgraph, each shown with a short ID whose letter says what it
is (``N`` an entity node, ``M`` a module, ``E`` a relation edge; ``C`` a candidate of no stated kind), so the model
can follow paths at a low token cost and its reply can be checked. Two variants:

* ``spurious`` (the paper's main setting, Fig 5): the causal items most important first, the spurious items
  (only correlated, coincidental, topical hubs) least important first, and a draft answer;
* ``standard`` (the ablation, Fig 6): the causal items and the draft answer only.

Prompt forms (``CausalPathSelection(variant, prompts=...)``, HugRAG's ``prompts`` setting):

* ``paper`` (default): Fig 5 / Fig 6's message exactly as printed — one user message, the query and the context
  table (the paper's ``short ID | content`` lines) as plain text, no system message, no data blocks, no constrained
  decoding — and the reply read as the figure asks for it: a JSON object with the paper's keys (``precise``,
  ``ct_precise``, ``p_answer``), parsed leniently (code fences and surrounding prose tolerated).
* ``paper_json``: the figure's text with the query and the table inside ``<data>`` blocks and our system message
  (the structured-output rule and the data rule; the JSON schema ours too: the keys, ID lists of at most 64 short
  IDs, a bounded draft), compiled into a grammar where the backend can.
* ``extended``: our restatement — renamed keys (``causal_ids``, ``spurious_ids``, ``draft_answer``), ``<item>``
  blocks, the spurious items described (co-occurring, coincidental, hubs), "an ID belongs to at most one list",
  and the draft says "unknown" rather than guess (Fig 6 asks that of its draft too; Fig 5 does not).

Either way the reply is checked the same: IDs not shown are dropped and counted, a causal ID wins a conflict
with a spurious one, the draft loses any shown ID and is cut to ``max_answer_words``. A candidate
mapping may carry ``passage_ids`` (the passages its node or edge was extracted from): provenance for analysis
and for the gold-informed oracle; it is never shown, so the prompt is the same with or without it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import (
    DATA_RULE,
    JSON_RULE,
    Item,
    block,
    key_map,
    make_items,
    plain,
    render_items,
    require,
    sanitize,
)
from hyperrag.llm.tasks.base import PROMPT_FORMS, IdList, PromptForm, Task, Text, filter_ids

SCHEMA_VERSION = "2"
VARIANTS = ("standard", "spurious")
#: display-ID letter of each candidate kind (``kind`` of a candidate mapping)
KIND_PREFIX = {"node": "N", "module": "M", "edge": "E"}
UNKNOWN = "unknown"
DEFAULT_ANSWER_WORDS = 20


#: Fig 5 of the HugRAG paper (spurious-aware: the main setting), verbatim
FIG5 = """---Role---
You are a careful causality analyst acting as a reranker for retrieval.

---Goal---
Given a query and a list of context items (short ID + content), select the most important items consisting the causal graph and output them in 'precise'.
Also output the least important items as the spurious information in 'ct_precise'.
You MUST:
- Use only the provided items.
- Rank 'precise' from most important to least important.
- Rank 'ct_precise' from least important to more important.
- Output JSON only. Do not add markdown.
- Use the short IDs exactly as shown.
- Do NOT include any IDs in 'p_answer'.

---Inputs---
Query:
{query}
Context Items (short ID | content):
{context_table}

---Output Format (JSON)---
{{
  "precise": ["C1", "N2", "E3"],
  "ct_precise": ["T7", "N9"],
  "p_answer": "concise draft answer"
}}

---Constraints---
- 'precise' length: at most {max_precise_items} items.
- 'ct_precise' length: at most {max_ct_precise_items} items.
- 'p_answer' length: at most {max_answer_words} words."""

#: Fig 6 of the HugRAG paper (standard selection: the ablation), verbatim
FIG6 = """---Role---
You are a careful causality analyst acting as a reranker for retrieval.

---Goal---
Given a query and a list of context items (short ID + content), select the most important items that best support answering the query as a causal graph.
You MUST:
- Use only the provided items.
- Rank the `precise` list from most important to least important.
- Output JSON only. Do not add markdown.
- Use the short IDs exactly as shown.
- Do NOT include any IDs in `p_answer`.
- If evidence is insufficient, say so in `p_answer` (e.g., "Unknown").

---Inputs---
Query:
{query}

Context Items (short ID | content):
{context_table}

---Output Format (JSON)---
{{
  "precise": ["C1", "N2", "E3"],
  "p_answer": "concise draft answer"
}}

---Constraints---
- `precise` length: at most {max_precise_items} items.
- `p_answer` length: at most {max_answer_words} words."""

#: the output keys per prompt form: (causal items, spurious items, draft answer)
FIELDS: dict[str, tuple[str, str, str]] = {"paper": ("precise", "ct_precise", "p_answer"),
                                           "paper_json": ("precise", "ct_precise", "p_answer"),
                                           "extended": ("causal_ids", "spurious_ids", "draft_answer")}


class PaperSelection(BaseModel):
    """Fig 6's reply."""

    precise: IdList
    p_answer: Text = ""


class PaperSpurious(BaseModel):
    """Fig 5's reply."""

    precise: IdList
    ct_precise: IdList = []
    p_answer: Text = ""


class CausalSelection(BaseModel):
    causal_ids: IdList
    draft_answer: Text = ""


class CausalAndSpurious(BaseModel):
    causal_ids: IdList
    spurious_ids: IdList = []
    draft_answer: Text = ""


def candidate_items(candidates: Sequence[Any]) -> list[Item]:
    """Display items: one counter per kind letter (``N1, N2, E1, M1``...), ``C`` for candidates of no kind."""
    kinds = [str(c.get("kind", "")) if isinstance(c, Mapping) else "" for c in candidates]
    if not any(k in KIND_PREFIX for k in kinds):
        return make_items(list(candidates), "C")
    base = make_items(list(candidates), "C")  # keys and texts as every task reads them
    counters: dict[str, int] = {}
    out = []
    for item, kind in zip(base, kinds):
        letter = KIND_PREFIX.get(kind, "C")
        counters[letter] = counters.get(letter, 0) + 1
        out.append(Item(f"{letter}{counters[letter]}", item.key, item.text))
    return out


def display_ids(kinds: Sequence[str]) -> list[str]:
    """The display IDs :func:`candidate_items` gives candidates of these kinds (for tables and logs)."""
    return [it.id for it in candidate_items([{"id": i, "text": "", "kind": k} for i, k in enumerate(kinds)])]


class CausalPathSelection(Task):
    """Inputs: ``query``, ``candidates`` (strings, (key, text) pairs or mappings with ``id``, ``text`` and
    optionally ``kind`` and ``passage_ids``); optional ``max_selected`` (causal items), ``max_spurious``,
    ``max_answer_words``.

    ``value``: ``{"kept": [caller keys], "spurious": [caller keys], "draft": str}`` (``spurious`` empty for the
    standard variant).

    Args:
        variant: ``spurious`` (Fig 5) or ``standard`` (Fig 6).
        prompts: ``paper`` (the figure as printed), ``paper_json`` (the figure in our JSON frame) or ``extended``
            (ours); see the module docstring.
    """

    name = "causal_path_selection"
    SCHEMA_VERSION = SCHEMA_VERSION
    max_tokens = 384

    def __init__(self, variant: str = "spurious", prompts: PromptForm = "paper") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"causal_path_selection variant {variant!r}; expected one of {VARIANTS}")
        if prompts not in PROMPT_FORMS:
            raise ValueError(f"causal_path_selection prompts {prompts!r}; expected one of {PROMPT_FORMS}")
        self._variant = variant
        self.prompts = prompts

    @property
    def variant(self) -> str:
        form = {"paper": "/paper_text", "paper_json": "/paper"}.get(self.prompts, "")
        return f"{self._variant}{form}"

    @property
    def spurious(self) -> bool:
        """The spurious-aware selection (Fig 5), not the standard one (Fig 6)."""
        return self._variant == "spurious"

    @property
    def fields(self) -> tuple[str, str, str]:
        """This form's output keys: (causal items, spurious items, draft answer)."""
        return FIELDS[self.prompts]

    def output_model(self) -> type[BaseModel]:
        if self.prompts != "extended":
            return PaperSpurious if self.spurious else PaperSelection
        return CausalAndSpurious if self.spurious else CausalSelection

    def system(self, inputs: Mapping[str, Any]) -> str:
        if self.prompts == "paper_json":
            return f"{JSON_RULE}\n{DATA_RULE}"
        return super().system(inputs)

    @property
    def ROLE(self) -> str:  # type: ignore[override]
        role = ("You are a careful analyst of cause and effect who reranks retrieved evidence. You get a question "
                "and the items of a retrieved graph, each with a short ID: entity nodes (N), modules that group "
                "entities (M) and relation edges between entities (E). Choose the items that together form the "
                "causal chain leading from the question to its answer and return their IDs in causal_ids, the most "
                "important first.")
        if self._variant == "spurious":
            role += (" Also return in spurious_ids the items that are the least useful: they only co-occur with "
                     "the question's topic, are coincidental or popular hubs without a mechanism; list them from "
                     "the least important upwards. An ID belongs to at most one of the two lists.")
        return role + (" Use only the items listed and write their IDs exactly as shown. In draft_answer give a "
                       "short draft of the answer that mentions no IDs; if the items do not hold the answer, "
                       f'write "{UNKNOWN}" rather than guess.')

    def items(self, inputs: Mapping[str, Any]) -> list[Item]:
        return candidate_items(list(inputs["candidates"]))

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "candidates", task=self.name)
        if self.prompts in ("paper", "paper_json"):
            return self.paper_user(inputs)
        limits = []
        if inputs.get("max_selected"):
            limits.append(f"causal_ids: at most {int(inputs['max_selected'])} IDs")
        if self._variant == "spurious" and inputs.get("max_spurious"):
            limits.append(f"spurious_ids: at most {int(inputs['max_spurious'])} IDs")
        limits.append(f"draft_answer: at most {self.answer_words(inputs)} words")
        fmt = ('{"causal_ids": ["N2", "E1", ...], "draft_answer": "..."}' if self._variant == "standard"
               else '{"causal_ids": ["N2", "E1", ...], "spurious_ids": ["M3", ...], "draft_answer": "..."}')
        return (f"Question:\n{block('data', inputs['query'])}\nItems (ID and content):\n"
                f"{render_items(self.items(inputs), 'item')}\nLimits: {'; '.join(limits)}.\nReply with {fmt}.")

    def paper_user(self, inputs: Mapping[str, Any]) -> str:
        """Fig 5 / 6 filled in: the table as ``ID | content`` lines (one line per item), plain (``paper``) or in a
        ``<data>`` block (``paper_json``, the query too); a limit the caller did not set is the number of items
        shown."""
        items = self.items(inputs)
        table = "\n".join(f"{it.id} | {' '.join(sanitize(it.text).split())}" for it in items)
        wrap = plain if self.prompts == "paper" else (lambda text: block("data", text))
        return (FIG5 if self.spurious else FIG6).format(
            query=wrap(inputs["query"]), context_table=wrap(table),
            max_precise_items=int(inputs.get("max_selected") or len(items)),
            max_ct_precise_items=int(inputs.get("max_spurious") or len(items)),
            max_answer_words=self.answer_words(inputs))

    @staticmethod
    def answer_words(inputs: Mapping[str, Any]) -> int:
        return int(inputs.get("max_answer_words") or DEFAULT_ANSWER_WORDS)

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        causal_key, spurious_key, draft_key = self.fields
        cap = int(inputs["max_selected"]) if inputs.get("max_selected") else None
        kept, dropped = filter_ids(getattr(output, causal_key), shown)
        draft = self.clean_draft(getattr(output, draft_key), shown, self.answer_words(inputs))
        model = self.output_model()
        if not self.spurious:
            return model(**{causal_key: kept[:cap], draft_key: draft}), dropped
        spurious, d2 = filter_ids(getattr(output, spurious_key), shown)
        spurious = [i for i in spurious if i not in kept]  # a causal ID wins a conflict
        s_cap = int(inputs["max_spurious"]) if inputs.get("max_spurious") else None
        return model(**{causal_key: kept[:cap], spurious_key: spurious[:s_cap], draft_key: draft}), dropped + d2

    @staticmethod
    def clean_draft(draft: str, shown: Sequence[str], words: int) -> str:
        """The draft without any shown ID (the prompt forbids them) and cut to ``words`` words."""
        if shown:
            pattern = re.compile(r"\b(" + "|".join(re.escape(s) for s in shown) + r")\b")
            draft = pattern.sub("", draft)
        parts = draft.replace("()", " ").replace("[]", " ").split()
        return " ".join(parts[:words])

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        causal_key, spurious_key, draft_key = self.fields
        return {"kept": [keys[i] for i in getattr(output, causal_key)],
                "spurious": [keys[i] for i in getattr(output, spurious_key, [])],
                "draft": getattr(output, draft_key)}
