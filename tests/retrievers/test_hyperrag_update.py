"""Incremental corpus updates of a trained HyperRAG ball: insert / delete / generations / prefix corpora."""

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperrag.config import method_settings
from hyperrag.data.types import Corpus, Passage
from hyperrag.passage_graph import RELATIONS, EdgeSet, PassageGraph, keyword_edges, keyword_edges_incremental

NEW = [
    Passage("n1", "Lake Baikal", "Lake Baikal is a rift lake in Siberia, the deepest lake in the world, holding "
            "about a fifth of the fresh surface water on Earth."),
    Passage("n2", "Trans-Siberian Railway", "The Trans-Siberian Railway runs from Moscow to Vladivostok and passes "
            "along the southern shore of Lake Baikal in Siberia."),
    Passage("n3", "Vladivostok", "Vladivostok is a port city on the Sea of Japan, the eastern terminus of the "
            "Trans-Siberian Railway."),
]
SETTINGS = {"graph": "fused", "train": {"max_epochs": 3},
            "model": {"anchor_weight": 20.0, "query_anchor_weight": 0.0, "lr": 0.005, "init_radius": 0.5}}


def _retriever(tmp_path, encoder, **kw):
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    settings = method_settings("hyperrag", models_dir=str(tmp_path / "models"), index_root=str(tmp_path / "index"),
                               **{**SETTINGS, **kw})
    return HyperRAGRetriever(settings, encoder=encoder, device="cpu")


def _grown(ds, extra):
    return dataclasses.replace(ds, corpus=Corpus(list(ds.corpus.passages) + list(extra)))


def _ids(r, out):
    return [[r.passage_ids[i] for i in row] for row in out.indices.tolist()]


@pytest.fixture
def indexed(tmp_path, encoder):
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    r = _retriever(tmp_path, encoder)
    r.index(ds)
    return ds, r


@pytest.mark.parametrize("after_update", ["query_first", "pinned_first"])
def test_insert_freezes_untouched_and_new_passages_are_retrievable(tmp_path, encoder, after_update):
    from hyperrag.data import sample_dataset

    r = _retriever(tmp_path, encoder, update={"min_reuse": 0.5, "fusion": after_update})
    r.index(sample_dataset())
    p, q = r.graph.num_passages, r.graph.num_queries
    before = r.model.points.detach().clone()
    n_implicit = len(r.graph.implicit)
    pinned_before = r.graph.forest("fused").edges
    stats = r.insert(NEW)
    assert stats["inserted"] == 3 and r.graph.num_passages == p + 3 and r.graph.num_queries == q
    pts = r.model.points.detach()
    assert pts.shape[0] == p + 3 + q
    # rows: old passages 0..p-1 stay, new p..p+2, query nodes shift by 3
    old_rows = torch.cat([pts[:p], pts[p + 3:]])
    touched = {t for t in range(p + q) if not torch.equal(old_rows[t], before[t])}
    new_e = r.graph.explicit.select(torch.arange(len(r.graph.explicit)) >= len(r.graph.explicit) - stats["new_edges"])
    new_e = new_e.cat(r.graph.implicit.select(torch.arange(len(r.graph.implicit)) >= n_implicit))
    endpoints = {x if x < p else x - 3 for x in new_e.parent.tolist() + new_e.child.tolist() if not p <= x < p + 3}
    forest = r.graph.forest("fused")
    assert forest.is_valid()
    shift = torch.where(pinned_before.index >= p, pinned_before.index + 3, pinned_before.index)
    was = dict(zip(shift[1].tolist(), shift[0].tolist()))
    old_row = lambda x: x if x < p else x - 3
    reparented = {old_row(c) for c, par in enumerate(forest.parent.tolist())
                  if par >= 0 and was.get(c) != par and not p <= c < p + 3}
    assert len(reparented - endpoints) <= stats["reparented"]
    assert touched <= endpoints | reparented  # every row but new edges' ends and re-parented nodes is bit-identical
    kept = {tuple(e) for e in forest.edges.index.T.tolist()}
    query_guided = pinned_before.relation != RELATIONS.index("keyword")
    must_stay = shift if after_update == "pinned_first" else shift[:, query_guided]
    assert {tuple(e) for e in must_stay.T.tolist()} <= kept  # the whole trained forest | its query-guided edges
    assert stats["new_edges"] > 0  # n1–n2–n3 share keywords
    out = r.retrieve(["What is the deepest lake in the world?", "Which port city is on the Sea of Japan?"], 3)
    ids = _ids(r, out)
    assert "n1" in ids[0] and "n3" in ids[1]


