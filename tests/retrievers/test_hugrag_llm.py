"""HugRAG's LLM stages inside the retriever, against the scripted fake LLM server (a test double): module
summaries, gates joining the expansion, spurious-aware and standard path selection with ID validation, a failed or
empty selection counted (and still answered), answers from the kept items only."""

from __future__ import annotations

import json
import random

import pytest

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.retrievers.hugrag import HugRAGRetriever
from tests.hierarchy.fake_llm import fake_llm, paper_figure, prompt_of, schema_text
from tests.llm.fake_server import schema_reply


def scripted(keep: list[str]):
    """Replies in either prompt form's keys (``paper``: Fig 5/6's precise / ct_precise / p_answer; ``extended``)."""
    def respond(body):
        spec = schema_text(body)
        figure = paper_figure(body)  # prompts: paper sends the figures as printed, no grammar
        if figure == "5":
            return json.dumps({"precise": [*keep, "N99"], "ct_precise": ["N2"], "p_answer": "draft N1"})
        if figure == "6":
            return json.dumps({"precise": keep, "p_answer": "draft"})
        if figure == "7":
            return "scripted"
        if figure == "9":
            return "yes"
        if "spurious_ids" in spec:  # spurious-aware: N99 was never shown and must be dropped
            return json.dumps({"causal_ids": [*keep, "N99"], "spurious_ids": ["N2"], "draft_answer": "draft N1"})
        if "ct_precise" in spec:  # Fig 5's keys
            return json.dumps({"precise": [*keep, "N99"], "ct_precise": ["N2"], "p_answer": "draft N1"})
        if "causal_ids" in spec:
            return json.dumps({"causal_ids": keep, "draft_answer": "draft"})
        if '"precise"' in spec:  # Fig 6's keys
            return json.dumps({"precise": keep, "p_answer": "draft"})
        if '"answer"' in spec and "draft_answer" not in spec and '"yes"' not in spec:
            return json.dumps({"answer": "scripted"})
        if '"title"' in spec:  # module summary
            return json.dumps({"title": "Scripted module", "summary": prompt_of(body)[:200], "keywords": ["k"]})
        if '"yes"' in spec:  # causal gate (Fig 9's one token; the extended form also names a direction)
            return json.dumps({"answer": "yes", "direction": "both"} if "direction" in spec else {"answer": "yes"})
        return schema_reply(body, random.Random(0))
    return respond


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


def make(llm, tmp_path, encoder, **kw):
    kw.setdefault("extraction", "none")
    settings = method_settings("hugrag", index_root=str(tmp_path / "index"),
                               hierarchy={"backend": "cpu", "context_window": 40, "min_module_size": 3},
                               gates={"top_m": 2, "threshold": 0.0, "max_calls": 6}, **kw)
    return HugRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")


def test_spurious_aware_filter_answer_and_gates(tmp_path, encoder, sample):
    with fake_llm(scripted(["N1", "N3"]), tmp_path) as (llm, server):
        ret = make(llm, tmp_path, encoder)
        ret.index(sample)
        desc = ret.describe()
        assert desc["summary_stats"]["llm_summaries"] == ret.tree.num_modules
        assert desc["gate_stats"]["llm_calls"] <= 6 and desc["gates_found"] == ret.num_gates > 0
        assert ret.typed_graph.count_by_kind()["gate"] == ret.num_gates
        questions = [q.question for q in sample.queries]
        out = ret.retrieve(questions, 5)
        for d in out.details:
            assert d["filter_ok"] and d["invalid_ids"] == 1  # N99 dropped and counted
            assert [k[0] for k in d["kept_items"]] == ["N1", "N3"] and [s[0] for s in d["spurious_items"]] == ["N2"]
            assert d["answer"] == "scripted" and d["answer_ok"] and d["table"].startswith("N1 | ")
            assert d["draft_answer"] == "draft"  # the ID the draft named is removed
        answer_prompts = [prompt_of(b) for b in server.requests if "---Answer Format---" in prompt_of(b)]
        assert answer_prompts and all("N2:" not in p.split("---Question---")[0] for p in answer_prompts)
        # Fig 7 as printed: the draft as plain text, no data block
        assert all("---Draft Answer (optional)---\ndraft\n\n---Question---" in p for p in answer_prompts)
        # the default prompts are the paper's (Figs 5, 7, 9 as printed): the gate and the selection too
        assert any("-Real Data-" in prompt_of(b) and "causal relationship" in prompt_of(b) for b in server.requests)
        assert any("output them in 'precise'" in prompt_of(b) for b in server.requests)
        assert out.indices.min() >= 0
        first = desc["gate_stats"]["verified"]
        again = make(llm, tmp_path, encoder)  # summaries and gates resume from their checkpoints
        again.index(sample)
        stats = again.describe()
        assert stats["summary_stats"]["resumed"] == ret.tree.num_modules and stats["summary_stats"]["requests"] == 0
        assert stats["gate_stats"]["resumed"] == first  # the cap then allows the next pairs (max_calls per build)


