"""OpenIE indexing: HippoRAG file format, failures retried, and resume after a kill mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus, Passage
from hyperrag.llm.backends import OpenAICompatible
from hyperrag.llm.errors import StageFailedError
from hyperrag.llm.openie import passage_string, read_checkpoint, run_openie
from hyperrag.utils.hashing import text_digest
from tests.llm.conftest import FAST_CLIENT
from tests.llm.fake_server import Reply, schema_reply

REPO = Path(__file__).resolve().parents[2]


def _corpus(n: int, tag: str = "") -> Corpus:
    return Corpus([Passage(f"p{i}", f"Town {i}{tag}", f"Town {i} lies on the River Avon in Somerset County.")
                   for i in range(n)], source="test")


def _llm(server, **kw) -> OpenAICompatible:
    return OpenAICompatible(base_url=server.base_url, model="fake-model", api_key_env=None, show_usage=False,
                            client={**FAST_CLIENT, **kw.pop("client", {})}, **kw)


def test_output_matches_hipporag_format_and_reader(fake_server, tmp_path):
    corpus = _corpus(5)
    out = tmp_path / "openie.json"
    with _llm(fake_server, cache_path=None) as llm:
        report = run_openie(corpus.passages, llm, output_path=out, progress=False)
    assert report.ok and report.extracted == 5 and fake_server.stats["requests"] == 10  # NER + triples each
    data = json.loads(out.read_text())
    doc = data["docs"][3]
    assert doc["idx"] == 3 and doc["passage"] == "Town 3\n" + corpus[3].text
    assert all(isinstance(e, str) for e in doc["extracted_entities"]) and doc["extracted_entities"]
    assert all(len(t) == 3 for t in doc["extracted_triples"])
    assert data["ents_by_doc"][3] == doc["extracted_entities"] and data["failed_idx"] == []
    records = read_openie(out, corpus)  # the graph builder's reader accepts it
    assert len(records.triples) == 5 and records.skipped_triples == 0


def test_triples_request_shows_the_ner_entities(fake_server, tmp_path):
    fake_server.enqueue('{"named_entities": ["Town 0", "River Avon"]}', '{"triples": [["Town 0", "lies on", "River Avon"]]}')
    with _llm(fake_server, cache_path=None) as llm:
        run_openie(_corpus(1).passages, llm, progress=False)
    assert '["Town 0", "River Avon"]' in fake_server.requests[1]["messages"][1]["content"]


def test_failed_passages_are_retried_on_rerun(fake_server, tmp_path):
    corpus = _corpus(8)
    broken = {"Town 2\n", "Town 5\n"}

    def responder(body):
        text = body["messages"][1]["content"]
        if any(f"<passage>\n{b}" in text for b in broken):
            return Reply(status=500, body="down")
        return schema_reply(body, __import__("random").Random(0))

    fake_server.responder = responder
    out = tmp_path / "openie.json"
    with _llm(fake_server, cache_path=None, client={"max_retries": 0}) as llm:
        first = run_openie(corpus.passages, llm, output_path=out, progress=False)
    assert first.failed == [2, 5] and first.extracted == 6
    assert json.loads(out.read_text())["failed_idx"] == [2, 5]
    broken.clear()
    fake_server.reset()
    with _llm(fake_server, cache_path=None) as llm:
        second = run_openie(corpus.passages, llm, output_path=out, progress=False)
    assert second.ok and second.resumed == 6 and second.extracted == 2
    assert fake_server.stats["requests"] == 4  # only the two missing passages (NER + triples)


def test_every_passage_failing_stops_the_stage_and_writes_no_file(fake_server, tmp_path):
    fake_server.configure(http500=1.0)  # TEST DOUBLE: the endpoint answers every chat call with HTTP 500
    out = tmp_path / "openie.json"
    failed = r"OpenIE \(hipporag\): every LLM call failed \(4 passages"
    with _llm(fake_server, cache_path=None, client={"max_retries": 0}) as llm, \
            pytest.raises(StageFailedError, match=failed):
        run_openie(_corpus(4).passages, llm, output_path=out, progress=False)
    assert not out.exists()  # nothing to build a graph on: no file of empty extractions
    fake_server.configure(http500=0.0)  # the endpoint recovers: the rerun extracts everything
    with _llm(fake_server, cache_path=None) as llm:
        assert run_openie(_corpus(4).passages, llm, output_path=out, progress=False).ok


def test_checkpoint_ignores_torn_lines_and_changed_passages(tmp_path):
    ckpt = tmp_path / "c.jsonl"
    ckpt.write_text('{"idx": 0, "digest": "aaa", "extracted_entities": [], "extracted_triples": []}\n'
                    '{"idx": 1, "digest": "bbb", "extracted_entities": [], "extracted_triples": []}\n'
                    '{"idx": 2, "digest": "ccc", "extr')
    assert sorted(read_checkpoint(ckpt, ["aaa", "XXX", "ccc"])) == [0]


_CHILD = """
import sys
from hyperrag.data.types import Passage
from hyperrag.llm.backends import OpenAICompatible
from hyperrag.llm.errors import StageFailedError
from hyperrag.llm.openie import run_openie
ps = [Passage(f"p{i}", f"Town {i}", f"Town {i} lies on the River Avon in Somerset County.") for i in range(12)]
llm = OpenAICompatible(base_url=sys.argv[1], model="fake-model", api_key_env=None, cache_path=None,
                       client={"concurrency": 1, "timeout_s": 5, "connect_timeout_s": 10, "max_retries": 4,
                               "backoff_initial_s": 0.5, "backoff_max_s": 8})
