"""CDF-RAG retriever: dual-path ranking, refinement policy pick-up, LLM wiring, retrieve.py entry."""

import json
import random
import sys

import lightning
import pytest
import torch

from hyperrag.config import method_settings, task_arguments
from hyperrag.errors import InputError
from hyperrag.llm.base import NoLLM
from hyperrag.refinement.ppo import PPOPolicy, policy_compatibility
from hyperrag.retrievers.cdfrag import CDFRAGRetriever, resolve_trained_checkpoint
from hyperrag.utils.artifacts import ArtifactRecord, check_unseen, read_record, write_record
from tests.causal.corpus import causal_dataset
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.conftest import MUSIQUE_DIR, REPO_ROOT, requires_musique
from tests.llm.fake_server import FakeOpenAIServer, schema_reply


def make(encoder, tmp_path, llm=None, **kw) -> CDFRAGRetriever:
    kw.setdefault("policy", None)
    kw.setdefault("classifier", None)
    kw["causal"] = {"alias_threshold": 0.6, **kw.get("causal", {})}
    settings = method_settings("cdfrag", index_root=str(tmp_path / "idx"), models_dir=str(tmp_path / "models"), **kw)
    return CDFRAGRetriever(settings, encoder=encoder, llm=llm or NoLLM(), device="cpu")


def ranks(r: CDFRAGRetriever, ds) -> dict[str, list[int]]:
    out = r.retrieve([q.question for q in ds.queries], 12)
    ids = [[ds.corpus[i].id for i in row] for row in out.indices.tolist()]
    return {q.id: [row.index(g) for g in q.gold_ids] for q, row in zip(ds.queries, ids)}


def test_knowledge_set_is_the_semantic_top_k_union_the_causal_paths(tmp_path, encoder):
    """K = T_sem ∪ passages of C_graph: T_sem keeps its dense ranks, the causal chain's passages follow it
    (``semantic_first``); with the causal graph off K is T_sem alone and no causal path, pair or check exists."""
    ds = causal_dataset(tmp_path)
    off = make(encoder, tmp_path, fixed_action="none", causal_retrieval=False, semantic_k=1, causal_k=2)
    off.index(ds)
    dual = make(encoder, tmp_path, fixed_action="none", semantic_k=1, causal_k=2)
    dual.index(ds)
    q = "Why did the town of Varden lose its drinking water supply?"
    a, b = off.retrieve([q], 6).details[0], dual.retrieve([q], 6).details[0]
    assert off.causal_index is None and a["causal_pairs"] == [] and a["causal_paths"] == []
    assert a["knowledge"]["causal"] == [] and len(a["knowledge_ids"]) == 1 and a["causal_path_depths"] == []
    assert b["knowledge"]["semantic"] == a["knowledge"]["semantic"] and b["knowledge"]["causal"]
    assert set(b["knowledge"]["causal"]) <= set(b["causal_passage_ids"]) and len(b["knowledge"]["causal"]) <= 2
    assert b["knowledge_ids"] == b["knowledge"]["semantic"] + b["knowledge"]["causal"]
    ranked = [ds.corpus[i].id for i in dual.retrieve([q], 6).indices[0].tolist()]
    assert ranked[: len(b["knowledge_ids"])] == b["knowledge_ids"]
    chains = [p["chain"] for p in b["causal_paths"]]
    assert any("silting of the Varden reservoir" in c for c in chains)
    pair = b["causal_pairs"][0]
    assert len(pair) == 4 and pair[2] in ds.corpus  # cause, effect, provenance passage, statement
    assert b["refinement_similarity"] is None and b["causal_depth"] == max(b["causal_path_depths"])
    info = dual.describe()
    assert info["causal_graph"]["edges"] == 14 and info["fixed_action"] == "none" and info["policy"] is None


def test_fixed_actions_refine_the_query(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, fixed_action="expand")
    r.index(ds)
    q = "Why was the coastal road near Maren closed?"
    out = r.retrieve_with_actions([q, q, q], ["expand", "simplify", "decompose"], 5)
    expand, simplify, decompose = out.details
    assert expand["queries"][0].startswith(q) and len(expand["queries"][0]) > len(q)
    assert simplify["queries"] == ["coastal road near Maren closed"]
    assert decompose["queries"][0] == q
    assert 0.0 < expand["refinement_similarity"] < 1.0
    # without a policy: the fixed action once (A.3: one action per query); with T = 2 (the chains option), then stop
    row = r.retrieve([q], 5).details[0]
    assert row["actions"] == ["expand"] and [s["action"] for s in row["refinement_steps"]] == ["expand"]
    chains = make(encoder, tmp_path, fixed_action="expand", max_refine_steps=2)
    chains.index(ds)
    row = chains.retrieve([q], 5).details[0]
    assert row["actions"] == ["expand"] and [s["action"] for s in row["refinement_steps"]] == ["expand", "stop"]
    with pytest.raises(ValueError):
        make(encoder, tmp_path, fixed_action="paraphrase")


