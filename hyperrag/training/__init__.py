"""Shared training machinery for ``train.py`` (kill-and-resume of a Lightning fit)."""

from hyperrag.training.resume import AtomicCheckpointIO, ResumableFit, ResumeCheckpoint

__all__ = ["AtomicCheckpointIO", "ResumableFit", "ResumeCheckpoint"]
