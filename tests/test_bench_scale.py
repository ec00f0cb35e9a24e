"""benchmarks/bench_scale.py (issue 21): its growth fit, its extrapolation, the synthetic corpus it grows with, and
one tiny run end to end (in-process, on the sample corpus) whose JSON carries every stage of every size."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "bench_scale.py"


def load_bench():
    return load_benchmark("bench_scale")


def sample_rows() -> list[dict]:
    lines = (REPO / "hyperrag" / "sample_data" / "corpus.jsonl").read_text().splitlines()
    return [{"title": r["title"], "text": r["text"]} for r in map(json.loads, lines)]


def test_fit_exponent_recovers_power_laws():
    bench = load_bench()
    sizes = [500, 1000, 2000, 4000, 8000]
    linear = bench.fit_exponent([(n, 3e-4 * n) for n in sizes])
    quadratic = bench.fit_exponent([(n, 1e-7 * n * n) for n in sizes])
    n_log_n = bench.fit_exponent([(n, 1e-5 * n * math.log(n)) for n in sizes])
    assert linear["exponent"] == pytest.approx(1.0, abs=1e-3) and linear["r2"] == pytest.approx(1.0)
    assert quadratic["exponent"] == pytest.approx(2.0, abs=1e-3)
    assert 1.0 < n_log_n["exponent"] < bench.FLAG_EXPONENT  # n log n itself is not flagged
    assert linear["sizes"] == sizes
    assert bench.fit_exponent([(500, 1.0)]) is None  # one size: no fit


def test_growth_flags_only_measured_superlinear_stages():
    bench = load_bench()
    sizes = [500, 1000, 2000, 4000, 8000]

    def row(n):
        stages = {s: {"status": "measured", "seconds": 1e-3 * n, "cpu_seconds": 1e-3 * n} for s in bench.STAGES}
        stages["synonyms"] = {"status": "measured", "seconds": 1e-7 * n * n, "cpu_seconds": 2e-7 * n * n}
        # wall time swollen by load at the large sizes, CPU time linear: the CPU fit decides
        stages["leiden"] = {"status": "measured", "seconds": 1e-7 * n * n, "cpu_seconds": 1e-3 * n}
        stages["embed"] = {"status": "skipped", "seconds": None}
        return {"passages": n, "stages": stages}

    fits = bench.growth([row(n) for n in sizes], min_seconds=0.0)
    assert fits["synonyms"]["faster_than_n_log_n"] and fits["synonyms"]["exponent"] == pytest.approx(2.0, abs=1e-3)
    assert fits["synonyms"]["flag_basis"] == "cpu"
    assert not fits["graph"]["faster_than_n_log_n"]
    assert fits["leiden"]["wall"]["exponent"] == pytest.approx(2.0, abs=1e-3)
    assert not fits["leiden"]["faster_than_n_log_n"] and fits["leiden"]["exponent"] == pytest.approx(1.0, abs=1e-3)
    assert fits["graph"]["cpu_largest_four"]["sizes"] == sizes[1:]
    assert fits["embed"]["exponent"] is None and not fits["embed"]["faster_than_n_log_n"]


def test_extrapolation_is_linear_from_the_largest_measured_size():
    bench = load_bench()
    results = [
        {"passages": 100, "stages": {"keywords": {"status": "measured", "seconds": 2.0, "cpu_seconds": 1.0},
                                     "embed": {"status": "measured", "seconds": 3.0,
                                               "texts": {"passages": 100, "entities": 400},
                                               "texts_done": {"passages": 100, "entities": 400},
                                               "seconds_by_kind": {"passages": 1.0, "entities": 2.0}}}},
        {"passages": 1000, "stages": {"keywords": {"status": "derived", "seconds": 0.01},
                                      "embed": {"status": "skipped", "seconds": None,
                                                "texts": {"passages": 1000, "entities": 2000}}}},
    ]
    bench.extrapolate(results)
    assert results[1]["stages"]["keywords"]["extrapolated_seconds"] == pytest.approx(20.0)
    assert results[1]["stages"]["keywords"]["extrapolated_cpu_seconds"] == pytest.approx(10.0)
    assert results[1]["stages"]["embed"]["extrapolated_seconds"] == pytest.approx(1000 * 0.01 + 2000 * 0.005)
    assert "extrapolated_seconds" not in results[0]["stages"]["keywords"]
    assert results[0]["stages"]["embed"]["texts_per_second"] == pytest.approx(500 / 3.0, abs=0.1)


def test_synthetic_passages_rename_names_consistently_and_are_stable():
    sys.path.insert(0, str(BENCH.parent))
    from scale_corpus import SyntheticCorpus

    rows = sample_rows()
    synth = SyntheticCorpus(rows, seed=3)
    first, source, mapping = synth.passage(len(rows) + 5)
    again, _, _ = SyntheticCorpus(rows, seed=3).passage(len(rows) + 5)
    assert first == again and first.id == f"syn-{len(rows) + 5}"
    original = rows[source]
    assert mapping and all(w.islower() for w in mapping)  # name words of the source, casefolded
    assert first.text != original["text"] and len(first.text.split()) == len(original["text"].split())
    renamed = 0
    for old, new in zip(original["text"].split(), first.text.split()):  # word by word: names replaced, rest kept
        word = re.fullmatch(r"([A-Za-z]+)([.,;:)]?)", old)
        if word is None:
            continue
        core = word.group(1)
        if core[0].isupper() and core.casefold() in mapping:
            assert new == mapping[core.casefold()] + word.group(2)
            renamed += 1
        else:
            assert new == old
    assert renamed
    keywords = SyntheticCorpus.keywords(frozenset({"x " + next(iter(mapping)), "plain words"}), mapping)
    assert "plain words" in keywords and f"x {mapping[next(iter(mapping))].casefold()}" in keywords
    with pytest.raises(ValueError):
        synth.passage(0)


@pytest.mark.slow
def test_tiny_run_reports_every_stage(tmp_path):
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(sample_rows()))
    out, plot = tmp_path / "scale.json", tmp_path / "scale.png"
    cmd = [sys.executable, str(BENCH), "--corpus", str(corpus), "--sizes", "6,12,24", "--real", "10",
           "--embed-max", "6", "--cap", "120", "--ball-epochs", "1", "--in-process", "--out", str(out),
           "--plot", str(plot), "--work", str(tmp_path / "work")]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary == json.loads(out.read_text()) and plot.stat().st_size > 10_000
    bench = load_bench()
    assert [r["passages"] for r in summary["results"]] == [6, 12, 24]
    assert [r["corpus"] for r in summary["results"]] == ["2wiki", "2wiki+synthetic", "2wiki+synthetic"]
    for r in summary["results"]:
        assert set(r["stages"]) == set(bench.STAGES)
        assert r["max_rss_mb"] > 0 and r["entities"] > 0
        for name, stage in r["stages"].items():
            assert stage["status"] in {"measured", "derived", "skipped", "capped", "sampled"}, (name, stage)
            if stage["status"] == "measured":
                assert stage["seconds"] >= 0 and stage["peak_rss_mb"] > 0 and stage["rss_delta_mb"] >= 0
                assert stage["cpu_seconds"] >= 0
    small, big = summary["results"][0]["stages"], summary["results"][2]["stages"]
    assert small["embed"]["status"] == "measured" and small["embed"]["texts_done"]["passages"] == 6
    assert big["embed"]["status"] == "skipped" and big["embed"]["extrapolated_seconds"] > 0
    assert big["keywords"]["status"] == "derived" and big["keywords"]["extrapolated_seconds"] > 0
    assert big["causal_mining"]["status"] == "derived"
    for name in ("parse", "graph", "synonyms", "leiden", "keyword_graph", "ball", "causal_graph"):
        assert big[name]["status"] == "measured", (name, big[name])
    assert big["synonyms"]["rows_done"] == big["synonyms"]["entities"]
    assert big["ball"]["relations"] > 0 and big["ball"]["epochs"] == 1
    assert set(summary["growth"]) == set(bench.STAGES)
    assert all(set((f["wall"] or {}).get("sizes", [])) <= {6, 12, 24} for f in summary["growth"].values())
    assert isinstance(summary["faster_than_n_log_n"], list)
