"""``python train.py task=ppo``: train the query-refinement policy with PPO against the real CDF-RAG pipeline.

The environment (:class:`~hyperrag.refinement.env.RefinementEnv`) wraps an indexed
:class:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever` (dual-path retrieval over the causal graph of ``data``, the
UniCausal pair classifier when ``models/causal_pair`` holds one) built from the method's settings and the task's
LLM (``task.llm``; ``retrieve.py cv_folds=K`` passes the run's): the actions are carried out by the *same* refiner
the retriever deploys — the LLM when one is configured — and, with an LLM, the answer is generated and checked so
the reward's hallucination term (λ4) is on. Episodes take up to the method's ``max_refine_steps`` actions. The reward
is A.3's by default (``env.reward: a3``, ``env.relevance: gain``: the match gain of the knowledge set over the
unrefined question's, judged by the LLM or, LLM-free, lexically), label-free, so any question set trains;
``env.reward: s22`` (§2.2, RetrievalCoverage = gold recall) and ``env.relevance: gold_recall`` train on the questions
with gold passages only (labelled: cross-fit them). The
questions are split into ``split.train`` training and ``split.heldout`` held-out questions (or, cross-fitting,
exactly ``split.train_ids``); one Lightning epoch is one PPO iteration over the training questions.

``evaluate`` compares, on the held-out questions, the greedy policy's final reward (and coverage) with the
uniform-random policy's (exact expectation), the best fixed single action (chosen on the training questions) and
the per-question best sequence. ``plot`` draws the training curve next to ``ppo_history.csv``.
"""

from __future__ import annotations

import atexit
import csv
import logging
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict

from hyperrag.config.validation import NonNegativeFloat, PositiveInt, as_dict, plain
from hyperrag.data.types import Dataset
from hyperrag.refinement.agreement import tune_env
from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv, split_queries
from hyperrag.refinement.ppo import STOP, PPOPolicy, policy_compatibility
from hyperrag.utils.artifacts import ArtifactRecord
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.settings import CDFRAGSettings

log = logging.getLogger(__name__)


class SplitSettings(TypedDict):
    """``task.split``: training and held-out questions — counts (≥ 1), or shares of the usable questions
    (< 1); ``heldout: null`` = the rest. ``train_ids``: train on exactly these query ids instead, with no
    held-out questions (cross-fitting: ``retrieve.py cv_folds=K`` passes the other folds' ids)."""

    train: PositiveInt | Annotated[float, Field(gt=0, lt=1)]
    heldout: PositiveInt | Annotated[float, Field(gt=0, lt=1)] | None
    seed: int
    train_ids: list[str] | None


class EnvSettings(TypedDict):
    """``task.env``: :class:`RefinementEnv`'s ``reward`` (``a3`` or ``s22``), ``relevance`` (a3's r term: ``gain``,
    label-free, or the older ``context`` / labelled ``gold_recall``), ``match`` (the gain's scorer: ``judge``,
    ``lexical`` or ``auto``), ``mask_unchanged`` (an unchanged rewrite is no action), ``k`` (the retrieval depth),
    ``hallucination`` (the λ4 term from generated answers, whenever ``task.llm`` is an available LLM), reward
    ``weights`` (λ1–λ4), ``match_scope`` (what the gain's m scores: K or the top k), ``actions`` (the policy's; a
    subset is the labelled restricted setting) and ``tune_weights`` (λ2–λ4 chosen on the training questions)."""

    reward: Literal["a3", "s22"]
    relevance: Literal["gain", "context", "gold_recall"]
    match: Literal["auto", "judge", "lexical"]
    mask_unchanged: bool
    k: PositiveInt
    hallucination: bool
    weights: dict[Literal["relevance", "causal_depth", "similarity", "hallucination"], NonNegativeFloat]
    match_scope: Literal["knowledge", "top_k"]
    actions: list[Literal["expand", "simplify", "decompose"]]
    tune_weights: Literal["full_chain"] | None


