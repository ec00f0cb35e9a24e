"""Token counts for context-window budgets: a words × 1.3 approximation or a real tokenizer."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

TokenCounter = Callable[[str], int]


def approx_tokens(text: str, tokens_per_word: float = 1.3) -> int:
    """``ceil(words × 1.3)``: close to BPE counts for English prose, no tokenizer needed."""
    return math.ceil(len(text.split()) * tokens_per_word)


def make_token_counter(spec: str = "approx") -> TokenCounter:
    """A counter from a config string.

    Args:
        spec: ``approx`` (words × 1.3), ``words:<ratio>`` (words × ratio), or a Hugging Face tokenizer
            name/folder already on disk (loaded offline with ``transformers.AutoTokenizer``).
    """
    if spec == "approx":
        return approx_tokens
    if spec.startswith("words:"):
        ratio = float(spec.split(":", 1)[1])
        return lambda text: approx_tokens(text, ratio)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(spec, local_files_only=True)
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False))


def count_tokens(texts: Sequence[str], counter: TokenCounter | str = "approx") -> list[int]:
    count = make_token_counter(counter) if isinstance(counter, str) else counter
    return [count(t) for t in texts]