def test_empty_selection_is_counted_and_still_answered(tmp_path, encoder, sample):
    """An empty S*: counted, no ranking from elsewhere; the answer step still runs on it (empty_selection:
    answer, Algorithm 1 line 15), or not at all (skip: the earlier rule, scored 0)."""
    for rule in ("answer", "skip"):
        with fake_llm(scripted([]), tmp_path / rule) as (llm, _):
            ret = make(llm, tmp_path / rule, encoder,
                       path_selection={"variant": "standard", "empty_selection": rule})
            ret.index(sample)
            out = ret.retrieve([q.question for q in sample.queries], 5)
            assert all(not d["filter_ok"] and d["filter_error"] == "empty" for d in out.details)
            if rule == "answer":
                assert all(d["answer"] == "scripted" and d["answer_ok"] and d["answer_evidence"] == 0
                           for d in out.details)
            else:
                assert all(d["answer"] == "" and not d["answer_ok"] for d in out.details)
            assert all(d["spurious_items"] == [] for d in out.details)
            assert bool((out.indices == -1).all())  # no ranking from elsewhere
            assert ret.skipped["path_selection"] == len(sample.queries)


def test_answer_off_leaves_the_answer_to_the_shared_reader(tmp_path, encoder, sample):
    """``path_selection.answer: false`` (the even answer rule of BENCHMARKS' sixteenth session): S* still ranks the
    passages, no Fig 7 call is made and no answer is written, so the batch runner's shared reader answers from the top
    ``answer_top_n`` passages, as it does for every other method."""
    questions = [q.question for q in sample.queries]
    runs = {}
    for answer in (True, False):
        with fake_llm(scripted(["N1", "N3"]), tmp_path / str(answer)) as (llm, server):
            ret = make(llm, tmp_path / str(answer), encoder, path_selection={"answer": answer})
            ret.index(sample)
            runs[answer] = ret.retrieve(questions, 5)
            fig7 = [b for b in server.requests if "---Answer Format---" in prompt_of(b)]
            assert bool(fig7) == answer
    assert all(d["answer"] == "scripted" for d in runs[True].details)
    assert all("answer" not in d and "evidence" not in d and d["filter_ok"] for d in runs[False].details)
    assert runs[False].indices.tolist() == runs[True].indices.tolist()  # the same S*, the same ranking


def test_filter_off_keeps_the_evidence_size(tmp_path, encoder, sample):
    with fake_llm(scripted(["N1"]), tmp_path) as (llm, server):
        ret = make(llm, tmp_path, encoder, path_selection={"variant": "off", "max_selected": 3}, prompts="extended")
        ret.index(sample)
        out = ret.retrieve([q.question for q in sample.queries], 5)
        assert not any("causal_ids" in schema_text(b) or "precise" in schema_text(b)
                       for b in server.requests)  # no filter call
        for d in out.details:
            assert d["filter_ok"] and len(d["kept_items"]) == 3 and d["answer"] == "scripted"
        # prompts=extended: our restatements (the gate names a direction, the answer is Fig 7 in our words)
        assert ret.describe()["prompts"] == "extended"
        assert any("direction" in schema_text(b) for b in server.requests)
        assert any("helpful assistant who answers" in b["messages"][0]["content"] for b in server.requests)


