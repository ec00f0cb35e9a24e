"""Readers for the downloaded benchmark formats: HippoRAG 2 release, HotpotQA, HoVer, multiple-choice QA."""

from __future__ import annotations

import json
import re

import pytest

from hyperrag.data import hipporag2_release_dataset, hotpotqa_dataset, hover_dataset, multiple_choice_dataset
from hyperrag.data.hover import read_hover
from hyperrag.data.multiple_choice import read_multiple_choice
from hyperrag.data.types import SubQuestion
from hyperrag.errors import InputError
from tests.data.benchmark_fixtures import (
    TITLES,
    hotpotqa_records,
    hover_claims,
    hover_corpus,
    multiple_choice_records,
    release_questions,
    text_of,
    write_json,
    write_jsonl,
    write_release,
)

POS = {t: str(i) for i, t in enumerate(TITLES)}  # corpus ids are positions


def raises(expected: str, func, *args, **kwargs) -> str:
    """Call ``func``; it must raise one-line InputError containing ``expected``; returns the message."""
    with pytest.raises(InputError) as err:
        func(*args, **kwargs)
    text = str(err.value)
    assert expected in text and "\n" not in text, text
    return text


# --- HippoRAG 2 release -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["2wikimultihopqa", "hotpotqa"])
def test_release_supporting_facts(tmp_path, name):
    ds = hipporag2_release_dataset(write_release(tmp_path, name), name)
    assert ds.name == name and len(ds.corpus) == len(TITLES) and ds.corpus[0].title == "Lake Varn"
    w1, w2 = ds.queries
    assert (w1.id, w1.answers, w1.decomposition) == ("w1", ("1702",), ())
    assert w1.gold_ids == (POS["Ada Quill"], POS["Marrow"])  # one id per title, not per fact
    assert w2.gold_ids == (POS["Tessel River"], POS["Lake Varn"])


def test_release_supporting_title_without_matching_text_falls_back_to_unique_title(tmp_path):
    write_release(tmp_path, "2wikimultihopqa")
    questions = release_questions("2wikimultihopqa")
    questions[1]["context"] = [["Tessel River", ["A shortened abstract."]], ["Lake Varn", ["Other words."]]]
    del questions[0]["context"]  # no context at all: titles alone
    write_json(tmp_path / "2wikimultihopqa.json", questions)
    ds = hipporag2_release_dataset(tmp_path, "2wikimultihopqa")
    assert ds.queries[0].gold_ids == (POS["Ada Quill"], POS["Marrow"])
    assert ds.queries[1].gold_ids == (POS["Tessel River"], POS["Lake Varn"])


def test_release_musique_matches_title_and_text_and_fills_decomposition(tmp_path):
    ds = hipporag2_release_dataset(write_release(tmp_path, "musique"), "musique")
    assert len(ds.corpus) == len(TITLES) + 1 and ds.corpus[len(TITLES)].title == "Marrow"  # a second 'Marrow'
    (q,) = ds.queries
    assert q.gold_ids == (POS["Ada Quill"], POS["Marrow"]) and q.answers == ("1702", "in 1702")
    assert q.decomposition == (SubQuestion("Where was Ada Quill born?", "Marrow", POS["Ada Quill"]),
                               SubQuestion("When was #1 founded?", "1702", POS["Marrow"]))


def test_release_popqa_and_nq(tmp_path):
    (popqa,) = hipporag2_release_dataset(write_release(tmp_path, "popqa"), "popqa").queries
    assert popqa.id == "7001" and popqa.gold_ids == (POS["Ada Quill"],)  # no is_supporting: every paragraph
    assert popqa.answers == ("cartographer", "Cartography", "map maker")  # obj, o_wiki_title, decoded list
    (nq,) = hipporag2_release_dataset(write_release(tmp_path, "nq"), "nq").queries
    assert nq.answers == ("Marrow",) and nq.gold_ids == (POS["Marrow"],)


def test_release_openie_path(tmp_path):
    write_release(tmp_path, "nq")
    raises("OpenIE file not found", hipporag2_release_dataset, tmp_path, "nq", tmp_path / "missing.json")
    (tmp_path / "openie.json").write_text("{}")
    assert hipporag2_release_dataset(tmp_path, "nq", tmp_path / "openie.json").openie_path == tmp_path / "openie.json"


def _edit(record: dict, change: dict) -> dict:
    out = {**record, **change}
    return {k: v for k, v in out.items() if v is not DROP}


DROP = object()


