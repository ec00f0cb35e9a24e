"""Causal gates between modules: HugRAG's Algorithm 2 (top-down hierarchical pruning) with a topological-distance
criterion, and LLM verdicts that look both ways.

For levels L, L-1, ..., 1 (``H_l`` = the tree's modules of level l), and every module ``u`` of ``H_l``:

a. *intra-layer*: every other module ``v`` of ``H_l`` that is **topologically distant** from ``u`` — at least
   ``min_distance`` hops apart in the level-l module graph (two modules are adjacent when an entity edge joins
   them; disconnected modules are infinitely far) — is a candidate. Gates are meant to join modules that the graph
   keeps apart; adjacent modules are already joined by structural edges. Each unordered pair is asked once.
b. *inter-layer* (look-ahead): the modules ``w`` of ``H_{l-1}``, except ``u``'s own descendants (reached through
   hierarchy edges) and the descendants of every module ``u`` is already gated to (the transitivity of the parent
   gate covers them), and except those whose level-l module is within ``min_distance`` of ``u``.

**Verification** (``causal_gate``, Fig 9): the two summaries are shown as A and B and the model decides whether one
could plausibly influence the other *in either direction*; a "yes" comes with its direction (``A->B``, ``B->A``,
``both``), recorded with the gate. Every decision is appended to ``gates.jsonl`` in the index directory (keyed by
the pair, with a digest of the task, model and both texts), so a rerun verifies only missing pairs; a failed call
(an outage, or the oracle's ``no_gold``) is no gate, counted in ``failed`` and retried by the next build.

**Logical relatedness** (the paper's candidates are "topologically distant but potentially logically related"; it
gives no test for the second part, and without one Algorithm 2 asks ~10^6 LLM checks on MuSiQue's modules):
``prefilter`` keeps a distant pair only when its two summaries are similar — with ``prefilter_scope: candidates``
(default) each module keeps, at every stage, the ``top_m`` most similar of *its own candidates* (same-level distant
modules; for the look-ahead, the unpruned modules one level down) with cosine ≥ ``threshold`` (an intra-layer pair
stays when either end keeps it), so the checks grow as ``top_m`` × modules; ``all_modules`` is the earlier rule
(symmetrised top-``m`` neighbours among all modules, most of which then fail the distance or hierarchy test).
``top_m`` and ``threshold`` are chosen on musique_dev by the recall of gold-hop module pairs
(:mod:`hyperrag.eval.gate_recall`, ``benchmarks/bench_hugrag_gates.py --candidates``).

**Budget**: ``max_calls`` caps new verifications. ``budget_split: levels`` (default) gives every level a share of
the cap in proportion to its modules (a level's unused share passes to the next level down), so a cut does not
starve the fine levels; ``top_down`` spends the cap from the top level down (the earlier rule). Within a stage the
most similar (without the prefilter: the largest) pairs go first.
``verifier="none"`` accepts every candidate without an LLM (an unverified upper bound for the gate-effectiveness
benchmark); ``verifier="oracle"`` accepts a candidate iff it is in a given set of accepted pairs — the retriever
passes the gold-hop module pairs of the dataset's questions (:mod:`hyperrag.eval.gate_recall`): a labelled,
transductive upper bound of a perfect verifier on the same candidates. Oracle verdicts cost nothing, are never
written to ``gates.jsonl`` (so they never mix with an LLM's verdicts) and spend ``max_calls`` as LLM calls would.
:meth:`GateBuilder.count` runs the algorithm with a constant verdict to count what it would ask.

**Look-ahead set, per level** (Algorithm 2, lines 5, 18-19): the modules whose descendants a module ``u`` of
``H_l`` skips in its inter-layer stage are its ``ConnectedPeers`` — the modules of ``H_l`` it was gated to by the
intra-layer stage of level ``l`` — not gates found at other levels.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, settings
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.hierarchy.summaries import descendants
from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.ops.knn_graph import KnnSettings, cosine_knn_graph
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.llm.tasks.base import PromptForm
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)
CHECKPOINT = "gates.jsonl"


@settings
class GateSettings:
    """Attributes:
        enabled: build gates at all (HugRAG: with an LLM, or with ``verifier: none``).
        min_distance: candidate modules are at least this many hops apart in their level's module graph (1 = every
            pair; 2 = not adjacent).
        prefilter: the logical-relatedness test: keep only pairs whose summaries are among the ``top_m`` most similar
            (cos ≥ ``threshold``).
        prefilter_scope: ``candidates`` (each module's ``top_m`` most similar among its own candidates, per stage)
            or ``all_modules`` (symmetrised top-``m`` neighbours among all modules: the earlier rule).
        top_m: prefilter: candidates kept per module (per stage with ``candidates``).
        threshold: prefilter: minimum cosine between summaries.
        max_calls: at most this many new LLM verifications per build (``None`` = no cap).
        budget_split: ``levels`` (each level's share of ``max_calls`` in proportion to its modules, unused shares
            passed down) or ``top_down`` (the cap spent from the top level down).
        inter_layer: also verify inter-layer candidates (after the intra-layer ones of each level).
        text_words: each summary is cut to this many words in the prompt.
        verifier: ``llm`` (default), ``none`` (accept all candidates — unverified, for ablations) or ``oracle``
            (accept the pairs in the builder's ``accepted`` set: the gold-hop pairs, an upper bound).
        oracle_gold: with ``verifier: oracle``, what a question's gold pairs are made of: ``hops`` (consecutive gold
            hops of its decomposition), ``passages`` (every two of its gold passages, unordered: for data with gold
            evidence but no hops, e.g. HolisQA's gold sentences) or ``auto`` (hops where a question has a
            decomposition, its gold passages where it has none).
        knn: how the prefilter's neighbours are searched (``${graph.knn}``: exact or approximate by size).
    """

    enabled: bool
    min_distance: PositiveInt
    prefilter: bool
    prefilter_scope: Literal["candidates", "all_modules"]
    top_m: NonNegativeInt
    threshold: Cosine
    max_calls: NonNegativeInt | None
    budget_split: Literal["levels", "top_down"]
    inter_layer: bool
    text_words: PositiveInt
    verifier: Literal["llm", "none", "oracle"]
    oracle_gold: Literal["auto", "hops", "passages"]
    knn: KnnSettings


@dataclass
class GateResult:
    """Attributes:
        pairs: LongTensor [2, G], gated module pairs as asked (A, B), tree module ids.
        kinds: per gate, ``intra`` or ``inter``.
        directions: per gate, ``A->B``, ``B->A`` or ``both`` (``both`` when unverified).
        stats: per level and in total: candidates, pruned, LLM calls, gates found.
    """

    pairs: torch.Tensor
    kinds: list[str] = field(default_factory=list)
    directions: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


def prefilter_neighbors(embeddings: torch.Tensor, top_m: int, threshold: float,
                        knn: KnnSettings | None = None) -> tuple[list[set[int]], dict]:
    """Symmetrised top-``m`` cosine neighbours of every module (rows L2-normalised; ``knn``: how they are searched,
    ``None``: exactly)."""
    n = embeddings.shape[0]
    nbrs: list[set[int]] = [set() for _ in range(n)]
    sims: dict[tuple[int, int], float] = {}
    if n < 2 or top_m < 1:
        return nbrs, sims
    src, dst, sim = cosine_knn_graph(embeddings.float(), min(top_m, n - 1), threshold, knn)
    for a, b, s in zip(src.tolist(), dst.tolist(), sim.tolist()):
        nbrs[a].add(b)
        nbrs[b].add(a)
        key = (min(a, b), max(a, b))
        sims[key] = max(sims.get(key, -1.0), float(s))
    return nbrs, sims


def level_cover(tree: ModuleTree, level: int) -> torch.Tensor:
    """LongTensor [E]: every entity's module at ``level`` (its first ancestor, from its leaf up, whose level is at
    least ``level``; a module folded from copies spans the levels below its own)."""
    cover = tree.leaf.clone()
    parent, lv = tree.parent, tree.level
    while True:
        low = (lv[cover] < level) & (parent[cover] >= 0)
        if not bool(low.any()):
            return cover
        cover[low] = parent[cover[low]]


def near_modules(tree: ModuleTree, entity_edges: torch.Tensor, level: int, hops: int) -> dict[int, set[int]]:
    """Per module of the level-``level`` partition, the modules within ``hops`` hops in the module graph (module
    adjacency = some entity edge between them). ``entity_edges``: LongTensor [2, M]."""
    if hops < 1 or entity_edges.numel() == 0:
        return {}
    cover = level_cover(tree, level)
    a, b = cover[entity_edges[0]], cover[entity_edges[1]]
    cross = a != b
    adj: dict[int, set[int]] = {}
    for x, y in zip(a[cross].tolist(), b[cross].tolist()):
        adj.setdefault(x, set()).add(y)
        adj.setdefault(y, set()).add(x)
    if hops == 1:
        return adj
    out: dict[int, set[int]] = {}
    for start in adj:
        seen, queue = {start: 0}, deque([start])
        while queue:
            v = queue.popleft()
            if seen[v] >= hops:
                continue
            for u in adj.get(v, ()):
                if u not in seen:
                    seen[u] = seen[v] + 1
                    queue.append(u)
        out[start] = set(seen) - {start}
    return out


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
        accepted: ``verifier="oracle"``: the pairs to accept — intra-layer ``(min id, max id)``, inter-layer
            ``(upper module, lower module)`` (:func:`hyperrag.eval.gate_recall.normalise`).
        prompts: the ``causal_gate`` prompt form, ``paper`` (Fig 9 as printed), ``paper_json`` or ``extended`` (HugRAG's
            ``prompts``).
    """

    def __init__(self, llm: LanguageModel | None, settings: GateSettings, directory: str | Path | None = None,
                 progress: bool = True, accepted: set[tuple[int, int]] | None = None,
                 prompts: PromptForm = "paper") -> None:
        self.settings = settings
        self.prompts = prompts
        if self.settings.verifier == "llm" and not getattr(llm, "available", False):
            raise ValueError("causal gates with verifier=llm need an available LLM")
        if self.settings.verifier == "oracle" and accepted is None:
            raise ValueError("causal gates with verifier=oracle need the accepted (gold-hop) pairs")
        self.accepted = accepted or set()
        self.llm = llm
        self.directory = Path(directory) if directory else None
        self.progress = progress
        self._by_digest: dict[str, dict] = {}
        self._changed: set[int] | None = None
        self._constant: bool | None = None  # count(): every verdict is this, nothing is asked
        self._asked: list[tuple[int, int, str]] | None = None  # count(): the pairs it would ask about

    def count(self, tree: ModuleTree, texts: list[str], embeddings: torch.Tensor,
              entity_edges: torch.Tensor | None = None, verdict: bool = False) -> dict[str, Any]:
        """What Algorithm 2 would ask at this graph's size if every verdict were ``verdict`` (no LLM, nothing
        persisted): ``False`` gives the most verifications (no gate prunes anything), ``True`` the fewest. The
        stats' ``asked`` lists the pairs it would ask about, ``(a, b, "intra" | "inter")``, in asking order."""
        directory, self.directory, self._constant = self.directory, None, verdict
        self._asked = []
        try:
            stats = self.build(tree, texts, embeddings, entity_edges=entity_edges).stats
            stats["asked"] = self._asked
            return stats
        finally:
            self.directory, self._constant, self._asked = directory, None, None

    def build(self, tree: ModuleTree, texts: list[str], embeddings: torch.Tensor,
              changed: set[int] | None = None, entity_edges: torch.Tensor | None = None) -> GateResult:
        """Gates for ``tree`` given its module ``texts`` and their embeddings [M, D] (L2-normalised).

        Args:
            entity_edges: LongTensor [2, M], the entity graph the modules partition (the topological-distance
                criterion; ``None`` = no distance information, every pair is distant).
            changed: (incremental updates) only candidate pairs with at least one module in it are verified; a
                pair of two other modules is taken from the checkpoint or skipped (``skipped_unchanged``).
        """
        s = self.settings
        num_m = tree.num_modules
        global_knn = s.prefilter and s.prefilter_scope == "all_modules"
        nbrs, sims = prefilter_neighbors(embeddings, s.top_m, s.threshold, s.knn) if global_knn else ([], {})
        emb = embeddings.float()
        below = descendants(tree)
        level = tree.level.tolist()
        sizes = tree.sizes.tolist()
        verifier = "constant" if self._constant is not None else s.verifier
        stats: dict[str, Any] = {
            "modules": num_m, "pairs_all": num_m * (num_m - 1) // 2, "prefilter_pairs": len(sims),
            "candidates_intra": 0, "candidates_inter": 0, "pruned_near": 0, "pruned_hierarchy": 0,
            "pruned_prefilter": 0, "verified": 0, "llm_calls": 0, "requests": 0, "cached": 0, "resumed": 0,
            "failed": 0, "skipped_budget": 0, "gates_intra": 0, "gates_inter": 0, "candidates_changed": 0,
            "skipped_unchanged": 0, "verifier": verifier, "levels": {}, "settings": asdict(s)}
        if verifier == "oracle":
            stats["oracle_pairs"] = len(self.accepted)
        gates: list[tuple[int, int, str, str]] = []
        # oracle verdicts are free and depend on the question set: never persisted beside an LLM's
        persist = self.directory is not None and verifier != "oracle"
        ckpt = JsonlCheckpoint(self.directory / CHECKPOINT) if persist and self.directory else None
        done = ckpt.load() if ckpt else {}
        self._by_digest = ckpt.by_digest() if ckpt else {}
        self._changed = changed
        self._first_error: str | None = None
        budget = [s.max_calls]
        levels_desc = sorted(set(level), reverse=True)
        per_level = Counter(level)
        share = {lv: per_level[lv] / max(num_m, 1) for lv in levels_desc}
        carried = 0  # calls a level left unused, passed to the next level down (budget_split: levels)

        def order(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
            if s.prefilter:
                return sorted(pairs, key=lambda p: (-sims.get((min(p), max(p)), -1.0), p))
            return sorted(pairs, key=lambda p: (-(sizes[p[0]] + sizes[p[1]]), p))

        def related(pairs: list[tuple[int, int]], both_ends: bool, row: dict[str, Any]) -> list[tuple[int, int]]:
            """The relatedness test, scope ``candidates``: each module's ``top_m`` most similar candidates with cos
            ≥ ``threshold`` (both ends choose for intra-layer pairs; the upper module for inter-layer ones)."""
            if not (s.prefilter and s.prefilter_scope == "candidates") or not pairs:
                return pairs
            ab = torch.tensor(pairs, dtype=torch.long)  # [P, 2]
            # in slices: two [P, D] gathers of a stage's ~10^5-10^6 pairs would take gigabytes
            cos = torch.cat([(emb[c[:, 0]] * emb[c[:, 1]]).sum(dim=1) for c in ab.split(1 << 16)])
            ok = (cos >= s.threshold).nonzero().squeeze(1)
            ends = [ab[ok, 0], ab[ok, 1]] if both_ends else [ab[ok, 0]]
            end = torch.cat(ends)
            pair = ok.repeat(len(ends))
            sim = cos[ok].repeat(len(ends))
            order = torch.argsort(-sim, stable=True)  # most similar first, then grouped by end (stable)
            order = order[torch.argsort(end[order], stable=True)]
            end, pair = end[order], pair[order]
            start = torch.ones_like(end, dtype=torch.bool)
            start[1:] = end[1:] != end[:-1]
            first = torch.cummax(torch.where(start, torch.arange(end.numel()), 0), dim=0).values
            rank = torch.arange(end.numel()) - first  # position within its end's list
            keep = torch.unique(pair[rank < s.top_m]).tolist()
            for i in keep:
                a, b = pairs[i]
                sims[(min(a, b), max(a, b))] = float(cos[i])
            row["pruned_prefilter"] += len(pairs) - len(keep)
            return [pairs[i] for i in keep]

        try:
            for lv in levels_desc:
                if s.budget_split == "levels" and s.max_calls is not None:
                    quota = round(s.max_calls * share[lv]) + carried
                    budget[0] = quota
                mods = [m for m in range(num_m) if level[m] == lv]
                # ConnectedPeers (Algorithm 2, l. 5): per level — only this level's intra-layer gates prune below
                connected: list[set[int]] = [set() for _ in range(num_m)]
                near = (near_modules(tree, entity_edges, lv, s.min_distance - 1)
                        if entity_edges is not None and s.min_distance > 1 else {})
                row = {"modules": len(mods), "pairs_all": len(mods) * (len(mods) - 1) // 2,
                       "candidates_intra": 0, "candidates_inter": 0, "pruned_near": 0, "pruned_hierarchy": 0,
                       "pruned_prefilter": 0, "llm_calls": 0, "failed": 0, "gates": 0}
                stats["levels"][str(lv)] = row
                before = {k: stats[k] for k in ("llm_calls", "failed", "gates_intra", "gates_inter")}
                intra = []
                for i, a in enumerate(mods):
                    for b in mods[i + 1:]:
                        if b in near.get(a, ()):
                            row["pruned_near"] += 1
                        elif global_knn and b not in nbrs[a]:
                            row["pruned_prefilter"] += 1
                        else:
                            intra.append((a, b))
                intra = related(intra, True, row)
                row["candidates_intra"] = len(intra)
                self._stage(f"L{lv} intra", order(intra), texts, done, ckpt, stats, budget, gates, connected,
                            "intra")
                if s.inter_layer:
                    lower = [m for m in range(num_m) if level[m] == lv - 1]
                    cover = level_cover(tree, lv) if lower else None
                    host = {b: int(cover[tree.entities(b)[0]]) for b in lower} if cover is not None else {}
                    inter = []
                    for a in mods:
                        excluded = set(below[a])
                        for c in connected[a]:
                            excluded |= below[c]
                        for b in lower:
                            if b in excluded or b in connected[a]:
                                row["pruned_hierarchy"] += 1
                                continue
                            if host[b] in near.get(a, ()):  # b's module at level lv is close to a
                                row["pruned_near"] += 1
                            elif global_knn and b not in nbrs[a]:
                                row["pruned_prefilter"] += 1
                            else:
                                inter.append((a, b))
                    inter = related(inter, False, row)
                    row["candidates_inter"] = len(inter)
                    self._stage(f"L{lv} inter", order(inter), texts, done, ckpt, stats, budget, gates, connected,
                                "inter")
                for k in ("candidates_intra", "candidates_inter", "pruned_near", "pruned_hierarchy",
                          "pruned_prefilter"):
                    stats[k] += row[k]
                if s.budget_split == "levels" and budget[0] is not None:
                    carried = budget[0]
                row["llm_calls"] = stats["llm_calls"] - before["llm_calls"]
                row["failed"] = stats["failed"] - before["failed"]
                row["gates"] = (stats["gates_intra"] + stats["gates_inter"] - before["gates_intra"]
                                - before["gates_inter"])
        finally:
            if ckpt is not None:
                ckpt.close()
        # every verification asked for failed (dead endpoint, a model that cannot do the task): stop
        stop_if_nothing_succeeded("causal gates", failed=stats["failed"],
                                  succeeded=stats["verified"] - stats["failed"] + stats["resumed"],
                                  first_error=self._first_error, llm=self.llm, unit="module pairs")
        stats["gates_found"] = len(gates)
        pairs = torch.tensor([[g[0] for g in gates], [g[1] for g in gates]], dtype=torch.long).reshape(2, -1)
        stats["directions"] = {d: sum(g[3] == d for g in gates) for d in ("A->B", "B->A", "both")}
        log.info("causal gates: %s", {k: v for k, v in stats.items() if k not in ("settings", "levels")})
        return GateResult(pairs, [g[2] for g in gates], [g[3] for g in gates], stats)

    def _stage(self, name: str, pairs: list[tuple[int, int]], texts: list[str], done: dict[str, dict],
               ckpt: JsonlCheckpoint | None, stats: dict[str, Any], budget: list[int | None],
               gates: list[tuple[int, int, str, str]], connected: list[set[int]], kind: str) -> None:
        from hyperrag.llm.tasks.causal_gate import CausalGate

        task = CausalGate(self.prompts)
        words = self.settings.text_words
        if self._constant is not None:  # count(): the verdict is fixed, nothing is asked or stored
            for a, b in pairs:
                stats["verified"] += 1
                if self._asked is not None:
                    self._asked.append((a, b, kind))
                if self._constant:
                    self._add(a, b, kind, "both", gates, connected, stats)
            return
        todo: list[tuple[int, int, str, dict[str, str]]] = []
        for a, b in pairs:
            inputs = {"a_text": _cut(texts[a], words), "b_text": _cut(texts[b], words)}
            key = f"{a}-{b}"
            dig = stable_digest(self.settings.verifier, task.key, str(getattr(self.llm, "model", None)), inputs,
                                length=16)
            rec = done.get(key)
            if rec is None or rec.get("digest") != dig:
                rec = self._by_digest.get(dig)  # module ids may shift after an incremental update
            involved = self._changed is None or a in self._changed or b in self._changed
            stats["candidates_changed"] += int(self._changed is not None and involved)
            if rec is not None and rec.get("digest") == dig:
                stats["resumed"] += 1
                if rec["gate"]:
                    self._add(a, b, kind, rec.get("direction", "both"), gates, connected, stats)
                continue
            if not involved:
                stats["skipped_unchanged"] += 1
                continue
            if self.settings.verifier == "none":
                self._add(a, b, kind, "both", gates, connected, stats)
                continue
            if budget[0] is not None and budget[0] <= 0:
                stats["skipped_budget"] += 1
                continue
            if budget[0] is not None:
                budget[0] -= 1
            if self.settings.verifier == "oracle":  # a perfect verifier (gold hops), direction unknown: both
                stats["verified"] += 1
                pair = (min(a, b), max(a, b)) if kind == "intra" else (a, b)
                if pair in self.accepted:
                    self._add(a, b, kind, "both", gates, connected, stats)
                continue
            todo.append((a, b, dig, inputs))
        if not todo:
            return
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
                ckpt.append({"key": f"{a}-{b}", "digest": dig, "gate": bool(res.value["gate"]),
                             "direction": res.value["direction"]})
            if bar is not None:
                bar.update(1)

        assert self.llm is not None
        try:
            self.llm.run(lambda s: s.complete_many(task, [inp for *_, inp in todo], on_result=on_result))
        finally:
            if bar is not None:
                bar.close()
        for i, (a, b, _, _) in enumerate(todo):  # in candidate order, so the result is deterministic
            res = results.get(i)
            if res is not None and res.ok and res.value["gate"]:
                self._add(a, b, kind, res.value["direction"], gates, connected, stats)

    @staticmethod
    def _add(a: int, b: int, kind: str, direction: str, gates: list[tuple[int, int, str, str]],
             connected: list[set[int]], stats: dict[str, Any]) -> None:
        gates.append((a, b, kind, direction))
        connected[a].add(b)
        connected[b].add(a)
        stats[f"gates_{kind}"] += 1
