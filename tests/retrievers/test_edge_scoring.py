"""CatRAG dynamic edge weighting and LLM anchoring against a SCRIPTED fake LLM server (tests/llm/fake_server.py).

The scripted model is not a model: it reads the prompt the task built and answers by fixed rules (stated in
:class:`ScriptedCatRAG`), so the tests check what the retriever shows the LLM and what it does with the reply.
"""

import json
import random
import re

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import jsonl_dataset, sample_dataset
from hyperrag.ops.ppr import personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.edge_scoring import score_to_multiplier
from tests.llm.fake_server import FakeOpenAIServer, Reply, schema_reply


@pytest.mark.parametrize("score, mult", [(0, 0.0), (3, 0.0), (4, 0.2), (5, 0.25), (6, 0.3), (7, 2.0), (8, 2.5),
                                         (9, 3.0), (10, 5.0)])
def test_score_map(score, mult):
    assert score_to_multiplier(score) == pytest.approx(mult)


_ITEM = re.compile(r'<item id="(N\d+)">\nname: (.*)\nlinking triples: (.*)(?:\nsummary: (.*))?\n</item>')


def real_input(prompt: str) -> str:
    """The part of a neighbour-scoring prompt after its worked examples."""
    return prompt.split("Now the real input.")[-1]


class ScriptedCatRAG:
    """TEST DOUBLE, scripted rules (no model):

    * query NER: replies ``mentions``;
    * fact filter: keeps the shown facts whose text holds ``keep_facts_with`` (all when ``None``);
    * entity summary: ``"SUMMARY OF <entity>"``;
    * neighbour scoring: an HTTP 500 when the current entity is in ``fail_for``; else, per neighbour, 0 when
      one of its linking triples has the subject and relation of a RETRIEVED FACT but another object (it
      contradicts a verified fact) — unless ``by_position`` names the neighbour's position — else
      ``by_position[i]`` for the i-th neighbour when given, else 8.
    """

    def __init__(self, mentions=(), keep_facts_with=None, fail_for=(), by_position=None):
        self.mentions, self.keep, self.fail_for = list(mentions), keep_facts_with, set(fail_for)
        self.by_position = by_position or {}
        self.prompts: dict[str, list[str]] = {}

    def __call__(self, body: dict) -> Reply | str:
        spec = json.dumps(body.get("response_format", {}))
        prompt = body["messages"][-1]["content"]
        if '"named_entities"' in spec:
            return self._log("ner", prompt, {"named_entities": self.mentions})
        if '"relevant_ids"' in spec:
            shown = re.findall(r'<fact id="(F\d+)">\n(.*)\n</fact>', prompt)
            return self._log("filter", prompt, {"relevant_ids": [i for i, t in shown
                                                                 if self.keep is None or self.keep in t]})
        if '"summary"' in spec:
            entity = re.findall(r"Target entity: <data>\n(.*)\n</data>", prompt)[-1]
            return self._log("summary", prompt, {"summary": f"SUMMARY OF {entity}"})
        if '"scores"' in spec:
            real = real_input(prompt)
            entity = re.search(r"CURRENT ENTITY:\n<node>\n(.*)\n</node>", real).group(1)
            self.prompts.setdefault("scores", []).append(prompt)
            if entity in self.fail_for:
                return Reply(status=500, body="scripted failure")
            verified = [json.loads(t) for t in re.findall(r"<fact>\n(.*)\n</fact>", real)]
            scores = []
            for k, (nid, name, links, _) in enumerate(_ITEM.findall(real), 1):
                triples = [json.loads(t) for t in links.split("; ")]
                contradicts = any(t[:2] == v[:2] and t[2] != v[2] for t in triples for v in verified)
                score = self.by_position.get(k, 0 if contradicts else 8)
                scores.append({"id": nid, "name": name, "score": score, "reason": "scripted" if score >= 4 else ""})
            return json.dumps({"scores": scores})
        return schema_reply(body, random.Random(0))

    def _log(self, kind: str, prompt: str, reply: dict) -> str:
        self.prompts.setdefault(kind, []).append(prompt)
        return json.dumps(reply)


KEEP = '"born in", "warsaw"'  # the scripted recognition memory keeps "marie curie born in warsaw" only