@pytest.mark.parametrize("name, change, expected", [
    ("2wikimultihopqa", {"question": DROP}, "2wikimultihopqa.json: record 0: field 'question': missing required field"),
    ("2wikimultihopqa", {"question": 5}, "record 0: field 'question': expected a string, got int"),
    ("2wikimultihopqa", {"supporting_facts": [["Ada Quill", 0], ["Nowhere", 0]]},
     "record 0: field 'supporting_facts[1]': supporting fact title 'Nowhere' not found in corpus"),
    ("2wikimultihopqa", {"supporting_facts": [["Ada Quill"]]},
     "record 0: field 'supporting_facts[0]': expected [title, sentence index]"),
    ("2wikimultihopqa", {"supporting_facts": "Ada Quill"}, "field 'supporting_facts': expected a JSON list, got str"),
    ("2wikimultihopqa", {"context": [["Ada Quill", "not a list"]]},
     "record 0: field 'context[0]': expected [title, [sentence, ...]]"),
    ("2wikimultihopqa", {"_id": "w1", "at": 1}, "record 1: field '_id': duplicate id 'w1'"),
    ("2wikimultihopqa", {"answer": {"text": "1702"}}, "field 'answer': expected a string or a list of strings"),
    ("musique", {"paragraphs": [{"title": "Marrow", "paragraph_text": "Marrow is a city.", "is_supporting": True}]},
     "record 0: field 'paragraphs[0]': supporting paragraph 'Marrow' not found in corpus"),
    ("musique", {"paragraphs": [{"title": "Marrow", "is_supporting": True}]},
     "field 'paragraphs[0].text': missing required field"),
    ("musique", {"question_decomposition": "hop"}, "field 'question_decomposition': expected a JSON list"),
    ("popqa", {"possible_answers": "[\"cartographer\""}, "field 'possible_answers': looks like a JSON-encoded list"),
])
def test_release_bad_questions(tmp_path, name, change, expected):
    write_release(tmp_path, name)
    questions = release_questions(name)
    at = change.pop("at", 0)
    questions[at] = _edit(questions[at], change)
    write_json(tmp_path / f"{name}.json", questions)
    raises(expected, hipporag2_release_dataset, tmp_path, name)


def test_release_bad_files(tmp_path):
    raises("dataset directory not found", hipporag2_release_dataset, tmp_path / "nope", "nq")
    write_release(tmp_path, "nq")
    raises("popqa_corpus.json: file not found", hipporag2_release_dataset, tmp_path, "popqa")  # wrong name
    (tmp_path / "nq.json").write_text("[]")
    raises("nq.json: no questions in file", hipporag2_release_dataset, tmp_path, "nq")
    (tmp_path / "nq.json").write_text('[{"question": "q"},\n 7]')
    raises("nq.json: record 1: expected a JSON object, got int", hipporag2_release_dataset, tmp_path, "nq")
    (tmp_path / "nq.json").write_text('[{"question": "q"}')
    raises("nq.json:1: invalid JSON", hipporag2_release_dataset, tmp_path, "nq")
    write_json(tmp_path / "nq_corpus.json", [{"title": "A", "text": "x"}, {"title": "B"}])
    raises("nq_corpus.json: record 1: field 'text': missing required field", hipporag2_release_dataset, tmp_path, "nq")


# --- HotpotQA -------------------------------------------------------------------------------------------------


def test_hotpotqa_corpus_is_the_union_of_contexts(tmp_path):
    ds = hotpotqa_dataset(write_json(tmp_path / "hotpot_dev_distractor_v1.json", hotpotqa_records()), "hotpotqa")
    titles = [p.title for p in ds.corpus.passages]
    assert titles == ["Brin Hollow", "Ada Quill", "Marrow", "Lake Varn"]  # 'Marrow'/'Brin Hollow' shared, once
    assert ds.corpus[2].text == text_of("Marrow")  # sentences joined; their leading spaces not doubled
    q1, q2 = ds.queries
    assert q1.gold_ids == ("1", "2") and q1.answers == ("1702",)
    assert q2.gold_ids == ("2", "0") and q2.answers == ("no",)


def test_hotpotqa_test_set_without_answers(tmp_path):
    records = [{k: v for k, v in r.items() if k not in ("answer", "supporting_facts")} for r in hotpotqa_records()]
    ds = hotpotqa_dataset(write_json(tmp_path / "test.json", records), "hotpotqa")
    assert [q.answers for q in ds.queries] == [(), ()] and [q.gold_ids for q in ds.queries] == [(), ()]


