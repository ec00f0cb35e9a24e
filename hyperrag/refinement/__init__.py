"""CDF-RAG query refinement: the expand / simplify / decompose actions, the retrieval environment and the PPO
policy that picks an action per question (``python train.py task=ppo``)."""

from hyperrag.refinement.actions import ACTIONS, QueryRefiner, Refinement

__all__ = ["ACTIONS", "QueryRefiner", "Refinement"]
