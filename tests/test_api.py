"""The Python API (hyperrag.api.RAG): the README's API example runs verbatim, raw documents are chunked, inserted,
deleted and answered, and every LLM step that cannot run is counted."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

LONG_TEXT = " ".join(
    f"Paragraph {i}: the river Odra flows past the town of Opole{i} and feeds the lakes near Wroclaw{i}." for i in range(60))


def readme_snippet() -> str:
    """The Python code block of the README's "Python API" section."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python API"):]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def run_snippet(code: str, cwd, monkeypatch) -> tuple[dict, str]:
    monkeypatch.chdir(cwd)
    scope: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md (Python API)", "exec"), scope)  # noqa: S102 - the README's own code
    return scope, out.getvalue()


def check_quick_start(scope: dict, printed: str, tmp_path) -> list[dict]:
    lines = printed.strip().splitlines()
    assert "'p04'" in lines[0]  # Pierre Curie's passage among the top 3
    manifest = json.loads((tmp_path / "rag_index" / "manifest.json").read_text())
    assert [u["op"] for u in manifest["updates"]] == ["insert", "delete"]
    assert manifest["chunking"]["library"] == "semchunk" and manifest["chunking"]["chunk_size"] == 200
    rag = scope["rag"]
    ids = {h.passage_id for h in rag.retrieve("Gdansk port on the Baltic", k=12)[0]}
    assert "p10" not in ids and any(i.startswith("doc-") for i in ids)  # deleted one gone, raw text inserted
    answer = scope["a"]
    assert {"p01", "p03"} & {h.passage_id for h in answer.passages}
    return manifest["updates"]


def test_readme_quick_start_runs_llm_free(tmp_path, monkeypatch):
    """The snippet verbatim, only its backend switched to llm="none": nothing is extracted or answered by a model,
    and both skipped steps are counted."""
    code = readme_snippet()
    assert code.count('llm="local"') == 1
    scope, printed = run_snippet(code.replace('llm="local"', 'llm="none"'), tmp_path, monkeypatch)
    updates = check_quick_start(scope, printed, tmp_path)
    assert updates[0]["extraction"] == {"given": 0, "extracted": 0, "failed": 0, "openie_skipped": 1}
    rag, answer = scope["rag"], scope["a"]
    assert answer.answer is None and not answer.ok and answer.evidence == answer.passages
    assert rag.llm_steps_skipped["openie"] == 1 and rag.llm_steps_skipped["answer"] == 1
    assert rag.llm_steps_skipped["fact_filter"] >= 2  # hipporag2's recognition memory, per question


@pytest.mark.llm
@pytest.mark.slow
def test_readme_quick_start_with_the_embedded_llm(tmp_path, monkeypatch):
    """The snippet verbatim with SmolLM2 (llama.cpp): the inserted raw text is extracted by it, questions answered."""
    scope, printed = run_snippet(readme_snippet(), tmp_path, monkeypatch)
    updates = check_quick_start(scope, printed, tmp_path)
    extraction = updates[0]["extraction"]
    assert extraction["openie_skipped"] == 0 and extraction["extracted"] + extraction["failed"] == 1
    rag, answer = scope["rag"], scope["a"]
    assert rag.llm.accounting.total().calls >= 3  # OpenIE (NER + triples), fact filter, answer: cached or sent
    assert not rag.llm_steps_skipped["openie"] and not rag.llm_steps_skipped["answer"]
    assert answer.ok and isinstance(answer.answer, str) and answer.answer.strip()
    assert answer.evidence and all(h.text for h in answer.evidence)


def test_raw_documents_are_chunked_inserted_and_deleted(tmp_path):
    from hyperrag import RAG
    from hyperrag.index.passages import index_passage_ids

    with RAG("dense", index_dir=tmp_path / "idx", llm="none", overrides=["chunking.chunk_size=120"]) as rag:
        built = rag.index([{"id": "odra", "title": "Odra", "text": LONG_TEXT}, "Marie Curie was born in Warsaw."])
        ids, _, _ = index_passage_ids(tmp_path / "idx")
        odra = [i for i in ids if i.startswith("odra#")]
        assert len(odra) > 3 and built["passages"] == len(ids) == len(odra) + 1
        assert built["extraction"]["openie_skipped"] == len(ids)
        hits = rag.retrieve(["Where was Marie Curie born?"], k=2)[0]
        assert hits[0].passage_id.startswith("doc-") and hits[0].text == "Marie Curie was born in Warsaw."
    # another pipeline over the same index inserts with the chunking the index recorded, not its own
    with RAG("dense", index_dir=tmp_path / "idx", llm="none", overrides=["chunking.chunk_size=40"]) as rag:
        rag.insert([{"id": "odra2", "text": LONG_TEXT.replace("Odra", "Warta")}])
        ids2, _, _ = index_passage_ids(tmp_path / "idx")
        assert len([i for i in ids2 if i.startswith("odra2#")]) == len(odra)
        removed = rag.delete(["odra"])
        assert removed["removed_passages"] == len(odra)
        assert not [i for i in index_passage_ids(tmp_path / "idx")[0] if i.startswith("odra#")]
        with pytest.raises(InputError, match="no document or passage 'odra'"):
            rag.delete(["odra"])


def test_entity_methods_need_triples_and_bad_settings_stop(tmp_path):
    from hyperrag import RAG

    rag = RAG("hipporag2", index_dir=tmp_path / "idx", llm="none")
    with pytest.raises(InputError, match="hipporag2 walks an entity graph, and this index has no triples"):
        rag.index(["Marie Curie was born in Warsaw.", "Warsaw lies on the Vistula."])
    with pytest.raises(InputError, match="method.retriever.damping"):
        RAG("hipporag2", index_dir=tmp_path / "x", llm="none", damping=1.5)
    with pytest.raises(InputError, match="no index here yet"):
        RAG("dense", index_dir=tmp_path / "empty", llm="none").retrieve("q")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a hyperrag index"):
        RAG("dense", index_dir=tmp_path / "other", llm="none").index(["text"])


@pytest.mark.slow
@pytest.mark.parametrize("method", ["bm25", "catrag", "hugrag", "hyperrag", "cdfrag", "linearrag"])
def test_every_method_through_the_api(tmp_path, method):
    """Each method builds its own stages into the index directory and answers with evidence (LLM-free forms)."""
    from hyperrag import RAG
    from hyperrag.data import sample_documents

    trained = {"models_dir": str(tmp_path / "models")} if method == "hyperrag" else {}  # its ball: not in the repo
    with RAG(method, index_dir=tmp_path / "idx", llm="none", **trained) as rag:
        rag.index(sample_documents())
        hits = rag.retrieve(["Into which sea does the river that flows through Marie Curie's birthplace empty?"], k=5)
        assert len(hits[0]) == 5 and {"p01", "p02", "p03"} & {h.passage_id for h in hits[0]}
        answer = rag.answer(["Who was the husband of Marie Curie's elder daughter?"])[0]
        assert answer.passages and (answer.answer is None or answer.evidence)
