"""retrieve.py with the oracle backend, a separate reader, skipped LLM steps and LLM-requiring experiments."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve


def compose_retrieve(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=[f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}",
                                              "hardware=cpu", "tracking=none", *overrides])


def saved(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "run" / "metrics.json").read_text())


def test_oracle_run_is_labelled_upper_bound(tmp_path, capsys):
    metrics = retrieve.run(compose_retrieve(tmp_path, "method=hipporag2", "llm=oracle", "data.openie_source=file"))
    assert metrics["llm_kind"] == "oracle" and metrics["llm_label"] == "upper bound (oracle)"
    record = saved(tmp_path)
    assert record["metrics"]["llm_kind"] == "oracle"
    assert record["llm_usage"]["fact_filter/max5-ask4"]["ok"] == 6  # the fact filter really ran, on gold
    assert record["metrics"]["llm_steps_skipped"] == {}
    assert "upper bound (oracle)" in capsys.readouterr().out
    # every answer equals the gold answer exactly when the full chain is in the reader's top-5
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    for row in rows:
        chain = set(row["gold_ids"]) <= set(row["ranked_ids"][:5])
        assert (row["answer"] == row["answers"][0]) == chain and (row["answer"] == "unknown") != chain


def test_llm_free_run_counts_every_skipped_step(tmp_path):
    metrics = retrieve.run(compose_retrieve(tmp_path, "method=catrag", "llm=none"))
    assert metrics["llm_label"] == "LLM-free"
    skipped = metrics["llm_steps_skipped"]
    assert {k: skipped[k] for k in ("answer", "fact_filter", "anchoring_ner")} == {
        "answer": 6, "fact_filter": 6, "anchoring_ner": 6}
    assert 6 <= skipped["edge_scoring"] <= 6 * 5 and set(skipped) == {"answer", "fact_filter", "anchoring_ner",
                                                                     "edge_scoring"}  # counted in seeds


def test_reader_is_its_own_backend(tmp_path):
    metrics = retrieve.run(compose_retrieve(tmp_path, "method=dense", "llm=none", "reader_llm=oracle"))
    assert metrics["llm_kind"] == "none" and metrics["reader_llm_label"] == "upper bound (oracle)"
    assert "em" in metrics and "answer" not in metrics["llm_steps_skipped"]
    record = saved(tmp_path)
    assert record["reader_llm_usage"]["grounded_answer"]["calls"] == 6 and "llm_usage" not in record
    # cost per backend: the reader's six answers; no retrieval LLM configured, so no keys of its own
    usage = record["reader_llm_usage"]["grounded_answer"]
    assert metrics["cost.query.reader.llm_calls"] == metrics["cost.query.llm_calls"] == 6
    assert metrics["cost.query.reader.prompt_tokens"] == usage["prompt_tokens"] > 0
    assert metrics["cost.query.reader.llm_calls_per_1k_queries"] == 1000.0
    assert not any(k.startswith(("cost.query.retrieval.", "cost.index.retrieval.")) for k in metrics)
    assert metrics["cost.index.llm_calls"] == 0 and metrics["cost.index.reader.llm_calls"] == 0


@pytest.mark.parametrize("experiment", ["catrag_paper", "catrag_table", "catrag_ablation"])
def test_catrag_experiments_need_an_llm(tmp_path, experiment):
    cfg = compose_retrieve(tmp_path, f"experiment={experiment}", "data=sample", "method=catrag", "llm=none",
                           "reader_llm=none")
    assert cfg.requires_llm
    with pytest.raises(InputError, match="needs an LLM backend"):
        retrieve.run(cfg)


def test_catrag_paper_holds_the_papers_settings(tmp_path):
    cfg = compose_retrieve(tmp_path, "experiment=catrag_paper", "llm=oracle", "reader_llm=oracle")
    r = cfg.method.retriever
    assert (cfg.graph.synonym_threshold, r.edge_weights.synonym, r.damping, r.anchor_epsilon, r.boost_beta,
            r.edge_scoring.n_seed, r.edge_scoring.k_edge) == (0.8, 2.0, 0.5, 0.2, 2.5, 5, 15)
    assert cfg.llm.sampling.temperature == 0.0 and cfg.answer_top_n == 5 and cfg.data.name == "musique"


@pytest.mark.slow
def test_paper_table_needs_an_llm(tmp_path):
    cfg = compose_retrieve(tmp_path, "experiment=hipporag2_table", "data=sample", "method=dense", "llm=none")
    with pytest.raises(InputError, match="needs an LLM backend"):
        retrieve.run(cfg)
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), "experiment=hipporag2_table",
                           "data=sample", "method=dense", "llm=none", f"out={tmp_path / 'cli'}",
                           f"cache_dir={tmp_path / 'cache'}", "tracking=none", "hardware=cpu"],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2
    expected = ("error: field 'llm': this experiment reproduces a paper table and needs an LLM backend (llm=local, "
                "vllm, openai_compatible or oracle); allow_llm_free=true runs its LLM-free form, labelled as such")
    assert proc.stderr.strip().splitlines() == [expected]
    # the preset's own embedder is NV-Embed-v2 behind an endpoint; models=offline puts MiniLM in its place
    allowed = retrieve.run(compose_retrieve(tmp_path, "experiment=hipporag2_table", "data=sample", "method=dense",
                                            "llm=none", "allow_llm_free=true", "models=offline"))
    assert allowed["llm_label"] == "LLM-free"


def test_explanatory_answers_are_scored_on_their_short_answer(tmp_path):
    """answer_style=explanatory: the reader explains, EM / F1 score the short answer it gives beside it."""
    short = retrieve.run(compose_retrieve(tmp_path / "s", "method=dense", "llm=none", "reader_llm=oracle"))
    long = retrieve.run(compose_retrieve(tmp_path / "l", "method=dense", "llm=none", "reader_llm=oracle",
                                         "answer_style=explanatory"))
    rows = [json.loads(x) for x in (tmp_path / "l" / "run" / "predictions.jsonl").read_text().splitlines()]
    answered = [r for r in rows if r["short_answer"] != "unknown"]
    assert answered and all(r["answer"].startswith(f"The answer is {r['short_answer']}.") for r in answered)
    assert all(len(r["answer"]) > len(r["short_answer"]) for r in rows)
    assert long["em"] == short["em"] and long["f1"] == short["f1"]   # the same bare answers are scored
    assert long["match_acc"] == short["match_acc"]                    # the explanation contains the answer
