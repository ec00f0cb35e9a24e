"""The spaCy stand-in's entities against a released LLM extraction (``extractor=spacy`` vs e.g. GPT-3.5's OpenIE).

Per passage, the entity names of both extractions are normalised (lower case, punctuation to spaces, a leading
article dropped) and compared as sets: precision = shared / spaCy's, recall = shared / the reference's. The figures
are macro means over the passages with entities on that side, with BCa intervals over passages
(:func:`hyperrag.eval.intervals.mean_interval`); the micro (pooled) ratios are printed beside them. Also: the
extraction's seconds (parses cached: a rerun reads them; ``--fresh`` parses into a temporary cache) and triples per
passage on both sides.

    python benchmarks/spacy_extraction_quality.py --dir ../shared/data/musique_dev \\
        --reference ../shared/data/musique_dev/openie_gpt-3.5-turbo-1106.json [--triples title_subject]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_results import emit


def norm(name: str) -> str:
    """A comparable entity name: lower case, punctuation to spaces, a leading article dropped."""
    text = re.sub(r"[\W_]+", " ", name.lower()).strip()
    return re.sub(r"^(the|a|an) ", "", text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="a MuSiQue-style folder (corpus.json)")
    ap.add_argument("--reference", required=True, help="the released OpenIE file (docs[i] <-> corpus[i])")
    ap.add_argument("--triples", default="title_subject", help="the spaCy triple design (extractor.triples)")
    ap.add_argument("--cache", default=None, help="cache dir (default: the run cache, ~/.cache/hyperrag)")
    ap.add_argument("--fresh", action="store_true", help="parse into a temporary cache (time a cold extraction)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from hydra.utils import instantiate

    from hyperrag.config import compose_config
    from hyperrag.data.musique import read_musique_corpus
    from hyperrag.eval.intervals import mean_interval
    from hyperrag.extraction.settings import ExtractorSettings
    from hyperrag.extraction.spacy_openie import spacy_openie
    from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

    cfg = compose_config("retrieve", ["extractor=spacy", f"extractor.triples={args.triples}"])
    settings: ExtractorSettings = instantiate(cfg.extractor)
    corpus = read_musique_corpus(Path(args.dir) / "corpus.json")
    cache = Path(tempfile.mkdtemp()) if args.fresh else Path(args.cache or str(cfg.cache_dir))
    t0 = time.perf_counter()
    path, report = spacy_openie(corpus.passages, settings, cache / "openie", cache_dir=cache)
    seconds = time.perf_counter() - t0
    ours = json.loads(path.read_text())["docs"]
    ref = json.loads(Path(args.reference).read_text())["docs"]
    assert len(ours) == len(ref) == len(corpus), "the reference must be aligned with the corpus"
    prec, rec = [], []
    shared = n_ours = n_ref = 0
    for a, b in zip(ours, ref):
        sa = {norm(e) for e in a["extracted_entities"]} - {""}
        sb = {norm(e) for e in b["extracted_entities"]} - {""}
        both = len(sa & sb)
        shared, n_ours, n_ref = shared + both, n_ours + len(sa), n_ref + len(sb)
        if sa:
            prec.append(both / len(sa))
        if sb:
            rec.append(both / len(sb))
    p, r = mean_interval(prec), mean_interval(rec)
    result = {
        "bench": "spacy_extraction_quality", "model": MODEL_LABEL, "triples": args.triples,
        "reference": Path(args.reference).name, "passages": len(corpus),
        "entity_precision_macro": [p.estimate, p.low, p.high], "entity_recall_macro": [r.estimate, r.low, r.high],
        "entity_precision_micro": round(100 * shared / max(n_ours, 1), 1),
        "entity_recall_micro": round(100 * shared / max(n_ref, 1), 1),
        "entities_per_passage": {"spacy": round(n_ours / len(corpus), 2), "reference": round(n_ref / len(corpus), 2)},
        "triples_per_passage": {"spacy": round(sum(len(d["extracted_triples"]) for d in ours) / len(corpus), 2),
                                "reference": round(sum(len(d["extracted_triples"]) for d in ref) / len(corpus), 2)},
        "seconds": round(seconds, 1), "parsed": report.parsed, "reused_parses": report.reused_parses,
        "reused_file": report.reused_file, "openie_path": str(path),
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