def test_prepare_leaves_extraction_to_hugrag(sample):
    """With ``extraction: graphrag`` the HippoRAG-style OpenIE of ``openie_source: llm`` datasets is skipped."""
    from hyperrag.runners.prepare import resolve_openie

    class NoCalls:  # an available LLM that must not be asked anything (its name is read for the run's record)
        available = True
        model = "no-calls"

        def __getattr__(self, name):
            raise AssertionError(f"LLM used: {name}")

    data = sample_dataset(openie_source="llm")
    before = data.openie_path
    assert resolve_openie(data, NoCalls(), "/nonexistent", extraction="graphrag").openie_path == before
    from hyperrag.runners.prepare import prepare_dataset

    assert prepare_dataset(data, NoCalls(), "/nonexistent", None, extraction="graphrag").openie_path == before


def test_graphrag_extraction_for_any_dataset_falls_back_per_passage(tmp_path, encoder, sample):
    """extraction: graphrag runs on a dataset with its own OpenIE file; passages the LLM cannot extract keep the
    file's record, and are counted."""
    from tests.llm.fake_server import Reply

    def respond(body):
        prompt = prompt_of(body)
        if "relations" in schema_text(body) and "entities" in schema_text(body):  # openie_graphrag
            if "The Vistula is the longest river" in prompt:
                return json.dumps({"entities": [
                    {"name": "Vistula", "type": "location", "description": "The longest river in Poland."},
                    {"name": "Warsaw", "type": "location", "description": "A city on the Vistula."}],
                    "relations": [{"source": "Vistula", "target": "Warsaw", "description": "flows through",
                                   "strength": 9}]})
            return Reply(status=500, body="down")
        return scripted(["N1"])(body)

    with fake_llm(respond, tmp_path) as (llm, _):
        ret = make(llm, tmp_path, encoder, extraction="graphrag")
        ret.index(sample)
    stats = ret.describe()["extraction_stats"]
    assert stats["style"] == "graphrag" and 0 < stats["fallback"] < len(sample.corpus)
    assert ret.skipped["openie_graphrag"] == stats["fallback"]
    assert ret.info.source == "graphrag" and ret.graph.num_entities > 0
    assert stats["weighted_relations"] >= 1  # the strength weights the relation edge


def test_shared_graph_is_one_graphrag_extraction_for_every_method(tmp_path):
    """shared_graph=graphrag (HugRAG's tables): the dataset's graph becomes the GraphRAG-style extraction with the
    configured LLM, a passage it cannot extract keeping the dataset's record; HugRAG's own extraction step then
    finds the same cached file (no second extraction); without an LLM the dataset's file stays."""
    from hyperrag.runners.prepare import prepare_dataset
    from tests.llm.fake_server import Reply

    def respond(body):
        if "The Vistula is the longest river" in prompt_of(body):
            return json.dumps({"entities": [{"name": "VISTULA", "type": "location", "description": "A river."}],
                               "relations": []})
        return Reply(status=500, body="down")

    data = sample_dataset()
    own = data.openie_path
    assert prepare_dataset(data, None, tmp_path, shared_graph="graphrag").openie_path == own  # no LLM
    with fake_llm(respond, tmp_path) as (llm, server):
        shared = prepare_dataset(sample_dataset(), llm, tmp_path / "cache", shared_graph="graphrag")
        asked = server.stats["requests"]
        assert shared.openie_path != own and "graphrag" in shared.openie_path.name
        docs = json.loads(shared.openie_path.read_text())["docs"]
        assert any(d.get("fallback") == "dataset openie" for d in docs)  # the failed passages keep the file's record
        assert any("VISTULA" in json.dumps(d) for d in docs)
        settings = method_settings("hugrag", index_root=str(tmp_path / "cache" / "index"), extraction="graphrag")
        ret = HugRAGRetriever(settings, encoder=None, llm=llm, device="cpu")
        ret.extract(shared)  # HugRAG's extraction: the same cached file, the failed passages only retried
        assert server.stats["requests"] - asked <= len(shared.corpus) - 1
