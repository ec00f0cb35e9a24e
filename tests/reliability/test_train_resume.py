"""Kill-and-resume of ``python train.py`` (issue 9 item 1): SIGKILL the fit after an epoch checkpoint exists,
rerun, and the rerun finishes only the remaining epochs and ends at the very weights of an uninterrupted run."""

import signal
import subprocess
import sys
import time
from collections import Counter
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


def _sigkill_after_first_checkpoint(tmp_path: Path, models: Path, common: list[str]) -> Path:
    """Run ``train.py task=poincare_tree`` in a child process, SIGKILL it 0.1 s after its first ``last.ckpt`` (a few
    more steps or epochs: the kill lands anywhere, mid-save included); return that checkpoint's path."""
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "train.py"), f"out={tmp_path / 'killed'}", *common],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(models.glob("poincare_tree/*/.partial/last.ckpt")):
            assert proc.poll() is None, "train.py ended before its first checkpoint"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    (partial,) = models.glob("poincare_tree/*/.partial/last.ckpt")
    return partial


@pytest.mark.slow
def test_sigkilled_fit_resumes_from_the_last_epoch_and_matches_an_uninterrupted_run(tmp_path):
    models = tmp_path / "models"
    common = [f"models_dir={models}", f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "torch_threads=1",
              "trainer.enable_progress_bar=false", *TREE]
    partial = _sigkill_after_first_checkpoint(tmp_path, models, common)
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


def _count_saves(monkeypatch, stop: tuple[str, int] | None = None) -> Counter:
    """Count the first fit's ``last.ckpt`` saves by kind (``epoch`` / ``mid_epoch``); with ``stop=(kind, n)`` the fit
    dies right after its n-th save of that kind (what a kill then leaves behind)."""
    from lightning.pytorch.callbacks import ModelCheckpoint

    from hyperrag.utils.resume import MidEpochCheckpoint, RandomState

    save = ModelCheckpoint._save_checkpoint
    saves: Counter = Counter()

    def hook(self, trainer, filepath):
        save(self, trainer, filepath)
        state = next(cb for cb in trainer.callbacks if isinstance(cb, RandomState))
        if state.resumed:
            return
        kind = "mid_epoch" if isinstance(self, MidEpochCheckpoint) else "epoch"
        saves[kind] += 1
        if stop is not None and (kind, saves[kind]) == stop:
            raise _Interrupted

    monkeypatch.setattr(ModelCheckpoint, "_save_checkpoint", hook)
    return saves


def _interrupt_after(monkeypatch, epochs: int) -> None:
    """The first fit dies right after its checkpoint of epoch ``epochs``."""
    _count_saves(monkeypatch, ("epoch", epochs))


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


# ---- mid-epoch resume ------------------------------------------------------------------------------------------
def _position(ckpt: dict) -> tuple[int, int]:
    """(global step, batches of the current epoch trained) of a checkpoint written after a training step."""
    progress = ckpt["loops"]["fit_loop"]["epoch_loop.batch_progress"]["current"]
    return int(ckpt["global_step"]), int(progress["ready"])


def _count_steps(monkeypatch, cls) -> list[int]:
    """Every ``training_step`` of ``cls`` run from now on appends its global step."""
    calls: list[int] = []
    step = cls.training_step

    def counted(self, *args, **kwargs):
        calls.append(int(self.global_step))
        return step(self, *args, **kwargs)

    monkeypatch.setattr(cls, "training_step", counted)
    return calls


def _interrupt_after_mid_epoch_save(monkeypatch, nth: int) -> None:
    """The first fit dies right after its ``nth`` mid-epoch checkpoint."""
    _count_saves(monkeypatch, ("mid_epoch", nth))


MID = ["resume.every_n_steps=2", "resume.every_n_epochs=1000", "resume.every_seconds=null"]  # mid-epoch saves only


