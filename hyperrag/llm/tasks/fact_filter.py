"""Recognition memory (HippoRAG 2): keep only the retrieved facts that are relevant to the query.

HippoRAG 2 retrieves candidate triples by embedding similarity, then asks an LLM which of them
actually bear on the question; the survivors seed Personalized PageRank. Facts are shown with short
IDs (``F1``...) and the reply lists the relevant IDs, which are checked against those shown.

The prompt gives the model the instructions and the ten worked examples of the filter prompt released with
HippoRAG 2 (its DSPy-optimised ``filter_default_prompt``), in our own words and with replies in our ID format,
as chat turns before the real input — the released prompt's structure. Like the released prompt, it asks for
*up to* ``asked`` facts (4) while the caller keeps up to ``max_facts`` (HippoRAG 2's code keeps 5).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import Item, block, key_map, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids


class RelevantFacts(BaseModel):
    relevant_ids: IdList


def fact_items(facts: Sequence[Any]) -> list[Item]:
    """Facts as items ``F1..Fn``: a triple (tuple/list of 3 strings) is shown as a JSON list;
    ``(key, fact)`` pairs keep the caller's key; otherwise the key is the position."""
    items = []
    for i, f in enumerate(facts):
        key = i
        if isinstance(f, tuple) and len(f) == 2 and not isinstance(f[1], str) and f[1] is not None:
            key, f = f
        text = json.dumps(list(f), ensure_ascii=False) if isinstance(f, (list, tuple)) else str(f)
        items.append(Item(f"F{i + 1}", key, text))
    return items


#: The released filter prompt's ten examples: question, candidate triples, positions kept (0-based).
EXAMPLES: list[tuple[str, list[list[str]], list[int]]] = [
    ("Are Imperial River (Florida) and Amaradia (Dolj) both located in the same country?",
     [["imperial river", "is located in", "florida"], ["imperial river", "is a river in", "united states"],
      ["imperial river", "may refer to", "south america"], ["amaradia", "flows through", "ro ia de amaradia"],
      ["imperial river", "may refer to", "united states"]], [0, 1, 3]),
    ("When is the director of film The Ancestor 's birthday?",
     [["jean jacques annaud", "born on", "1 october 1943"], ["tsui hark", "born on", "15 february 1950"],
      ["pablo trapero", "born on", "4 october 1971"], ["the ancestor", "directed by", "guido brignone"],
      ["benh zeitlin", "born on", "october 14  1982"]], [3]),
    ("In what geographic region is the country where Teafuone is located?",
     [["teafuaniua", "is on the", "east"], ["motuloa", "lies between", "teafuaniua"],
      ["motuloa", "lies between", "teafuanonu"], ["teafuone", "is", "islet"],
      ["teafuone", "located in", "nukufetau"]], [3, 4]),
    ("When did the director of film S.O.B. (Film) die?",
     [["allan dwan", "died on", "28 december 1981"], ["s o b", "written and directed by", "blake edwards"],
      ["robert aldrich", "died on", "december 5  1983"], ["robert siodmak", "died on", "10 march 1973"],
      ["bernardo bertolucci", "died on", "26 november 2018"]], [1]),
    ("Do both films: Gloria (1980 Film) and A New Life (Film) have the directors from the same country?",
     [["sebasti n lelio watt", "received acclaim for directing", "gloria"],
      ["gloria", "is", "1980 american thriller crime drama film"], ["a brand new life", "is directed by", "ounie lecomte"],
      ["gloria", "written and directed by", "john cassavetes"], ["a new life", "directed by", "alan alda"]], [1, 3, 4]),
    ("What is the date of death of the director of film The Old Guard (1960 Film)?",
     [["the old guard", "is", "1960 french comedy film"], ["gilles grangier", "directed", "the old guard"],
      ["the old guard", "directed by", "gilles grangier"], ["the old fritz", "directed by", "gerhard lamprecht"],
      ["oswald albert mitchell", "directed", "old mother riley series of films"]], [0, 1, 2]),
    ("When is the composer of film Aulad (1968 Film) 's birthday?",
     [["aulad", "has music composed by", "chitragupta shrivastava"], ["aadmi sadak ka", "has music by", "ravi"],
      ["ravi shankar sharma", "composed music for", "hindi films"], ["gulzar", "was born on", "18 august 1934"],
      ["aulad", "is a", "1968 hindi language drama film"]], [0, 4]),
    ("How many households were in the city where Angelical Tears located?",
     [["dow city", "had", "219 households"], ["tucson", "had", "229 762 households"],
      ["atlantic city", "has", "15 504 households"], ["angelical tears", "located in", "oklahoma city"],
      ["atlantic city", "had", "15 848 households"]], [3]),
    ("Did the movies In The Pope'S Eye and Virgin Mountain, originate from the same country?",
     [["virgin mountain", "released in", "icelandic cinemas"], ["virgin mountain", "directed by", "dagur k ri"],
      ["virgin mountain", "icelandic title is", "f si"], ["virgin mountain", "won", "2015 nordic council film prize"],
      ["virgin mountain", "is a", "2015 icelandic drama film"]], [0, 1, 2, 3, 4]),
    ("Which film has the director who died earlier, The Virtuous Model or Bulldog Drummond'S Peril?",
     [["the virtuous model", "is", "1919 american silent drama film"],
      ["bulldog drummond s peril", "directed by", "james p  hogan"],
      ["the virtuous model", "directed by", "albert capellani"], ["bulldog drummond s revenge", "directed by", "louis king"],
      ["bulldog drummond s peril", "is", "american film"]], [0, 1, 2, 4]),
]


