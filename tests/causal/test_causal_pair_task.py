"""``python train.py task=causal_pair`` on the toy causal corpus: a tiny real fine-tune, checkpoint, reuse."""

import json
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir

from tests.causal.corpus import write_jsonl
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import train

TINY = ["task.model.max_length=48", "task.model.freeze_layers=5", "task.model.max_steps=2", "task.model.head_lr=0.01",
        "task.datamodule.batch_size=8", "task.datamodule.val_fraction=0.3", "task.min_examples=10",
        "trainer.max_epochs=1", "trainer.enable_progress_bar=false"]


def compose_train(tmp_path: Path, *overrides: str):
    corpus, queries, openie = write_jsonl(tmp_path)
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hyperrag" / "conf"), version_base="1.3"):
        return compose("train", overrides=[
            f"out={tmp_path / 'run'}", f"models_dir={tmp_path / 'models'}", f"cache_dir={tmp_path / 'cache'}",
            "hardware=cpu", "torch_threads=2", "task=causal_pair", "data=jsonl", f"data.corpus={corpus}",
            f"data.queries={queries}", f"data.openie={openie}", "data.name=toy", *TINY, *overrides])


def test_causal_pair_training_end_to_end(tmp_path):
    metrics = train.run(compose_train(tmp_path, "logger=csv"))
    ckpt = next((tmp_path / "models" / "causal_pair").glob("toy-*/model.ckpt"))
    assert (tmp_path / "run" / "causal_pair_eval.png").read_bytes()[:4] == b"\x89PNG"
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["checkpoint"] == str(ckpt)
    for key in ("heldout_accuracy", "majority_baseline", "heldout_f1", "heldout_accuracy_reversed"):
        assert 0.0 <= metrics[key] <= 1.0
    assert metrics["train_examples"] > 0 and metrics["heldout_examples"] > 0 and metrics["candidates_strong"] == 10
    assert metrics["fit_seconds"] > 0
    # the checkpoint loads and scores marked pairs
    from hyperrag.causal.classifier import CausalPairClassifier

    model = CausalPairClassifier.load_from_checkpoint(str(ckpt), map_location="cpu")
    p = model.predict_proba(["The [E1] storm [/E1] caused [E2] floods [/E2].", "No [E1] markers [/E1] [E2] x [/E2]"])
    assert p.shape == (2,) and bool(((p > 0) & (p < 1)).all())
    assert model.tokenizer.convert_tokens_to_ids("[E1]") != model.tokenizer.unk_token_id
    # a second run finds the model and only evaluates it
    again = train.run(compose_train(tmp_path, "logger=none"))
    assert again["fit_seconds"] == 0.0 and again["heldout_accuracy"] == pytest.approx(metrics["heldout_accuracy"])


def test_classifier_learns_direction_on_a_separable_toy():
    """A few real optimisation steps on one marked pair and its reversal move the logits apart."""
    from hyperrag.causal.classifier import CausalPairClassifier

    torch.manual_seed(0)
    model = CausalPairClassifier(max_length=32, freeze_layers=6, head_lr=0.01, dropout=0.0)
    texts = ["Rain [E1] storms [/E1] caused [E2] floods [/E2].", "Rain [E2] storms [/E2] caused [E1] floods [/E1]."]
    labels = torch.tensor([1, 0])
    opt = model.configure_optimizers()
    for _ in range(15):
        loss, _, _ = model._loss((texts, labels))
        opt.zero_grad()
        loss.backward()
        opt.step()
    p = model.predict_proba(texts)
    assert p[0] > 0.5 > p[1]