def save_policy(path, favour: str, dataset: str = "causal_toy", query_ids=(), compatibility: str = "",
                then: str = "stop", actions=None) -> None:
    """A policy that takes ``favour`` first and then ``then`` (the policy head's weights are zero, so only its biases speak; the
    stop logit is masked at the first step); ``actions``: a restricted policy's actions (+ stop)."""
    extra = {"actions": tuple(actions)} if actions else {}
    policy = PPOPolicy(**task_arguments("ppo", state_dim=384, hidden=8, max_steps=2, **extra))
    with torch.no_grad():
        policy.net.policy.weight.zero_()
        policy.net.policy.bias[policy.actions.index(favour)] = 5.0
        policy.net.policy.bias[policy.actions.index(then)] = 6.0 if then == "stop" else 4.0
    path.parent.mkdir(parents=True)
    torch.save({"state_dict": policy.state_dict(), "hyper_parameters": dict(policy.hparams),
                "pytorch-lightning_version": lightning.__version__, "history": []}, path)
    write_record(path.parent, ArtifactRecord("ppo", dataset, tuple(query_ids), compatibility))


def test_trained_policy_is_picked_up_from_models(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, policy="auto", fixed_action="expand", max_refine_steps=2)  # the chains option
    save_policy(tmp_path / "models" / "ppo" / "causal_toy-0000000000" / "model.ckpt", "simplify",
                compatibility=policy_compatibility(r.settings, encoder, NoLLM()))
    r.index(ds)
    out = r.retrieve(["Why was the coastal road near Maren closed?", "When was the town of Varden founded?"], 5)
    d = out.details[0]
    first, second = d["refinement_steps"]
    assert d["actions"] == ["simplify"] and first["policy_probs"]["simplify"] > 0.9 and first["policy_probs"]["stop"] == 0
    assert second["action"] == "stop"  # stop becomes possible after the first step
    assert r.describe()["policy"].endswith("model.ckpt") and r.describe()["fixed_action"] is None


def test_the_policy_never_takes_an_action_that_leaves_the_query_unchanged(tmp_path, encoder):
    """A policy favouring decompose, on a question with no clause to split: decompose rewrites nothing, so it is
    masked (as in training) and the policy's next choice is taken."""
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, policy="auto", fixed_action="expand")
    save_policy(tmp_path / "models" / "ppo" / "causal_toy-0000000000" / "model.ckpt", "decompose",
                compatibility=policy_compatibility(r.settings, encoder, NoLLM()))
    r.index(ds)
    d = r.retrieve(["When was the town of Varden founded?"], 5).details[0]
    probs = d["refinement_steps"][0]["policy_probs"]
    assert probs["decompose"] == 0.0 and d["actions"] and d["actions"][0] in ("expand", "simplify")


def test_a_restricted_policy_acts_over_its_own_actions(tmp_path, encoder):
    """Issue 46's restricted-action setting deployed: a policy over expand / decompose (+ stop) is offered only
    those, masked as in training."""
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, policy="auto", fixed_action="expand")
    save_policy(tmp_path / "models" / "ppo" / "causal_toy-0000000000" / "model.ckpt", "decompose",
                compatibility=policy_compatibility(r.settings, encoder, NoLLM()),
                actions=("expand", "decompose", "stop"))
    r.index(ds)
    rows = r.retrieve(["Why was the coastal road near Maren closed?", "When was the town of Varden founded?"],
                      5).details
    assert set(rows[0]["refinement_steps"][0]["policy_probs"]) == {"expand", "decompose", "stop"}
    assert rows[1]["actions"] == ["expand"]  # decompose rewrites nothing there: masked, the other action taken