def test_delete_never_returned_and_orphan_queries_pruned(indexed):
    ds, r = indexed
    r.insert(NEW)
    q0 = ds.queries[0].question
    assert r.graph.questions[0] == q0
    gold = [r.passage_ids[x] for x in r.graph.query_passages()[0]]  # all of q0's query graph
    stats = r.delete(list(gold) + ["n2", "nope"])
    assert stats["deleted"] == len(gold) + 1 and stats["pruned_queries"] >= 1
    assert not set(gold) & set(r.passage_ids) and "n2" not in r.passage_ids
    assert r.model.points.shape[0] == r.graph.num_nodes == len(r.passage_ids) + r.graph.num_queries
    assert r.graph.forest("fused").is_valid()
    reach = r.graph.query_passages()
    assert all(nodes for nodes in reach)  # no query node is left without a passage
    qs = [q.question for q in ds.queries] + ["Lake Baikal railway"]
    for row in _ids(r, r.retrieve(qs, 5)):
        assert not set(row) & (set(gold) | {"n2"})
    assert q0 not in r.graph.questions


def test_generation_saved_and_prefix_corpus_updated_not_retrained(tmp_path, encoder):
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    r = _retriever(tmp_path, encoder)
    r.index(ds)
    assert r.info["trained_now"]
    r.insert(NEW)
    path = r.save_update()
    assert path.parent.name == "gen-1" and path.exists()
    grown = _grown(ds, NEW)
    # exact corpus of a generation → loaded, same ball
    r2 = _retriever(tmp_path, encoder)
    r2.index(grown)
    assert r2.info["loaded_from"] == "exact" and not r2.info["trained_now"]
    assert torch.equal(r2.model.points, r.model.points) and r2.passage_ids == r.passage_ids
    qs = [q.question for q in ds.queries]
    assert torch.equal(r2.retrieve(qs, 5).indices, r.retrieve(qs, 5).indices)
    # a corpus that grew again → the longest saved prefix (gen-1) is updated incrementally, saved as gen-2
    more = [Passage("n4", "Irkutsk", "Irkutsk is a city near Lake Baikal on the Trans-Siberian Railway.")]
    r3 = _retriever(tmp_path, encoder)
    r3.index(_grown(grown, more))
    assert r3.info["loaded_from"] == "prefix" and r3.info["checkpoint"].endswith("gen-2/model.ckpt")
    assert r3.passage_ids == [p.id for p in grown.corpus.passages] + ["n4"]
    ins = r3.info["updates"][0]["insert"]
    assert ins["inserted"] == 1 and ins["trained_nodes"] <= 1 + 2 * ins["new_edges"]
    unchanged = (r3.model.points[:15] == r.model.points[:15]).all(dim=1)
    assert int((~unchanged).sum()) <= ins["trained_nodes"]  # only new + touched rows moved
    # retrain=true ignores saved balls
    r4 = _retriever(tmp_path, encoder, retrain=True)
    r4.index(grown)
    assert r4.info["trained_now"] and r4.info["loaded_from"] == "trained"


def test_incremental_edges_only_touch_new_passages_and_respect_caps():
    sets = [frozenset(s.split()) for s in ["a b c", "a b d", "c d e", "x y", "a b c d", "x y z"]]
    caps = dataclasses.replace(method_settings("hyperrag").explicit, threshold=0.3, max_neighbors=2)
    base = keyword_edges(sets[:4], caps)
    new = keyword_edges_incremental(sets, 4, base, caps)
    assert len(new) and all(p >= 4 or c >= 4 for p, c in zip(new.parent.tolist(), new.child.tolist()))
    deg = torch.bincount(torch.cat([base.parent, base.child, new.parent, new.child]), minlength=6)
    assert int(deg.max()) <= 2
    assert (new.weight >= 0.3).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 14), st.data())
