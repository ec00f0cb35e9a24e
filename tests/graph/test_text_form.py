"""``graph.text_form: hipporag`` — names as HippoRAG 2's code processes OpenIE text (issue 29)."""

from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus, Passage
from hyperrag.graph.build import build_knowledge_graph, canonical_triples
from hyperrag.graph.canonical import hipporag_name
from hyperrag.graph.provenance import build_provenance, passage_triples

TRIPLES = [("Jardín Botánico", "is", "botanical garden"), ("Jardín Botánico", "is", "botanical garden"),
           ("James P. Hogan", "directed", "Bulldog Drummond's Peril")]


def test_hipporag_names_are_ascii_and_repeated_raw_triples_count_once():
    assert hipporag_name("Bulldog Drummond's Peril") == "bulldog drummond s peril"
    assert hipporag_name("James P. Hogan") == "james p  hogan"  # runs of spaces kept, as text_processing does
    ours = canonical_triples(TRIPLES)
    ref = canonical_triples(TRIPLES, "hipporag")
    assert ours[0] == ("jardín botánico", "is", "botanical garden") and len(ours) == 3
    assert ref == [("jard n bot nico", "is", "botanical garden"),
                   ("james p  hogan", "directed", "bulldog drummond s peril")]


def test_a_hipporag_graph_records_its_form_and_its_provenance_follows(encoder):
    corpus = Corpus([Passage("a", "Madrid", "The Jardín Botánico is a botanical garden."),
                     Passage("b", "Peril", "Bulldog Drummond's Peril was directed by James P. Hogan.")])
    openie = OpenIERecords([[], []], [TRIPLES[:2], TRIPLES[2:]], 0, "test")
    graph, _ = build_knowledge_graph(corpus, openie, encoder, text_form="hipporag")
    assert graph.stats["text_form"] == "hipporag"
    assert "jard n bot nico" in graph.entity_names and graph.edge_weight[graph.edge_type == 0].tolist() == [1.0, 1.0]
    prov = build_provenance(graph, openie)
    assert passage_triples(graph, prov)[0] == [("jard n bot nico", "is", "botanical garden")]


def test_graph_hipporag_gives_any_method_hipporag2s_index_settings():
    """``graph=hipporag`` (issue 46): HugRAG's graph settings equal those method=hipporag2 indexes with, so both
    key the same knowledge-graph index (HugRAG on 2wiki_dev loads HippoRAG 2's cached index, encodes nothing)."""
    from omegaconf import OmegaConf

    from hyperrag.config.compose import compose_config, method_settings

    graph = OmegaConf.to_container(compose_config("retrieve", ["graph=hipporag"]).graph, resolve=True)
    hugrag = method_settings("hugrag_paper", graph=graph).graph
    assert hugrag == method_settings("hipporag2").graph
    assert hugrag.text_form == "hipporag" and hugrag.fact_template == "('{s}', '{r}', '{o}')"
    cfg = compose_config("retrieve", ["method=hugrag", "graph=hipporag"])
    assert cfg.method.retriever.graph.text_form == "hipporag"
    assert compose_config("retrieve", ["method=hugrag"]).method.retriever.graph.text_form == "canonical"
