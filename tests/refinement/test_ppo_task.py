"""``python train.py task=ppo``: PPO against the real CDF-RAG retrieval of the bundled sample."""

import json
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import train


def compose_train(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("train", overrides=[
            f"out={tmp_path / 'run'}", f"models_dir={tmp_path / 'models'}", f"cache_dir={tmp_path / 'cache'}",
            "hardware=cpu", "torch_threads=1", "task=ppo", "data=sample", "data.openie_source=file",
            "task.split.train=4", "task.split.heldout=2", "trainer.max_epochs=5", "trainer.enable_progress_bar=false",
            *overrides])


def test_ppo_task_trains_logs_plots_and_reuses(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    metrics = train.run(compose_train(tmp_path, "logger=wandb"))
    ckpt = next((tmp_path / "models" / "ppo").glob("sample-*/model.ckpt"))
    run = tmp_path / "run"
    assert (run / "ppo_training_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert any((run / "wandb").glob("offline-run-*"))
    history = (run / "ppo_history.csv").read_text().splitlines()
    assert len(history) == 1 + 5 and "val_reward" in history[0]
    saved = json.loads((run / "metrics.json").read_text())
    assert saved["checkpoint"] == str(ckpt) and saved["task"] == "ppo"
    assert metrics["train_queries"] == 4 and metrics["heldout_queries"] == 2
    # every (question, action sequence of length <= T = 1: A.3's one action) once, plus the unrefined question,
    # then memoised
    assert metrics["env_calls"] == 6 * (1 + 3) and metrics["max_steps"] == 1
    assert metrics["hallucination_term"] == "off (no LLM)"
    assert 0.0 <= metrics["heldout_episode_length"] <= 1.0  # 0: no action changes the question (masked)
    for a in ("expand", "simplify", "decompose"):
        assert 0.0 <= metrics[f"heldout_reward_{a}"] <= 1.5
    assert metrics["heldout_oracle_reward"] >= max(metrics["heldout_ppo_reward"], metrics["heldout_random_reward"]) - 1e-4
    for arm in ("ppo", "random", "best_fixed"):
        assert 0.0 <= metrics[f"heldout_{arm}_coverage"] <= 1.0
    again = train.run(compose_train(tmp_path, "logger=none"))
    assert again["fit_seconds"] == 0.0 and again["heldout_ppo_reward"] == pytest.approx(metrics["heldout_ppo_reward"])


def test_ppo_with_an_llm_trains_on_the_deployed_actions_with_the_hallucination_term(tmp_path):
    """task.llm (what cross-fitting passes): the environment's retriever carries the actions out with that LLM
    (the oracle here) and generates and checks answers, so λ4 is on; the policy's compatibility key names the LLM,
    so an LLM-free retriever never picks it."""
    from hydra.utils import instantiate

    from hyperrag.config import method_settings
    from hyperrag.refinement.ppo import policy_compatibility

    cfg = compose_train(tmp_path, "logger=none", "+llm@task.llm=oracle", "trainer.max_epochs=2")
    metrics = train.run(cfg)
    encoder = instantiate(cfg.embedder)
    assert metrics["hallucination_term"] == "answers"
    record = json.loads(next((tmp_path / "models" / "ppo").glob("sample-*/artifact.json")).read_text())
    settings = method_settings("cdfrag")
    assert record["compatibility"] != policy_compatibility(settings, encoder) and len(record["query_ids"]) == 4
    from hyperrag.llm.oracle import OracleLLM

    oracle = OracleLLM(refinement="gold_answers", cache_path=str(tmp_path / "oracle.sqlite"), show_usage=False)  # any oracle: its label
    assert record["compatibility"] == policy_compatibility(settings, encoder, oracle)


def test_ppo_task_tunes_the_weights_on_its_training_questions_and_trains_a_restricted_policy(tmp_path):
    """Issue 46's named settings through ``train.py task=ppo``: λs chosen on the training questions only
    (``tune_weights: full_chain``) and a policy over two actions (``actions``)."""
    from hydra.utils import instantiate

    cfg = compose_train(tmp_path, "logger=none", "trainer.max_epochs=2", "task.env.tune_weights=full_chain",
                        "task.env.actions=[expand,decompose]")
    task = instantiate(cfg.task, _convert_="object")
    env = task.env
    assert env.actions == ["expand", "decompose"] and env.tuning is not None
    assert env.tuning["spearman"] >= env.tuning["paper_spearman"]
    model = task.build_model()
    assert model.actions == ["expand", "decompose", "stop"]
    assert all(o["reward"] == pytest.approx(env.combine(o["terms"])) for o in env._memo.values())