def fake_llm(server, tmp_path, retries=1):
    from hyperrag.llm.backends import OpenAICompatible

    return OpenAICompatible(base_url=server.base_url, model="fake", api_key_env=None, show_usage=False,
                            cache_path=str(tmp_path / "llm.sqlite"),
                            client={"concurrency": 4, "timeout_s": 5, "connect_timeout_s": 10, "max_retries": retries,
                                    "backoff_initial_s": 0.5, "backoff_max_s": 8})


def contradiction_dataset(tmp_path):
    """Marie Curie's birthplace twice — Warsaw (p1) and, wrongly, Paris (p2) — plus two city passages."""
    docs = [("p1", "Marie Curie", "Marie Curie was born in Warsaw. She married Pierre Curie.",
             [["Marie Curie", "born in", "Warsaw"], ["Marie Curie", "married", "Pierre Curie"]]),
            ("p2", "Curie rumours", "A tabloid once claimed that Marie Curie was born in Paris.",
             [["Marie Curie", "born in", "Paris"]]),
            ("p3", "Warsaw", "Warsaw is the capital of Poland and lies on the Vistula.",
             [["Warsaw", "capital of", "Poland"], ["Warsaw", "lies on", "Vistula"]]),
            ("p4", "Paris", "Paris is the capital of France.", [["Paris", "capital of", "France"]])]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n"
                                                   for i, t, x, _ in docs))
    (tmp_path / "queries.jsonl").write_text(json.dumps({"id": "q1", "question": "Where was Marie Curie born?",
                                                        "answers": ["Warsaw"], "gold_ids": ["p1"]}) + "\n")
    (tmp_path / "openie.json").write_text(json.dumps({"docs": [
        {"idx": k, "title": t, "passage": f"{t}\n{x}", "extracted_entities": sorted({e for s, _, o in tr for e in (s, o)}),
         "extracted_triples": tr} for k, (_, t, x, tr) in enumerate(docs)]}))
    return jsonl_dataset(tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl", tmp_path / "openie.json", name="curie")


def catrag(tmp_path, encoder, llm, **overrides):
    kw = {"index_root": str(tmp_path / "index"), "anchoring": False, "passage_boost": False, "fact_filter": True,
          "edge_scoring": {"n_seed": 5, "k_edge": 15, "tau_facts": 1, "weak_multiplier": 0.2,
                           "max_facts_shown": 30, "score_scale": 1.0, "seed_pool": "facts",
                           "prune_scope": "per_seed", "target": "arc"}}
    kw.update(overrides)
    return CatRAGRetriever(method_settings("catrag", **kw), encoder=encoder, llm=llm, device="cpu")


def relation_multipliers(r, delta):
    """``{(src name, dst name): multiplier}`` of each arc in a delta (ŵ_uv = φ · w_uv: the arc's whole static
    weight is scaled)."""
    stored = r.ppr_graph.arc_weight(delta.src, delta.dst).float()
    assert bool((stored > 0).all())
    adj = r.edge_scorer.adjacency
    for s, t in zip(delta.src.tolist(), delta.dst.tolist()):  # relation neighbours only
        assert t in adj.neighbours(s)[0].tolist()
    mult = delta.weight / stored
    names = r.graph.entity_names
    return {(names[s], names[t]): round(float(m), 3) for s, t, m in zip(delta.src.tolist(), delta.dst.tolist(), mult)}


def test_prompt_shows_verified_facts_and_summaries_of_dense_neighbours(tmp_path, encoder):
    model = ScriptedCatRAG(keep_facts_with=KEEP)
    with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path) as llm:
        r = catrag(tmp_path, encoder, llm)
        r.index(contradiction_dataset(tmp_path))
        r.edge_delta(r.seed(["Where was Marie Curie born?"]))
    prompt = next(p for p in model.prompts["scores"] if "<node>\nmarie curie\n</node>" in real_input(p))
    real = real_input(prompt)
    # T_seed: the one fact the (scripted) recognition memory kept — not the filtered-out rumour
    facts = re.search(r"RETRIEVED FACTS \(trusted\):\n(.*)\nNEIGHBORS:", real, re.DOTALL).group(1)
    assert facts == '<fact>\n["marie curie", "born in", "warsaw"]\n</fact>'
    items = {name: (links, summary) for _, name, links, summary in _ITEM.findall(real)}
    assert set(items) == {"warsaw", "pierre curie", "paris"}
    # warsaw has 3 facts > tau = 1: shown through its LLM summary; pierre curie (1 fact) through its triple
    assert items["warsaw"] == ('["marie curie", "born in", "warsaw"]', "SUMMARY OF warsaw")
    assert items["pierre curie"] == ('["marie curie", "married", "pierre curie"]',
                                     '["marie curie", "married", "pierre curie"]')
    assert sum("Target entity: <data>\nwarsaw\n</data>" in p for p in model.prompts["summary"]) == 1