@pytest.mark.parametrize("change, expected", [
    ({"context": DROP}, "record 0: field 'context': missing required field"),
    ({"supporting_facts": [["Lake Varn", 0]]},
     "record 0: field 'supporting_facts[0]': supporting fact title 'Lake Varn' names no non-empty paragraph"),
    ({"context": [["Marrow", ["ok", 3]]]}, "record 0: field 'context[0]': expected a string, got int"),
    ({"_id": "5a8b1", "at": 1}, "record 1: field '_id': duplicate id '5a8b1'"),
    ({"question": "   "}, "record 0: field 'question': must not be empty"),
])
def test_hotpotqa_bad_records(tmp_path, change, expected):
    records = hotpotqa_records()
    at = change.pop("at", 0)
    records[at] = _edit(records[at], change)
    raises(expected, hotpotqa_dataset, write_json(tmp_path / "h.json", records), "hotpotqa")


def test_hotpotqa_empty_and_non_utf8(tmp_path):
    raises("no questions in file", hotpotqa_dataset, write_json(tmp_path / "h.json", []), "hotpotqa")
    (tmp_path / "b.json").write_bytes(b'[{"_id": "x", "question": "caf\xe9"}]')
    raises("b.json:1: not valid UTF-8", hotpotqa_dataset, tmp_path / "b.json", "hotpotqa")


# --- HoVer ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus_format", ["jsonl", "json"])
def test_hover_claims_with_separate_corpus(tmp_path, corpus_format):
    claims = write_json(tmp_path / "hover_dev_release_v1.1.json", hover_claims())
    records = hover_corpus(nfd_titles=True)
    corpus = (write_jsonl(tmp_path / "wiki.jsonl", records) if corpus_format == "jsonl"
              else write_json(tmp_path / "wiki.json", records))
    ds = hover_dataset(claims, corpus, label_options=True)
    c1, c2 = ds.queries
    assert c1.question.startswith("The cartographer") and c1.answers == ("SUPPORTED",)
    assert c1.options == ("SUPPORTED", "NOT_SUPPORTED") and c1.answer_index == 0
    assert c1.gold_ids == (POS["Ada Quill"], POS["Marrow"]) and c2.answer_index == 1


def test_hover_nfd_titles_and_ids_and_no_options(tmp_path):
    claims = hover_claims()
    claims[1]["supporting_facts"] = [["Café Ostrava", 0]]  # NFC in the claim, NFD in the corpus
    claims[1]["label"] = "not supported"
    corpus = [{"id": f"w{i}", **r} for i, r in enumerate(hover_corpus(nfd_titles=True))]
    ds = read_hover(write_json(tmp_path / "c.json", claims), write_jsonl(tmp_path / "w.jsonl", corpus),
                    label_options=False)
    assert ds.queries[1].gold_ids == (f"w{len(TITLES)}",) and ds.queries[1].answers == ("NOT_SUPPORTED",)
    assert ds.queries[0].options == () and ds.queries[0].answer_index is None


@pytest.mark.parametrize("claims_change, corpus_lines, expected", [
    ({"label": "MAYBE"}, None, "c.json: record 0: field 'label': expected one of ['SUPPORTED', 'NOT_SUPPORTED']"),
    ({"claim": DROP}, None, "record 0: field 'claim': missing required field"),
    ({"supporting_facts": [["Atlantis", 0]]}, None,
     "record 0: field 'supporting_facts[0]': supporting fact title 'Atlantis' not found in corpus"),
    ({}, ['{"title": "A", "text": "x"}', '{"text": "y"}'], "w.jsonl:2: field 'title': missing required field"),
    ({}, ['{"id": "a", "title": "A", "text": "x"}', '{"id": "a", "title": "B", "text": "y"}'],
     "w.jsonl:2: field 'id': duplicate id 'a' (first seen on line 1)"),
    ({}, [], "w.jsonl: corpus is empty"),
])
def test_hover_bad_input(tmp_path, claims_change, corpus_lines, expected):
    claims = hover_claims()
    claims[0] = _edit(claims[0], claims_change)
    corpus = tmp_path / "w.jsonl"
    if corpus_lines is None:
        write_jsonl(corpus, hover_corpus())
    else:
        corpus.write_text("".join(line + "\n" for line in corpus_lines))
    raises(expected, read_hover, write_json(tmp_path / "c.json", claims), corpus, label_options=True)


# --- multiple choice ----------------------------------------------------------------------------------------------


def test_multiple_choice_field_variants(tmp_path):
    queries = write_jsonl(tmp_path / "dev.jsonl", multiple_choice_records())
    corpus = write_jsonl(tmp_path / "passages.jsonl", [{"title": t, "text": text_of(t)} for t in TITLES])
    ds = multiple_choice_dataset(queries, cop_base=0, corpus=corpus)
    generic, medmcqa, medqa, cosmos = ds.queries
    assert generic.options == ("Marrow Brook", "Tessel River", "Brin Creek") and generic.answer_index == 1
    assert generic.answers == ("Tessel River",) and generic.gold_ids == (POS["Tessel River"],)
    assert medmcqa.options == ("1650", "1702", "1851", "1900") and medmcqa.answers == ("1702",)
    assert medqa.id == "3" and medqa.answer_index == 2 and medqa.answers == ("Ada Quill",)  # id = line number
    assert cosmos.answer_index == 1 and cosmos.gold_ids == ("ctx0",)
    assert len(ds.corpus) == len(TITLES) + 1 and ds.corpus[len(TITLES)].id == "ctx0"


