"""Module summaries by the LLM, bottom-up over the module tree, cached and resumable.

A level-1 module is summarised from its best-connected entities (``name: description`` when the GraphRAG
extraction described them, else the name) and the facts inside it; a higher module from its children's
summaries (largest children first) plus its top entity names — so summaries are written level by level,
children before parents. Every input is cut to ``input_tokens`` (the hierarchy's stop criterion keeps the
raw text of a leaf module within one context window; the cut only bounds higher levels).

Caching and resumption: each finished summary is appended to ``summaries.jsonl`` in the hierarchy's index
directory (one fsync-ed line per module, with a digest of its prompt inputs); a rerun reuses every record whose
digest still matches (looked up by module id, then by digest alone, so renumbered modules of an incremental
update keep their summaries) and asks only for the missing ones, and identical requests are answered by the LLM
response cache anyway.

Without an LLM (``llm=none``), after a failed call, or beyond ``max_llm_modules`` (a cap for slow local models:
the largest modules get LLM summaries first), a module's text is the documented stand-in of
:class:`hyperrag.hierarchy.modules.EntityListTexts`: its top entity names (with descriptions when known) and a
few of its facts, truncated.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.dedup.entities import EntityInfo
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTree, entity_degree
from hyperrag.hierarchy.tokens import approx_tokens
from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)
CHECKPOINT = "summaries.jsonl"


@settings
class SummarySettings:
    """Attributes:
        input_tokens: prompt input budget per module (entities, relations and child summaries are cut to it).
        max_words: summary length asked for.
        top_entities: entities shown per module (by degree).
        top_relations: facts shown per level-1 module.
        max_children: child summaries shown per higher module (largest children first).
        max_llm_modules: LLM summaries for at most this many modules (the largest); ``None`` = all.
    """

    input_tokens: PositiveInt
    max_words: PositiveInt
    top_entities: PositiveInt
    top_relations: NonNegativeInt
    max_children: NonNegativeInt
    max_llm_modules: NonNegativeInt | None


def _fit(items: list[str], budget: int) -> list[str]:
    out, used = [], 0
    for it in items:
        cost = approx_tokens(it) + 2
        if out and used + cost > budget:
            break
        out.append(it)
        used += cost
    return out


def render_summary(value: Any) -> str:
    """A ``module_summary`` output as one text: ``title. summary Keywords: k1, k2``."""
    title = str(getattr(value, "title", "")).strip().rstrip(".")
    summary = str(getattr(value, "summary", "")).strip()
    keywords = [str(k) for k in getattr(value, "keywords", [])]
    text = f"{title}. {summary}" if title else summary
    return f"{text} Keywords: {', '.join(keywords)}" if keywords else text


class ModuleSummaries:
    """A :data:`~hyperrag.hierarchy.modules.ModuleTextSource`: LLM summaries bottom-up, stand-in otherwise.

    Args:
        llm: an :class:`hyperrag.llm.LLM` (``None`` / ``NoLLM`` → stand-in texts only).
        settings: :class:`SummarySettings`.
        directory: where ``summaries.jsonl`` lives (the hierarchy index directory); ``None`` = not persisted.
        info: entity types and descriptions (aligned with the graph's entities).
        stand_in: the non-LLM text source (modules without an LLM summary).
        progress: tqdm bar per level.
    """

    def __init__(self, llm: LanguageModel, settings: SummarySettings, stand_in: EntityListTexts,
                 directory: str | Path | None = None, info: EntityInfo | None = None,
                 progress: bool = True) -> None:
        self.llm = llm
        self.settings = settings
        self.directory = Path(directory) if directory else None
        self.info = info
        self.stand_in = stand_in
        self.progress = progress
        self.stats: dict[str, Any] = {}

    @property
    def uses_llm(self) -> bool:
        return bool(getattr(self.llm, "available", False))

    def inputs(self, tree: ModuleTree, graph: KnowledgeGraph, m: int, texts: list[str],
               children: list[list[int]], ranked: list[list[int]], facts_in: list[list[int]]) -> dict[str, Any]:
        """The ``module_summary`` task inputs of module ``m`` (children's ``texts`` must be final)."""
        s = self.settings
        names = graph.entity_names
        info = self.info
        ents = []
        for e in ranked[m][: s.top_entities]:
            extra = info.text(e, 1) if info is not None else ""
            ents.append(f"{names[e]}: {extra}" if extra else names[e])
        inputs: dict[str, Any] = {"max_words": s.max_words}
        kids = sorted(children[m], key=lambda c: -int(tree.sizes[c]))[: s.max_children]
        if kids:
            child = _fit([texts[c] for c in kids], s.input_tokens // 2)
            inputs["child_summaries"] = child
            used = sum(approx_tokens(c) + 2 for c in child)
            inputs["entities"] = _fit(ents, max(s.input_tokens - used, 64))
        else:
            inputs["entities"] = _fit(ents, s.input_tokens // 2)
            used = sum(approx_tokens(e) + 2 for e in inputs["entities"])
            rels = [" ".join(graph.facts[f]) for f in facts_in[m][: s.top_relations]]
            inputs["relations"] = _fit(rels, max(s.input_tokens - used, 32))
        return inputs

    def __call__(self, tree: ModuleTree, graph: KnowledgeGraph) -> list[str]:
        texts = self.stand_in(tree, graph)
        num_m = tree.num_modules
        self._first_error: str | None = None
        self.stats = {"modules": num_m, "llm": self.uses_llm, "llm_summaries": 0, "resumed": 0, "requests": 0,
                      "cached": 0, "failed": 0, "stand_in": num_m, "settings": asdict(self.settings)}
        if not self.uses_llm or num_m == 0:
            return texts
        from hyperrag.llm.tasks.module_summary import ModuleSummary

        task = ModuleSummary()
        children: list[list[int]] = [[] for _ in range(num_m)]
        for c, p in enumerate(tree.parent.tolist()):
            if p >= 0:
                children[p].append(c)
        degree = entity_degree(graph)
        ranked = [sorted(tree.entities(m).tolist(), key=lambda e: (-float(degree[e]), e)) for m in range(num_m)]
        leaf_of = tree.leaf.tolist()
        facts_in: list[list[int]] = [[] for _ in range(num_m)]
        for f, (a, b) in enumerate(graph.fact_entities.tolist()):
            if leaf_of[a] == leaf_of[b]:
                facts_in[leaf_of[a]].append(f)
        chosen = set(range(num_m))
        if self.settings.max_llm_modules is not None:
            order = sorted(range(num_m), key=lambda m: (-int(tree.sizes[m]), m))
            chosen = set(order[: self.settings.max_llm_modules])
        ckpt = JsonlCheckpoint(self.directory / CHECKPOINT) if self.directory else None
        done = ckpt.load() if ckpt else {}
        by_digest = ckpt.by_digest() if ckpt else {}  # module ids may shift after an incremental update
        model = str(getattr(self.llm, "model", None))
        try:
            for lv in sorted(set(tree.level.tolist())):
                todo: list[tuple[int, dict[str, Any], str]] = []
                for m in (tree.level == lv).nonzero().squeeze(1).tolist():
                    if m not in chosen:
                        continue
                    inputs = self.inputs(tree, graph, m, texts, children, ranked, facts_in)
                    key = stable_digest(model, task.key, inputs, length=16)
                    rec = done.get(str(m))
                    if rec is None or rec.get("digest") != key:
                        rec = by_digest.get(key)
                    if rec is not None and rec.get("digest") == key:
                        texts[m] = rec["text"]
                        self.stats["resumed"] += 1
                        continue
                    todo.append((m, inputs, key))
                if todo:
                    self._run_level(task, lv, todo, texts, ckpt)
        finally:
            if ckpt is not None:
                ckpt.close()
        # every summary asked for failed (dead endpoint, a model that cannot do the task): stop, not stand-ins
        stop_if_nothing_succeeded("module summaries", failed=self.stats["failed"],
                                  succeeded=self.stats["llm_summaries"] + self.stats["resumed"],
                                  first_error=self._first_error, llm=self.llm, unit="modules")
        self.stats["stand_in"] = num_m - self.stats["llm_summaries"] - self.stats["resumed"]
        log.info("module summaries: %s", {k: v for k, v in self.stats.items() if k != "settings"})
        return texts

    def _run_level(self, task: Any, level: int, todo: list[tuple[int, Mapping[str, Any], str]], texts: list[str],
                   ckpt: JsonlCheckpoint | None) -> None:
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), desc=f"module summaries L{level}", unit="module", leave=False)

        def on_result(i: int, res: Any) -> None:
            m, _, key = todo[i]
            self.stats["requests"] += res.requests
            self.stats["cached"] += int(res.cached)
            if res.ok:
                texts[m] = render_summary(res.output)
                self.stats["llm_summaries"] += 1
                if ckpt is not None:
                    ckpt.append({"key": str(m), "digest": key, "level": level, "text": texts[m]})
            else:
                self.stats["failed"] += 1
                self._first_error = self._first_error or f"{res.error_kind}: {res.error}"
            if bar is not None:
                bar.update(1)

        try:
            self.llm.run(lambda s: s.complete_many(task, [inp for _, inp, _ in todo], on_result=on_result))
        finally:
            if bar is not None:
                bar.close()


def module_children(tree: ModuleTree) -> list[list[int]]:
    """Per module, its child modules."""
    children: list[list[int]] = [[] for _ in range(tree.num_modules)]
    for c, p in enumerate(tree.parent.tolist()):
        if p >= 0:
            children[p].append(c)
    return children


def descendants(tree: ModuleTree) -> list[set[int]]:
    """Per module, all modules below it (children, grandchildren, ...)."""
    children = module_children(tree)
    out: list[set[int]] = [set() for _ in range(tree.num_modules)]
    for m in torch.argsort(tree.level, stable=True).tolist():  # lower levels first
        for c in children[m]:
            out[m].add(c)
            out[m] |= out[c]
    return out
