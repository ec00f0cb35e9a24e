"""Build a HolisQA-style query file from a corpus with an LLM.

    python -m hyperrag.holisqa data=sample llm=local out=outputs/holisqa/sample
    python -m hyperrag.holisqa data=musique llm=vllm max_slices=200 necessity_context=slice
    # then retrieve and score with sentence-level context recall:
    python retrieve.py data=jsonl data.corpus=outputs/holisqa/sample/corpus.jsonl \
        data.queries=outputs/holisqa/sample/queries.jsonl method=hugrag llm=none
    python evaluate.py predictions=<that run>

Settings: hydra_configs/holisqa.yaml.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import hydra
from omegaconf import DictConfig

from hyperrag.conf import CONFIG_DIR
from hyperrag.errors import exit_on_input_error

log = logging.getLogger("holisqa")


def run(cfg: DictConfig) -> dict[str, Any]:
    """Build and write the dataset; returns the build statistics."""
    from hydra.utils import instantiate

    from hyperrag.config.validation import as_dict, validate
    from hyperrag.holisqa.builder import HolisQABuilder, HolisQASettings, write_dataset
    from hyperrag.llm import build_llm

    settings = validate(HolisQASettings, cfg.builder, "builder")  # a bad value: one line, exit 2
    dataset = instantiate(cfg.data)
    with build_llm(cfg.llm) as llm:
        if not llm.available:
            raise SystemExit("error: the HolisQA builder needs an LLM (llm=local | vllm | openai_compatible)")
        result = HolisQABuilder(llm, settings).build(dataset.corpus)
    path = write_dataset(result, dataset.corpus, cfg.out, {"data": dataset.name, **as_dict(settings)})
    log.info("%d queries kept of %d with enough citations → %s", len(result.queries),
             result.stats["pairs_with_enough_citations"], path)
    print(json.dumps(result.stats, indent=1))
    return result.stats


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="holisqa")
@exit_on_input_error
def main(cfg: DictConfig) -> dict[str, Any]:
    return run(cfg)


if __name__ == "__main__":
    main()
