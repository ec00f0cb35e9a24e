"""The ``train.py`` tasks: what to train, on which data, and how to judge the result.

A task is the ``_target_`` of ``hydra_configs/task/*.yaml``. It sits above the parts it trains (the Poincaré
ball, the causal pair classifier, the PPO refinement policy) and the retrievers it builds them from, so those
never import it:

* :mod:`~hyperrag.training.tasks.poincare` — ``task=poincare`` (the ball ``retrieve.py method=hyperrag``
  loads), ``task=poincare_openie``, ``task=poincare_tree``;
* :mod:`~hyperrag.training.tasks.causal_pair` — ``task=causal_pair`` (CDF-RAG's pair classifier);
* :mod:`~hyperrag.training.tasks.ppo` — ``task=ppo`` (CDF-RAG's query-refinement policy).

What ``train.py`` asks of a task: ``name``, ``data_name``, ``key(**extra) -> str``, ``build_model() ->
LightningModule``, ``build_datamodule() -> LightningDataModule``, ``load(checkpoint) -> LightningModule``,
``evaluate(model) -> dict`` and ``plot(model, path) -> Path``; optionally ``plot_filename`` (default
``<name>.png``) and ``trainer_overrides() -> dict``. The modules are imported by Hydra when a config names
them, not here.
"""
