"""Bootstrap intervals over queries, paired comparisons, and per-query values read back from a run."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from hyperrag.eval.intervals import (
    EXACT_MAX_DIFFERING,
    exact_sign_flip_p,
    holm,
    mean_interval,
    paired_comparison,
    wilson_interval,
)
from hyperrag.eval.intervals.__main__ import main, pool
from hyperrag.eval.per_query import per_query_values, run_per_query
from hyperrag.runners.batch_retrieval import score_rows


def test_interval_brackets_the_mean_and_shrinks_with_more_queries():
    rng = np.random.default_rng(1)
    small = rng.integers(0, 2, 51).astype(float)
    ci = mean_interval(small)
    assert ci.low < ci.estimate < ci.high
    assert ci.estimate == pytest.approx(100 * small.mean())
    assert ci.n == 51
    # 51 binary outcomes near 50 %: the normal-approximation half-width is ~13.7 points; bootstrap agrees within 2
    assert 11.5 < ci.half_width < 16
    big = mean_interval(np.tile(small, 16))
    assert big.half_width < ci.half_width / 3
    assert mean_interval(small) == ci  # same seed, same interval


def test_degenerate_inputs_give_the_point_itself():
    assert mean_interval([0.5] * 10).text() == "50.0 [50.0, 50.0]"  # constant, not 0/1: no spread to resample
    single = mean_interval([0.25])
    assert (single.estimate, single.low, single.high, single.n) == (25.0, 25.0, 25.0, 1)
    assert mean_interval([]).n == 0 and mean_interval([]).text() == "–"
    with pytest.raises(ValueError):
        mean_interval([float("nan"), 1.0])


def test_paired_comparison_detects_a_consistent_gain_that_unpaired_intervals_miss():
    rng = np.random.default_rng(3)
    base = rng.uniform(0, 1, 51)
    better = np.clip(base + 0.04 + rng.normal(0, 0.01, 51), 0, 1)
    # the unpaired intervals overlap widely ...
    a, b = mean_interval(better), mean_interval(base)
    assert a.low < b.high
    # ... but the paired difference is clearly above zero
    cmp = paired_comparison(better, base)
    assert cmp.excludes_zero and cmp.difference.low > 0
    assert cmp.p_value < 0.01
    assert "excludes 0" in cmp.verdict("ours", "base")


def test_paired_comparison_of_noise_includes_zero():
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 2, 51).astype(float), rng.integers(0, 2, 51).astype(float)
    cmp = paired_comparison(a, a)
    assert not cmp.excludes_zero and cmp.p_value == 1.0
    noise = paired_comparison(a, b)
    assert noise.difference.low < noise.difference.estimate < noise.difference.high
    assert 0 <= noise.p_value <= 1
    with pytest.raises(ValueError):
        paired_comparison([1.0, 0.0], [1.0])


def _rows():
    return [
        {"id": "q1", "question": "?", "ranked_ids": ["a", "b", "c"], "gold_ids": ["a", "c"], "answers": ["Paris"],
         "answer": "Paris", "answer_ok": True},
        {"id": "q2", "question": "?", "ranked_ids": ["x", "a", "y"], "gold_ids": ["y"], "answers": ["Rome"],
         "answer": "in Rome, Italy", "answer_ok": True},
        {"id": "q3", "question": "?", "ranked_ids": ["z", "q", "r"], "gold_ids": ["a"], "answers": ["Oslo"],
         "answer": "unknown", "answer_ok": True},
    ]


def test_per_query_values_average_to_the_reported_metrics():
    rows = _rows()
    reported = score_rows(rows, (1, 2), answer_top_n=3)
    values = per_query_values(rows, (1, 2), answer_top_n=3)
    for metric in ("recall@1", "recall@2", "fcr@1", "fcr@2", "em", "f1", "jsr"):
        assert 100 * np.mean(list(values[metric].values())) == pytest.approx(reported[metric]), metric
    assert values["fcr@2"] == {"q1": 0.0, "q2": 0.0, "q3": 0.0}
    assert values["jsr"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}


def test_run_per_query_reads_a_run_and_pairs_by_query_id(tmp_path, capsys):
    for name, answer in (("a", "Paris"), ("b", "London")):
        d = tmp_path / name
        d.mkdir()
        rows = _rows()
        rows[0]["answer"] = answer
        (d / "predictions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        (d / "metrics.json").write_text(json.dumps({"dataset": "t", "metrics": {"recall@1": 0, "recall@3": 0}}))
    (tmp_path / "a" / "evaluation.jsonl").write_text(
        json.dumps({"id": "q1", "groundedness": 0.5, "hallucinated": 1.0, "claims": 3}) + "\n")
    a, b = run_per_query(tmp_path / "a"), run_per_query(tmp_path / "b")
    assert set(a.values["recall@3"]) == {"q1", "q2", "q3"} and "recall@5" not in a.values
    assert a.values["hallucination_rate"] == {"q1": 1.0} and "claims" not in a.values
    assert a.interval("em").estimate == pytest.approx(100 / 3)
    assert a.compare(b, "em").difference.estimate == pytest.approx(100 / 3)
    assert main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "recall@3" in out and "b − a" in out


def test_few_differing_queries_are_not_shown_even_when_the_bootstrap_interval_excludes_zero():
    """3 full-chain hits gained and none lost over 51 queries: every bootstrap resample has a mean ≥ 0, so the
    interval excludes 0, but three sign flips give an exact two-sided p of 0.25: no difference is shown."""
    base = np.zeros(51)
    better = base.copy()
    better[:3] = 1.0
    cmp = paired_comparison(better, base)
    assert cmp.excludes_zero and cmp.discordant == 3
    assert cmp.p_value == pytest.approx(0.25, abs=0.02)
    assert not cmp.shown and "too few queries differ" in cmp.verdict("ours", "base")
    many = base.copy()
    many[:12] = 1.0
    assert paired_comparison(many, base).shown   # 12 of 12 differing queries gained: p ≈ 0.0005


def test_a_constant_0_1_metric_gets_a_wilson_interval_not_a_point():
    """0 of 51 full-chain hits: the bootstrap's [0, 0] would claim certainty; Wilson's 95% interval is [0, 7.0]."""
    zero = mean_interval([0.0] * 51)
    assert zero.method == "Wilson" and zero.text() == "0.0 [0.0, 7.0]"
    assert mean_interval([1.0] * 51).text() == "100.0 [93.0, 100.0]"
    # a 0/1 metric that varies: Wilson as well (EM 20 of 51), by hand: centre (p + z²/2n) / (1 + z²/n)
    ci = mean_interval([1.0] * 20 + [0.0] * 31)
    z2, n, p = 1.959963984540054 ** 2, 51, 20 / 51
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z2 ** 0.5) / (1 + z2 / n) * ((p * (1 - p) / n + z2 / (4 * n * n)) ** 0.5)
    assert ci.method == "Wilson"
    assert (ci.low, ci.high) == pytest.approx((100 * (centre - half), 100 * (centre + half)))
    assert wilson_interval(0, 51) == pytest.approx((0.0, 0.0700), abs=5e-4)
    # a continuous metric keeps the BCa bootstrap
    assert mean_interval([0.5, 0.25, 1.0, 0.75, 0.0, 0.5]).method == "BCa bootstrap"


def test_wilson_goes_by_the_metric_and_the_same_values_in_any_order_give_the_same_interval():
    """Review findings 11-12: a recall row that happens to be all 0/1 keeps the bootstrap, hops are never a
    proportion, and two runs with the same per-query values (in another order) print the same bracket."""
    from hyperrag.eval.per_query import RunValues

    hits = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    run = RunValues("r", values={m: {f"q{i}": v for i, v in enumerate(hits)} for m in ("recall@5", "fcr@5", "ccd")})
    assert run.interval("fcr@5").method == "Wilson"
    assert run.interval("recall@5").method != "Wilson"
    assert run.interval("ccd").method != "Wilson"
    assert mean_interval(hits, scale=1.0).method != "Wilson"  # a count (scale 1) is never Wilson, by default
    spread = [0.5, 0.25, 1.0, 0.75, 0.0, 0.5, 1.0, 0.25, 0.5]
    assert mean_interval(spread) == mean_interval(spread[::-1]) == mean_interval(sorted(spread))


def test_every_0_1_metric_by_definition_gets_wilson_hallucination_rate_and_gpt_acc_included(tmp_path):
    """HR constant 0 over 51 judged answers (evaluation.jsonl's ``hallucinated`` flags): [0, 7.0], not a point."""
    from hyperrag.eval.per_query import RunValues, is_binary_metric

    assert all(is_binary_metric(m) for m in ("judge_acc", "hallucination_rate", "hallucination_rate_lexical"))
    rows = [{"id": f"q{i}", "question": "?", "ranked_ids": ["p"], "gold_ids": ["p"]} for i in range(51)]
    (tmp_path / "predictions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "evaluation.jsonl").write_text("\n".join(
        json.dumps({"id": f"q{i}", "groundedness": 1.0, "hallucinated": 0.0, "judge_acc": 1.0}) for i in range(51)))
    run = run_per_query(tmp_path)
    hr = run.interval("hallucination_rate")
    assert hr.method == "Wilson" and hr.text() == "0.0 [0.0, 7.0]"
    assert run.interval("judge_acc").text() == "100.0 [93.0, 100.0]"
    assert RunValues("r", values={"groundedness": run.values["groundedness"]}).interval("groundedness").method == \
        "point"  # a continuous score that happens to be constant stays a point


