"""The causal pair classifier's training settings: corpus-balanced sampling and frozen embeddings with learned
marker vectors (hyperrag/causal/datamodule.py, hyperrag/causal/classifier.py)."""

import itertools
from collections import Counter

import pytest
import torch

from hyperrag.causal.datamodule import PairDataModule, bucketed_order, corpus_balanced_indices
from hyperrag.config.compose import task_arguments
from hyperrag.data.unicausal import PairExample


def corpora(sizes: dict[str, int]) -> list[str]:
    return [c for c, n in sizes.items() for _ in range(n)]


def test_proportional_sampling_draws_every_example_once():
    names = corpora({"big": 50, "small": 7})
    assert sorted(corpus_balanced_indices(names, 1.0, seed=3)) == list(range(57))


def test_square_root_sampling_gives_each_corpus_a_share_proportional_to_the_root_of_its_size():
    names = corpora({"big": 400, "mid": 100, "small": 25})
    idx = corpus_balanced_indices(names, 0.5, seed=0)
    counts = Counter(names[i] for i in idx)
    # shares 20 : 10 : 5; the largest-share corpus is read exactly once
    assert counts == {"big": 400, "mid": 200, "small": 100}
    # the small corpus is repeated in whole reshuffled passes: every example 4 times, no example a 5th time
    assert Counter(i for i in idx if names[i] == "small") == {i: 4 for i in range(500, 525)}
    # uniform over corpora
    assert Counter(names[i] for i in corpus_balanced_indices(names, 0.0, seed=0)) == {"big": 400, "mid": 400,
                                                                                      "small": 400}


def test_a_partial_last_pass_draws_no_example_twice_before_all_were_drawn_once():
    names = corpora({"big": 90, "small": 20})  # small's share: 90 * sqrt(20 / 90) ≈ 42 draws = 2 passes + 2
    idx = [i for i in corpus_balanced_indices(names, 0.5, seed=1) if names[i] == "small"]
    assert len(idx) == 42
    assert sorted(idx[:20]) == sorted(idx[20:40]) == list(range(90, 110)) and len(set(idx[40:])) == 2
    assert idx == [i for i in corpus_balanced_indices(names, 0.5, seed=1) if names[i] == "small"]  # seeded
    assert idx != [i for i in corpus_balanced_indices(names, 0.5, seed=2) if names[i] == "small"]


def test_the_train_loader_yields_the_balanced_epoch():
    examples = [PairExample(f"[E1] a{i} [/E1] b [E2] c [/E2]", i % 2, c, f"{c}/{i}")
                for i, c in enumerate(corpora({"semeval": 160, "because": 10}))]
    dm = PairDataModule(examples, **task_arguments("causal_pair", "datamodule", val_fraction=0.0, batch_size=8,
                                                   corpus_sampling=0.5, seed=0))
    seen = Counter(c for batch in dm.train_dataloader() for c in batch[2])
    assert seen == {"semeval": 160, "because": 40}
    plain = PairDataModule(examples, **task_arguments("causal_pair", "datamodule", val_fraction=0.0, batch_size=8,
                                                      corpus_sampling=1.0, seed=0))
    assert Counter(c for batch in plain.train_dataloader() for c in batch[2]) == {"semeval": 160, "because": 10}


def test_bucketed_batches_stay_aligned_with_the_loader_cuts():
    # one bucket of 83 distinct lengths cut every 8: the loader's batches are runs of the sorted lengths (no batch
    # straddles two runs, as every batch after a short one in the middle would), the short batch comes last
    lengths = [(i * 37) % 101 for i in range(83)]
    order = bucketed_order(lengths, batch_size=8, seed=1, bucket_batches=100)
    assert sorted(order) == list(range(len(lengths)))
    batches = [sorted(lengths[i] for i in order[b:b + 8]) for b in range(0, len(order), 8)]
    assert [len(b) for b in batches] == [8] * 10 + [3]
    runs = sorted(batches[:-1])
    assert all(a[-1] < b[0] for a, b in itertools.pairwise(runs))
    assert [lengths[i] for i in order] != sorted(lengths)  # the batches themselves are shuffled


def test_the_train_loader_buckets_by_the_encoders_token_count():
    # same word count, very different token counts: the encoder's tokenizer puts the long ones together
    long_word = "pneumonoultramicroscopicsilicovolcanoconiosis"
    examples = [PairExample(f"[E1] {long_word if i % 2 else 'a'} [/E1] b [E2] c [/E2]", 0, "semeval", f"s/{i}")
                for i in range(32)]
    dm = PairDataModule(examples, **task_arguments("causal_pair", "datamodule", val_fraction=0.0, batch_size=16,
                                                   corpus_sampling=1.0, seed=0))
    assert dm.length_encoder == "all-MiniLM-L6-v2"  # the classifier's encoder (task.model.encoder)
    for texts, *_ in dm.train_dataloader():
        assert len({long_word in t for t in texts}) == 1


@pytest.fixture(scope="module")
def frozen():
    from hyperrag.causal.classifier import CausalPairClassifier

    torch.manual_seed(0)
    return CausalPairClassifier(**task_arguments("causal_pair", max_length=32, freeze_embeddings=True, head_lr=0.01, max_steps=None,
                                                 dropout=0.0))


def test_frozen_embeddings_read_the_marker_vectors_from_their_own_parameter(frozen):
    emb = frozen.encoder.embeddings
    assert not any(p.requires_grad for p in emb.parameters())
    assert frozen.marker_embeddings is not None and frozen.marker_embeddings.shape == (4, 384)
    assert all(p.requires_grad for p in frozen.encoder.encoder.parameters())
    # with the parameter equal to the table's marker rows, the logits are those of the plain encoder path
    enc = frozen.tokenize(["The [E1] storm [/E1] caused [E2] floods [/E2].", "[E2] x [/E2] and [E1] y [/E1]"])
    frozen.eval()
    with torch.no_grad():
        got = frozen(**enc)
        saved, frozen.marker_embeddings = frozen.marker_embeddings, None
        want = frozen(**enc)
        frozen.marker_embeddings = saved
    frozen.train()
    assert torch.allclose(got, want, atol=1e-5)
    # a different marker vector changes the logits: the parameter is really read (a random direction: the
    # embeddings' LayerNorm removes a constant shift)
    shift = torch.randn(384, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        frozen.marker_embeddings[0] += shift
        moved = frozen.eval()(**enc)
        frozen.marker_embeddings[0] -= shift
    frozen.train()
    assert (moved - got).abs().max() > 1e-3


def test_a_step_with_frozen_embeddings_moves_the_markers_and_leaves_the_table(frozen):
    table = frozen.encoder.get_input_embeddings().weight.detach().clone()
    markers = frozen.marker_embeddings.detach().clone()
    opt = frozen.configure_optimizers()
    loss, _, _ = frozen._loss((["Rain [E1] storms [/E1] caused [E2] floods [/E2]."], torch.tensor([1]), ["x"]))
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.equal(frozen.encoder.get_input_embeddings().weight, table)
    assert not torch.allclose(frozen.marker_embeddings, markers)