class FactFilter(Task):
    """Inputs: ``query`` and ``facts`` (triples, strings, or (key, triple) pairs).

    ``value``: caller keys (positions by default) of the relevant facts, most relevant first,
    at most ``max_facts``.

    Args:
        max_facts: relevant facts kept at most (``None``: all the model returns).
        asked: how many facts the instructions ask for at most (``None``: no number given).
    """

    name = "fact_filter"
    SCHEMA_VERSION = "2"
    Output = RelevantFacts
    max_tokens = 160
    ROLE = (
        "You are one stage of a question-answering system whose answers researchers and decision makers rely "
        "on. You receive a question and candidate facts, each a [subject, relation, object] triple with an ID. "
        "Answering may take several reasoning steps that chain facts together. Pick the facts that are clearly "
        "connected to the question and would help reason towards a correct answer; pick none when none is. "
        "Only ever return IDs of the candidates you were shown: never invent or rewrite a fact. The selection "
        "matters, because everything downstream is built on it."
    )

    def __init__(self, max_facts: int | None = 5, asked: int | None = 4) -> None:
        self.max_facts = max_facts
        self.asked = asked

    @property
    def variant(self) -> str:
        parts = [f"max{self.max_facts}" if self.max_facts else "", f"ask{self.asked}" if self.asked else ""]
        return "-".join(p for p in parts if p)

    def _user(self, query: str, facts: Sequence[Any]) -> str:
        cap = f" Return at most {self.asked} IDs." if self.asked else ""
        return (f"Question:\n{block('data', query)}\nFacts:\n{render_items(fact_items(facts), 'fact')}\n"
                f'Reply with {{"relevant_ids": ["F..", ...]}}, most relevant first, or an empty list.{cap}')

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "facts", task=self.name)
        return self._user(inputs["query"], inputs["facts"])

    def messages(self, inputs: Mapping[str, Any]) -> list[dict[str, str]]:
        """System prompt, the ten worked examples as user / assistant turns, then the real input."""
        turns = [{"role": "system", "content": self.system(inputs)}]
        for question, facts, kept in EXAMPLES:
            turns.append({"role": "user", "content": self._user(question, [tuple(f) for f in facts])})
            turns.append({"role": "assistant", "content": json.dumps({"relevant_ids": [f"F{i + 1}" for i in kept]})})
        turns.append({"role": "user", "content": self.user(inputs)})
        return turns

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.relevant_ids, [it.id for it in fact_items(inputs["facts"])])  # type: ignore[attr-defined]
        return RelevantFacts(relevant_ids=kept[: self.max_facts] if self.max_facts else kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[Any]:
        keys = key_map(fact_items(inputs["facts"]))
        return [keys[i] for i in output.relevant_ids]  # type: ignore[attr-defined]
