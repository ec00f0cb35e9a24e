"""An expansion subgraph as a table with short IDs, the form the LLM's causal path selection reads.

Row ``i`` of a walk gets ID ``C{i+1}`` (the same IDs :class:`~hyperrag.llm.tasks.causal_path_selection.
CausalPathSelection` shows), and its text says what the node is and how the walk reached it::

    C1 | entity | seed | Lake Ohrid: (location) Lake on the border of ... ; lake ohrid borders albania
    C4 | module L2 | hop 1 via gate from C3 | Balkan lakes. Summary ...

so the model can follow paths (``from C3``) without seeing graph ids. Node texts are given by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hyperrag.expansion.best_first import EdgeKind, Expansion

_VIA = {int(k): k.name.lower() for k in EdgeKind}


@dataclass
class Table:
    """Attributes:
        nodes: graph node id per row.
        ids: short ID per row (``C1``...).
        rows: the row texts shown to the LLM (ID excluded: the task adds it).
    """

    nodes: list[int]
    ids: list[str]
    rows: list[str]

    def candidates(self) -> list[tuple[int, str]]:
        """``(node, text)`` pairs for the ``causal_path_selection`` task (caller keys = node ids)."""
        return list(zip(self.nodes, self.rows))

    def render(self) -> str:
        return "\n".join(f"{i} | {r}" for i, r in zip(self.ids, self.rows))


def linearize(walk: Expansion, kinds: Sequence[str], texts: Sequence[str], max_rows: int | None = None,
              max_words: int = 60) -> Table:
    """Table of the first ``max_rows`` nodes of ``walk`` (in the order they were taken).

    Args:
        walk: one query's expansion.
        kinds: per row, what the node is (``entity``, ``module L2``...).
        texts: per row, the node's text (entity with description/facts, module summary).
        max_rows: keep at most this many rows (the best ones: a walk is in gain order).
        max_words: cut each text to this many words.
    """
    n = len(walk.nodes) if max_rows is None else min(max_rows, len(walk.nodes))
    position = {v: i for i, v in enumerate(walk.nodes[:n])}
    ids = [f"C{i + 1}" for i in range(n)]
    rows = []
    for i in range(n):
        if walk.via[i] < 0:
            how = "seed"
        else:
            src = position.get(walk.parent[i])
            how = f"hop {walk.hop[i]} via {_VIA.get(walk.via[i], '?')}" + (f" from {ids[src]}" if src is not None else "")
        words = texts[i].split()
        text = " ".join(words[:max_words]) + (" ..." if len(words) > max_words else "")
        rows.append(f"{kinds[i]} | {how} | {text}")
    return Table(list(walk.nodes[:n]), ids, rows)