def test_delete_keeps_a_valid_forest(n, data):
    """Random explicit / implicit graphs, pinned, then random passages deleted: always a valid forest that
    keeps every surviving pinned edge (``update.fusion: pinned_first``) or every surviving pinned query-guided edge
    (``query_first``); orphan query detection matches the definition."""
    pair = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda t: t[0] != t[1])
    exp = data.draw(st.lists(pair, max_size=3 * n))
    q = data.draw(st.integers(0, 3))
    imp = data.draw(st.lists(st.tuples(st.integers(n, n + q - 1), st.integers(0, n - 1)), max_size=2 * q)) \
        if q else []
    w = lambda k: [float(x) for x in data.draw(st.lists(st.floats(0.1, 1.0), min_size=k, max_size=k))]
    g = PassageGraph(n, [f"q{i}" for i in range(q)],
                     EdgeSet.from_lists([a for a, _ in exp], [b for _, b in exp], w(len(exp)), ["keyword"] * len(exp)),
                     EdgeSet.from_lists([a for a, _ in imp], [b for _, b in imp], w(len(imp)), ["query"] * len(imp)))
    variant = data.draw(st.sampled_from(["explicit", "implicit", "fused"]))
    g.after_update = data.draw(st.sampled_from(["query_first", "pinned_first"]))
    pinned = g.pin(variant)
    assert pinned.is_valid()
    keep = torch.tensor(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    source = g.drop_passages(keep)
    f = g.forest(variant)
    assert f.is_valid() and f.num_nodes == g.num_nodes == source.numel()
    old_of = source.tolist()
    kept = {(old_of[p], old_of[c]) for p, c in zip(f.edges.parent.tolist(), f.edges.child.tolist())}
    survivors = {(p, c) for p, c, r in zip(pinned.edges.parent.tolist(), pinned.edges.child.tolist(),
                                           pinned.edges.relation.tolist())
                 if (p >= n or keep[p]) and (c >= n or keep[c])
                 and (g.after_update == "pinned_first" or r != RELATIONS.index("keyword"))}
    assert survivors <= kept  # pinned_first: every surviving pinned edge; query_first: its query-guided ones


def test_insert_refreshes_query_graphs_of_questions_about_new_passages(tmp_path, encoder):
    """A question already in the ball whose evidence arrives later: its query graph gains the new passage and
    its trained query node ranks it."""
    from hyperrag.data import sample_dataset
    from hyperrag.data.types import Query

    ds = sample_dataset()
    ask = "Which railway runs along the shore of Lake Baikal to Vladivostok?"
    ds = dataclasses.replace(ds, queries=[*ds.queries, Query("qx", ask)])
    r = _retriever(tmp_path, encoder)
    r.index(ds)
    stats = r.insert(NEW)
    assert stats["refreshed_queries"] >= 1 and stats["refresh_edges"] >= 1
    node = r.graph.num_passages + r.graph.questions.index(ask)
    assert node in set(r.graph.implicit.parent.tolist())
    assert "n2" in _ids(r, r.retrieve([ask], 3))[0]  # ranked from the trained query node


def test_ball_training_resumes_an_interrupted_fit(tmp_path, encoder):
    """The ball trains through train.py's resumable Lightning path: a fit left in .partial/ is continued."""
    import lightning as L

    from hyperrag.data import sample_dataset
    from hyperrag.utils.resume import fit_resumable

    ds = sample_dataset()
    r = _retriever(tmp_path, encoder)
    ball = r.build(ds)
    folder = r.ball_folder(ds, [q.question for q in ds.queries])
    model = ball.new_model()  # one epoch of the same fit, then "killed" (its resume state left behind)
    fit_resumable(model, ball.datamodule(ball.relations()), folder, save=False, resume={},
                  make_trainer=lambda kw: L.Trainer(max_epochs=1, logger=False, enable_progress_bar=False, **kw))
    assert (folder / ".partial" / "last.ckpt").exists()
    r.index(ds)
    assert r.info["loaded_from"] == "trained" and r.info["resumed_at_epoch"] == 1
    assert not (folder / ".partial").exists() and (folder / "model.ckpt").exists()
