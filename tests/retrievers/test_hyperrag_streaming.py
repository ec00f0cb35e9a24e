"""HyperRAG as its paper describes it: the paper's query graph (no question node), questions streamed one at a time
(Algorithm 1) — none trained into the ball before it arrives —, the no-ball rows of the same run, the Fig. 3 axis,
question routing and the held-out protocol's refusal."""

import json

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.errors import InputError
from tests.retrievers.test_hyperrag import QUESTION, TOY_DS, ScriptedLLM, _oracle
from tests.test_retrieve_entry import compose_retrieve, retrieve


def _paper(tmp_path, encoder, llm=None, **over):
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    settings = method_settings("hyperrag_paper", models_dir=str(tmp_path / "models"), index_root=str(tmp_path),
                               **over)
    return HyperRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")


def test_the_papers_graph_has_no_question_nodes(tmp_path, encoder):
    r = _paper(tmp_path, encoder, _oracle(TOY_DS), protocol="transductive")
    r.index(TOY_DS)
    g = r.graph
    assert g.num_queries == 0 and g.graph_questions == [QUESTION] and len(g.implicit)  # the oracle's graph joined
    assert r.model.points.shape[0] == g.num_passages == len(TOY_DS.corpus)  # passages only, in the ball too
    rel = r.ball.relations()
    assert int(rel.max()) < g.num_passages and "query" not in g.implicit.count_by_relation()
    assert r.transductive and r.protocol == "transductive"
    with pytest.raises(InputError, match="query_position"):  # no node to read the transductive rule from
        _paper(tmp_path, encoder, query_position="trained")


def test_streaming_never_trains_a_question_before_it_arrives(tmp_path, encoder):
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    qs = [q.question for q in ds.queries]
    r = _paper(tmp_path, encoder, multi_step=False)
    r.index(ds)
    assert r.protocol == "streaming" and not r.transductive
    assert r.graph.graph_questions == [] and not len(r.graph.implicit)  # the index holds no question's graph
    trained, ranked = [], []
    train, rank = r.ball.train_touched, r._rank
    r.ball.train_touched = lambda *a, **k: (trained.append(list(r.graph.graph_questions)), train(*a, **k))[1]
    r._rank = lambda q, *a: (ranked.append((q, list(r.graph.graph_questions))), rank(q, *a))[1]
    out = r.retrieve(qs, 5)
    # each question joined, trained, then was ranked — with the graphs of the questions before it, none after
    assert [(q, seen) for q, seen in ranked] == [([q], qs[: i + 1]) for i, q in enumerate(qs)]
    assert trained == [qs[: i + 1] for i in range(len(qs))]
    assert r.describe()["streaming"]["arrived"] == len(qs)
    det = out.details[0]
    assert set(det["no_ball"]) == {"dense", "dense_feedback", "graph_selection", "graph_dense", "graph_feedback"}
    assert set(det["ball_rows"]) == {f"{t}_{s}" for t in ("trained", "untrained") for s in ("corpus", "query_graph")}
    scope = r.settings.rank_scope
    assert det["ball_rows"][f"trained_{scope}"] == [r.passage_ids[i] for i in out.indices[0].tolist()]  # the run's
    assert all(len(v) == 5 for v in det["no_ball"].values())
    assert det["no_ball"]["graph_selection"][0] == det["query_graph"]["rounds"][0][0]  # selected first
    # a question's ranking depends on the questions before it only: a shorter stream ranks its first three alike
    short = _paper(tmp_path, encoder, multi_step=False)
    short.index(ds)
    assert torch.equal(short.retrieve(qs[:3], 5).indices, out.indices[:3])