@pytest.mark.slow
def test_sigkill_mid_epoch_reruns_only_the_remaining_steps_and_matches_an_uninterrupted_run(tmp_path, monkeypatch):
    """SIGKILL ``train.py task=poincare_tree`` whose only checkpoints are taken inside epochs (every 2 of the 7 steps
    of an epoch): the rerun restarts at the very batch after the last checkpoint, runs only the remaining steps and
    ends at the weights of an uninterrupted run."""
    from hyperrag.hyperbolic import PoincareEmbedding

    models = tmp_path / "models"
    common = [f"models_dir={models}", f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "torch_threads=1",
              "trainer.enable_progress_bar=false", *TREE, *MID]
    partial = _sigkill_after_first_checkpoint(tmp_path, models, common)
    model_dir = partial.parent.parent
    assert not (model_dir / "model.ckpt").exists(), "the fit finished before the kill: make the run longer"
    saved = torch.load(partial, map_location="cpu", weights_only=False)
    step, in_epoch = _position(saved)
    assert 0 < in_epoch < 7 and step == 7 * saved["epoch"] + in_epoch  # taken inside an epoch
    (loader_state,) = saved["loops"]["fit_loop"]["state_dict"]["combined_loader"]
    assert loader_state["_num_yielded"] == loader_state["dataset_state"]["batches"] == in_epoch  # torchdata's state

    steps = _count_steps(monkeypatch, PoincareEmbedding)
    resumed = train.run(compose_train(tmp_path, *TREE, *MID, f"models_dir={models}"))
    assert resumed["resumed_at_step"] == step and resumed["resumed_at_epoch"] == saved["epoch"]
    assert steps == list(range(step, 40 * 7))  # only the remaining steps, each once
    assert (model_dir / "model.ckpt").is_file() and not (model_dir / ".partial").exists()

    monkeypatch.undo()
    reference = train.run(compose_train(tmp_path, *TREE, f"models_dir={tmp_path / 'reference'}"))
    (ref_ckpt,) = (tmp_path / "reference").glob("poincare_tree/*/model.ckpt")
    assert ref_ckpt.parent.name == model_dir.name  # same key: resume settings are not part of it
    got, want = _weights(model_dir / "model.ckpt"), _weights(ref_ckpt)
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-6, atol=1e-7, msg=name)
    assert resumed["map"] == pytest.approx(reference["map"])


@pytest.mark.slow
def test_causal_pair_fit_resumes_mid_epoch_with_the_same_batches_dropout_and_weights(tmp_path, monkeypatch):
    """task=causal_pair killed right after a checkpoint inside its second epoch: the shuffled batches continue at the
    next one (torchdata's StatefulDataLoader), dropout from the restored global RNG; bit-identical weights on CPU."""
    from hyperrag.causal.classifier import CausalPairClassifier
    from tests.causal.test_causal_pair_task import compose_train as compose_causal

    over = ["logger=none", "trainer.max_epochs=3", "torch_threads=1", "task.model.max_steps=40",
            "task.datamodule.batch_size=4", *MID]
    reference = train.run(compose_causal(tmp_path, *over))
    (tmp_path / "models").rename(tmp_path / "reference")
    want_ckpt = torch.load(next((tmp_path / "reference").glob("causal_pair/*/model.ckpt")), weights_only=False)
    total = int(want_ckpt["global_step"])
    with monkeypatch.context() as patch:
        _interrupt_after_mid_epoch_save(patch, 3)  # 21 examples: 6 steps an epoch, saves after steps 2, 4, 7
        with pytest.raises(_Interrupted):
            train.run(compose_causal(tmp_path, *over))
    (partial,) = (tmp_path / "models").glob("causal_pair/*/.partial/last.ckpt")
    saved = torch.load(partial, map_location="cpu", weights_only=False)
    step, in_epoch = _position(saved)
    per_epoch = total // 3
    assert total == 3 * per_epoch and saved["epoch"] >= 1 and 0 < in_epoch < per_epoch  # inside the second epoch
    assert step == saved["epoch"] * per_epoch + in_epoch

    with monkeypatch.context() as patch:
        steps = _count_steps(patch, CausalPairClassifier)
        resumed = train.run(compose_causal(tmp_path, *over))
    assert resumed["resumed_at_step"] == step and steps == list(range(step, total))
    # the save at a step that a held-out pass follows (val_every=2) is made after that pass, so the pass is in it:
    # Lightning resumes past the pass that followed a batch-end save, and model selection would lose it
    assert [r["step"] for r in saved["selection"]] == list(range(2, step + 1, 2))
    got = _weights(next((tmp_path / "models").glob("causal_pair/*/model.ckpt")))
    for name, value in want_ckpt["state_dict"].items():
        assert torch.equal(got[name], value), name
    assert resumed["selected_step"] == reference["selected_step"]
    assert resumed["heldout_macro_f1"] == reference["heldout_macro_f1"]


