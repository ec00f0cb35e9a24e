"""HolisQA builder with the scripted fake LLM server (a test double): the citation and necessity filters
drop exactly the pairs they should, and the output reads back as a query file with gold sentences."""

import json
import re
import sys

import pytest
from hydra import compose, initialize_config_dir

from hyperrag.config import as_dict
from hyperrag.data import jsonl_dataset
from hyperrag.data.types import Corpus, Passage
from hyperrag.eval.suite import EvalInputs, evaluate_rows
from hyperrag.holisqa import HolisQABuilder, corpus_sentences, holisqa_settings, make_slices, write_dataset
from tests.conftest import REPO_ROOT
from tests.eval.conftest import schema_text, user_prompt

CORPUS = Corpus([
    Passage("a", "Anna", "Anna was born in Oslo. Oslo is the capital of Norway. Norway uses the krone. Anna likes tea."),
    Passage("b", "Ben", "Ben lives in Lyon. Lyon is in France. France uses the euro. Ben's home is in Lyon."),
])
S = {s.id: s.text for s in corpus_sentences(CORPUS)}
KRONE = "Anna was born in Oslo, the capital of Norway. Norway pays in krone."
EURO = "Ben lives in Lyon, which is in France. France pays in euro."
PAIRS = [  # (question, answer, cited short IDs)
    ("Which currency is used in the country whose capital is Anna's birthplace?", KRONE, ["S1", "S2", "S3"]),
    ("Which currency is used where Ben lives?", EURO, ["S5", "S6", "S7", "S8"]),        # S5 = S8: redundant
    ("Where was Anna born?", "Anna was born in Oslo. It is a capital.", ["S1", "S2"]),  # too few sentences
    ("In which country was Anna born?", "Anna was born in Oslo. Oslo is in Norway.", ["S1", "S2", "S99"]),  # S99
    ("What does Anna drink?", "Anna drinks coffee. She drinks it daily.", ["S1", "S4", "S2"]),  # not derivable
    ("Which currency does Norway use?", "krone", ["S1", "S2", "S3"]),                   # a short entity answer
    ("What do we know about Anna and Ben?", "Two people. Two cities.", ["S1", "S2", "S3", "S4", "S5", "S6", "S7"]),
]
# what a perfect reader can derive: answer → alternative sets of sentence ids that suffice
NEEDS = {KRONE: [{"a#s0", "a#s1", "a#s2"}], EURO: [{"b#s0", "b#s1", "b#s2"}, {"b#s3", "b#s1", "b#s2"}],
         "Anna likes tea.": [{"a#s3"}], "Anna was born in Oslo. Oslo is in Norway.": [{"a#s0", "a#s1"}]}
ANSWER_OF = {q: a for q, a, _ in PAIRS} | {"What does Anna drink?": "Anna likes tea."}


def responder(body):
    spec, prompt = schema_text(body), user_prompt(body)
    if '"pairs"' in spec:
        return json.dumps({"pairs": [{"question": q, "answer": a, "sentence_ids": ids} for q, a, ids in PAIRS]})
    if '"answerable"' in spec:
        question = prompt.split("Question:")[1].split("<data>")[1].split("</data>")[0].strip()
        shown = {sid for sid, text in S.items() if text in prompt.split("Question:")[0]}
        answer = ANSWER_OF[question]
        ok = any(need <= shown for need in NEEDS[answer])
        return json.dumps({"answerable": ok, "answer": answer if ok else ""})
    raise AssertionError(spec)


def test_slices_are_contiguous_windows():
    sents = corpus_sentences(CORPUS)
    assert [s.id for s in sents][:5] == ["a#s0", "a#s1", "a#s2", "a#s3", "b#s0"]
    # windows stay inside one passage (HugRAG F.2): none joins a#s3 to b#s0
    assert [[s.id for s in sl] for sl in make_slices(sents, 3, 1)] == [
        ["a#s0", "a#s1", "a#s2"], ["a#s1", "a#s2", "a#s3"], ["b#s0", "b#s1", "b#s2"], ["b#s1", "b#s2", "b#s3"]]
    assert [[s.id for s in sl] for sl in make_slices(sents, 8)] == [[f"a#s{j}" for j in range(4)],
                                                                     [f"b#s{j}" for j in range(4)]]  # short passage
    assert all(len({s.passage_id for s in sl}) == 1 for sl in make_slices(sents, 3, 2))
    assert len(make_slices(sents, 3, 1, max_slices=2, seed=0)) == 2
    assert ["a#s3", "b#s0"] == [s.id for s in make_slices(sents, 2, 1, within_passage=False)[3]]  # the old rule


