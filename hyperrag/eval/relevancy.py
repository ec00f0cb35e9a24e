"""Answer relevancy: does the answer address the question that was asked?

* :func:`llm_answer_relevancy` — Ragas' response relevancy: an LLM writes ``n`` questions the answer
  responds to (task ``answer_relevancy``), they are embedded, and the score is their mean cosine to the real
  question, times 0 when the judge flags the answer as noncommittal;
* :func:`embedding_answer_relevancy` — no LLM: the cosine between the embedded question and answer
  (MiniLM by default).

Both return per query a value in [-1, 1] (in practice [0, 1]); an empty (failed) or abstaining answer scores 0 — it
is not left out, which would reward abstaining; a query whose judge call failed is ``None`` (with the error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.eval.text import is_abstention

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel


def _unit(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.normalize(x.float(), dim=-1)


def embedding_answer_relevancy(encoder: Encoder, questions: Sequence[str],
                               answers: Sequence[str | None]) -> list[float | None]:
    """Cosine(question, answer) per query, 0 for failed or abstaining answers; ``encoder.encode(texts) -> [N, D]``."""
    todo = [i for i, a in enumerate(answers) if not is_abstention(a)]
    out: list[float | None] = [0.0] * len(answers)
    if not todo:
        return out
    q = _unit(encoder.encode([questions[i] for i in todo], desc="relevancy questions"))
    a = _unit(encoder.encode([str(answers[i]) for i in todo], desc="relevancy answers"))
    for i, s in zip(todo, (q * a).sum(-1).tolist()):
        out[i] = float(s)
    return out


def ragas_relevancy(question_vec: torch.Tensor, generated_vecs: torch.Tensor, noncommittal: bool) -> float:
    """Mean cosine of the generated questions to the real one, zeroed for noncommittal answers."""
    if noncommittal or generated_vecs.numel() == 0:
        return 0.0
    return float((_unit(generated_vecs) @ _unit(question_vec)).mean())


def llm_answer_relevancy(llm: LanguageModel, encoder: Encoder, questions: Sequence[str],
                         answers: Sequence[str | None],
                         n_questions: int = 3, contexts: Sequence[str] | None = None,
                         progress: bool | str = False) -> list[dict[str, Any] | None]:
    """Ragas-style answer relevancy with an LLM judge.

    Returns per query ``{"score": float, "questions": [generated], "noncommittal": bool}`` (score 0, noncommittal,
    for a failed or abstaining answer) or ``{"judge_error": str}`` when the judge call failed.
    """
    todo = [i for i, a in enumerate(answers) if not is_abstention(a)]
    out: list[dict[str, Any] | None] = [{"score": 0.0, "questions": [], "noncommittal": True} for _ in answers]
    if not todo:
        return out
    inputs = [{"answer": answers[i], "n": n_questions, **({"context": contexts[i]} if contexts else {})}
              for i in todo]
    results = llm.complete_structured_batch("answer_relevancy", inputs, progress=progress and "answer relevancy")
    judged = [(i, r.value) for i, r in zip(todo, results) if r.ok]
    for i, r in zip(todo, results):
        if not r.ok:
            out[i] = {"judge_error": str(r.error_kind or "failed")}
    if not judged:
        return out
    generated = [q for _, v in judged for q in v["questions"]]
    q_vecs = encoder.encode([questions[i] for i, _ in judged], desc="relevancy questions")
    g_vecs = encoder.encode(generated, desc="generated questions")
    start = 0
    for row, (i, v) in enumerate(judged):
        n = len(v["questions"])
        score = ragas_relevancy(q_vecs[row], g_vecs[start:start + n], v["noncommittal"])
        start += n
        out[i] = {"score": score, "questions": v["questions"], "noncommittal": v["noncommittal"]}
    return out
