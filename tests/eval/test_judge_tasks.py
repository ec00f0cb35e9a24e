"""The LLM tasks added for evaluation and HolisQA: prompts, parsing, ID checks."""

from hyperrag.llm.tasks import get_task

SENTS = [("a#s0", "Anna was born in Oslo."), ("a#s1", "Oslo is the capital of Norway."),
         ("a#s2", "Norway uses the krone.")]


def test_answer_relevancy_parse():
    task = get_task("answer_relevancy")
    user = task.messages({"answer": "Warsaw", "n": 2})[1]["content"]
    assert "Write 2 questions" in user and "<data>\nWarsaw\n</data>" in user
    parsed = task.parse('{"questions": ["Where?", "where?", "Which city?", "Extra?"], "noncommittal": "0"}',
                        {"answer": "Warsaw", "n": 2})
    assert parsed.value == {"questions": ["Where?", "Which city?"], "noncommittal": False}
    assert task.parse('{"questions": ["?"], "noncommittal": 1}', {"answer": "x"}).value["noncommittal"] is True


def test_holisqa_generation_maps_ids_and_drops_unknown():
    task = get_task("holisqa_generation")
    inputs = {"sentences": SENTS, "n_pairs": 1, "min_sentences": 3}
    user = task.messages(inputs)[1]["content"]
    assert '<item id="S3">\nNorway uses the krone.\n</item>' in user and "3 to 6 sentence IDs" in user and "2-4 sentences" in user
    parsed = task.parse('{"pairs": [{"question": "Currency of Anna\'s birth country?", "answer": "krone", '
                        '"sentence_ids": ["S1", "S2", "S3", "S9"]}]}', inputs)
    assert parsed.value == [{"question": "Currency of Anna's birth country?", "answer": "krone",
                             "sentence_ids": ["a#s0", "a#s1", "a#s2"]}] and parsed.dropped_ids == 1


def test_holisqa_necessity_parse():
    task = get_task("holisqa_necessity")
    inputs = {"question": "Currency?", "sentences": SENTS[:2]}
    assert "Norway uses" not in task.messages(inputs)[1]["content"]
    assert task.parse('{"answerable": false, "answer": "krone"}', inputs).value == {"answerable": False, "answer": ""}
    assert task.parse('{"answerable": "yes", "answer": "krone"}', inputs).value == {"answerable": True,
                                                                                   "answer": "krone"}
