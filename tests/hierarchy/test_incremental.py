"""Local hierarchy / summary / gate updates after insert and delete (hyperrag.hierarchy.incremental)."""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import replace

import torch

from hyperrag.config import method_settings
from hyperrag.data import read_openie, sample_dataset
from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus
from hyperrag.graph.build import build_knowledge_graph
from hyperrag.graph.incremental import delete_passages, insert_passages
from hyperrag.graph.provenance import build_provenance
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.gates import GateBuilder
from hyperrag.hierarchy.hierarchy import build_hierarchy
from hyperrag.hierarchy.incremental import (
    carry_checkpoints,
    changed_modules,
    match_modules,
    module_keys,
    recomputed_modules,
    update_gates,
    update_hierarchy,
    update_hierarchy_index,
)
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTree
from hyperrag.hierarchy.store import entity_graph, entity_texts, load_or_build_hierarchy
from hyperrag.hierarchy.summaries import ModuleSummaries
from hyperrag.hierarchy.tokens import count_tokens
from tests.hierarchy.fake_llm import fake_llm, gate_pair, paper_figure, prompt_of
from tests.hierarchy.graphs import planted_partition
from tests.reliability.doubles import HashEncoder

HUGRAG = method_settings("hugrag")
STAND_IN = EntityListTexts(HUGRAG.module_text)
SETTINGS = replace(HUGRAG.hierarchy, backend="cpu", context_window=10, min_module_size=4, max_levels=3)


def test_update_keeps_untouched_modules_planted():
    # 16 blocks of 6 entities in 4 groups: top level = groups, level 1 = blocks
    ei, w, _ = planted_partition([6] * 16, 0.9, 0.003, seed=0, groups=[4] * 4, p_group=0.2)
    names = [f"e{i}" for i in range(96)]
    tokens = torch.ones(96, dtype=torch.long)
    old = build_hierarchy(ei, w, 96, tokens, SETTINGS)
    assert old.num_levels >= 2
    # insert: 4 new entities tied to entities 0..3 (block 0); touched = new ones + their neighbours
    new_names = names + [f"n{i}" for i in range(4)]
    extra = torch.tensor([[0, 1, 2, 3, 96, 97, 98], [96, 97, 98, 99, 97, 98, 99]])
    ei2, w2 = torch.cat([ei, extra], 1), torch.cat([w, torch.ones(7)])
    touched = torch.tensor([0, 1, 2, 3, 96, 97, 98, 99])
    upd = update_hierarchy(old, names, new_names, ei2, w2, torch.ones(100, dtype=torch.long), touched, SETTINGS)
    new = upd.hierarchy
    new.validate()
    assert new.num_entities == 100 and upd.stats["leiden_calls"] >= 1
    tree_old, tree_new = ModuleTree.from_hierarchy(old), ModuleTree.from_hierarchy(new)
    match = match_modules(tree_old, names, tree_new, new_names)
    keys_new = module_keys(tree_new, new_names)
    touched_names = {new_names[i] for i in touched.tolist()}
    # every old module without a touched entity is still there, unchanged
    for key in module_keys(tree_old, names):
        if not touched_names & set(key):
            assert key in keys_new
    # every recomputed module holds a touched entity or lies in a module that does (local re-partition)
    recomputed = (match < 0).nonzero().squeeze(1).tolist()
    assert 0 < len(recomputed) < tree_new.num_modules // 2
    # the new entities landed with block 0
    leaf = new.entity_membership(new.num_levels)
    assert int(leaf[96]) == int(leaf[0])
    # modularity of the updated top level within a few % of a full rebuild
    full = build_hierarchy(ei2, w2, 100, torch.ones(100, dtype=torch.long), SETTINGS)
    assert new.modularity[-1] >= 0.95 * full.modularity[-1]

    # delete block 15 (entities 90..95): its modules disappear, the others stay
    keep = [i for i in range(100) if not 90 <= i < 96]
    remap = torch.full((100,), -1, dtype=torch.long)
    remap[torch.tensor(keep)] = torch.arange(len(keep))
    alive = (remap[ei2] >= 0).all(0)
    ei3 = remap[ei2[:, alive]]
    names3 = [new_names[i] for i in keep]
    upd3 = update_hierarchy(new, new_names, names3, ei3, w2[alive], torch.ones(len(keep), dtype=torch.long),
                            torch.empty(0, dtype=torch.long), SETTINGS)
    upd3.hierarchy.validate()
    gone = {f"e{i}" for i in range(90, 96)}
    keys3 = set(module_keys(ModuleTree.from_hierarchy(upd3.hierarchy), names3))
    for key in module_keys(tree_new, new_names):
        if gone & set(key):
            assert key not in keys3  # modules of removed entities disappear
        else:
            assert key in keys3  # all others kept (no surviving entity was touched)
    assert upd3.stats["leiden_calls"] <= 2


