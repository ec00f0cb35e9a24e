"""Lexical and hybrid scores, batched MMR."""

import pytest
import torch

from hyperrag.seeding import HybridScorer, LexicalScorer, mmr_select


def unit(*rows):
    x = torch.tensor(rows, dtype=torch.float32)
    return x / x.norm(dim=1, keepdim=True)


def test_mmr_hand_made_case():
    # items 0 and 1 are near-duplicates and the most relevant; item 2 points elsewhere, a bit less relevant
    emb = unit([1.0, 0.0, 0.0], [0.99, 0.05, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    rel = torch.tensor([[0.9, 0.85, 0.6, 0.1],
                        [0.1, 0.2, 0.9, 0.8]])
    idx, val = mmr_select(rel, emb, k=2, lam=1.0)  # λ = 1: plain top-k
    assert idx.tolist() == [[0, 1], [2, 3]]
    assert torch.allclose(val, torch.tensor([[0.9, 0.85], [0.9, 0.8]]))
    idx, _ = mmr_select(rel, emb, k=2, lam=0.5)  # the duplicate loses to the diverse item
    assert idx.tolist() == [[0, 2], [2, 3]]
    # third pick for query 0 at λ = 0.5: 1 scores 0.5·0.85 − 0.5·0.9987, 3 scores 0.5·0.1 − 0 → 3
    idx, _ = mmr_select(rel, emb, k=3, lam=0.5)
    assert idx[0].tolist() == [0, 2, 3]
    # k larger than the number of items is clipped; pool smaller than k is raised to k
    assert mmr_select(rel, emb, k=9, lam=0.7, pool=1)[0].shape == (2, 4)
    assert mmr_select(rel, emb, k=0)[0].shape == (2, 0)


def test_lexical_bm25_matches_bm25s():
    import bm25s
    import Stemmer

    texts = ["Rod Laver tennis player", "the Kansas capital Topeka", "new jersey", "kansas kansas city"]
    query = "who is the tennis player from kansas kansas?"
    scores = LexicalScorer(texts, "bm25").scores([query, "nothing matches here"])
    stem = Stemmer.Stemmer("english")
    ref = bm25s.BM25()
    ref.index(bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False), show_progress=False)
    expected = torch.tensor(ref.get_scores(bm25s.tokenize([query], stopwords="en", stemmer=stem,
                                                          return_ids=False, show_progress=False)[0]))
    assert torch.allclose(scores[0], (expected / expected.max()).float(), atol=1e-6)
    assert scores[0].max() == 1.0 and scores[1].abs().sum() == 0


def test_lexical_overlap_coefficient():
    texts = ["Marie Curie", "Curie museum in Warsaw", "Paris"]
    s = LexicalScorer(texts, "overlap").scores(["Where was Marie Curie born?"])
    # query tokens {where, mari, curi, born}; item 0 {mari, curi} ⊂ query → 1; item 1 shares 1 of min(4, 3)
    assert s[0].tolist() == pytest.approx([1.0, 1 / 3, 0.0])
    with pytest.raises(ValueError):
        LexicalScorer(texts, "tfidf")


def test_lexical_token_overlap_is_normalised_by_the_query():
    """HugRAG's Lex (B.2): the share of the query's distinct tokens found in the node's title and summary."""
    texts = ["Marie Curie", "Curie museum in Warsaw", "Marie Curie was born in Warsaw, a city on the Vistula",
             "Paris"]
    s = LexicalScorer(texts, "token_overlap").scores(["Where was Marie Curie born?", "opera"])
    # query tokens {where, mari, curi, born}: item 0 holds 2 of 4, item 1 1 of 4, item 2 3 of 4
    assert s[0].tolist() == pytest.approx([0.5, 0.25, 0.75, 0.0])
    assert s[1].abs().sum() == 0  # no shared token: 0 (not a division by zero)


def test_hybrid_is_convex_mix():
    emb = unit([1.0, 0.0], [0.0, 1.0], [1.0, 1.0])
    texts = ["alpha beta", "gamma", "delta"]
    q = unit([1.0, 0.2])
    dense = HybridScorer(emb, texts, alpha=1.0).scores(q, ["alpha"])
    assert torch.allclose(dense, q @ emb.T)
    mixed = HybridScorer(emb, texts, alpha=0.7, lexical="bm25").scores(q, ["alpha"])
    assert torch.allclose(mixed, 0.7 * (q @ emb.T) + 0.3 * torch.tensor([[1.0, 0.0, 0.0]]))
    with pytest.raises(ValueError):
        HybridScorer(emb, texts[:2])