@pytest.mark.slow
def test_ppo_fit_resumes_mid_epoch_through_its_plain_dataloader(tmp_path, monkeypatch):
    """task=ppo with ``rollout_batch=1``: an epoch is 4 PPO iterations over a plain shuffled ``DataLoader`` of
    question ids, made resumable by ``ResumableFit``; a fit stopped inside an epoch reruns only the remaining
    iterations and ends with the weights and history of an uninterrupted fit."""
    from hyperrag.refinement.ppo import PPOPolicy
    from tests.refinement.test_ppo_task import compose_train as compose_ppo

    over = ["logger=none", "task.rollout_batch=1", *MID]
    reference = train.run(compose_ppo(tmp_path, *over))
    (tmp_path / "models").rename(tmp_path / "reference")
    want = torch.load(next((tmp_path / "reference").glob("ppo/*/model.ckpt")), weights_only=False)
    with monkeypatch.context() as patch:
        # every_n_steps counts optimiser steps (4 an iteration): saves after iterations 1, 2, 3, 5 (4 ends an epoch)
        _interrupt_after_mid_epoch_save(patch, 4)
        with pytest.raises(_Interrupted):
            train.run(compose_ppo(tmp_path, *over))
    (partial,) = (tmp_path / "models").glob("ppo/*/.partial/last.ckpt")
    saved = torch.load(partial, map_location="cpu", weights_only=False)
    step, in_epoch = _position(saved)  # global step = optimiser steps: 4 minibatch updates an iteration
    assert 0 < in_epoch < 4 and len(saved["history"]) == saved["epoch"] >= 1
    done = 4 * saved["epoch"] + in_epoch  # PPO iterations (training steps) done
    assert step == 4 * done and want["global_step"] == 4 * 20

    with monkeypatch.context() as patch:
        steps = _count_steps(patch, PPOPolicy)
        resumed = train.run(compose_ppo(tmp_path, *over))
    assert resumed["resumed_at_step"] == step and steps == [4 * i for i in range(done, 20)]  # only the remaining
    got = torch.load(next((tmp_path / "models").glob("ppo/*/model.ckpt")), weights_only=False)
    for name, value in want["state_dict"].items():
        assert torch.equal(got["state_dict"][name], value), name
    assert got["history"] == want["history"]
    assert resumed["heldout_ppo_reward"] == reference["heldout_ppo_reward"]


# ---- resumable dataloaders and the mid-epoch callback, on toy data (fast) -----------------------------------------
def _batches(loader, epochs: int = 1) -> list[list]:
    out = []
    for _ in range(epochs):
        out.extend(loader)
    return out


def _same(a: list, b: list) -> bool:
    def eq(x, y):
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)
        return len(x) == len(y) and all(torch.equal(p, q) for p, q in zip(x, y))

    return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))


