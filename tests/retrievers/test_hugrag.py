"""HugRAG (LLM-free form) end to end on the bundled sample, through retrieve.run and the composed config."""

import json
import sys

import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.retrievers.hugrag import HugRAGRetriever
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve


def compose_hugrag(tmp_path, *overrides):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=[f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}",
                                              "hardware=cpu", "llm=none", "method=hugrag", *overrides])


def test_sample_end_to_end(tmp_path):
    cfg = compose_hugrag(tmp_path)
    metrics = retrieve.run(cfg)
    out = tmp_path / "run"
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert all(len(r["ranked_ids"]) == 10 and len(set(r["ranked_ids"])) == 10 for r in rows)
    for r in rows:
        d = r["details"]
        assert len(d["seed_entities"]) == 3 and 1 <= len(d["seed_modules"]) <= 3
        assert d["expanded"][0][3] == "seed" and d["reached_entities"] >= 3
        assert d["tokens"] <= cfg.method.retriever.token_budget
        assert d["stop"] in {"gain", "budget", "max_nodes", "hop limit", "exhausted"}
        assert d["hop_limited"] >= d["hop_blocked"] >= 0 and d["rows"] - d["cut_rows"] <= 60
        assert r["scores"] == sorted(r["scores"], reverse=True)
    assert metrics["recall@10"] == 100.0
    assert metrics["recall@5"] >= 60.0
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["method"] == "hugrag" and saved["hierarchy"]["levels"]
    assert saved["expansion_edges"]["hierarchy"] > 0 and saved["expansion_edges"]["gate"] == 0
    # the walks against the gold: why each stopped; no gate, so no gold is reached only through one
    walk = saved["walk"]
    assert walk["queries"] == 6 and sum(walk["stop"].values()) == 6 and walk["gold_gate_only"] == 0
    assert [q["stop"] for q in walk["per_query"]] == [r["details"]["stop"] for r in rows]
    # a second run reuses the cached KG and hierarchy index directories
    again = HugRAGRetriever(instantiate(cfg.method.retriever), encoder=instantiate(cfg.embedder), device="cpu")
    again.index(instantiate(cfg.data))
    assert not again.hier.built and not again.kg.built


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