def test_neighbour_contradicting_a_verified_fact_loses_its_relation_weight(tmp_path, encoder):
    model = ScriptedCatRAG(keep_facts_with=KEEP)
    with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path) as llm:
        r = catrag(tmp_path, encoder, llm)
        r.index(contradiction_dataset(tmp_path))
        seeds = r.seed(["Where was Marie Curie born?"])
        delta = r.edge_delta(seeds)
        reset = r.reset_vectors(seeds)
    ratio = relation_multipliers(r, delta)
    assert ratio[("marie curie", "paris")] == 0.0  # scored 0: the only (relation) weight of the arc is gone
    assert ratio[("marie curie", "warsaw")] == 2.5 and ratio[("marie curie", "pierre curie")] == 2.5  # 8 → ×2.5
    assert ("paris", "marie curie") not in ratio  # forward arcs from seeds only
    names = r.graph.entity_names
    paris, warsaw = names.index("paris"), names.index("warsaw")
    static = personalized_pagerank(r.ppr_graph, reset, damping=0.5)
    steered = personalized_pagerank(r.ppr_graph, reset, damping=0.5, edge_delta=delta)
    assert steered[0, paris] < static[0, paris] and steered[0, warsaw] > static[0, warsaw]
    assert r.skipped["edge_scoring"] == 0


def test_failed_call_leaves_every_arc_of_that_seed_static(tmp_path, encoder):
    # k_edge = 1: each seed has pruned neighbours, which must stay static too when its call fails
    model = ScriptedCatRAG(keep_facts_with=KEEP, fail_for={"marie curie"})
    settings = {"n_seed": 5, "k_edge": 1, "tau_facts": 5, "weak_multiplier": 0.2, "max_facts_shown": 30,
                "prune_scope": "per_seed", "target": "arc"}
    with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path, retries=0) as llm:
        r = catrag(tmp_path, encoder, llm, edge_scoring=settings)
        r.index(contradiction_dataset(tmp_path))
        delta = r.edge_delta(r.seed(["Where was Marie Curie born?"]))
    ratio = relation_multipliers(r, delta)
    assert not [arc for arc in ratio if arc[0] == "marie curie"]  # neither the scored nor the pruned arcs
    warsaw = {t: x for (s, t), x in ratio.items() if s == "warsaw"}
    assert sorted(set(warsaw.values())) == [0.2, 2.5]  # the other seed: its top neighbour scored, the other weak
    assert r.skipped["edge_scoring"] == 1 and r.edge_scorer.failed_calls == 1


def test_llm_anchoring_links_a_paraphrase_the_lexical_matcher_misses(tmp_path, encoder):
    question = "Where was Madame Curie born?"
    model = ScriptedCatRAG(mentions=["Madame Curie"])
    with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path) as llm:
        r = catrag(tmp_path, encoder, llm, anchoring=True, fact_filter=False, edge_weighting=False)
        r.index(sample_dataset())
        seeds = r.seed([question])
        reset = r.reset_vectors(seeds)
    e = r.graph.entity_names.index("marie curie")
    assert r.matcher(question) == []  # the LLM-free matcher finds no entity name in the question
    assert seeds.anchors == [[e]] and seeds.anchor_source == ["llm_ner"]
    assert "Madame Curie" in model.prompts["ner"][0]
    assert float(reset[0, e]) >= 0.2 / float(r.graph.entity_passage_count[e])
    assert r.skipped["anchoring_ner"] == 0


def test_failed_ner_call_falls_back_to_the_lexical_matcher_and_is_counted(tmp_path, encoder):
    with FakeOpenAIServer(responder=lambda body: Reply(status=500, body="down")) as server, \
            fake_llm(server, tmp_path, retries=0) as llm:
        r = catrag(tmp_path, encoder, llm, anchoring=True, fact_filter=False, edge_weighting=False)
        r.index(sample_dataset())
        seeds = r.seed(["Where was Henri Becquerel born?"])
        r.reset_vectors(seeds)
    assert seeds.anchors == [[r.graph.entity_names.index("henri becquerel")]]
    assert seeds.anchor_source == ["lexical"] and r.skipped["anchoring_ner"] == 1