def _sample_graphs(head: int = 9):
    ds = sample_dataset()
    openie = read_openie(ds.openie_path, ds.corpus)
    enc = HashEncoder()
    base = OpenIERecords(openie.entities[:head], openie.triples[:head], 0, "base")
    graph, emb = build_knowledge_graph(Corpus(ds.corpus.passages[:head]), base, enc)
    prov = build_provenance(graph, base)
    ins = insert_passages(graph, emb, prov, ds.corpus.passages[head:], openie.triples[head:], enc)
    return graph, ins, enc


def _hier(graph, settings):
    ei, w = entity_graph(graph, settings.edge_types)
    tokens = torch.tensor(count_tokens(entity_texts(graph, settings.entity_text), settings.token_counter))
    return ei, w, tokens


def _responder():
    def respond(body):
        prompt = prompt_of(body)
        if gate_pair(body) is not None:
            yes = zlib.crc32(repr(gate_pair(body)).encode()) % 2
            if paper_figure(body) == "9":  # Fig 9 as printed: the bare token
                return "yes" if yes else "no"
            return json.dumps({"answer": "yes" if yes else "no", "direction": "both" if yes else "none"})
        first = re.search(r'id="E1">\n([^\n:]+)', prompt).group(1)
        return json.dumps({"title": f"About {first}", "summary": f"Summary of {first}.", "keywords": [first]})
    return respond


def _embed(texts):
    enc = HashEncoder()
    return torch.nn.functional.normalize(enc.encode(texts).float(), dim=1)


