"""QA reader: answer each query from its top retrieved passages with the LLM (``grounded_answer`` task)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperrag.data.types import Corpus


def answer_queries(llm: Any, questions: Sequence[str], ranked_ids: Sequence[Sequence[str]], corpus: Corpus,
                   top_n: int = 5, progress: bool | str = "answers") -> list[dict[str, Any]]:
    """Per query ``{"answer": str, "supporting_ids": [passage id], "answer_ok": bool, "answer_error": str?}``.

    Args:
        llm: an available :class:`hyperrag.llm.LLM`.
        questions: B questions.
        ranked_ids: per query, passage ids best first; the first ``top_n`` are shown to the model.
        corpus: where the passage texts come from.
    """
    inputs = [{"question": q, "passages": [(pid, corpus[corpus.position(pid)].content) for pid in ids[:top_n]]}
              for q, ids in zip(questions, ranked_ids)]
    results = llm.complete_structured_batch("grounded_answer", inputs, progress=progress)
    out = []
    for res in results:
        if res.ok:
            out.append({"answer": res.value["answer"], "supporting_ids": list(res.value["supporting"]),
                        "answer_ok": True})
        else:  # recorded, not raised: the retrieval result stays usable
            out.append({"answer": "", "supporting_ids": [], "answer_ok": False,
                        "answer_error": str(getattr(res, "error_kind", "failed"))})
    return out