def test_streaming_run_labels_its_protocol_and_writes_the_no_ball_rows(tmp_path, monkeypatch):
    from hyperrag.eval import runs
    from hyperrag.retrievers.hyperrag_rows import BALL, BALL_ROWS, ROWS, compare_rows

    over = ["method=hyperrag_paper", f"method.retriever.models_dir={tmp_path / 'models'}", "tracking=none",
            "answer_top_n=0", "method.retriever.train.max_epochs=1"]
    metrics = retrieve.run(compose_retrieve(tmp_path, *over))
    assert metrics["protocol"] == "streaming" and "transductive" not in metrics
    dense = retrieve.run(compose_retrieve(tmp_path / "dense", "method=dense", "tracking=none", "answer_top_n=0"))
    read, read_predictions = [], runs.read_predictions
    monkeypatch.setattr(runs, "read_predictions", lambda path: read.append(path) or read_predictions(path))
    res = compare_rows(tmp_path / "run", ["recall@5"])
    assert read.count(tmp_path / "run" / "predictions.jsonl") == 1  # the run's predictions are read once
    assert set(res["rows"]) == {*ROWS.values(), *BALL_ROWS.values(), BALL}
    assert set(res["scopes"]) == {"corpus", "query_graph"}  # trained − untrained and − the best no-ball row
    assert BALL_ROWS["untrained_query_graph"] in res["scopes"]["query_graph"]["trained_minus"]
    assert res["scopes"]["corpus"]["best_no_ball"]["recall@5"] in {ROWS["dense"], ROWS["dense_feedback"]}
    assert res["rows"]["dense"]["recall@5"].estimate == pytest.approx(dense["recall@5"])  # same dense, same run
    saved = json.loads((tmp_path / "run" / "rows" / "graph_selection" / "metrics.json").read_text())
    assert saved["metrics"]["protocol"] == "streaming" and saved["metrics"]["llm_label"] == "LLM-free"
    assert saved["method"] == "graph_selection (no ball)"
    ball = json.loads((tmp_path / "run" / "rows" / "trained_corpus" / "metrics.json").read_text())
    assert ball["method"] == "trained_corpus (ball)"  # a report never calls the ball a no-ball row


def test_rows_of_a_run_without_them_are_refused_in_one_line(tmp_path):
    from hyperrag.retrievers.hyperrag_rows import write_rows

    retrieve.run(compose_retrieve(tmp_path, "method=dense", "tracking=none", "answer_top_n=0"))
    with pytest.raises(InputError, match="protocol=streaming"):
        write_rows(tmp_path / "run")


