"""Kill-and-resume of ``python train.py`` (issue 9 item 1): SIGKILL the fit after an epoch checkpoint exists,
rerun, and the rerun finishes only the remaining epochs and ends at the very weights of an uninterrupted run."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO_ROOT
from tests.test_train_entry import compose_train, train

# 121 nodes, 426 closure relations, 7 batches an epoch: ~20 ms an epoch on one thread
TREE = ["task=poincare_tree", "task.branching=3", "task.depth=4", "trainer.max_epochs=40",
        "task.datamodule.batch_size=64", "task.datamodule.negative_group_size=4", "logger=none"]


def _weights(ckpt: Path) -> dict[str, torch.Tensor]:
    return torch.load(ckpt, map_location="cpu", weights_only=False)["state_dict"]


@pytest.mark.slow
def test_sigkilled_fit_resumes_from_the_last_epoch_and_matches_an_uninterrupted_run(tmp_path):
    models = tmp_path / "models"
    common = [f"models_dir={models}", f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "torch_threads=1",
              "trainer.enable_progress_bar=false", *TREE]
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "train.py"), f"out={tmp_path / 'killed'}", *common],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(models.glob("poincare_tree/*/.partial/last.ckpt")):
            assert proc.poll() is None, "train.py ended before its first epoch checkpoint"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(0.1)  # a few more epochs: the kill lands anywhere, mid-save included
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (partial,) = models.glob("poincare_tree/*/.partial/last.ckpt")
    model_dir = partial.parent.parent
    assert not (model_dir / "model.ckpt").exists(), "the fit finished before the kill: make the run longer"
    done = torch.load(partial, map_location="cpu", weights_only=False)["epoch"] + 1

    resumed = train.run(compose_train(tmp_path, *TREE, f"models_dir={models}"))
    assert resumed["resumed_at_epoch"] == done > 0  # only the remaining epochs were trained
    assert (model_dir / "model.ckpt").is_file() and not (model_dir / ".partial").exists()
    resumed_ckpt = torch.load(model_dir / "model.ckpt", map_location="cpu", weights_only=False)
    assert resumed_ckpt["loops"]["fit_loop"]["epoch_progress"]["total"]["completed"] == 40

    reference = train.run(compose_train(tmp_path, *TREE, f"models_dir={tmp_path / 'reference'}"))
    assert "resumed_at_epoch" not in reference
    (ref_ckpt,) = (tmp_path / "reference").glob("poincare_tree/*/model.ckpt")
    assert ref_ckpt.parent.name == model_dir.name  # same key
    got, want = _weights(model_dir / "model.ckpt"), _weights(ref_ckpt)
    assert got.keys() == want.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-6, atol=1e-7, msg=name)
    assert resumed["map"] == pytest.approx(reference["map"])


def test_resume_disabled_discards_the_partial_fit(tmp_path):
    cfg = compose_train(tmp_path, *TREE, "trainer.max_epochs=3", "resume.enabled=false")
    metrics = train.run(cfg)
    assert "resumed_at_epoch" not in metrics
    (ckpt,) = (tmp_path / "models").glob("poincare_tree/*/model.ckpt")
    assert not (ckpt.parent / ".partial").exists()


class _Interrupted(Exception):
    pass


def _interrupt_after(monkeypatch, epochs: int) -> None:
    """The first fit dies right after its checkpoint of epoch ``epochs`` (what a kill then leaves behind)."""
    from hyperrag.training.resume import ResumeCheckpoint

    save = ResumeCheckpoint.on_train_epoch_end

    def hook(self, trainer, pl_module):
        save(self, trainer, pl_module)
        if not self.resumed and trainer.current_epoch + 1 == epochs:
            raise _Interrupted

    monkeypatch.setattr(ResumeCheckpoint, "on_train_epoch_end", hook)


@pytest.mark.slow
def test_ppo_fit_resumes_with_its_optimiser_rollout_generator_and_history(tmp_path, monkeypatch):
    """task=ppo is a Trainer.fit with manual optimisation: the same resume restores Adam, the rollout generator
    (``PPOPolicy._gen``), the rollout-batch shuffling and the history; the result equals an uninterrupted fit."""
    from tests.refinement.test_ppo_task import compose_train as compose_ppo

    over = ["logger=none", "task.rollout_batch=2"]
    reference = train.run(compose_ppo(tmp_path, *over))
    (tmp_path / "models").rename(tmp_path / "reference")  # same paths (the key holds them), a fresh models/
    (ref_ckpt,) = (tmp_path / "reference").glob("ppo/*/model.ckpt")

    with monkeypatch.context() as patch:
        _interrupt_after(patch, 2)
        with pytest.raises(_Interrupted):
            train.run(compose_ppo(tmp_path, *over))
    (partial,) = (tmp_path / "models").glob("ppo/*/.partial/last.ckpt")
    resumed = train.run(compose_ppo(tmp_path, *over))
    assert resumed["resumed_at_epoch"] == 2
    ckpt = partial.parent.parent / "model.ckpt"
    assert ckpt.parent.name == ref_ckpt.parent.name and not partial.parent.exists()
    got = torch.load(ckpt, map_location="cpu", weights_only=False)
    want = torch.load(ref_ckpt, map_location="cpu", weights_only=False)
    for name in want["state_dict"]:
        torch.testing.assert_close(got["state_dict"][name], want["state_dict"][name], rtol=1e-6, atol=1e-7, msg=name)
    assert [row["reward"] for row in got["history"]] == pytest.approx([row["reward"] for row in want["history"]])
    assert len(got["history"]) == 5
    assert resumed["heldout_ppo_reward"] == pytest.approx(reference["heldout_ppo_reward"])


@pytest.mark.slow
def test_causal_pair_fit_resumes_with_dropout_and_shuffling_as_uninterrupted(tmp_path, monkeypatch):
    """task=causal_pair draws dropout masks from the global torch RNG and shuffles with its own generator."""
    from tests.causal.test_causal_pair_task import compose_train as compose_causal

    over = ["logger=none", "trainer.max_epochs=3", "torch_threads=1", "task.model.max_steps=40"]
    train.run(compose_causal(tmp_path, *over))
    (tmp_path / "models").rename(tmp_path / "reference")
    with monkeypatch.context() as patch:
        _interrupt_after(patch, 1)
        with pytest.raises(_Interrupted):
            train.run(compose_causal(tmp_path, *over))
    resumed = train.run(compose_causal(tmp_path, *over))
    assert resumed["resumed_at_epoch"] == 1
    got = _weights(next((tmp_path / "models").glob("causal_pair/*/model.ckpt")))
    want = _weights(next((tmp_path / "reference").glob("causal_pair/*/model.ckpt")))
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-6, atol=1e-7, msg=name)
