"""An expansion subgraph as a table with short IDs for nodes *and* edges (HugRAG, Appendix B.3).

Rows come in walk order: each reached node, then the relation edges joining it to nodes listed before it, so a
path reads top to bottom. IDs say what a row is (``N`` entity, ``M`` module, ``E`` relation edge; the IDs the
``causal_path_selection`` task shows) and rows refer to each other by them::

    N1 | entity | seed | Lake Ohrid: lake on the border of Albania and North Macedonia ...
    M1 | module L2 | hop 1 via gate from N1 | Balkan lakes. Summary ...
    N2 | entity | hop 1 via structural from N1 | Albania: ...
    E1 | relation N1 – N2 | Lake Ohrid borders Albania

Every row carries its provenance (the passages its node or edge was extracted from), given to the task as
``passage_ids`` (never shown) and used to rank passages from what the model keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hyperrag.expansion.best_first import EdgeKind, Expansion
from hyperrag.llm.tasks.causal_path_selection import display_ids

_VIA = {int(k): k.name.lower() for k in EdgeKind}
#: (node, nodes listed so far) -> [(fact id, other node, fact text)]: relation edges to earlier rows
EdgesOf = Callable[[int, set[int]], list[tuple[int, int, str]]]


@dataclass
class Table:
    """Attributes:
        keys: per row ``("node", graph node id)`` or ``("edge", fact id)``.
        kinds: per row ``node`` (entity), ``module`` or ``edge``.
        ids: short ID per row (``N1``, ``E1``, ``M1``...).
        rows: the row texts shown to the LLM (ID excluded: the task adds it).
        passages: per row, the passage positions it comes from (its provenance).
    """

    keys: list[tuple[str, int]]
    kinds: list[str]
    ids: list[str]
    rows: list[str]
    passages: list[list[int]]

    @property
    def nodes(self) -> list[int]:
        """Graph node ids of the node rows, in row order."""
        return [k for t, k in self.keys if t == "node"]

    def __len__(self) -> int:
        return len(self.keys)

    def head(self, rows: int | None) -> Table:
        """The first ``rows`` rows (``None``: all of them): the table :func:`linearize` gives with
        ``max_rows=rows`` (rows come in walk order and IDs count per kind, so a cap keeps a prefix)."""
        n = len(self) if rows is None else rows
        return Table(self.keys[:n], self.kinds[:n], self.ids[:n], self.rows[:n], [list(p) for p in self.passages[:n]])

    def candidates(self, passage_ids: Sequence[str]) -> list[dict]:
        """Mappings for the ``causal_path_selection`` task: ``id`` = row index, ``text``, ``kind`` and
        ``passage_ids`` (passage ids of its provenance)."""
        return [{"id": i, "text": r, "kind": k, "passage_ids": [passage_ids[p] for p in ps]}
                for i, (r, k, ps) in enumerate(zip(self.rows, self.kinds, self.passages))]

    def render(self) -> str:
        return "\n".join(f"{i} | {r}" for i, r in zip(self.ids, self.rows))


def _cut(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words]) + (" ..." if len(words) > max_words else "")


def linearize(walk: Expansion, kinds: Sequence[str], texts: Sequence[str], provenance: Sequence[list[int]],
              edges_of: EdgesOf | None = None, edge_provenance: Callable[[int], list[int]] | None = None,
              max_rows: int | None = None, max_words: int = 60) -> Table:
    """Table of a walk's nodes (in the order they were taken) and the relation edges between them.

    Args:
        walk: one query's expansion.
        kinds: per walk node, ``node`` (entity) or ``module``; a module's level goes into its row text.
        texts: per walk node, its text (entity with description/facts, module summary).
        provenance: per walk node, the passage positions it comes from.
        edges_of: relation edges from a node to the nodes listed before it (``None``: nodes only).
        edge_provenance: fact id → passage positions.
        max_rows: keep at most this many rows (nodes and edges; the walk is in gain order).
        max_words: cut each text to this many words.
    """
    cap = max_rows if max_rows is not None else float("inf")
    plan: list[tuple[str, int, int]] = []  # (kind, key, walk index or other node)
    listed: set[int] = set()
    edge_rows: dict[int, tuple[int, int, str]] = {}
    for i, v in enumerate(walk.nodes):
        if len(plan) >= cap:
            break
        plan.append(("module" if kinds[i].startswith("module") else "node", v, i))
        if edges_of is not None:
            for fact, other, text in edges_of(v, listed):
                if len(plan) >= cap:
                    break
                if fact not in edge_rows:
                    edge_rows[fact] = (other, v, text)
                    plan.append(("edge", fact, -1))
        listed.add(v)
    ids = display_ids([k for k, _, _ in plan])
    node_id = {key: ids[r] for r, (k, key, _) in enumerate(plan) if k != "edge"}
    keys, rows, passages = [], [], []
    for r, (kind, key, i) in enumerate(plan):
        if kind == "edge":
            a, b, text = edge_rows[key]
            keys.append(("edge", key))
            rows.append(f"relation {node_id[a]} – {node_id[b]} | {_cut(text, max_words)}")
            passages.append(list(edge_provenance(key)) if edge_provenance is not None else [])
            continue
        if walk.via[i] < 0:
            how = "seed"
        else:
            src = node_id.get(walk.parent[i])
            how = f"hop {walk.hop[i]} via {_VIA.get(walk.via[i], '?')}" + (f" from {src}" if src else "")
        label = "entity" if kind == "node" else kinds[i]
        keys.append(("node", key))
        rows.append(f"{label} | {how} | {_cut(texts[i], max_words)}")
        passages.append(list(provenance[i]))
    return Table(keys, [k for k, _, _ in plan], ids, rows, passages)