def test_multiple_choice_contexts_only_json_list_and_cop_base(tmp_path):
    records = [{"id": f"q{i}", "context": "Shared story." if i < 2 else "Another story.", "question": "Why?",
                "answer0": "a", "answer1": "b", "label": i % 2} for i in range(3)]
    ds = read_multiple_choice(write_json(tmp_path / "cosmos.json", records), cop_base=0)
    assert ds.corpus.ids == ["ctx0", "ctx1"] and [q.gold_ids for q in ds.queries] == [("ctx0",), ("ctx0",), ("ctx1",)]
    med = [{"id": "m", "question": "?", "opa": "x", "opb": "y", "opc": "z", "opd": "w", "cop": 4, "context": "c"},
           {"id": "t", "question": "?", "opa": "x", "opb": "y", "cop": -1, "context": "c"}]
    path = write_jsonl(tmp_path / "medmcqa.jsonl", med)
    one_based = read_multiple_choice(path, cop_base=1).queries
    assert one_based[0].answer_index == 3 and one_based[1].answer_index is None and one_based[1].answers == ()
    raises("medmcqa.jsonl:1: field 'cop': answer index 4 is out of range for 4 options (cop counted from "
           "data.cop_base=0)", read_multiple_choice, path, cop_base=0)


@pytest.mark.parametrize("record, expected", [
    ({"id": "x", "question": "?", "context": "c"}, "q.jsonl:1: field 'options': missing required field"),
    ({"id": "x", "question": "?", "options": ["only"], "context": "c"}, "needs at least two options, got 1"),
    ({"id": "x", "question": "?", "options": "a|b", "context": "c"}, "field 'options': expected a list or an object"),
    ({"id": "x", "question": "?", "options": ["a", ""], "context": "c"}, "field 'options[1]': must not be empty"),
    ({"id": "x", "question": "?", "options": {"A": "a", "B": "b"}, "answer_idx": "F", "context": "c"},
     "field 'answer_idx': 'F' is neither an option key ['A', 'B'] nor an option's text"),
    ({"id": "x", "question": "?", "options": ["a", "b"], "answer_index": 2, "context": "c"},
     "field 'answer_index': answer index 2 is out of range for 2 options"),
    ({"id": "x", "question": "?", "answer0": "a", "answer1": "b", "label": "one", "context": "c"},
     "field 'label': expected an integer, got str"),
    ({"id": "x", "question": "?", "options": ["a", "b"], "answer_index": 0},
     "q.jsonl: no passages to retrieve from: give a corpus file (data.corpus) or records with a 'context'"),
    ({"id": "x", "question": "?", "options": ["a", "b"], "gold_ids": ["p9"], "context": "c"},
     "field 'gold_ids': unknown passage id(s) ['p9'] not in corpus (no corpus file given)"),
    ({"id": "x", "question": "?", "options": ["a", "b"], "context": 3}, "field 'context': expected a string, got int"),
])
def test_multiple_choice_bad_records(tmp_path, record, expected):
    raises(expected, read_multiple_choice, write_jsonl(tmp_path / "q.jsonl", [record]), cop_base=0)


def test_multiple_choice_bad_files(tmp_path):
    raises("q.jsonl: file not found", read_multiple_choice, tmp_path / "q.jsonl", cop_base=0)
    (tmp_path / "q.jsonl").write_text('{"id": "a", "question": "?", "options": ["x", "y"], "context": "c"}\n{oops\n')
    raises("q.jsonl:2: invalid JSON", read_multiple_choice, tmp_path / "q.jsonl", cop_base=0)
    raises("cop_base must be 0 or 1, got 2", read_multiple_choice, tmp_path / "q.jsonl", cop_base=2)
    (tmp_path / "q.jsonl").write_text("")
    raises("q.jsonl: no questions in file", read_multiple_choice, tmp_path / "q.jsonl", cop_base=0)


def test_error_messages_name_the_file(tmp_path):
    """Every message above is also a one-liner with the path first (what the CLI prints after 'error: ')."""
    path = write_json(tmp_path / "h.json", [{"_id": "x"}])
    text = raises("field 'question'", hotpotqa_dataset, path, "hotpotqa")
    assert re.match(re.escape(str(path)) + r": record 0: ", text)
    assert json.loads(path.read_text())  # the fixture itself is valid JSON: the error is about the field