def test_hooks_gates_and_path_filter(tmp_path, encoder, sample):
    seen = {}

    def gates(tree, graph):  # one gate between the first two top-level modules
        roots = (tree.parent < 0).nonzero().squeeze(1)[:2]
        seen["modules"] = tree.num_modules
        return roots.view(2, 1), torch.ones(1)

    def keep_seeds(question, subgraph):  # keep only the seeds
        seen.setdefault("subgraph", subgraph)
        return [v for v, via in zip(subgraph["nodes"], subgraph["via"]) if via == -1]

    def summaries(tree, graph):
        return [f"module {m} about " + graph.entity_names[int(tree.entities(m)[0])] for m in range(tree.num_modules)]

    settings = method_settings("hugrag", index_root=str(tmp_path),
                               hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3})
    ret = HugRAGRetriever(settings, encoder=encoder, device="cpu", gate_source=gates, path_filter=keep_seeds,
                          module_texts=summaries)
    ret.index(sample)
    assert ret.typed_graph.count_by_kind()["gate"] == 1 and ret.num_gates == 1
    assert ret.module_texts[0].startswith("module 0 about")
    out = ret.retrieve([q.question for q in sample.queries], 5)
    assert out.indices.shape == (6, 5)
    assert {"nodes", "gain", "hop", "via", "parent", "labels"} <= set(seen["subgraph"])
    # the hook kept the seeds the walk took (a seed scoring under min_gain is never taken)
    assert all(0 < d["kept"] <= len(d["seed_entities"]) + len(d["seed_modules"]) for d in out.details)
    desc = ret.describe()
    assert desc["gates"] == "hook" and desc["path_filter"] == "hook" and desc["gates_found"] == 1
    # gold reached only through a gate: passages every reached mention of which has a gate on its parent chain
    walks = ret.expand([q.question for q in sample.queries], encoder.encode([q.question for q in sample.queries]))[3]
    g, num_e = ret.graph, ret.graph.num_entities
    for walk in walks:
        ev = ret.walk_evidence(walk)
        mentions: dict[str, list[bool]] = {}
        for v, gated in zip(walk.nodes, walk.gated()):
            if v < num_e:
                for p in g.entity_passage_idx[g.entity_passage_ptr[v]: g.entity_passage_ptr[v + 1]].tolist():
                    mentions.setdefault(g.passage_ids[p], []).append(gated)
        assert ev["gate_only_passages"] == sorted(p for p, m in mentions.items() if all(m))
        assert ev["reached_passages"] == sorted(mentions)
    # the table cap: rows past max_rows are cut (and counted); max_rows null shows them all
    for cap in (3, None):
        ret.settings = method_settings("hugrag", index_root=str(tmp_path), path_selection={"max_rows": cap},
                                       hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3})
        ev = ret.walk_evidence(walks[0])
        assert ev["cut_rows"] == (max(ev["rows"] - 3, 0) if cap else 0)
        assert len(ret.table(walks[0])) == ev["rows"] - ev["cut_rows"]
    # each walk is linearised once: the table shown is the head of the whole one, as the capped linearisation of
    # the walk's first max_rows nodes gave it, and the record reads the same rows and provenance
    from dataclasses import asdict

    from hyperrag.expansion.best_first import Expansion
    from hyperrag.expansion.linearize import linearize

    def capped_table(walk):  # table() before the walk was linearised once
        p = ret.settings.path_selection
        nodes = walk.nodes if p.max_rows is None else walk.nodes[: p.max_rows]
        sub = Expansion(nodes, walk.gain[: len(nodes)], walk.hop[: len(nodes)], walk.via[: len(nodes)],
                        walk.parent[: len(nodes)])
        return linearize(sub, [ret.node_kind(v) for v in nodes], [ret.node_text(v) for v in nodes],
                         [ret.node_passages(v, walk) for v in nodes], edges_of=ret.edges_between,
                         edge_provenance=ret.fact_passages, max_rows=p.max_rows,
                         max_words=max(1, int(ret.settings.node_tokens / 1.3)))

    checked = 0
    for cap in (1, 3, 7, None):
        ret.settings = method_settings("hugrag", index_root=str(tmp_path), path_selection={"max_rows": cap},
                                       hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3})
        for walk in walks:
            whole = ret.walk_table(walk)
            assert asdict(ret.table(walk, whole)) == asdict(capped_table(walk)) == asdict(ret.table(walk))
            textless = linearize(walk, [ret.node_kind(v) for v in walk.nodes], [""] * len(walk.nodes),
                                 [ret.node_passages(v, walk) for v in walk.nodes], edges_of=ret.edges_between,
                                 edge_provenance=ret.fact_passages, max_rows=None)  # walk_evidence's own, before
            assert (whole.keys, whole.passages) == (textless.keys, textless.passages)
            assert ret.walk_evidence(walk, whole) == ret.walk_evidence(walk)
            checked += len(whole) > (cap or len(whole))
    assert checked  # some table was cut


def test_specificity_and_aggregation(tmp_path, encoder, sample):
    base = {"index_root": str(tmp_path), "hierarchy": {"backend": "cpu"}}
    plain = HugRAGRetriever(method_settings("hugrag", **base, entity_specificity="none"), encoder=encoder,
                            device="cpu")
    plain.index(sample)
    gains = torch.zeros(1, plain.graph.num_entities)
    hub = int(torch.argmax(plain.graph.entity_passage_count))
    gains[0, hub] = 1.0
    passages = plain.graph.entity_passage_idx[plain.graph.entity_passage_ptr[hub]: plain.graph.entity_passage_ptr[hub + 1]]
    assert torch.allclose(plain.aggregate(gains)[0, passages], torch.ones(passages.shape[0]))
    weighted = HugRAGRetriever(method_settings("hugrag", **base, entity_specificity="log", passage_aggregate="max"),
                               encoder=encoder, device="cpu")
    weighted.index(sample)
    expected = 1.0 / torch.log1p(torch.tensor(float(passages.shape[0])))
    assert torch.allclose(weighted.aggregate(gains)[0, passages], expected.expand(passages.shape[0]))
    with pytest.raises(ValueError, match="method.retriever.passage_aggregate: must be one of 'sum' or 'max'"):
        method_settings("hugrag", **base, passage_aggregate="mean")


