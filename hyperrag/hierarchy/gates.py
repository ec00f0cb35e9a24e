"""Causal gates between modules: embedding prefilter + top-down hierarchical pruning + LLM yes/no checks.

HugRAG's Algorithm 2, with a prefilter so the LLM work grows near-linearly with the number of modules M:

1. **Prefilter**: every module's candidates are its ``top_m`` most similar module summaries with cosine at
   least ``threshold`` (symmetrised) — at most ``M · top_m`` pairs instead of ``M²/2``.
2. **Top-down over levels** L, L-1, ..., 1; at each level ``l``:

   a. *intra-layer*: candidate pairs with both modules at level ``l`` are verified first;
   b. *inter-layer*: pairs of a level-``l`` module ``a`` with a lower module ``b``, excluding ``a``'s own
      descendants (already reachable through hierarchy edges) and the descendants of every module ``a`` is
      already gated to (reachable through that gate) — the pruning that keeps redundant gates out.

3. **Verification**: the ``causal_gate`` task (source = ``a``'s summary, target = ``b``'s) answers yes/no; a
   "yes" is a gate. ``max_calls`` caps the new verifications (the top levels, and within a stage the most
   similar pairs, go first); every decision is appended to ``gates.jsonl`` in the index directory (keyed by
   the pair, with a digest of both texts), so a rerun only verifies missing pairs.

``verifier="none"`` accepts every surviving candidate without an LLM (an unverified upper bound used by the
gate-effectiveness benchmark); it is never the default.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, settings
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.hierarchy.summaries import descendants
from hyperrag.llm.errors import stop_if_nothing_succeeded
from hyperrag.ops.knn import topk_cosine_neighbors
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)
CHECKPOINT = "gates.jsonl"


@settings
class GateSettings:
    """Attributes:
        enabled: build gates at all (HugRAG: with an LLM, or with ``verifier: none``).
        top_m: prefilter candidates per module (most similar summaries).
        threshold: prefilter minimum cosine between summaries.
        max_calls: at most this many new LLM verifications per build (``None`` = no cap).
        inter_layer: also verify inter-layer candidates (after the intra-layer ones of each level).
        text_words: each summary is cut to this many words in the prompt.
        verifier: ``llm`` (default) or ``none`` (accept all candidates — unverified, for ablations).
    """

    enabled: bool
    top_m: NonNegativeInt
    threshold: Cosine
    max_calls: NonNegativeInt | None
    inter_layer: bool
    text_words: PositiveInt
    verifier: Literal["llm", "none"]


@dataclass
class GateResult:
    """Attributes:
        pairs: LongTensor [2, G], gated module pairs (source, target), tree module ids.
        kinds: per gate, ``intra`` or ``inter``.
        stats: candidates per stage, pruned, LLM calls, gates found.
    """

    pairs: torch.Tensor
    kinds: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def prefilter_neighbors(embeddings: torch.Tensor, top_m: int, threshold: float) -> tuple[list[set[int]], dict]:
    """Symmetrised top-``m`` cosine neighbours of every module (rows L2-normalised)."""
    n = embeddings.shape[0]
    nbrs: list[set[int]] = [set() for _ in range(n)]
    sims: dict[tuple[int, int], float] = {}
    if n < 2 or top_m < 1:
        return nbrs, sims
    src, dst, sim = topk_cosine_neighbors(embeddings.float(), min(top_m, n - 1), threshold)
    for a, b, s in zip(src.tolist(), dst.tolist(), sim.tolist()):
        nbrs[a].add(b)
        nbrs[b].add(a)
        key = (min(a, b), max(a, b))
        sims[key] = max(sims.get(key, -1.0), float(s))
    return nbrs, sims


def _cut(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


class GateBuilder:
    """Runs Algorithm 2 over a module tree.

    Args:
        llm: an available :class:`hyperrag.llm.LLM` (required unless ``settings.verifier == "none"``).
        settings: :class:`GateSettings`.
        directory: where ``gates.jsonl`` lives; ``None`` = decisions not persisted.
        progress: tqdm bar per stage.
    """

    def __init__(self, llm: LanguageModel, settings: GateSettings, directory: str | Path | None = None,
                 progress: bool = True) -> None:
        self.settings = settings
        if self.settings.verifier == "llm" and not getattr(llm, "available", False):
            raise ValueError("causal gates with verifier=llm need an available LLM")
        self.llm = llm
        self.directory = Path(directory) if directory else None
        self.progress = progress
        self._by_digest: dict[str, dict] = {}
        self._changed: set[int] | None = None

    def build(self, tree: ModuleTree, texts: list[str], embeddings: torch.Tensor,
              changed: set[int] | None = None) -> GateResult:
        """Gates for ``tree`` given its module ``texts`` and their embeddings [M, D] (L2-normalised).

        ``changed`` (incremental updates): only candidate pairs with at least one module in it are verified; a
        pair of two other modules is taken from the checkpoint or skipped (``skipped_unchanged``).
        """
        s = self.settings
        num_m = tree.num_modules
        nbrs, sims = prefilter_neighbors(embeddings, s.top_m, s.threshold)
        below = descendants(tree)
        level = tree.level.tolist()
        stats: dict[str, Any] = {
            "modules": num_m, "pairs_all": num_m * (num_m - 1) // 2, "prefilter_pairs": len(sims),
            "candidates_intra": 0, "candidates_inter": 0, "pruned_hierarchy": 0, "verified": 0, "llm_calls": 0,
            "requests": 0, "cached": 0, "resumed": 0, "failed": 0, "skipped_budget": 0, "gates_intra": 0,
            "gates_inter": 0, "candidates_changed": 0, "skipped_unchanged": 0, "verifier": s.verifier,
            "settings": asdict(s)}
        gates: list[tuple[int, int, str]] = []
        connected: list[set[int]] = [set() for _ in range(num_m)]
        ckpt = JsonlCheckpoint(self.directory / CHECKPOINT) if self.directory else None
        done = ckpt.load() if ckpt else {}
        self._by_digest = ckpt.by_digest() if ckpt else {}
        self._changed = changed
        self._first_error: str | None = None
        budget = [s.max_calls]
        try:
            for lv in sorted(set(level), reverse=True):
                mods = [m for m in range(num_m) if level[m] == lv]
                intra = sorted({(min(a, b), max(a, b)) for a in mods for b in nbrs[a] if level[b] == lv},
                               key=lambda p: (-sims[p], p))
                stats["candidates_intra"] += len(intra)
                self._stage(f"L{lv} intra", intra, texts, done, ckpt, stats, budget, gates, connected, "intra")
                if not s.inter_layer:
                    continue
                inter = []
                for a in mods:
                    excluded = set(below[a])
                    for c in connected[a]:
                        excluded |= below[c]
                    for b in nbrs[a]:
                        if level[b] < lv:
                            if b in excluded or b in connected[a]:
                                stats["pruned_hierarchy"] += 1
                            else:
                                inter.append((a, b))
                inter.sort(key=lambda p: (-sims[(min(p), max(p))], p))
                stats["candidates_inter"] += len(inter)
                self._stage(f"L{lv} inter", inter, texts, done, ckpt, stats, budget, gates, connected, "inter")
        finally:
            if ckpt is not None:
                ckpt.close()
        # every verification asked for failed (dead endpoint, a model that cannot do the task): stop
        stop_if_nothing_succeeded("causal gates", failed=stats["failed"],
                                  succeeded=stats["verified"] - stats["failed"] + stats["resumed"],
                                  first_error=self._first_error, llm=self.llm, unit="module pairs")
        stats["gates_found"] = len(gates)
        pairs = torch.tensor([[a for a, _, _ in gates], [b for _, b, _ in gates]], dtype=torch.long).reshape(2, -1)
        log.info("causal gates: %s", {k: v for k, v in stats.items() if k != "settings"})
        return GateResult(pairs, [k for _, _, k in gates], stats)

    def _stage(self, name: str, pairs: list[tuple[int, int]], texts: list[str], done: dict[str, dict],
               ckpt: JsonlCheckpoint | None, stats: dict[str, Any], budget: list[int | None],
               gates: list[tuple[int, int, str]], connected: list[set[int]], kind: str) -> None:
        words = self.settings.text_words
        todo: list[tuple[int, int, str, dict[str, str]]] = []
        for a, b in pairs:
            inputs = {"source": _cut(texts[a], words), "target": _cut(texts[b], words)}
            key = f"{a}-{b}"
            dig = stable_digest(self.settings.verifier, str(getattr(self.llm, "model", None)), inputs,
                                length=16)
            rec = done.get(key)
            if rec is None or rec.get("digest") != dig:
                rec = self._by_digest.get(dig)  # module ids may shift after an incremental update
            involved = self._changed is None or a in self._changed or b in self._changed
            stats["candidates_changed"] += int(self._changed is not None and involved)
            if rec is not None and rec.get("digest") == dig:
                stats["resumed"] += 1
                if rec["gate"]:
                    self._add(a, b, kind, gates, connected, stats)
                continue
            if not involved:
                stats["skipped_unchanged"] += 1
                continue
            if self.settings.verifier == "none":
                self._add(a, b, kind, gates, connected, stats)
                continue
            if budget[0] is not None and budget[0] <= 0:
                stats["skipped_budget"] += 1
                continue
            if budget[0] is not None:
                budget[0] -= 1
            todo.append((a, b, dig, inputs))
        if not todo:
            return
        from hyperrag.llm.tasks.causal_gate import CausalGate

        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=f"causal gates {name}", unit="pair", leave=False)
        results: dict[int, Any] = {}

        def on_result(i: int, res: Any) -> None:
            a, b, dig, _ = todo[i]
            results[i] = res
            stats["verified"] += 1
            stats["llm_calls"] += int(not res.cached)
            stats["requests"] += res.requests
            stats["cached"] += int(res.cached)
            if not res.ok:
                stats["failed"] += 1  # not recorded: retried by the next build
                self._first_error = self._first_error or f"{res.error_kind}: {res.error}"
            elif ckpt is not None:
                ckpt.append({"key": f"{a}-{b}", "digest": dig, "gate": bool(res.value),
                             "reason": getattr(res.output, "reason", "")})
            if bar is not None:
                bar.update(1)

        try:
            self.llm.run(lambda s: s.complete_many(CausalGate(), [inp for *_, inp in todo], on_result=on_result))
        finally:
            if bar is not None:
                bar.close()
        for i, (a, b, _, _) in enumerate(todo):  # in candidate order, so the result is deterministic
            res = results.get(i)
            if res is not None and res.ok and res.value:
                self._add(a, b, kind, gates, connected, stats)

    @staticmethod
    def _add(a: int, b: int, kind: str, gates: list[tuple[int, int, str]], connected: list[set[int]],
             stats: dict[str, Any]) -> None:
        gates.append((a, b, kind))
        connected[a].add(b)
        connected[b].add(a)
        stats[f"gates_{kind}"] += 1
