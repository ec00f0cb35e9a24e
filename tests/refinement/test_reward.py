"""The refinement reward of CDF-RAG's Appendix A.3, label-free: R = λ1·r + λ2·d + λ3·s + λ4·(1 − h), each term in
[0, 1], computed from the real dual-path retrieval of the causal toy corpus — so questions without gold passages
train as well; gold recall stays available as a labelled research reward."""

import dataclasses

import pytest
import torch

from hyperrag.config import compose_config, method_settings, task_arguments
from hyperrag.data.types import Query
from hyperrag.llm.base import NoLLM
from hyperrag.refinement.ppo import ActorCritic, PPOPolicy
from hyperrag.retrievers.cdfrag import CDFRAGRetriever
from tests.causal.corpus import causal_dataset
from tests.refinement.conftest import make_env


@pytest.fixture(scope="module")
def retriever(tmp_path_factory, encoder):
    tmp = tmp_path_factory.mktemp("reward")
    settings = method_settings("cdfrag", policy=None, classifier=None, index_root=str(tmp / "idx"),
                               models_dir=str(tmp / "models"))
    r = CDFRAGRetriever(settings, encoder=encoder, llm=NoLLM(), device="cpu")
    r.index(causal_dataset(tmp))
    return r


def test_label_free_reward_terms_are_in_unit_range_and_need_no_gold(retriever):
    ds_queries = [dataclasses.replace(q, gold_ids=()) for q in causal_dataset().queries]  # labels removed
    env = make_env(retriever, ds_queries, k=5, max_steps=2, relevance="context")  # the older reading of r
    ids = list(range(len(ds_queries)))
    for seq in [(), ("expand",), ("decompose", "simplify")]:
        for o in env.outcomes(ids, [seq] * len(ids)):
            for term in ("relevance", "causal_depth", "similarity"):
                assert 0.0 <= o[term] <= 1.0, (term, o[term])
            assert o["hallucination"] is None and o["h_status"] == "off"  # no LLM: λ4 is a constant
            assert o["coverage"] is None and o["full_chain"] is None  # no gold: no recall, and none needed
            w = env.weights
            assert o["reward"] == pytest.approx(w.relevance * o["relevance"] + w.causal_depth * o["causal_depth"]
                                                + w.similarity * o["similarity"] + w.hallucination * 1.0)
    # r is the mean cosine between the original question and the top-5 passages of the ranking
    out, _ = retriever.evaluate_refinements(env.refinements([0], [()]), 10, generate=False)
    top = retriever.passage_emb[out.indices[0, :5]].float()
    q = retriever.encoder.encode([ds_queries[0].question])[0].float()
    assert env.outcomes([0], [()])[0]["relevance"] == pytest.approx(float((top @ q).mean().clamp(0, 1)), abs=1e-5)


def test_gold_recall_is_the_labelled_research_reward(retriever):
    queries = list(causal_dataset().queries)
    labelled = make_env(retriever, queries, k=5, relevance="gold_recall")
    free = make_env(retriever, queries, k=5, relevance="context")
    a, b = labelled.outcomes([0], [("expand",)])[0], free.outcomes([0], [("expand",)])[0]
    assert a["relevance"] == a["coverage"] == b["coverage"] is not None
    assert b["relevance"] == b["context_relevance"] != b["coverage"]
    with pytest.raises(ValueError, match="relevance"):
        make_env(retriever, queries, relevance="recall")


def test_a_policy_trains_on_questions_without_gold(retriever):
    import lightning as L

    from hyperrag.refinement.datamodule import RolloutDataModule

    queries = [Query(f"u{i}", q.question, (), ()) for i, q in enumerate(causal_dataset().queries)]
    env = make_env(retriever, queries, k=5, max_steps=2)
    ids = list(range(len(queries)))
    policy = PPOPolicy(**task_arguments("ppo", state_dim=int(env.states(ids[:1], [()]).shape[1]), max_steps=2,
                                        max_iterations=3)).attach(env, ids, [])
    L.Trainer(max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
              enable_model_summary=False, accelerator="cpu").fit(policy, datamodule=RolloutDataModule(ids))
    assert len(policy.history) == 3 and all(torch.isfinite(torch.tensor(h["reward"])) for h in policy.history)


