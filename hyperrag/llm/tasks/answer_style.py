"""The answer style every answering task takes (the run's ``answer_style``): ``short`` or ``explanatory``.

A task that mixes in :class:`StyledAnswer` is built as ``Task(style=...)``; the explanatory style is its own cache
variant and has room for the explanation (``max_tokens``). Explanations are bounded at 1,000 characters: llama.cpp
compiles a longer JSON-schema bound into a grammar that crashes its server.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

AnswerStyle = Literal["short", "explanatory"]
ANSWER_STYLES: tuple[str, ...] = ("short", "explanatory")
#: an explanatory answer (bounded for grammar-constrained decoding, see the module docstring)
LongText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=1000)]


class StyledAnswer:
    """Mixin: ``style`` checked at construction, the ``explanatory`` variant and its token budget."""

    SHORT_MAX_TOKENS = 256
    EXPLANATORY_MAX_TOKENS = 768

    def __init__(self, style: AnswerStyle = "short") -> None:
        if style not in ANSWER_STYLES:
            raise ValueError(f"answer style must be one of {ANSWER_STYLES}, got {style!r}")
        self.style = style

    @property
    def variant(self) -> str:
        return "" if self.style == "short" else self.style

    @property
    def explanatory(self) -> bool:
        return self.style == "explanatory"

    @property
    def max_tokens(self) -> int:
        return self.EXPLANATORY_MAX_TOKENS if self.explanatory else self.SHORT_MAX_TOKENS
