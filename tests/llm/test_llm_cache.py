"""Response cache: a rerun sends zero requests; keys cover model, prompt, sampling and schema."""

from __future__ import annotations

from hyperrag.llm.cache import ResponseCache, cache_key
from hyperrag.llm.tasks.fact_filter import FactFilter

FACTS = [("A", "r", "B"), ("B", "r", "C")]


def test_rerun_sends_zero_requests_across_instances(make_llm, fake_server, tmp_path):
    inputs = [{"query": f"q{i}", "facts": FACTS} for i in range(12)]
    first = make_llm().complete_structured_batch("fact_filter", inputs)
    sent = fake_server.stats["requests"]
    assert sent == 12 and all(r.ok and not r.cached for r in first)
    llm2 = make_llm()  # a new process would see the same sqlite file
    second = llm2.complete_structured_batch("fact_filter", inputs)
    assert fake_server.stats["requests"] == sent
    assert all(r.cached and r.requests == 0 for r in second)
    assert [r.value for r in second] == [r.value for r in first]
    assert llm2.accounting.total().cache_hits == 12 and llm2.accounting.total().requests == 0


def test_cached_raw_is_reinterpreted_for_new_caller_keys(make_llm, fake_server):
    fake_server.enqueue('{"relevant_ids": ["F2"]}')
    llm = make_llm()
    a = llm.complete_structured(FactFilter(), {"query": "q", "facts": [(10, ("A", "r", "B")), (11, ("B", "r", "C"))]})
    b = llm.complete_structured(FactFilter(), {"query": "q", "facts": [(20, ("A", "r", "B")), (21, ("B", "r", "C"))]})
    assert a.value == [11] and b.cached and b.value == [21]


def test_key_changes_with_every_ingredient():
    base = {"model": "m", "messages": [{"role": "user", "content": "x"}], "sampling": {"temperature": 0.0},
            "structured": {"mode": "json_schema", "schema": "abc"}, "task": "fact_filter@v1"}
    k = cache_key(**base)
    assert k == cache_key(**dict(base))
    for field, value in [("model", "m2"), ("messages", [{"role": "user", "content": "y"}]),
                         ("sampling", {"temperature": 0.7}), ("structured", {"mode": "none", "schema": "abc"}),
                         ("task", "fact_filter@v2")]:
        assert cache_key(**{**base, field: value}) != k, field


def test_sampling_settings_change_the_key(make_llm, fake_server):
    make_llm().complete_structured("fact_filter", {"query": "q", "facts": FACTS})
    make_llm(sampling={"temperature": 0.5}).complete_structured("fact_filter", {"query": "q", "facts": FACTS})
    make_llm(model="other").complete_structured("fact_filter", {"query": "q", "facts": FACTS})
    assert fake_server.stats["requests"] == 3


def test_cache_file_roundtrip(tmp_path):
    c = ResponseCache(tmp_path / "sub" / "c.sqlite")
    c.put("k", task="t@v1", model="m", raw="{}", prompt_tokens=3, completion_tokens=1)
    c.close()
    c2 = ResponseCache(tmp_path / "sub" / "c.sqlite")
    assert c2.get("k").raw == "{}" and c2.contains("k") and len(c2) == 1 and c2.stats() == {"t@v1": 1}
    c2.delete("k")
    assert c2.get("k") is None
