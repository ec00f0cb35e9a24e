"""hyperrag.eval.folds.split_folds: the one fold split of the cross-validated benchmarks. The scripts that dealt
their own folds (cv_hugrag, cv_hugrag_walk, cv_hugrag_budget, cv_hyperrag over question positions;
hyperrag_readings and cv_select over question ids) get the very folds they got before."""

from __future__ import annotations

import random

import pytest

from hyperrag.eval.folds import split_folds


def positions_as_the_cv_scripts_dealt_them(n: int, k: int, seed: int) -> list[list[int]]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[f::k] for f in range(k)]


def fold_of_as_hyperrag_readings_dealt_it(qids: list[str], k: int, seed: int) -> dict[str, int]:
    order = sorted(qids)[:]
    random.Random(seed).shuffle(order)
    return {q: i % k for i, q in enumerate(order)}


@pytest.mark.parametrize("n, k, seed", [(6, 2, 0), (51, 5, 0), (499, 5, 0), (1000, 5, 3), (10, 10, 7)])
def test_question_positions_get_the_folds_the_scripts_dealt(n, k, seed):
    assert split_folds(range(n), k, seed) == positions_as_the_cv_scripts_dealt_them(n, k, seed)


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_question_ids_get_the_folds_hyperrag_readings_dealt(seed):
    qids = [f"2hop__{i * 7919 % 1000}_{i}" for i in range(123)]
    parts = split_folds(reversed(qids), 5, seed)  # the input order does not matter: sorted first
    assert {q: f for f, part in enumerate(parts) for q in part} == fold_of_as_hyperrag_readings_dealt_it(qids, 5, seed)


def test_folds_partition_the_keys_with_sizes_within_one():
    parts = split_folds(range(23), 5, 0)
    assert sorted(q for p in parts for q in p) == list(range(23)) and {len(p) for p in parts} == {4, 5}
    assert split_folds(range(23), 5, 1) != parts
    for bad in (1, 24):
        with pytest.raises(ValueError, match="between 2 and the number of questions"):
            split_folds(range(23), bad, 0)


def test_cv_select_splits_with_it():
    from tests.test_cv_select import load

    assert load().split_folds is split_folds