def test_three_differing_queries_get_the_exact_sign_flip_p_value():
    """3 queries gained, none lost: of the 2^3 = 8 sign flips, all-plus and all-minus are as extreme as the
    observed sum, so the two-sided exact p is 2/8 = 0.25; two gained and one lost: every flip is as extreme
    (|sum| ≥ 1 always), p = 1."""
    base = np.zeros(51)
    better = base.copy()
    better[:3] = 1.0
    cmp = paired_comparison(better, base)
    assert cmp.test == "exact" and cmp.discordant == 3
    assert cmp.p_value == pytest.approx(0.25, abs=1e-12)
    mixed = base.copy()
    mixed[:2], mixed[2] = 1.0, -1.0
    assert paired_comparison(mixed, base).p_value == pytest.approx(1.0)
    # 30 differing queries are still enumerated (2^30 flips, counted); 31 are Monte Carlo, and say so
    many = base.copy()
    many[:EXACT_MAX_DIFFERING] = 1.0
    exact = paired_comparison(many, base)
    assert exact.test == "exact" and exact.p_value == pytest.approx(2 / 2 ** EXACT_MAX_DIFFERING)
    many[EXACT_MAX_DIFFERING] = 1.0
    sampled = paired_comparison(many, base)
    assert sampled.test.startswith("Monte Carlo") and "exact" not in sampled.verdict()
    assert sampled.p_value < 0.001