def test_insert_delete_summaries_and_gates_local(tmp_path):
    settings = replace(HUGRAG.hierarchy, backend="cpu", context_window=60, min_module_size=3, max_levels=3)
    graph, ins, _ = _sample_graphs()
    old = build_hierarchy(*_hier(graph, settings)[:2], graph.num_entities, _hier(graph, settings)[2], settings)
    new_graph = ins.graph
    ei, w, tokens = _hier(new_graph, settings)
    upd = update_hierarchy(old, graph.entity_names, new_graph.entity_names, ei, w, tokens, ins.touched_nodes, settings)
    upd.hierarchy.validate()
    tree_old, tree_new = ModuleTree.from_hierarchy(old), ModuleTree.from_hierarchy(upd.hierarchy)
    match = match_modules(tree_old, graph.entity_names, tree_new, new_graph.entity_names)
    kept = int((match >= 0).sum())
    assert kept > 0 and kept < tree_new.num_modules
    gate_settings = replace(HUGRAG.gates, top_m=3, threshold=-1.0)
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    with fake_llm(_responder(), tmp_path) as (llm, server):
        src = ModuleSummaries(llm, HUGRAG.summaries, STAND_IN, old_dir, progress=False)
        old_texts = src(tree_old, graph)
        assert server.stats["requests"] == tree_old.num_modules
        old_gates = GateBuilder(llm, gate_settings, old_dir, progress=False).build(tree_old, old_texts,
                                                                                   _embed(old_texts))
    assert carry_checkpoints(old_dir, new_dir) == ["summaries.jsonl", "gates.jsonl"]
    before = set(JsonlCheckpoint(new_dir / "summaries.jsonl").by_digest())
    with fake_llm(_responder(), tmp_path / "fresh-cache") as (llm, server):  # fresh LLM cache: counts are real
        src = ModuleSummaries(llm, HUGRAG.summaries, STAND_IN, new_dir, progress=False)
        new_texts = src(tree_new, new_graph)
        asked = server.stats["requests"]
        records = JsonlCheckpoint(new_dir / "summaries.jsonl").by_digest()
        requested = {int(r["key"]) for d, r in records.items() if d not in before}
        # summaries are requested only for recomputed modules and their ancestors (a recomputed module whose
        # prompt inputs are identical to an old module's reuses that summary: the checkpoint is content-addressed)
        recomputed = recomputed_modules(tree_new, match, upd.touched)
        ancestors = set()
        for m in recomputed:
            p = int(tree_new.parent[m])
            while p >= 0:
                ancestors.add(p)
                p = int(tree_new.parent[p])
        assert requested and requested <= recomputed | ancestors
        assert asked == len(requested) < tree_new.num_modules
        assert src.stats["resumed"] == tree_new.num_modules - asked
        changed = changed_modules(match, old_texts, new_texts)
        n0 = server.stats["requests"]
        res = update_gates(GateBuilder(llm, gate_settings, new_dir, progress=False), tree_new, new_texts,
                           _embed(new_texts), changed, old_gates, match)
        gate_requests = [b for b in server.requests[n0:]]
        assert len(gate_requests) == res.stats["llm_calls"] > 0 and res.stats["resumed"] > 0
        changed_texts = {new_texts[m] for m in changed}
        for body in gate_requests:  # every verified pair involves a changed module
            p = prompt_of(body)
            assert any(t in p for t in changed_texts)
        unchanged_old = {int(match[m]) for m in range(tree_new.num_modules) if m not in changed and match[m] >= 0}
        new_of_old = {int(match[m]): m for m in range(tree_new.num_modules) if match[m] >= 0}
        got = {tuple(p) for p in res.pairs.T.tolist()}
        for a, b in old_gates.pairs.T.tolist():  # gates between unchanged modules are kept
            if a in unchanged_old and b in unchanged_old:
                assert (new_of_old[a], new_of_old[b]) in got
    # delete two of the inserted passages: the modules of their entities disappear
    gone = new_graph.passage_ids[-2:]
    dele = delete_passages(new_graph, ins.embeddings, ins.provenance, gone)
    ei3, w3, tok3 = _hier(dele.graph, settings)
    upd3 = update_hierarchy(upd.hierarchy, new_graph.entity_names, dele.graph.entity_names, ei3, w3, tok3,
                            dele.touched_nodes, settings)
    upd3.hierarchy.validate()
    keys3 = set(module_keys(ModuleTree.from_hierarchy(upd3.hierarchy), dele.graph.entity_names))
    removed = set(dele.removed_entities)
    assert removed
    for key in module_keys(tree_new, new_graph.entity_names):
        if removed & set(key):
            assert key not in keys3


def test_update_hierarchy_index_is_found_by_load_or_build(tmp_path):
    settings = replace(HUGRAG.hierarchy, backend="cpu", context_window=60, min_module_size=3, max_levels=3)
    graph, ins, _ = _sample_graphs()
    old = load_or_build_hierarchy(graph, settings, tmp_path, name="s")
    (old.directory / "summaries.jsonl").write_text('{"key": "0", "digest": "d", "text": "t"}\n')
    idx, upd = update_hierarchy_index(old.directory, graph.entity_names, ins.graph, ins.touched_nodes, settings,
                                      tmp_path, name="s")
    assert idx.built and upd is not None and idx.directory != old.directory
    assert (idx.directory / "summaries.jsonl").is_file()  # checkpoints carried over
    loaded = load_or_build_hierarchy(ins.graph, settings, tmp_path, name="s")  # what HugRAG.index() calls
    assert not loaded.built and loaded.directory == idx.directory
    assert all(torch.equal(a, b) for a, b in zip(loaded.hierarchy.memberships, upd.hierarchy.memberships))
    again, none = update_hierarchy_index(old.directory, graph.entity_names, ins.graph, ins.touched_nodes, settings,
                                         tmp_path, name="s")
    assert none is None and not again.built