def test_resolve_trained_checkpoint_picks_only_records_of_this_dataset_that_saw_no_scored_query(tmp_path):
    models = tmp_path / "models"
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None
    assert resolve_trained_checkpoint(None, models, "ppo", "musique") is None
    assert resolve_trained_checkpoint("none", models, "ppo", "x") is None
    bare = models / "ppo" / "musique-0" / "model.ckpt"  # saved before artifact records: never picked
    bare.parent.mkdir(parents=True)
    bare.write_bytes(b"x")
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None
    save_policy(models / "ppo" / "sample-1" / "model.ckpt", "expand", dataset="sample")
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None  # another dataset's: never
    save_policy(models / "ppo" / "musique-2" / "model.ckpt", "expand", dataset="musique", query_ids=["q1", "q2"],
                compatibility="k")
    own = models / "ppo" / "musique-2" / "model.ckpt"
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "k", unseen=["q3"]) == own
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "other settings") is None
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "k", unseen=["q2", "q3"]) is None
    assert resolve_trained_checkpoint(str(bare), models, "ppo", "musique") == bare  # explicit: checked later
    with pytest.raises(InputError):
        resolve_trained_checkpoint(str(tmp_path / "missing.ckpt"), models, "ppo", "musique")


def test_an_artifact_never_scores_the_queries_it_trained_on(tmp_path):
    models = tmp_path / "models"
    save_policy(models / "ppo" / "musique-2" / "model.ckpt", "expand", dataset="musique", query_ids=["q1", "q2"])
    path = models / "ppo" / "musique-2" / "model.ckpt"
    record = read_record(path)
    assert not check_unseen([("method.retriever.policy", record, str(path))], ["q3", "q4"])
    with pytest.raises(InputError, match="trained on 1 of the 2 queries being scored"):
        check_unseen([("method.retriever.policy", record, str(path))], ["q2", "q3"])
    with pytest.raises(InputError, match="has no artifact.json"):
        check_unseen([("method.retriever.policy", None, "old/model.ckpt")], ["q1"])
    transductive = ArtifactRecord("hyperrag", "musique", ("q1",), transductive=True)
    assert check_unseen([("ball", transductive, "ball.ckpt")], ["q1"])  # allowed, and said


def test_llm_wiring_verification_refinement_generation(tmp_path, encoder):
    """Every LLM stage runs against the fake server (schema-valid filler replies) and is recorded."""
    ds = causal_dataset(tmp_path)
    def filler(body: dict) -> str:  # schema-valid filler; decompose gets two distinct sub-questions (its minimum)
        if task_of(body) == "query_refinement":
            return json.dumps({"queries": ["Where is Maren?", "Why did the port grow?"]})
        return schema_reply(body, random.Random(0))

    with FakeOpenAIServer(responder=filler) as server, fake_llm(server, tmp_path) as llm:
        r = make(encoder, tmp_path, llm=llm, fixed_action="decompose", generation={"max_rounds": 1, "max_requery": 0})
        r.index(ds)
        verified = sum(task_of(b) == "causal_pair_verification" for b in server.requests)
        out = r.retrieve(["What made the port city of Maren grow rapidly?", "Why was the coastal road closed?"], 5)
        tasks = {task_of(b) for b in server.requests}
    assert verified == 14 and r.causal_graph.stats["llm_verified"] == 14  # every pair: 10 connective + 4 OpenIE
    assert {"query_refinement", "causal_context_rewrite", "grounded_answer", "claim_extraction",
            "claim_support"} <= tasks
    for d in out.details:
        assert d["refinement_source"] == "llm" and d["action"] == "decompose"
        gen = d["generation"]
        assert gen["steps"][0]["step"] == "rewrite_context" and d["answer"] == gen["answer"]
        assert "claim_check" in {s["step"] for s in gen["steps"]}
        if d["causal_pairs"]:
            assert "causal_check" in {s["step"] for s in gen["steps"]}
    assert r.describe()["refinement_llm_calls"] == 2 and r.describe()["generation"] is True


class LoopScript:
    """Scripted replies (a test double): simplify rewrites the question towards Maren's harbour, expand towards the
    famine; the answer abstains unless the famine passage is shown, every claim of an answer holds."""

    def __call__(self, body: dict) -> str:
        task, prompt = task_of(body), user_text(body)
        if task == "query_refinement":
            simplify = "You simplify" in body["messages"][0]["content"]
            return json.dumps({"queries": ["Maren harbour timber and grain"] if simplify else
                               ["famine of 1991 resulted in mass migration to the coast"]})
        if task == "grounded_answer":
            famine = "The famine of 1991 resulted" in prompt
            return json.dumps({"answer": "Mass migration after the famine." if famine else "unknown",
                               "supporting_ids": []})
        if task == "claim_extraction":
            return json.dumps({"claims": [] if "unknown" in prompt else ["Maren grew by migration."]})
        if task == "claim_support":
            return json.dumps({"verdict": "supported", "evidence_ids": [], "reason": ""})
        return schema_reply(body, random.Random(0))


