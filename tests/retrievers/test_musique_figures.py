"""The issue's floor figures on musique_dev, measured end to end (embeddings cached in $HYPERRAG_CACHE)."""

import pytest

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.retrieval import retrieval_metrics
from hyperrag.retrievers import DenseRetriever
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever
from tests.conftest import MUSIQUE_DIR, requires_musique


@pytest.fixture(scope="module")
def musique():
    return musique_dataset(MUSIQUE_DIR)


@pytest.fixture(scope="module")
def user_encoder():
    return TextEncoder(show_progress=False)  # the user cache: cold once (minutes), then warm


def evaluate(retriever, ds):
    retriever.index(ds)
    out = retriever.retrieve([q.question for q in ds.queries], 10)
    ids = ds.corpus.ids
    return retrieval_metrics([[ids[j] for j in row] for row in out.indices.tolist()], [q.gold_ids for q in ds.queries])


@pytest.mark.slow
@requires_musique
def test_dense_sanity(musique, user_encoder):
    m = evaluate(DenseRetriever(method_settings("dense"), encoder=user_encoder, device="cpu"), musique)
    assert m["recall@5"] == pytest.approx(58.7, abs=1.0) and m["fcr@5"] == pytest.approx(31.4, abs=2.0)


@pytest.mark.slow
@requires_musique
def test_hipporag2_beats_prototype_floor(musique, user_encoder):
    m = evaluate(HippoRAG2Retriever(method_settings("hipporag2"), encoder=user_encoder, device="cpu"), musique)
    assert m["recall@5"] >= 65.0 and m["fcr@5"] >= 45.1, m


@pytest.mark.slow
@requires_musique
def test_catrag_llm_free_at_least_hipporag2(musique, user_encoder):
    from hyperrag.retrievers.catrag import CatRAGRetriever

    base = evaluate(HippoRAG2Retriever(method_settings("hipporag2"), encoder=user_encoder, device="cpu"), musique)
    cat = evaluate(CatRAGRetriever(method_settings("catrag"), encoder=user_encoder, device="cpu"), musique)
    assert cat["recall@5"] >= base["recall@5"] and cat["fcr@5"] >= base["fcr@5"], (cat, base)
