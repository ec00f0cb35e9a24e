"""Keyword sets per passage with YAKE (the keyword-extraction library; nothing hand-written here).

``yake.KeywordExtractor`` scores candidate n-grams of one text by statistical features (casing, position,
frequency, context spread); we keep its ``top`` best keywords, casefolded and stripped, as the passage's set
``K_i``. Results are cached on disk (JSON keyed by a hash of the settings and the texts) because the explicit
graph of every HyperRAG index needs them and YAKE costs a few milliseconds per passage.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from hyperrag.config.validation import PositiveInt, Probability, settings
from hyperrag.utils.hashing import stable_digest

log = logging.getLogger(__name__)


@settings
class KeywordSettings:
    """YAKE settings (part of the cache key).

    Attributes:
        language: YAKE stop-word language.
        max_ngram: longest keyword in words.
        top: keywords kept per passage.
        dedup_threshold: YAKE's ``dedupLim`` (drop candidates this similar to a better one).
    """

    language: str
    max_ngram: PositiveInt
    top: PositiveInt
    dedup_threshold: Probability


def _normalise(keyword: str) -> str:
    return " ".join(keyword.casefold().split())


def extract_keywords(texts: Sequence[str], settings: KeywordSettings,
                     cache_dir: str | Path | None = None, show_progress: bool = True) -> list[frozenset[str]]:
    """Keyword set of every text.

    Args:
        texts: N passage texts.
        settings: YAKE settings.
        cache_dir: directory of the JSON cache (``None``: no cache).
        show_progress: tqdm bar while extracting.

    Returns:
        N frozensets of casefolded keywords (empty for a text YAKE finds nothing in).
    """
    import yake
    from tqdm.auto import tqdm

    texts = list(texts)
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"keywords-{stable_digest(asdict(settings), texts, length=16)}.json"
        if path.exists():
            return [frozenset(k) for k in json.loads(path.read_text())]
    extractor = yake.KeywordExtractor(lan=settings.language, n=settings.max_ngram, top=settings.top,
                                      dedupLim=settings.dedup_threshold)
    out: list[frozenset[str]] = []
    for text in tqdm(texts, desc="keywords (yake)", disable=not show_progress or len(texts) < 200, leave=False):
        found = extractor.extract_keywords(text) if text.strip() else []
        out.append(frozenset(k for k in (_normalise(kw) for kw, _ in found) if k))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps([sorted(k) for k in out]))
        tmp.replace(path)
        log.info("keywords of %d passages cached in %s", len(out), path)
    return out
