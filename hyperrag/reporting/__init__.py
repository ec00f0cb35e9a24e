"""Run logging and reports: ``run_info.json`` (reproducibility), W&B / CSV tracking (Hydra group
``tracking/``), and markdown + PNG reports gathered from run directories (``report.py``)."""
