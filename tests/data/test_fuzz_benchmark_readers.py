"""Property-based fuzzing of the benchmark readers (HippoRAG 2 release, HotpotQA, HoVer, multiple choice, title/text
corpora): a valid dataset or a one-line InputError naming the file, nothing else."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperrag.data.hipporag2_release import read_release_queries
from hyperrag.data.hotpotqa import read_hotpotqa
from hyperrag.data.hover import read_hover_claims
from hyperrag.data.multiple_choice import read_multiple_choice
from hyperrag.data.records import read_title_text_corpus
from hyperrag.data.types import Corpus, Passage, Query
from hyperrag.errors import InputError
from tests.reliability.fuzz_inputs import JSON_VALUES, TEXTS

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = Corpus([Passage("0", "A", "alpha text"), Passage("1", "B", "beta text"), Passage("2", "B", "other")],
                source="fixed")

GOOD_IDS = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 3))
TITLE = st.one_of(st.sampled_from(["A", "B"]), st.sampled_from(["A", "B", "Z"]), st.sampled_from(["A", "b "]), TEXTS)
SENTENCES = st.sampled_from([["alpha text"], ["alpha", " text"], ["alpha ", "text"], ["beta text"], ["other"], [],
                             ["x", 3]])
FACT = st.tuples(TITLE, st.integers(0, 2)).map(list)
ANSWER_INDEX = st.one_of(st.integers(-2, 5), st.sampled_from(["1", "-1", "A", "x", "9" * 30]), JSON_VALUES)
ANSWER = st.one_of(st.sampled_from(["x", "yes", ["x", "y"]]), TEXTS)
# one plausible record per format (the readers' happy paths), which damaged() then breaks at random
BASES = {
    "release": st.one_of(
        st.fixed_dictionaries({"_id": GOOD_IDS, "question": st.just("q?"), "answer": ANSWER,
                               "supporting_facts": st.lists(FACT, max_size=2),
                               "context": st.lists(st.tuples(TITLE, SENTENCES).map(list), max_size=2)}),
        st.fixed_dictionaries({"id": GOOD_IDS, "question": st.just("q?"), "answer_aliases": st.just(["z"]),
                               "paragraphs": st.lists(st.fixed_dictionaries(
                                   {"title": TITLE, "paragraph_text": st.sampled_from(["alpha text", "beta text"]),
                                    "is_supporting": st.booleans()}), max_size=2),
                               "question_decomposition": st.lists(st.fixed_dictionaries(
                                   {"question": st.just("h?"), "paragraph_support_idx": st.integers(-1, 2)}),
                                   max_size=2)}),
        st.fixed_dictionaries({"id": GOOD_IDS, "question": st.just("q?"), "obj": st.just("o"),
                               "possible_answers": st.sampled_from(['["x", "y"]', "[oops", "plain"]),
                               "contexts": st.lists(st.fixed_dictionaries(
                                   {"title": TITLE, "text": st.just("alpha text"), "is_supporting": st.booleans()}),
                                   max_size=2)})),
    "hotpotqa": st.fixed_dictionaries({"_id": GOOD_IDS, "question": st.just("q?"), "answer": ANSWER,
                                       "supporting_facts": st.lists(FACT, max_size=2),
                                       "context": st.lists(st.tuples(TITLE, SENTENCES).map(list), min_size=1,
                                                           max_size=3)}),
    "hover": st.fixed_dictionaries({"uid": GOOD_IDS, "claim": st.just("c."), "supporting_facts": st.lists(FACT, max_size=2),
                                    "label": st.sampled_from(["SUPPORTED", "NOT_SUPPORTED", "not supported", "maybe"])}),
    "multiple_choice": st.one_of(
        st.fixed_dictionaries({"id": GOOD_IDS, "question": st.just("q?"),
                               "options": st.one_of(st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
                                                    st.dictionaries(st.sampled_from("ABCD"), st.just("t"), max_size=4)),
                               "answer_index": st.integers(-1, 4), "context": st.sampled_from(["c1", "c2"])}),
        st.fixed_dictionaries({"id": GOOD_IDS, "question": st.just("q?"), "opa": st.just("x"), "opb": st.just("y"),
                               "cop": st.one_of(st.integers(-1, 3), st.sampled_from(["1", "-1", "9" * 30])),
                               "context": st.just("c")}),
        st.fixed_dictionaries({"question": st.just("q?"), "options": st.just({"A": "x", "B": "y"}),
                               "answer_idx": st.sampled_from(["A", "B", "F", 1]), "answer": st.just("x"),
                               "gold_ids": st.lists(GOOD_IDS, max_size=1), "context": st.just("c")}),
        st.fixed_dictionaries({"id": GOOD_IDS, "context": st.just("story"), "question": st.just("q?"),
                               "answer0": st.just("a"), "answer1": st.just("b"), "label": ANSWER_INDEX})),
    "corpus": st.fixed_dictionaries({"title": TITLE, "text": st.sampled_from(["alpha", "beta", ""])},
                                    optional={"id": GOOD_IDS}),
}


@st.composite
def damaged(draw: st.DrawFn, base: st.SearchStrategy[dict]) -> dict:
    """A plausible record with, at random, some fields dropped or replaced by arbitrary JSON."""
    record = dict(draw(base))
    for key in list(record):
        roll = draw(st.integers(0, 24))
        if roll == 0:
            del record[key]
        elif roll == 1:
            record[key] = draw(st.one_of(JSON_VALUES, TEXTS))
    return record


@st.composite
def benchmark_files(draw: st.DrawFn, fmt: str) -> bytes:
    """A JSON list or JSONL of (mostly) damaged plausible records of one format, the file sometimes corrupted."""
    records = draw(st.lists(st.one_of(damaged(BASES[fmt]), damaged(BASES[fmt]), damaged(BASES[fmt]), JSON_VALUES),
                            max_size=3))
    if draw(st.booleans()):
        raw = json.dumps(records, ensure_ascii=True).encode()
    else:
        raw = b"\n".join(json.dumps(r, ensure_ascii=True).encode() for r in records)
    return draw(st.sampled_from([raw] * 6 + [b"\xef\xbb\xbf" + raw, raw[: len(raw) // 2], b"\xff" + raw, b""]))


def write(data: bytes, name: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="fuzz-")) / name
    path.write_bytes(data)
    return path


def check_queries(queries: list[Query], corpus: Corpus) -> None:
    assert queries and len({q.id for q in queries}) == len(queries)
    for q in queries:
        assert isinstance(q.question, str) and q.question.strip()
        q.question.encode("utf-8")
        assert all(g in corpus for g in q.gold_ids) and all(isinstance(a, str) and a for a in q.answers)
        if q.answer_index is not None:
            assert 0 <= q.answer_index < len(q.options) and q.answers == (q.options[q.answer_index],)


def run_reader(data: bytes, read) -> None:  # type: ignore[no-untyped-def]
    path = write(data, "records.json")
    try:
        read(path)
    except InputError as err:
        text = err.one_line()
        assert "\n" not in text and str(path) in text


@FAST
@given(benchmark_files("release"))
def test_release_reader_never_crashes(data):
    run_reader(data, lambda p: check_queries(read_release_queries(p, CORPUS), CORPUS))


@FAST
@given(benchmark_files("hotpotqa"))
def test_hotpotqa_reader_never_crashes(data):
    def read(p):  # type: ignore[no-untyped-def]
        ds = read_hotpotqa(p)
        assert len(ds.corpus) > 0 and len(set(ds.corpus.ids)) == len(ds.corpus)
        check_queries(ds.queries, ds.corpus)

    run_reader(data, read)


@FAST
@given(benchmark_files("hover"))
def test_hover_reader_never_crashes(data):
    run_reader(data, lambda p: check_queries(read_hover_claims(p, CORPUS, label_options=True), CORPUS))


@FAST
@given(benchmark_files("multiple_choice"))
def test_multiple_choice_reader_never_crashes(data):
    def read(p):  # type: ignore[no-untyped-def]
        ds = read_multiple_choice(p, cop_base=0)
        assert len(ds.corpus) > 0 and len(set(ds.corpus.ids)) == len(ds.corpus)
        check_queries(ds.queries, ds.corpus)
        assert all(len(q.options) >= 2 for q in ds.queries)

    run_reader(data, read)


@FAST
@given(benchmark_files("corpus"))
def test_title_text_corpus_reader_never_crashes(data):
    def read(p):  # type: ignore[no-untyped-def]
        corpus = read_title_text_corpus(p)
        assert len(corpus) > 0 and len(set(corpus.ids)) == len(corpus)
        assert all(p.text.strip() for p in corpus.passages)

    run_reader(data, read)
