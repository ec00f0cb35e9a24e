"""QASC (Khot et al., 2020) as HugRAG's Table 4 uses it: eight-way multiple-choice science questions, each
composed from two facts; the corpus is the facts the questions are composed from (the two facts of a question are
its gold passages).

Reads the release's ``QASC_Dataset/{train,dev}.jsonl`` as published (the test split has no answers): records
``{"id", "question": {"stem", "choices": [{"text", "label"}]}, "answerKey", "fact1", "fact2"}``. Identical fact
texts share one passage id (``qasc-<n>``). The question keeps its options (the reader answers with one of them).

    ds = read_qasc("paper_data/qasc.jsonl")
"""

from __future__ import annotations

from pathlib import Path

from hyperrag.data.records import check_text, iter_records
from hyperrag.data.types import Corpus, Dataset, Passage, Query
from hyperrag.errors import InputError


def read_qasc(path: str | Path, name: str = "qasc") -> Dataset:
    """Args:
        path: a QASC JSONL file with answers and facts (train or dev).
        name: the dataset's name.
    Raises:
        InputError: a missing field or a malformed record (naming the file, line and field).
    """
    path = Path(path)
    passages: list[Passage] = []
    ids: dict[str, str] = {}
    queries: list[Query] = []
    for where, rec in iter_records(path):
        q = rec.get("question")
        if not isinstance(q, dict):
            raise where.error("expected an object with stem and choices", "question")
        stem = check_text(q.get("stem"), where, "question.stem")
        choices = q.get("choices")
        if not isinstance(choices, list) or not choices:
            raise where.error("expected a list of choices", "question.choices")
        labels = [str(c.get("label", "")) if isinstance(c, dict) else "" for c in choices]
        texts = [check_text(c.get("text") if isinstance(c, dict) else None, where, f"question.choices[{i}].text")
                 for i, c in enumerate(choices)]
        key = rec.get("answerKey")
        if key not in labels:
            raise where.error(f"answerKey {key!r} names none of the choices {labels}", "answerKey")
        gold = []
        for field in ("fact1", "fact2"):
            text = check_text(rec.get(field), where, field)
            pid = ids.get(text)
            if pid is None:
                pid = ids[text] = f"qasc-{len(ids)}"
                passages.append(Passage(pid, "", text))
            gold.append(pid)
        index = labels.index(key)
        qid = str(rec.get("id", where.line))
        queries.append(Query(qid, stem, (texts[index],), tuple(dict.fromkeys(gold)), options=tuple(texts),
                             answer_index=index))
    if not queries:
        raise InputError("no questions in file", path=path)
    return Dataset(name, Corpus(passages, source=str(path)), queries)