@pytest.mark.parametrize("context", ["cited", "slice"])
def test_necessity_filter_drops_pairs(scripted_llm, tmp_path, context):
    llm = scripted_llm(responder)
    # one slice over both passages (slice_scope=corpus, the earlier rule): the scripted pairs cite across them
    settings = holisqa_settings(slice_sentences=8, max_slices=None, necessity_context=context, slice_scope="corpus")
    result = HolisQABuilder(llm, settings).build(CORPUS)
    assert [q["answers"] for q in result.queries] == [[KRONE]]
    reasons = {r["question"]: r["reason"] for r in result.rejected}
    # S5 and S8 both say Ben lives in Lyon: either can be dropped
    assert reasons["Which currency is used where Ben lives?"] == "not necessary: ['b#s0', 'b#s3']"
    assert reasons["Where was Anna born?"] == "cites 2 < 3 sentences"
    assert reasons["In which country was Anna born?"] == "cites 2 < 3 sentences"
    assert reasons["What does Anna drink?"] == "answer not derivable from its cited sentences"
    assert reasons["Which currency does Norway use?"] == "answer has 1 sentences, not 2-4"  # no entity answers
    assert reasons["What do we know about Anna and Ben?"] == "cites 7 > 6 sentences"
    q = result.queries[0]
    assert q["gold_ids"] == ["a"] and q["gold_sentence_ids"] == ["a#s0", "a#s1", "a#s2"]
    assert q["gold_sentences"][2] == {"id": "a#s2", "passage_id": "a", "text": "Norway uses the krone."}
    assert result.stats["pairs_kept"] == 1 and result.stats["necessity_calls"] == (1 + 3) + (1 + 4) + (1 + 3)
    assert result.stats["rejected_by_reason"] == {"not_necessary": 1, "too_few_citations": 2, "not_derivable": 1,
                                                  "answer_length": 1, "too_many_citations": 1}

    # the output is a valid query file with gold sentences: sentence-level context recall applies
    path = write_dataset(result, CORPUS, tmp_path / "holisqa", as_dict(settings))
    data = jsonl_dataset(tmp_path / "holisqa" / "corpus.jsonl", path)
    assert data.queries[0].gold_ids == ("a",) and data.queries[0].answers == (KRONE,)
    row = {**json.loads(path.read_text().splitlines()[0]), "ranked_ids": ["b", "a"]}
    at1, _, _ = evaluate_rows(EvalInputs(rows=[row], corpus=CORPUS, context_top_n=1), ["context_recall"])
    at2, _, _ = evaluate_rows(EvalInputs(rows=[row], corpus=CORPUS, context_top_n=2), ["context_recall"])
    assert at1["context_recall"] == 0.0 and at2["context_recall"] == 100.0


def generic(body):
    """Any slice: one pair citing the first three sentences, derivable only when all three are shown."""
    spec, prompt = schema_text(body), user_prompt(body)
    if '"pairs"' in spec:
        first = re.findall(r'<item id="(S\d+)">\n(.*?)\n</item>', prompt, flags=re.DOTALL)[:3]
        return json.dumps({"pairs": [{"question": "What links " + " / ".join(t for _, t in first) + "?",
                                      "answer": "They are linked. The link is shared.",
                                      "sentence_ids": [i for i, _ in first]}]})
    question = prompt.split("Question:")[1]
    needed = question.split("What links ")[1].split("?")[0].split(" / ")
    ok = all(n in prompt.split("Question:")[0] for n in needed)
    return json.dumps({"answerable": ok, "answer": "They are linked. The link is shared." if ok else ""})


def test_entry_point_writes_a_query_file(scripted_llm, tmp_path):
    sys.path.insert(0, str(REPO_ROOT))
    from hyperrag.holisqa.__main__ import run

    llm = scripted_llm(generic)
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cfg = compose("holisqa", overrides=[f"out={tmp_path / 'out'}", f"cache_dir={tmp_path / 'cache'}",
                                            "data=sample", "llm=openai_compatible", f"llm.base_url={llm.base_url}",
                                            "llm.model=fake-model", "llm.show_usage=false", "builder.max_slices=2",
                                            # the sample's passages hold 1-2 sentences: too short for slices of
                                            # three cited sentences inside one passage
                                            "builder.slice_scope=corpus"])
    cfg.llm.api_key_env = None
    stats = run(cfg)
    assert stats["slices"] == 2 and stats["pairs_kept"] == 2
    rows = [json.loads(line) for line in (tmp_path / "out" / "queries.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["holisqa-sample-00000", "holisqa-sample-00001"]
    assert all(len(r["gold_sentences"]) == 3 for r in rows)
    assert json.loads((tmp_path / "out" / "build.json").read_text())["settings"]["min_sentences"] == 3
