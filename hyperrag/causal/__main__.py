"""CDF-RAG's causal knowledge from the command line.

    python -m hyperrag.causal reference data=musique [llm=none|oracle|local ...] [--out DIR]

``reference`` builds a dataset's **fixed CRC reference graph** once (:func:`hyperrag.causal.reference.
build_reference_graph`): the causal graph of its gold supporting passages, with the CDF-RAG preset's extraction
settings, pair classifier (``classifier: auto``; the rule priors when ``models/`` holds no trained one) and verifier
(the configured LLM; unverified with ``llm=none`` or the oracle, and labelled so). The overrides compose the
``retrieve`` config with ``method=cdfrag``. It is written to ``<cache_dir>/crc_reference/<dataset>/`` (or ``--out``),
where ``evaluate.py`` reads it for every method's CRC (``causal_index: reference``, the default). Prints the label as
one JSON line; bad input prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from hyperrag.errors import exit_on_input_error


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m hyperrag.causal", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference", help="build a dataset's fixed CRC reference graph from its gold passages")
    ref.add_argument("--out", default=None, help="directory (default: <cache_dir>/crc_reference/<dataset>)")
    ref.add_argument("overrides", nargs="*", help="Hydra-style overrides of the retrieve config, e.g. data=musique")
    return ap.parse_args(argv)


def reference(out: str | None, overrides: list[str]) -> dict[str, Any]:
    """Compose ``retrieve`` with ``method=cdfrag`` and ``overrides``, build the reference graph, return its label."""
    from hydra.utils import instantiate

    from hyperrag.causal.classifier import classifier_compatibility
    from hyperrag.causal.reference import build_reference_graph
    from hyperrag.config import compose_config
    from hyperrag.eval.causal import reference_graph_dir
    from hyperrag.llm import build_llm
    from hyperrag.retrievers.cdfrag import resolve_trained_checkpoint

    cfg = compose_config("retrieve", ["method=cdfrag", *overrides])
    settings = instantiate(cfg.method.retriever)
    dataset = instantiate(cfg.data)
    encoder = instantiate(cfg.embedder)
    classifier = resolve_trained_checkpoint(settings.classifier, settings.models_dir, "causal_pair", "unicausal",
                                            classifier_compatibility(settings.classifier_encoder))
    directory = out or reference_graph_dir(cfg.cache_dir, dataset.name)
    with build_llm(cfg.llm, dataset) as llm:
        label = build_reference_graph(dataset, encoder, settings.causal, directory, classifier_path=classifier,
                                      llm=llm)
    return {"directory": str(directory), **{k: v for k, v in label.items() if k != "gold_ids"}}


@exit_on_input_error
def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    out = reference(args.out, list(args.overrides))
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