def test_a_plain_shuffled_loader_becomes_a_stateful_one_that_resumes_at_any_batch():
    """``resumable`` turns a task's plain shuffled ``DataLoader`` into torchdata's ``StatefulDataLoader`` (same
    dataset, batch size and generator; each epoch a fresh permutation); restored at any batch k it yields the rest of
    that epoch, then the next epochs, exactly as the uninterrupted loader."""
    from torch.utils.data import DataLoader, TensorDataset
    from torchdata.stateful_dataloader import StatefulDataLoader

    from hyperrag.utils.resume import resumable

    data = TensorDataset(torch.arange(23.0), torch.arange(23) % 3)

    def make():
        return resumable(DataLoader(data, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(3)))

    reference = _batches(make(), epochs=3)
    assert isinstance(make(), StatefulDataLoader) and _same(reference, _batches(make(), epochs=3))
    for epoch in range(3):  # every sample once an epoch, in a new order each epoch
        assert sorted(torch.cat([b[0] for b in reference[6 * epoch:6 * epoch + 6]]).tolist()) == list(range(23))
    assert not _same(reference[:6], reference[6:12])
    for k in range(1, 6):
        first = make()
        it = iter(first)
        head = [next(it) for _ in range(k)]
        again = make()
        again.load_state_dict(first.state_dict())
        it = iter(again)  # Lightning makes the restored iterator, then RandomState puts the generators back
        again.generator.set_state(first.generator.get_state())
        rest = list(it)
        assert len(rest) == 6 - k and _same(head + rest, reference[:6])
        assert _same(_batches(again, epochs=2), reference[6:])


def test_edge_stream_resumes_mid_epoch_with_the_same_permutation_and_negatives():
    """EdgeDataModule's loader (what Lightning iterates) equals the bare EdgeBatches stream (what fit_fast and the
    HyperRAG retriever iterate) and, restored at any batch, continues with the very negatives of an uninterrupted
    epoch."""
    from hyperrag.hyperbolic.datamodule import EdgeBatches, EdgeDataModule

    edges = torch.randint(0, 40, (2, 150), generator=torch.Generator().manual_seed(0))
    settings = {"batch_size": 32, "num_negatives": 4, "negative_group_size": 2, "seed": 5}
    reference = _batches(EdgeDataModule(edges, 40, **settings).train_dataloader(), epochs=2)
    assert _same(reference, _batches(EdgeBatches(edges, 40, **settings), epochs=2))
    for k in range(1, 5):
        first = EdgeDataModule(edges, 40, **settings).train_dataloader()
        it = iter(first)
        head = [next(it) for _ in range(k)]
        state = first.state_dict()
        assert first.dataset.state_dict()["batches"] == k
        again = EdgeDataModule(edges, 40, **settings).train_dataloader()
        again.load_state_dict(state)
        assert _same(head + _batches(again), reference[:5]) and _same(_batches(again), reference[5:])


class _Tiny:
    """A regression net with dropout (global RNG) on 10 samples shuffled from the global RNG: 5 steps an epoch."""

    @staticmethod
    def build():
        import lightning as L
        from torch import nn
        from torch.utils.data import DataLoader, TensorDataset

        class Net(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(3, 16), nn.Dropout(0.3), nn.Linear(16, 1))
                self.calls = 0

            def training_step(self, batch, batch_idx):
                self.calls += 1
                x, y = batch
                return nn.functional.mse_loss(self.net(x).squeeze(-1), y)

            def configure_optimizers(self):
                opt = torch.optim.Adam(self.parameters(), lr=0.05)
                return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.7)}

        class Data(L.LightningDataModule):
            def __init__(self, iterable: bool | str = False, custom_sampler: bool = False):
                super().__init__()
                g = torch.Generator().manual_seed(1)
                self.x, self.y, self.iterable = torch.randn(10, 3, generator=g), torch.randn(10, generator=g), iterable
                self.custom_sampler = custom_sampler

            def train_dataloader(self):
                if self.iterable:
                    stream = _SizedStream if self.iterable == "sized" else _Stream
                    return DataLoader(stream(self.x, self.y), batch_size=2)
                if self.custom_sampler:
                    return DataLoader(TensorDataset(self.x, self.y), batch_sampler=_Pairs(10))
                return DataLoader(TensorDataset(self.x, self.y), batch_size=2, shuffle=True)

        L.seed_everything(0, verbose=False)
        return Net(), Data

    @staticmethod
    def fit(work_dir: Path, iterable: bool | str = False, custom_sampler: bool = False, **resume):
        import lightning as L

        from hyperrag.training import ResumableFit

        model, data = _Tiny.build()
        fit = ResumableFit(work_dir, **resume)
        trainer = L.Trainer(max_epochs=3, logger=False, enable_progress_bar=False, enable_model_summary=False,
                            accelerator="cpu", **fit.trainer_kwargs())
        fit.fit(trainer, model, data(iterable, custom_sampler))
        return model, fit


