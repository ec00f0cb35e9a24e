"""Gather finished runs into a markdown report with tables and plots.

    python report.py runs=multirun/methods_musique                       # → reports/methods_musique/
    python report.py 'runs=[multirun/hipporag2_table,multirun/catrag_table]' name=paper_tables
    python report.py runs=multirun/hipporag2_damping                     # sweep → metric-vs-damping plot
    python report.py --all                                               # re-print every reports/*/report.md

Beside each report.md goes ``values.json``: the runs' records and per-query values it was printed from, so that
``--all`` re-prints every committed report with today's code (each report names the commit that printed it:
``printed by: git <sha>``; :mod:`hyperrag.reporting.provenance`).

Reads each run's ``metrics.json`` (plus ``evaluation.json`` from ``evaluate.py``) and its config/overrides
(``run_info.json`` or ``.hydra/``). Writes ``<out>/<name>/report.md`` — methods × datasets × metrics with
the best value per column in bold, an efficiency table, the run list with W&B groups — and PNGs: recall@k
curves, method comparison bars, and a sweep line or ablation bars when the runs vary a setting.
"""

from __future__ import annotations

import logging
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from hyperrag.errors import exit_on_input_error

log = logging.getLogger("report")


@hydra.main(version_base="1.3", config_path="hydra_configs", config_name="report")
@exit_on_input_error
def main(cfg: DictConfig) -> Path:
    return run(cfg)


def run(cfg: DictConfig) -> Path:
    """Build the report; returns the path of ``report.md`` (also printed)."""
    from hyperrag.reporting.report import build_report

    runs = cfg.runs if isinstance(cfg.runs, str) else list(OmegaConf.to_container(cfg.runs))
    path = build_report(runs, cfg.out, name=cfg.name, metrics=list(cfg.metrics), plot_metrics=list(cfg.plot_metrics),
                        keep_latest=bool(cfg.latest_only), title=cfg.title, test_metrics=list(cfg.test_metrics),
                        methods=list(cfg.methods) if cfg.methods else None, experiment=cfg.published,
                        token_prices=(float(cfg.token_prices.prompt), float(cfg.token_prices.completion))
                        if cfg.get("token_prices") else None,
                        equivalence_margin=None if cfg.equivalence_margin is None else float(cfg.equivalence_margin))
    print(path.read_text())
    log.info("report: %s (plots: %s)", path, ", ".join(p.name for p in sorted(path.parent.glob("*.png"))))
    return path


def reprint_all(out: str = "reports") -> list[Path]:
    """``--all [<out>]``: re-print every ``<out>/*/report.md`` from its committed ``values.json``."""
    from hyperrag.reporting.report import reprint_all as reprint

    paths = reprint(out)
    for path in paths:
        print(path)
    return paths


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--all"]:
        reprint_all(*sys.argv[2:3])
        sys.exit(0)
    from hyperrag.config.command_line import check_command_line

    check_command_line("report")  # a bad choice or override: one line, exit 2 (not Hydra's paragraph)
    main()