def test_holm_adjusts_a_table_of_tests():
    """Holm over p = 0.01, 0.04, 0.03: sorted 0.01×3, 0.03×2, 0.04×1, running maxima → 0.03, 0.06, 0.06."""
    base = np.zeros(51)
    made = []
    for p in (0.01, 0.04, 0.03):
        cmp = paired_comparison(np.r_[np.ones(12), np.zeros(39)], base)
        made.append(dataclasses.replace(cmp, p_value=p))
    adjusted = holm(made)
    assert [c.p_adjusted for c in adjusted] == pytest.approx([0.03, 0.06, 0.06])
    assert [c.p_value for c in adjusted] == [0.01, 0.04, 0.03]  # the raw p kept beside
    assert adjusted[0].shown and not adjusted[1].shown  # "shown" is decided on the adjusted p
    assert made[1].shown  # unadjusted, 0.04 < 0.05 would have been shown
    assert "Holm 0.060" in adjusted[1].verdict()


def test_intervals_cli_stops_on_runs_with_no_query_in_common(tmp_path, capsys):
    for name, qid in (("a", "q1"), ("b", "other")):
        d = tmp_path / name
        d.mkdir()
        row = {"id": qid, "question": "?", "ranked_ids": ["x"], "gold_ids": ["x"]}
        (d / "predictions.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(SystemExit) as exc:
        main([str(tmp_path / "a"), str(tmp_path / "b")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(tmp_path / "a") in err and str(tmp_path / "b") in err


def test_exact_enumeration_reaches_25_differing_queries_and_matches_the_binomial():
    """±1 differences: the sign-flip test is the two-sided binomial (sign) test; 17 gained and 8 lost of 25 is
    enumerated exactly (2^25 flips), the same p on any seed."""
    from scipy.stats import binomtest

    diff = np.r_[np.ones(17), -np.ones(8), np.zeros(26)]
    cmp = paired_comparison(diff, np.zeros(51))
    assert EXACT_MAX_DIFFERING >= 25 and cmp.test == "exact" and cmp.discordant == 25
    assert cmp.p_value == pytest.approx(binomtest(17, 25).pvalue, abs=1e-12)


def test_exact_sign_flip_p_counts_every_assignment():
    """Against listing all 2^m signed sums, on unequal and repeated differences (odd and even m)."""
    import itertools

    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 8, 11):
        diffs = rng.choice([-1.0, 1.0, 0.5, -0.25, 0.2], size=m)
        sums = [abs(sum(s * d for s, d in zip(signs, diffs))) for signs in itertools.product((1, -1), repeat=m)]
        observed = abs(diffs.sum())
        listed = np.mean([s >= observed - 1e-9 * max(1.0, observed) for s in sums])
        assert exact_sign_flip_p(diffs) == pytest.approx(listed, abs=1e-12)


def test_equivalence_needs_the_90_percent_interval_inside_the_margin():
    """A non-significant difference is not equivalence: −0.5 with a wide interval passes −2 (no equivalence shown);
    a tight one inside ±2 is equivalent by two one-sided tests."""
    from hyperrag.eval.intervals import equivalence

    rng = np.random.default_rng(0)
    base = rng.random(51)
    tight = equivalence(base + rng.normal(0, 0.01, 51), base, 2.0)
    assert tight.equivalent and tight.difference.level == pytest.approx(0.90) and tight.text().startswith("within ±2")
    wide = equivalence(base + rng.normal(-0.005, 0.12, 51), base, 2.0)
    assert not paired_comparison(base + rng.normal(-0.005, 0.12, 51), base).shown
    assert not wide.equivalent and "no equivalence within ±2.0 shown" in wide.text()


def test_intervals_cli_per_question_type(tmp_path, capsys):
    """--by-type: each type's queries on their own (the rows' ``type``), paired across runs within the type."""
    rows = [{"id": f"q{i}", "question": "?", "ranked_ids": ["x", "y"], "gold_ids": ["x" if i % 2 else "z"],
             "type": "comparison" if i < 4 else "compositional"} for i in range(6)]
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = run_per_query(tmp_path / "a")
    groups = run.by_type()
    assert list(groups) == ["comparison", "compositional"]
    assert set(groups["comparison"].values["recall@2"]) == {"q0", "q1", "q2", "q3"}
    assert groups["compositional"].interval("fcr@2").estimate == pytest.approx(50.0)
    assert main([str(tmp_path / "a"), str(tmp_path / "b"), "--by-type", "--metrics", "fcr@2"]) == 0
    out = capsys.readouterr().out
    assert "--- type comparison" in out and "a [compositional]  (2 queries)" in out
    assert "b [comparison] − a [comparison]" in out


def test_intervals_cli_pools_pairs_keeping_each_domains_queries_apart(tmp_path, capsys):
    """--pool BASE RUN BASE RUN: the same query id in two pairs stays two queries, each paired within its pair."""
    def write(name: str, hits: list[bool]) -> str:
        (tmp_path / name).mkdir()
        rows = [{"id": f"q{i}", "question": "?", "ranked_ids": ["x"], "gold_ids": ["x" if hit else "z"]}
                for i, hit in enumerate(hits)]
        (tmp_path / name / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(tmp_path / name)

    a0, a1 = write("a0", [False, False, True]), write("a1", [True, False, True])  # domain A: one query gained
    b0, b1 = write("b0", [False, True]), write("b1", [True, True])  # domain B: same ids, one gained
    bases, runs = pool([run_per_query(a0), run_per_query(b0)], [run_per_query(a1), run_per_query(b1)])
    assert runs.queries == 5 and bases.queries == 5
    diff = runs.compare(bases, "recall@2")
    assert diff.difference.estimate == pytest.approx(100 * 2 / 5) and diff.discordant == 2
    assert main(["--pool", a0, a1, b0, b1, "--metrics", "recall@2"]) == 0
    out = capsys.readouterr().out
    assert "a1 − a0" in out and "b1 − b0" in out and "pooled runs (2 pairs) − pooled bases (2 pairs)" in out
    with pytest.raises(SystemExit) as exc:
        main(["--pool", a0, a1, b0])
    assert exc.value.code == 2