def test_feedback_loop_re_enters_refinement_and_retrieval(tmp_path, encoder):
    """B.3: an abstaining answer re-enters refinement (the next action not taken yet, on the current query) and
    retrieval; the round that passes the checks is kept, and every round is recorded."""
    ds = causal_dataset(tmp_path)
    with FakeOpenAIServer(responder=LoopScript()) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        r = make(encoder, tmp_path, llm=llm, fixed_action="simplify", causal_retrieval=False, semantic_k=2,
                 causal_k=0, generation={"max_requery": 2, "rewrite_context": False})
        r.index(ds)
        out = r.retrieve(["What made the port city of Maren grow rapidly?"], 5)
    row = out.details[0]
    rounds = row["feedback"]
    assert [x["round"] for x in rounds] == [0, 1] and [x["checks_passed"] for x in rounds] == [False, True]
    assert rounds[0]["answer"] == "unknown" and row["answer"] == "Mass migration after the famine."
    assert row["actions"] == ["simplify", "expand"]  # the loop's action: the first one not taken yet
    assert row["refinement_steps"][-1] == {"step": 1, "action": "expand", "requery_round": 1}
    assert "c04" in row["knowledge_ids"] and ds.corpus[out.indices[0, 0].item()].id in row["knowledge_ids"]
    assert [x["kept"] for x in rounds] == [False, True] and r.describe()["requeried"] == 1


def test_the_round_the_checks_rate_best_is_kept():
    from hyperrag.retrievers.cdfrag import round_quality

    def gen(answer, passed, s_causal, hall):
        return {"answer": answer, "checks_passed": passed, "s_causal": s_causal, "hallucination": hall}

    # a re-query that does not help (same failing check) keeps the first round: ties go to the earliest
    assert round_quality(gen("4", False, 0.0, 0.0)) == round_quality(gen("4", False, 0.0, 0.0))
    assert round_quality(gen("unknown", False, None, None)) < round_quality(gen("4", False, 0.0, 0.0))
    assert round_quality(gen("4", False, 0.0, 0.5)) < round_quality(gen("4", False, 0.5, 0.5)) \
        < round_quality(gen("4", True, 0.5, 0.0))


def test_multiple_choice_options_reach_generation(tmp_path, encoder):
    from dataclasses import replace

    ds = causal_dataset(tmp_path)
    q = replace(ds.queries[1], options=("Mass migration", "A festival"), answer_index=0)
    ds = replace(ds, queries=[q])
    seen: list[str] = []

    def responder(body: dict) -> str:
        if task_of(body) == "grounded_answer":
            seen.append(user_text(body))
            return json.dumps({"answer": "A", "supporting_ids": []})
        return schema_reply(body, random.Random(0))

    with FakeOpenAIServer(responder=responder) as server, fake_llm(server, tmp_path) as llm:
        r = make(encoder, tmp_path, llm=llm, causal={"verify": False},
                 generation={"causal_check": "off", "hallucination_check": False, "max_requery": 0})
        r.index(ds)
        row = r.retrieve([q.question], 5).details[0]
    assert "A. Mass migration" in seen[0] and row["answer"] == "Mass migration"


def test_without_an_llm_every_configured_step_is_counted(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path)
    r.index(ds)
    r.retrieve([q.question for q in ds.queries], 5)
    n = len(ds.queries)
    assert r.skipped["causal_pair_verification"] == r.causal_graph.num_edges
    for step in ("query_refinement", "causal_context_rewrite", "grounded_answer", "causal_entailment",
                 "claim_extraction", "feedback_loop"):
        assert r.skipped[step] == n, step