def test_rows_of_a_multi_step_run_are_written_with_the_ball_row_labelled_multi_step(tmp_path):
    """Issue 47: a multi-step run's rows are written (they used to be refused); its own ranking is labelled the
    multi-step ball, the rows stay single-step, and the matched no-ball row (the question and V_i) is compared in
    both scopes."""
    from hyperrag.retrievers.hyperrag_rows import BALL_MULTI, BALL_ROWS, MATCHED, ROWS, compare_rows

    run = tmp_path / "run"
    run.mkdir()
    lines = []
    for i, gold in enumerate(["a", "b", "c"]):
        no_ball = {k: ["x", gold] if k == MATCHED else ["x", "y"] for k in ROWS}
        ball_rows = {k: [gold, "x"] for k in BALL_ROWS}
        det = {"no_ball": no_ball, "ball_rows": ball_rows, "sub_questions": ["Where?"], "route": "multi_step"}
        lines.append(json.dumps({"id": f"q{i}", "question": "Where?", "ranked_ids": [gold, "x"], "gold_ids": [gold],
                                 "details": det}))
    (run / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    res = compare_rows(run, ["recall@2"])
    assert res["multi_step_questions"] == 3 and res["ball_label"] == BALL_MULTI and BALL_MULTI in res["rows"]
    for scope in ("corpus", "query_graph"):
        assert ROWS[MATCHED] in res["scopes"][scope]["trained_minus"]
    assert "never sees" in ROWS["dense_feedback"] and "matched" in ROWS[MATCHED]


def test_query_graph_scope_ranks_v_i_first_and_the_untrained_row_is_pure_projection(tmp_path, encoder):
    from hyperrag.data import sample_dataset
    from hyperrag.hyperbolic import topk_poincare

    ds = sample_dataset()
    qs = [q.question for q in ds.queries]
    r = _paper(tmp_path, encoder, multi_step=False, rank_scope="query_graph")
    r.index(ds)
    k = 5
    out = r.retrieve(qs, k)
    emb = encoder.encode([p.content for p in ds.corpus.passages])
    for b, q in enumerate(qs):
        v_i = list(dict.fromkeys(r.query_graphs[q].passages))
        assert v_i  # every question selected something
        top = out.indices[b].tolist()
        assert set(top[: min(k, len(v_i))]) <= set(v_i)  # V_i first (rank_scope=query_graph)
        rows = out.details[b]["ball_rows"]
        assert rows["trained_query_graph"] == [r.passage_ids[i] for i in top]
        # epoch 0: the projected question against the projected passages — nothing trained
        proj, _ = topk_poincare(r.model.embed(encoder.encode([q])), r.model.embed(emb), k)
        assert rows["untrained_corpus"] == [r.passage_ids[i] for i in proj[0].tolist()]
    assert r.describe()["rank_scope"] == "query_graph"


def test_cv_folds_is_refused_for_hyperrag(tmp_path):
    with pytest.raises(InputError, match="cv_folds: hyperrag builds"):
        retrieve.run(compose_retrieve(tmp_path, "method=hyperrag", "tracking=none", "cv_folds=3"))


def test_the_fig3_passages_axis_is_what_the_reader_sees(tmp_path, encoder):
    seen = {}
    for n in (1, 5):
        cfg = compose_retrieve(tmp_path, "experiment=hyperrag_fig3", f"answer_top_n={n}", "tracking=none")
        assert cfg.answer_top_n == n and cfg.method.retriever.reader_passages == n
        llm = ScriptedLLM({"question_routing": {"multi_hop": True, "sub_questions": ["Where is a?", "What of #1?"]},
                           "grounded_answer": {"answer": "x", "supporting_ids": []}})
        r = _paper(tmp_path, encoder, llm, protocol="transductive", graph="explicit",
                   reader_passages=cfg.method.retriever.reader_passages)
        r.index(TOY_DS)
        r.retrieve([QUESTION], 5)
        seen[n] = {len(inputs["passages"]) for name, inputs in llm.calls if name == "grounded_answer"}
    assert seen == {1: {1, 2}, 5: {5, 6}}  # every answer step reads the axis' passages (+ the final note)


def test_routing_sends_single_hop_questions_to_one_step(tmp_path, encoder):
    single = ScriptedLLM({"question_routing": {"multi_hop": False, "sub_questions": []}})
    r = _paper(tmp_path, encoder, single, protocol="transductive", graph="explicit")
    r.index(TOY_DS)
    out = r.retrieve([QUESTION], 4)
    assert out.details[0] == {"route": "single_step"} and [n for n, _ in single.calls] == ["question_routing"]
    plain = _paper(tmp_path, encoder, protocol="transductive", graph="explicit", multi_step=False)
    plain.index(TOY_DS)
    assert torch.equal(out.indices, plain.retrieve([QUESTION], 4).indices)  # the paper's single-step rule
    multi = ScriptedLLM({"question_routing": {"multi_hop": True, "sub_questions": ["Where is a?", "What of #1?"]},
                         "grounded_answer": {"answer": "Dodge County", "supporting_ids": []}})
    r = _paper(tmp_path, encoder, multi, protocol="transductive", graph="explicit")
    r.index(TOY_DS)
    det = r.retrieve([QUESTION], 4).details[0]
    assert det["route"] == "multi_step" and det["sub_questions"] == ["Where is a?", "What of Dodge County?"]
    assert det["answer"] == "Dodge County"


def test_the_multi_step_final_answer_honours_the_answer_style(tmp_path, encoder):
    from hyperrag.llm.tasks import get_task

    reply = {"answer": "Black Hawk Township lies in Jefferson County, which borders Dodge County.",
             "short_answer": "Dodge County", "supporting_ids": []}
    llm = ScriptedLLM({"question_routing": {"multi_hop": True, "sub_questions": ["Where is a?", "What of #1?"]},
                       "grounded_answer": reply})
    r = _paper(tmp_path, encoder, llm, protocol="transductive", graph="explicit", answer_style="explanatory")
    r.index(TOY_DS)
    det = r.retrieve([QUESTION], 4).details[0]
    assert det["answer"] == reply["answer"] and det["short_answer"] == "Dodge County"  # EM scores the short one
    final = get_task("grounded_answer", style="explanatory").messages(llm.calls[-1][1])[0]["content"]
    assert final != get_task("grounded_answer").messages(llm.calls[-1][1])[0]["content"]  # another instruction
    assert method_settings("hyperrag_paper").answer_style == "short"  # composed alone: the short style


@pytest.mark.slow
def test_zero_epochs_is_the_untrained_arm_the_ball_as_initialised(tmp_path, encoder):
    """Issue 47: ``train.max_epochs: 0`` (and ``streaming.epochs: 0``) allowed, meaning the ball as initialised —
    every point at its projected starting point, so the run's ranking is the untrained row, for a multi-step or a
    transductive run too."""
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    qs = [q.question for q in ds.queries][:3]
    r = _paper(tmp_path, encoder, multi_step=False, train={"max_epochs": 0}, streaming={"epochs": 0})
    assert (r.settings.train.max_epochs, r.settings.streaming.epochs) == (0, 0)
    r.index(ds)
    assert torch.equal(r.model.points, r.model.anchor) and r.ball.mean_distance_moved() < 1e-6  # acosh rounding
    out = r.retrieve(qs, 5)
    assert torch.equal(r.model.points, r.model.anchor)  # query graphs joined, nothing trained
    for b in range(len(qs)):
        rows = out.details[b]["ball_rows"]
        assert rows["trained_corpus"] == rows["untrained_corpus"]
        assert rows["trained_query_graph"] == rows["untrained_query_graph"]
        assert rows[f"trained_{r.settings.rank_scope}"] == [r.passage_ids[i] for i in out.indices[b].tolist()]
    t = _paper(tmp_path / "t", encoder, _oracle(TOY_DS), protocol="transductive", train={"max_epochs": 0})
    t.index(TOY_DS)
    assert torch.equal(t.model.points, t.model.anchor)
    with pytest.raises(InputError, match="max_epochs"):
        _paper(tmp_path, encoder, train={"max_epochs": -1})


@pytest.mark.slow
def test_query_order_shuffled_arrives_in_a_seeded_permutation_and_keeps_file_order_out(tmp_path, encoder):
    """Issue 47: ``streaming.order: shuffled`` — a query-order reading: the questions arrive in a permutation drawn
    with ``order_seed`` (each still joins and trains before it is ranked, with only the earlier arrivals' graphs),
    and the predictions come back in file order, each with its ``arrival`` position."""
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    qs = [q.question for q in ds.queries]
    r = _paper(tmp_path, encoder, multi_step=False, streaming={"order": "shuffled", "order_seed": 3})
    r.index(ds)
    ranked = []
    rank = r._rank
    r._rank = lambda q, *a: (ranked.append((q[0], list(r.graph.graph_questions))), rank(q, *a))[1]
    out = r.retrieve(qs, 5)
    perm = torch.randperm(len(qs), generator=torch.Generator().manual_seed(3)).tolist()
    assert perm != list(range(len(qs)))  # a real reordering of the sample's questions
    assert [q for q, _ in ranked] == [qs[b] for b in perm]
    assert [seen for _, seen in ranked] == [[qs[b] for b in perm[: i + 1]] for i in range(len(qs))]
    assert [d["arrival"] for d in out.details] == [perm.index(b) for b in range(len(qs))]
    for b in range(len(qs)):  # file order out: row b is question b's ranking
        assert out.details[b]["ball_rows"][f"trained_{r.settings.rank_scope}"] == [
            r.passage_ids[i] for i in out.indices[b].tolist()]


def test_multi_step_rows_rank_the_runs_own_sub_questions_by_every_row(tmp_path, encoder):
    """Issue 47: a streamed multi-step question keeps ``multi_rows`` — its own resolved sub-questions ranked by the
    trained and the untrained ball under both scopes and by the no-ball rows (dense; the matched row: ``V_i`` by
    cosine to each sub-question first), merged as the run merges them; the run's ranking is its trained row, and
    at 0 epochs trained and untrained rows agree."""
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    qs = [q.question for q in ds.queries]
    for epochs in (3, 0):
        r = _paper(tmp_path / str(epochs), encoder, _oracle(ds), train={"max_epochs": epochs},
                   streaming={"epochs": epochs})
        r.index(ds)
        out = r.retrieve(qs, 5)
        multi = [b for b, d in enumerate(out.details) if "multi_rows" in d]
        assert multi and all("sub_questions" in out.details[b] for b in multi)
        for b in multi:
            rows = out.details[b]["multi_rows"]
            assert set(rows) == {*(f"{t}_{s}" for t in ("trained", "untrained") for s in ("corpus", "query_graph")),
                                 "dense", "graph_dense"}
            assert rows[f"trained_{r.settings.rank_scope}"] == [r.passage_ids[i] for i in out.indices[b].tolist()]
            v_i = {r.passage_ids[p] for p in r.query_graphs[qs[b]].passages}
            assert set(rows["graph_dense"][: min(5, len(v_i))]) <= v_i  # the matched row ranks V_i first
            if epochs == 0:
                assert rows["trained_corpus"] == rows["untrained_corpus"]
                assert rows["trained_query_graph"] == rows["untrained_query_graph"]


def test_multi_step_scopes_are_compared_and_routed_questions_take_their_single_step_rows(tmp_path):
    from hyperrag.retrievers.hyperrag_rows import BALL_ROWS, MULTI_ROWS, ROWS, compare_rows

    run = tmp_path / "run"
    run.mkdir()
    lines = []
    for i, gold in enumerate(["a", "b", "c"]):
        det = {"no_ball": {k: ["x", "y"] for k in ROWS}, "ball_rows": {k: [gold, "x"] for k in BALL_ROWS}}
        if i:  # q0 routed to one step: no multi_rows
            det.update(sub_questions=["Where?"], route="multi_step",
                       multi_rows={k.removeprefix("multi_"): ["x", "y"] if "untrained" in k else [gold, "x"]
                                   for k in MULTI_ROWS})
        lines.append(json.dumps({"id": f"q{i}", "question": "Where?", "ranked_ids": [gold, "x"], "gold_ids": [gold],
                                 "details": det}))
    (run / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    res = compare_rows(run, ["recall@2"])
    assert {"multi_corpus", "multi_query_graph"} <= set(res["scopes"])
    got = res["scopes"]["multi_corpus"]["trained_minus"]
    diff = got[MULTI_ROWS["multi_untrained_corpus"]]["recall@2"].difference.estimate
    assert diff == pytest.approx(200 / 3)  # the two multi-step questions gain, the routed one (q0) ties
    assert res["scopes"]["multi_query_graph"]["matched"] == MULTI_ROWS["multi_graph_dense"]
    untrained = json.loads((run / "rows" / "multi_untrained_corpus" / "predictions.jsonl").read_text().splitlines()[0])
    assert untrained["ranked_ids"] == ["a", "x"]  # q0 (routed) took its single-step untrained row
    assert res["scopes"]["corpus"]["matched"] == ROWS["graph_dense"]


def test_a_transductive_ball_built_in_the_run_keeps_the_rows_and_its_untrained_arm(tmp_path, encoder):
    """Issue 47: a transductive run whose ball is built in the run keeps the same rows as a streaming one (the
    query graph as built at index time: no-ball rows, the trained and untrained ball under both scopes); a ball
    loaded from disk has no graphs and writes none."""
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    qs = [q.question for q in ds.queries]
    r = _paper(tmp_path, encoder, _oracle(ds), protocol="transductive", multi_step=False)
    r.index(ds)
    assert r.protocol == "transductive" and set(r.ball.index_graphs) <= set(qs) and r.ball.index_graphs
    out = r.retrieve(qs, 5)
    with_rows = [b for b, q in enumerate(qs) if q in r.ball.index_graphs]
    for b in with_rows:
        det = out.details[b]
        assert set(det["no_ball"]) == {"dense", "dense_feedback", "graph_selection", "graph_dense", "graph_feedback"}
        assert det["ball_rows"]["trained_corpus"] == [r.passage_ids[i] for i in out.indices[b].tolist()]
    loaded = _paper(tmp_path, encoder, _oracle(ds), protocol="transductive", multi_step=False)
    loaded.index(ds)  # the same settings: the saved ball, no graphs in memory
    assert loaded.info["loaded_from"] != "trained" and not loaded.ball.index_graphs
    assert torch.equal(loaded.retrieve(qs, 5).indices, out.indices)
