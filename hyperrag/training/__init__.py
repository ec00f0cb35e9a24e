"""Training for ``train.py``: kill-and-resume of a Lightning fit (``resume``) and the tasks it trains
(``tasks``)."""

from hyperrag.training.resume import AtomicCheckpointIO, RandomState, ResumableFit, resumable

__all__ = ["AtomicCheckpointIO", "RandomState", "ResumableFit", "resumable"]