def test_retrieve_entry_method_cdfrag(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO_ROOT))
    from tests.test_retrieve_entry import compose_retrieve, retrieve

    monkeypatch.setenv("HYPERRAG_MODELS", str(tmp_path / "no-models"))
    cfg = compose_retrieve(tmp_path, "method=cdfrag")
    metrics = retrieve.run(cfg)
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["details"]["actions"] == ["expand"] for r in rows)
    assert metrics["recall@10"] == 100.0 and metrics["recall@5"] >= 60.0
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["method"] == "cdfrag" and "causal_graph" in saved and saved["policy"] is None
    assert saved["metrics"]["llm_steps_skipped"]["grounded_answer"] == 6
    # evaluate.py reads the run's causal index for CRC (the evaluation layer gets the reader from the entry point).
    # crc_reference=graph: the paths from the question; without a trained classifier the graph has no edge, so no
    # retrieved item lies on one. The default reference (gold) is the gold passages and their pairs: CRC is then
    # the share of the top-5 passages that are gold
    import evaluate
    from tests.test_evaluate_entry import compose_evaluate

    (record,) = evaluate.run(compose_evaluate(tmp_path, f"predictions={tmp_path / 'run'}", "metrics=[crc,ccd]",
                                              "crc_reference=graph", "causal_index=run"))
    assert not record["skipped"], record["skipped"]
    assert record["metrics"]["crc"] == 0.0 and record["metrics"].get("ccd") is None  # no path: CCD undefined
    # no fixed reference graph built for this dataset: the gold passages only (CRC over the first crc_budget = 10)
    (gold,) = evaluate.run(compose_evaluate(tmp_path, f"predictions={tmp_path / 'run'}", "metrics=[crc]"))
    share = [sum(p in r["gold_ids"] for p in r["ranked_ids"][:10]) / len(r["ranked_ids"][:10]) for r in rows]
    assert gold["crc_reference_graph"] is None and gold["crc_budget"] == 10
    assert gold["metrics"]["gold_passage_precision"] == pytest.approx(100 * sum(share) / len(share), abs=1e-3)


@pytest.mark.slow
@requires_musique
def test_musique_beats_dense(tmp_path):
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.retrieval import retrieval_metrics

    ds = musique_dataset(MUSIQUE_DIR)
    settings = method_settings("cdfrag", policy=None, classifier=None, fixed_action="expand", index_root=str(tmp_path))
    r = CDFRAGRetriever(settings, encoder=TextEncoder(show_progress=False),  # the user cache: cold once, then warm
                        llm=NoLLM(), device="cpu")
    r.index(ds)
    out = r.retrieve([q.question for q in ds.queries], 10)
    m = retrieval_metrics([[ds.corpus[i].id for i in row] for row in out.indices.tolist()],
                          [q.gold_ids for q in ds.queries], (5,))
    assert m["recall@5"] > 62.0 and m["fcr@5"] > 40.0  # dense MiniLM: 58.7 / 31.4


@pytest.mark.parametrize("union_order", ["semantic_first", "dense"])
def test_the_union_never_pushes_a_semantic_top_k_passage_below_its_dense_rank(union_order):
    """Whatever the causal paths bring, every T_sem passage keeps its dense rank; ``semantic_first`` puts the
    C_graph passages (at most ``causal_k`` new ones, best path first) right after T_sem, ``dense`` leaves every
    other passage at its dense place."""
    from hyperrag.retrievers.cdfrag import knowledge_union

    dense = [7, 3, 9, 1, 4, 0, 2, 5, 6, 8]
    causal = [9, 8, 6, 2]  # 9 is already semantic
    semantic, added, ranked = knowledge_union(dense, causal, 5, 2, union_order)
    assert semantic == [7, 3, 9, 1, 4] and added == [8, 6]
    assert all(ranked.index(j) == dense.index(j) for j in semantic)
    assert sorted(ranked) == sorted(dense)
    if union_order == "semantic_first":
        assert ranked[:7] == [7, 3, 9, 1, 4, 8, 6] and ranked[7:] == [0, 2, 5]
    else:
        assert ranked == dense


@pytest.mark.parametrize("overrides, style", [(["method=cdfrag"], "short"),
                                              (["method=cdfrag", "answer_style=explanatory"], "explanatory"),
                                              (["experiment=cdfrag_paper"], "explanatory"),
                                              (["experiment=cdfrag_ablation", "cdfrag_stage=full"], "explanatory")])
def test_the_loops_answer_style_is_the_runs(overrides, style):
    """method.retriever.answer_style follows the run's answer_style; the paper's presets explain their answers."""
    from hydra.utils import instantiate

    from hyperrag.config import compose_config

    settings = instantiate(compose_config("retrieve", overrides).method.retriever)
    assert settings.answer_style == style
    retriever = CDFRAGRetriever(settings, encoder=None, llm=NoLLM(), device="cpu")
    assert retriever.generator.answer_task.style == style and retriever.generator.fallback_task.style == style


@pytest.mark.parametrize("key, value", [("answer_style", "verbose"), ("generation.check_scope", "cited"),
                                        ("union_order", "causal_first"), ("causal_k", -1)])
def test_new_settings_are_bounded(key, value):
    from hydra.utils import instantiate

    from hyperrag.config import compose_config

    with pytest.raises(Exception, match=key.split(".")[-1]):
        instantiate(compose_config("retrieve", ["method=cdfrag", f"method.retriever.{key}={value}"]).method.retriever)