def test_policy_network_has_the_papers_two_hidden_layers_of_256():
    net = PPOPolicy(**task_arguments("ppo", state_dim=384, max_steps=2)).net
    assert isinstance(net, ActorCritic)
    for mlp in (net.actor, net.critic):
        linear = [m for m in mlp if isinstance(m, torch.nn.Linear)]
        assert [(m.in_features, m.out_features) for m in linear] == [(384, 256), (256, 256)]
    assert net.policy.in_features == 256 and net.policy.out_features == 4


@pytest.mark.parametrize("experiment, stage", [("cdfrag_paper", None), ("cdfrag_ablation", "rl_refinement"),
                                               ("cdfrag_ablation", "full"), ("cdfrag_table", None)])
def test_every_cdfrag_preset_trains_the_papers_policy_with_the_label_free_reward(experiment, stage):
    assert compose_config("retrieve", [f"experiment={experiment}", "method=cdfrag",
                                       *([f"cdfrag_stage={stage}"] if stage else [])]).method.retriever.get(
        "max_refine_steps", 1) == 1  # A.3: one of expand / simplify / decompose
    """What cross-fitting trains for each preset (the method's cross_fit spec, the training config it composes)
    has the paper's network and PPO settings (A.3) and the label-free reward."""
    cfg = compose_config("retrieve", [f"experiment={experiment}", "method=cdfrag",
                                      *([f"cdfrag_stage={stage}"] if stage else [])])
    specs = [s for s in cfg.method.cross_fit if s.task == "ppo"]
    assert specs
    for spec in specs:
        train = compose_config("train", ["task=ppo", *[str(o) for o in spec.get("overrides") or ()]])
        m = train.task.model
        assert (m.hidden, m.layers, m.minibatch_size, m.lr, m.entropy_coef, m.max_iterations) == (
            256, 2, 64, 3.0e-4, 0.01, 100)
        assert (train.task.env.reward, train.task.env.relevance, train.task.env.mask_unchanged) == (
            "a3", "gain", True)
        assert m.rollouts_per_state * m.max_iterations == 500  # A.3: 500 steps per query (one action per episode)
        assert set(train.task.env.weights) == {"relevance", "causal_depth", "similarity",
                                                              "hallucination"}


@pytest.mark.parametrize("override, line", [("task.model.layers=0", "task.model.layers: must be >= 1, got 0"),
                                            ("task.env.relevance=recall", "task.env.relevance"),
                                            ("task.env.match_scope=everything", "task.env.match_scope"),
                                            ("task.env.actions=[expand,rewrite]", "task.env.actions"),
                                            ("task.env.tune_weights=recall", "task.env.tune_weights")])
def test_new_ppo_settings_are_bounded(override, line):
    from hyperrag.config.validation import check_config
    from hyperrag.errors import InputError

    with pytest.raises(InputError, match=line):
        check_config(compose_config("train", ["task=ppo", override]), "")


def test_issue46_reward_settings_compose_and_default_to_the_papers_reading():
    """The named settings of issue 46 (match scope, restricted actions, λs tuned on the training questions) compose
    and validate; the defaults are A.3's reading: K as the retrieved context, all three actions, the λs as given."""
    from hyperrag.config.validation import check_config

    env = compose_config("train", ["task=ppo"]).task.env
    assert (env.match_scope, list(env.actions), env.tune_weights) == ("knowledge", ["expand", "simplify", "decompose"],
                                                                      None)
    check_config(compose_config("train", ["task=ppo", "task.env.match_scope=top_k", "task.env.actions=[expand,decompose]",
                                          "task.env.tune_weights=full_chain"]), "")
