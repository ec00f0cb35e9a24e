"""train.py end to end through the real Hydra config, composed into tmp_path."""

import json
import subprocess
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
            "hardware=cpu", "torch_threads=1", "trainer.enable_progress_bar=false", *overrides])


def test_poincare_trains_the_hyperrag_ball_that_retrieve_then_loads(tmp_path):
    """task=poincare: the passage_graph forest of method=hyperrag, saved where retrieve.py looks for it."""
    from tests.test_retrieve_entry import compose_retrieve, retrieve

    cfg = compose_train(tmp_path, "task=poincare", "data=sample", "logger=none", "method.graph=fused",
                        "method.retriever.train.max_epochs=4")
    metrics = train.run(cfg)
    ckpts = list((tmp_path / "models" / "hyperrag").glob("sample-fused-*/model.ckpt"))
    assert len(ckpts) == 1 and (tmp_path / "run" / "poincare_disk.png").is_file()
    assert metrics["num_nodes"] == 12 + 6  # 12 passages + the query file's 6 questions as query nodes
    assert metrics["num_relations"] > 0 and metrics["fit_seconds"] > 0
    assert metrics["mean_pairwise_distance"] > 0.5 * metrics["mean_pairwise_distance_init"]  # no collapse
    over = ["method=hyperrag", "method.graph=fused", f"method.retriever.models_dir={tmp_path / 'models'}",
            "method.retriever.train.max_epochs=4", "tracking=none", "answer_top_n=0"]
    stamp = ckpts[0].stat().st_mtime_ns
    retrieve.run(compose_retrieve(tmp_path, *over))
    assert len(list((tmp_path / "models" / "hyperrag").glob("*/model.ckpt"))) == 1  # same key: reused
    assert ckpts[0].stat().st_mtime_ns == stamp  # loaded, not trained again


def test_poincare_openie_on_sample_saves_checkpoint_plot_metrics_and_reuses_them(tmp_path):
    cfg = compose_train(tmp_path, "task=poincare_openie", "data=sample", "trainer.max_epochs=5")
    assert cfg.logger._target_.endswith("WandbLogger") and cfg.logger.offline is True
    metrics = train.run(cfg)
    ckpts = list((tmp_path / "models" / "poincare_openie").glob("sample-*/model.ckpt"))
    assert len(ckpts) == 1
    run = tmp_path / "run"
    assert (run / "poincare_disk.png").read_bytes()[:4] == b"\x89PNG"
    assert any((run / "wandb").glob("offline-run-*"))
    saved = json.loads((run / "metrics.json").read_text())
    assert saved["checkpoint"] == str(ckpts[0]) and saved["metrics"]["map"] == metrics["map"]
    assert (ckpts[0].parent / "metrics.json").is_file() and (ckpts[0].parent / "config.yaml").is_file()
    assert metrics["num_nodes"] == 12 and metrics["num_relations"] > 0
    assert metrics["map"] >= 0.8 and metrics["fit_seconds"] > 0
    assert metrics["mean_pairwise_distance"] > 0.5 * metrics["mean_pairwise_distance_init"]  # no collapse

    again = train.run(compose_train(tmp_path, "task=poincare_openie", "data=sample", "trainer.max_epochs=5",
                                    "logger=none"))
    assert again["fit_seconds"] == 0.0  # loaded from models/, not retrained
    assert again["map"] == pytest.approx(metrics["map"])


def test_poincare_tree_task(tmp_path):
    cfg = compose_train(tmp_path, "task=poincare_tree", "task.branching=2", "task.depth=4", "logger=csv",
                        "trainer.max_epochs=60", "task.datamodule.batch_size=32",
                        "task.datamodule.negative_group_size=4", "task.model.lr=0.05")
    metrics = train.run(cfg)
    assert metrics["num_nodes"] == 31 and metrics["num_relations"] == 98
    assert metrics["map"] > 0.7 and metrics["map"] > 2 * metrics["map_init"]
    (ckpt,) = (tmp_path / "models" / "poincare_tree").glob("tree-b2-d4-*/model.ckpt")
    assert not (ckpt.parent / ".partial").exists()  # the resume work folder goes once the model is saved
    assert any((tmp_path / "run" / "csv").rglob("metrics.csv"))


@pytest.mark.slow
def test_dataset_without_openie_is_one_line_exit_2(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q", "question": "?", "gold_ids": ["a"]}\n')
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "train.py"), f"out={tmp_path / 'run'}",
                           f"models_dir={tmp_path / 'models'}", f"cache_dir={tmp_path / 'cache'}",
                           "hardware=cpu", "logger=none", "task=poincare_openie", "data=jsonl", f"data.corpus={corpus}",
                           f"data.queries={queries}"],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "field 'data.openie': dataset 'jsonl' has no OpenIE file" in proc.stderr
    assert "Traceback" not in proc.stderr