class _Pairs(torch.utils.data.Sampler):
    """A batch sampler of its own (consecutive pairs): a loader with it is left as it is, not made stateful."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n // 2

    def __iter__(self):
        return iter([[i, i + 1] for i in range(0, self.n, 2)])


class _Stream(torch.utils.data.IterableDataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        yield from zip(self.x, self.y)


def test_mid_epoch_resume_at_every_checkpoint_matches_uninterrupted_fit_bit_for_bit(tmp_path, monkeypatch):
    """Every step's checkpoint (``every_n_steps=1``) of a fit whose plain shuffled DataLoader draws from the global
    RNG (as dropout does): stopped after any of them, the rerun trains only the remaining steps and ends at the same
    weights and LR-scheduler state, bit for bit."""
    reference, _ = _Tiny.fit(tmp_path / "reference", every_n_steps=1)
    want = {k: v.clone() for k, v in reference.state_dict().items()}
    for nth in (1, 3, 4, 6, 9):  # steps 1, 3, 4 (epoch 0) and 7, 11 (epochs 1, 2): saves skip each epoch's last step
        work = tmp_path / f"stop{nth}"
        with monkeypatch.context() as patch:
            _interrupt_after_mid_epoch_save(patch, nth)
            with pytest.raises(_Interrupted):
                _Tiny.fit(work, every_n_steps=1)
        step, _ = _position(torch.load(work / "last.ckpt", weights_only=False))
        model, fit = _Tiny.fit(work, every_n_steps=1)
        assert fit.start_step == step and model.calls == fit.state.batches_run == 15 - step
        assert fit.state.resumed and model.trainer.lr_scheduler_configs[0].scheduler.last_epoch == 3
        for name, value in want.items():
            assert torch.equal(model.state_dict()[name], value), (nth, name)


def test_mid_epoch_saves_by_time_and_none_for_an_unresumable_loader(tmp_path, caplog, monkeypatch):
    """``every_seconds``: a save after every step but each epoch's last (the epoch-end save follows); a loader whose
    position is not the training's (a custom batch sampler, left alone; a stream without length, which Lightning reads
    a batch ahead) gets epoch-end saves only, with a warning."""
    with monkeypatch.context() as patch:
        saves = _count_saves(patch)
        _Tiny.fit(tmp_path / "timed", every_seconds=1e-9)
    assert saves == {"epoch": 3, "mid_epoch": 3 * 4}
    for name, kind in (("custom", {"custom_sampler": True}), ("stream", {"iterable": True})):
        caplog.clear()
        with monkeypatch.context() as patch, caplog.at_level("WARNING", logger="hyperrag.utils.resume"):
            saves = _count_saves(patch)
            _Tiny.fit(tmp_path / name, every_seconds=1e-9, **kind)
        assert saves == {"epoch": 3}, name
        assert "no mid-epoch checkpoints" in caplog.text, name


def test_a_stream_without_state_resumes_mid_epoch_by_replay(tmp_path, monkeypatch):
    """An ``IterableDataset`` with a length but no state of its own: the stateful loader replays it to the saved
    position; the resumed fit ends at the uninterrupted fit's weights."""
    reference, _ = _Tiny.fit(tmp_path / "reference", iterable="sized", every_n_steps=1)
    want = {k: v.clone() for k, v in reference.state_dict().items()}
    with monkeypatch.context() as patch:
        _interrupt_after_mid_epoch_save(patch, 6)
        with pytest.raises(_Interrupted):
            _Tiny.fit(tmp_path / "stop", iterable="sized", every_n_steps=1)
    model, fit = _Tiny.fit(tmp_path / "stop", iterable="sized", every_n_steps=1)
    assert fit.state.resumed and 0 < fit.start_step < 15 and model.calls == 15 - fit.start_step
    for name, value in want.items():
        assert torch.equal(model.state_dict()[name], value), name


class _SizedStream(_Stream):
    def __len__(self):
        return len(self.x)