run_openie(ps, llm, output_path=sys.argv[2], progress=False)
"""


def test_kill_mid_run_then_resume_sends_only_missing(fake_server, tmp_path):
    fake_server.configure(delay_s=0.08)
    out = tmp_path / "openie.json"
    ckpt = Path(str(out) + ".ckpt.jsonl")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, fake_server.base_url, str(out)], env=env,
                             start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if ckpt.exists() and len(ckpt.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)  # the child we started
    child.wait()
    assert not out.exists()  # killed before the end
    corpus = _corpus(12)
    done = len(read_checkpoint(ckpt, [text_digest(passage_string(p), length=16) for p in corpus.passages]))
    assert 3 <= done < 12
    fake_server.configure(delay_s=0.0)
    fake_server.reset()
    with _llm(fake_server, cache_path=None) as llm:
        report = run_openie(corpus.passages, llm, output_path=out, progress=False)
    assert report.ok and report.resumed == done and report.extracted == 12 - done
    assert fake_server.stats["requests"] == 2 * (12 - done)
    assert len(json.loads(out.read_text())["docs"]) == 12


def test_rerun_with_cache_sends_nothing(fake_server, tmp_path):
    corpus = _corpus(4)
    cache = tmp_path / "cache.sqlite"
    with _llm(fake_server, cache_path=cache) as llm:
        run_openie(corpus.passages, llm, progress=False)
    sent = fake_server.stats["requests"]
    with _llm(fake_server, cache_path=cache) as llm:  # no checkpoint: the cache alone covers it
        report = run_openie(corpus.passages, llm, progress=False)
        assert llm.accounting.total().cache_hits == 8
    assert report.ok and fake_server.stats["requests"] == sent


def test_graphrag_style(fake_server, tmp_path):
    fake_server.enqueue(json.dumps({
        "entities": [{"name": "Town 0", "type": "Location", "description": "A town."},
                     {"name": "River Avon", "type": "river", "description": "A river."}],
        "relations": [{"source": "Town 0", "target": "River Avon", "description": "lies on", "strength": 12},
                      {"source": "Town 0", "target": "Atlantis", "description": "x", "strength": 3}]}))
    with _llm(fake_server, cache_path=None) as llm:
        docs_report = run_openie(_corpus(1).passages, llm, output_path=tmp_path / "g.json", style="graphrag",
                                 progress=False)
    doc = json.loads((tmp_path / "g.json").read_text())["docs"][0]
    assert docs_report.ok and doc["extracted_triples"] == [["Town 0", "lies on", "River Avon"]]
    assert doc["graphrag"]["relations"][0]["strength"] == 10
    assert [e["type"] for e in doc["graphrag"]["entities"]] == ["location", "other"]


def test_index_corpus_reuses_finished_file_and_estimate(fake_server, tmp_path):
    from hyperrag.llm.openie import estimate_openie, index_corpus

    corpus = _corpus(3)
    with _llm(fake_server, cache_path=None) as llm:
        ner_est, tri_est = estimate_openie(corpus.passages, llm)
        assert (ner_est.requests, tri_est.requests) == (3, 3) and ner_est.prompt_tokens > 0
        assert fake_server.stats["requests"] == 0
        path, report = index_corpus(corpus.passages, llm, tmp_path)
        assert report.extracted == 3 and path.name.startswith("openie_hipporag_fake-model_")
        again, report2 = index_corpus(corpus.passages, llm, tmp_path)
    assert again == path and report2.resumed == 3 and fake_server.stats["requests"] == 6


def test_filter_facts_helper(fake_server, tmp_path):
    from hyperrag.llm.backends import NoLLM
    from hyperrag.llm.recognition import filter_facts

    facts = [[(7, ("A", "r", "B")), (9, ("B", "r", "C"))], [], [("X", "r", "Y")]]
    assert filter_facts(NoLLM(), ["q1", "q2", "q3"], facts) == [None, None, None]
    fake_server.responder = lambda body: ('{"relevant_ids": ["F2", "F5"]}' if "qq1" in body["messages"][-1]["content"]
                                          else '{"relevant_ids": "not a list"}')
    with _llm(fake_server, cache_path=None, max_invalid_retries=0) as llm:
        kept = filter_facts(llm, ["qq1", "qq2", "qq3"], facts)
    assert kept == [[9], [], None]  # valid → caller keys; no candidates → []; failed → None (fallback)
    assert fake_server.stats["requests"] == 2  # the empty candidate list sends nothing
