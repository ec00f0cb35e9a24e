"""Training for ``train.py``: one run as a library call (``fit``) and the tasks it trains (``tasks``).

The kill-and-resume machinery of a Lightning fit lives in :mod:`hyperrag.utils.resume` (below the retrievers:
HyperRAG's ball trains through it inside retrieval); its names are re-exported here.
"""

from hyperrag.utils.resume import AtomicCheckpointIO, RandomState, ResumableFit, resumable

__all__ = ["AtomicCheckpointIO", "RandomState", "ResumableFit", "resumable"]