class PPOTask:
    """Args:
        dataset: questions with gold passages and their corpus (``data``).
        encoder: the sentence embedder (states, retrieval).
        model: partial of :class:`PPOPolicy` (all but ``state_dim``).
        retriever: the CDF-RAG settings of the environment's retriever (``method.retriever``, composed from
            ``method/cdfrag.yaml``); its policy and feedback loop are switched off (an episode is the action
            sequence under evaluation), its ``models_dir`` (where the pair classifier is looked for) is
            ``models_dir``.
        models_dir: the run's ``models_dir``.
        device: where the retriever's tensors live.
        env: ``k``, ``weights`` (λs) and ``hallucination`` of :class:`RefinementEnv`.
        split: ``train`` / ``heldout`` question counts (or shares) and ``seed``.
        rollout_batch: training questions per PPO iteration (null = all).
        llm: the LLM Hydra built from the ``task.llm`` node, not started yet (LLM-carried actions, hallucination
            reward); started with the environment (an oracle bound to ``dataset``); null = LLM-free (stand-ins, λ4
            off).
        name: ``models/<name>/...``.
    """

    def __init__(self, dataset: Dataset, encoder: Encoder, model: Callable[..., PPOPolicy],
                 retriever: CDFRAGSettings, models_dir: str, device: str, env: EnvSettings,
                 split: SplitSettings, rollout_batch: PositiveInt | None, llm: LanguageModel | None,
                 name: str) -> None:
        self.dataset = dataset
        self.encoder = encoder
        self.model_factory = model
        self.retriever_settings = replace(retriever, policy=None, models_dir=str(models_dir),
                                          generation=replace(retriever.generation, max_requery=0))
        self.device = device
        self.env_settings = dict(plain(env))
        self.split_settings = dict(plain(split))
        self.rollout_batch = rollout_batch
        self.llm_backend = llm
        self.name = name
        self.data_name = dataset.name
        self._llm: LanguageModel | None = None

    @property
    def need_gold(self) -> bool:
        """Whether the reward needs gold passages (§2.2's RetrievalCoverage or the labelled ``gold_recall``)."""
        return (self.env_settings.get("reward") == "s22" or self.env_settings.get("relevance") == "gold_recall"
                or bool(self.env_settings.get("tune_weights")))

    @cached_property
    def split(self) -> tuple[list[int], list[int]]:
        s = self.split_settings
        if s.get("train_ids") is not None:
            from hyperrag.errors import InputError

            position = {q.id: i for i, q in enumerate(self.dataset.queries)}
            unknown = [q for q in s["train_ids"] if q not in position]
            if unknown:
                raise InputError(f"unknown query id(s) {unknown[:3]} in dataset {self.dataset.name!r}",
                                 setting="task.split.train_ids")
            return [position[q] for q in s["train_ids"]
                    if self.dataset.queries[position[q]].gold_ids or not self.need_gold], []
        return split_queries(self.dataset.queries, s["train"], s["heldout"], seed=int(s["seed"]),
                             need_gold=self.need_gold)

    def artifact(self) -> ArtifactRecord:
        """What the policy trained on: the training questions (held-out ones are only evaluated, never used to
        choose anything) and the retrieval settings its rewards came from (:func:`policy_compatibility`)."""
        train, _ = self.split
        llm = self.env.retriever.llm
        return ArtifactRecord(self.name, self.dataset.name, tuple(self.dataset.queries[i].id for i in train),
                              policy_compatibility(self.retriever_settings, self.encoder, llm))

    @cached_property
    def env(self) -> RefinementEnv:
        from hyperrag.errors import InputError
        from hyperrag.llm import build_llm
        from hyperrag.retrievers.cdfrag import CDFRAGRetriever

        train, held = self.split
        if not train:
            which = "question with gold passages" if self.need_gold else "question"
            raise InputError(f"dataset {self.dataset.name!r} has no {which} to train on", field="data")
        self._llm = build_llm(self.llm_backend, dataset=self.dataset).start()
        atexit.register(self._llm.stop)  # train.py has no teardown hook; a managed server must not outlive us
        retriever = CDFRAGRetriever(self.retriever_settings, encoder=self.encoder, llm=self._llm,
                                    device=self.device)
        retriever.index(self.dataset)
        env = RefinementEnv(retriever, self.dataset.queries, max_steps=self.retriever_settings.max_refine_steps,
                            **self.env_settings)
        env.reward_table(train + held)  # every (question, action sequence) outcome once, up front
        tune_env(env, train)  # tune_weights: the λs from the training questions only (no-op otherwise)
        log.info("PPO environment: %d questions x %d sequences, hallucination term %s", len(train + held),
                 len(env.sequences()), env.hallucination_term)
        return env

    def key(self, **extra: Any) -> str:
        env, (train, held) = self.env, self.split
        ret = env.retriever
        return stable_digest(self.name, self.dataset.name, [self.dataset.queries[i].id for i in train + held],
                             as_dict(self.retriever_settings), self.env_settings, str(ret.classifier_path),
                             str(ret.causal_index.directory) if ret.causal_index else None, self.rollout_batch,
                             {k: v for k, v in sorted(getattr(self.model_factory, "keywords", {}).items())},
                             getattr(self._llm, "model", None), extra, length=10)

    def build_model(self) -> PPOPolicy:
        train, held = self.split
        state_dim = int(self.env.states(train[:1], [()]).shape[1])
        return self.model_factory(state_dim=state_dim, max_steps=self.retriever_settings.max_refine_steps,
                                  actions=(*self.env.actions, STOP)).attach(self.env, train, held)

    def build_datamodule(self) -> RolloutDataModule:
        return RolloutDataModule(self.split[0], self.rollout_batch, seed=int(self.split_settings["seed"]))

    def load(self, checkpoint: str | Path) -> PPOPolicy:
        train, held = self.split
        return PPOPolicy.load_from_checkpoint(str(checkpoint), map_location="cpu").attach(self.env, train, held)

    def evaluate(self, model: PPOPolicy) -> dict[str, Any]:
        train, held = self.split
        tr = self.env.evaluate_policy(model, train)
        common = {"train_ppo_reward": tr["policy_reward"], "train_random_reward": tr["random_reward"],
                  "train_queries": len(train), "heldout_queries": len(held), "env_calls": self.env.env_calls,
                  "max_steps": self.env.max_steps, "hallucination_term": self.env.hallucination_term}
        if not held:  # cross-fitting (split.train_ids): the held-out fold is scored by retrieval, not here
            self._last_eval = {"train": tr}
            return common
        ev = self.env.evaluate_policy(model, held, select_ids=train)
        out: dict[str, Any] = {
            "heldout_ppo_reward": ev["policy_reward"], "heldout_ppo_reward_sd": ev["policy_reward_sd"],
            "heldout_random_reward": ev["random_reward"], "heldout_random_reward_sd": ev["random_reward_sd"],
            "heldout_best_fixed_reward": ev["best_fixed_reward"], "heldout_best_fixed_action": ev["best_fixed_action"],
            "heldout_oracle_reward": ev["oracle_reward"], "heldout_ppo_coverage": ev["policy_coverage"],
            "heldout_random_coverage": ev["random_coverage"], "heldout_best_fixed_coverage": ev["best_fixed_coverage"],
            "heldout_episode_length": ev["policy_episode_length"], **common,
        }
        out.update({f"heldout_reward_{a}": v for a, v in ev["per_action_reward"].items()})
        out.update({f"heldout_policy_{k}": v for k, v in ev["policy_sequences"].items()})
        self._last_eval = {"heldout": ev, "train": tr}
        return out

    def plot(self, model: PPOPolicy, path: str | Path) -> Path:
        """Training curve PNG (``ppo_training_curve.png`` beside ``path``) and ``ppo_history.csv``."""
        from hyperrag.refinement.plot import plot_training_curve

        out = Path(path).with_name("ppo_training_curve.png")
        hist = model.history
        if hist:
            keys = sorted({k for row in hist for k in row})
            with (out.parent / "ppo_history.csv").open("w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=keys)
                w.writeheader()
                w.writerows(hist)
        return plot_training_curve(hist, out, title=f"PPO query refinement · {self.data_name}")


__all__ = ["PPOTask"]