def test_per_level_seeds_and_hop_limit(tmp_path, encoder, sample):
    """Algorithm 1 line 12: K_0 entities and K_l modules from *every* module level (MMR with lambda 1 = the top K_l
    of that level by s(q, u)); ``seeding: pooled`` takes K_l from all levels together; line 13's hop limit h."""
    def summaries(tree, graph):
        return [f"module {m} about " + graph.entity_names[int(tree.entities(m)[0])] for m in range(tree.num_modules)]

    settings = method_settings("hugrag", index_root=str(tmp_path), k0=2, kl=2, mmr_lambda=1.0, max_hops=1,
                               hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3})
    ret = HugRAGRetriever(settings, encoder=encoder, device="cpu", module_texts=summaries)
    ret.index(sample)
    levels = ret.tree.level
    assert len(ret.level_modules) >= 2, "the sample's hierarchy should have two module levels here"
    questions = [q.question for q in sample.queries]
    q = encoder.encode(questions)
    s_ent, s_mod = ret.score_nodes(questions, q)
    ent, mod = ret.seed(s_ent, s_mod)
    assert ent.shape == (len(questions), 2)
    for b in range(len(questions)):
        picked = mod[b].tolist()
        for ids in ret.level_modules:
            at_level = [m for m in picked if m in set(ids.tolist())]
            top = ids[torch.topk(s_mod[b, ids], min(2, ids.numel())).indices].tolist()
            assert sorted(at_level) == sorted(top)  # the top K_l of this level, whatever the other levels score
        assert len(picked) == sum(min(2, ids.numel()) for ids in ret.level_modules)
    pooled = HugRAGRetriever(method_settings("hugrag", index_root=str(tmp_path), k0=2, kl=2, mmr_lambda=1.0,
                                             seeding="pooled", hierarchy={"backend": "cpu", "context_window": 40,
                                                                          "min_module_size": 3}),
                             encoder=encoder, device="cpu", module_texts=summaries)
    pooled.index(sample)
    _, pool = pooled.seed(s_ent, s_mod)
    assert pool.shape == (len(questions), 2) and pool[0].tolist() == torch.topk(s_mod[0], 2).indices.tolist()
    out = ret.retrieve(questions, 5)
    assert all(d["max_hop"] <= 1 for d in out.details)
    assert {int(levels[m]) for d in out.details for m, *_ in d["seed_modules"]} == {
        int(levels[ids[0]]) for ids in ret.level_modules}


def test_oracle_gates_are_labelled_upper_bound_and_transductive(tmp_path, encoder, sample):
    """gates.verifier=oracle needs no LLM; the run says what it is: the gates' source, transductive, gates_found."""
    settings = method_settings("hugrag", index_root=str(tmp_path / "index"), extraction="none",
                               hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3},
                               gates={"verifier": "oracle", "prefilter": False, "min_distance": 1})
    ret = HugRAGRetriever(settings, encoder=encoder, llm=None, device="cpu")
    ret.index(sample)
    desc = ret.describe()
    assert ret.transductive and desc["gates"] == "oracle (upper bound)"
    assert desc["gate_stats"]["source"].startswith("oracle") and desc["gate_stats"]["llm_calls"] == 0
    assert desc["gates_found"] == ret.num_gates == desc["gate_stats"]["gates_found"]
    assert desc["gate_stats"]["verified"] > 0  # Algorithm 2 literally (every pair) asked the oracle
    assert not (ret.hier.directory / "gates.jsonl").exists()


@pytest.mark.parametrize("stand_in", ["similarity", "first"])
def test_llm_free_filter_stand_in_puts_its_rows_passages_first(tmp_path, encoder, sample, stand_in):
    """path_selection.llm_free without an LLM: S* is the stand-in's rows (labelled, counted as a skipped LLM step),
    their passages lead the ranking; ``none`` keeps the earlier rule (no S*, the fallback order)."""
    common = dict(index_root=str(tmp_path / "index"), extraction="none",
                  hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3})
    ret = HugRAGRetriever(method_settings("hugrag", **common, path_selection={"llm_free": stand_in}),
                          encoder=encoder, llm=None, device="cpu")
    ret.index(sample)
    questions = [q.question for q in sample.queries]
    out = ret.retrieve(questions, top_k=10)
    assert ret.describe()["path_filter"] == f"{stand_in} (LLM-free stand-in)"
    assert ret.skipped["path_selection"] == len(questions)  # the LLM step did not run: still counted
    max_selected = ret.settings.path_selection.max_selected
    for b, d in enumerate(out.details):
        assert d["variant"] == f"{stand_in} (LLM-free stand-in)" and d["filter_ok"]
        assert 1 <= d["kept"] <= max_selected and d["kept_passages"] >= 1 and d["draft_answer"] == ""
        head = out.indices[b, : min(d["kept_passages"], 10)].tolist()
        assert len(set(head)) == len(head) and -1 not in head
    plain = HugRAGRetriever(method_settings("hugrag", **common), encoder=encoder, llm=None, device="cpu")
    plain.index(sample)
    base = plain.retrieve(questions, top_k=10)
    assert plain.describe()["path_filter"] == "none" and "variant" not in base.details[0]
    if stand_in == "first":  # the walk's first rows: the same rows variant off keeps
        q = encoder.encode(questions).to("cpu")
        walks = ret.expand(questions, q)[3]
        tables = [ret.table(w) for w in walks]
        assert [d["kept"] for d in out.details] == [min(len(t), max_selected) for t in tables]