def test_top_neighbours_scored_rest_weak_forward_arcs_only(tmp_path, encoder):
    model = ScriptedCatRAG(by_position={1: 10, 2: 0, 3: 8})
    settings = {"n_seed": 5, "k_edge": 3, "tau_facts": 3, "weak_multiplier": 0.2, "max_facts_shown": 30,
                "score_scale": 1.0, "seed_pool": "facts", "prune_scope": "per_seed", "target": "arc"}
    with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path) as llm:
        r = catrag(tmp_path, encoder, llm, fact_filter=False, edge_scoring=settings)
        r.index(sample_dataset())
        seeds = r.seed(["Which prizes did Marie Curie win, and whom did she marry?"])
        picked = []
        top_seeds = r.edge_scorer.top_seeds
        r.edge_scorer.top_seeds = lambda w: picked.append(top_seeds(w)) or picked[-1]
        delta = r.edge_delta(seeds)
        del r.edge_scorer.top_seeds
    # the seeds are picked once per batch: the plans and the delta's query-wide reach read the same list
    assert len(picked) == 1 and {p.seed for p, _ in seeds.edge_scores} <= set(picked[0][0])
    seed_entities = set(torch.topk(seeds.entity_weight[0], 5).indices.tolist())
    assert set(delta.src.tolist()) <= seed_entities
    assert bool((delta.dst < r.graph.num_entities).all())  # relation arcs: entity → entity
    adj = r.edge_scorer.adjacency
    names = r.graph.entity_names
    by_seed: dict[int, list[float]] = {}
    for (s, _), m in relation_multipliers(r, delta).items():
        by_seed.setdefault(names.index(s), []).append(m)
    busy = [e for e in by_seed if adj.neighbours(e)[0].unique().numel() > 3]
    assert busy, "the query should seed an entity with more than k_edge neighbours"
    for e in busy:  # N1 → ×5, N2 → ×0, N3 (8) → ×2.5; neighbours past k_edge = 3 → ×0.2
        assert sorted(set(by_seed[e]))[:2] == [0.0, 0.2] and max(by_seed[e]) == 5.0 and 2.5 in by_seed[e]
        assert len(by_seed[e]) == adj.neighbours(e)[0].unique().numel()  # every neighbour of the seed
    assert r.describe()["edge_scoring_llm_calls"] == len(by_seed) == len(model.prompts["scores"])


def test_reindex_rebuilds_the_relation_adjacency(tmp_path, encoder):
    r = catrag(tmp_path, encoder, None, fact_filter=False)
    r.index(sample_dataset())
    first = r.edge_scorer.adjacency
    r.index(contradiction_dataset(tmp_path))
    adj = r.edge_scorer.adjacency
    assert adj is not first and adj.ptr.numel() == r.graph.num_entities + 1
    names = r.graph.entity_names
    nbrs = {names[n] for n in adj.neighbours(names.index("marie curie"))[0].tolist()}
    assert nbrs == {"warsaw", "pierre curie", "paris"}


def test_without_llm_every_planned_seed_is_counted_as_skipped(tmp_path, encoder):
    r = catrag(tmp_path, encoder, None, fact_filter=False)
    r.index(sample_dataset())
    seeds = r.seed(["Which prizes did Marie Curie win, and whom did she marry?"])
    plans = r.edge_scorer.plan(seeds, seeds.entity_weight)
    assert r.edge_delta(seeds) is None
    assert plans and r.skipped["edge_scoring"] == len(plans)


def test_key_facts_are_labelled_verified_only_where_the_filter_ruled(tmp_path, encoder):
    """A query whose fact-filter call failed keeps its unfiltered top facts, and its details say so."""

    class FailingFilter(ScriptedCatRAG):
        def __call__(self, body):
            if '"relevant_ids"' in json.dumps(body.get("response_format", {})):
                return Reply(status=500, body="scripted failure")
            return super().__call__(body)

    for model, label in ((ScriptedCatRAG(keep_facts_with=KEEP), "verified"),
                         (FailingFilter(), "unfiltered top-k (no filter verdict)")):
        with FakeOpenAIServer(responder=model) as server, fake_llm(server, tmp_path / label[:4], retries=0) as llm:
            r = catrag(tmp_path / label[:4], encoder, llm, passage_boost=True)
            r.index(contradiction_dataset(tmp_path))
            seeds = r.seed(["Where was Marie Curie born?"])
            assert r.details(seeds)[0]["key_facts"] == label
        assert r.skipped.get("fact_filter", 0) == (label != "verified")
