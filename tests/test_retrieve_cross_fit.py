"""Cross-fitted retrieval: every query is scored by artifacts trained on the other folds only; an artifact that
trained on a scored query is refused."""

import json
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from hyperrag.errors import InputError
from hyperrag.utils.artifacts import read_record
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve


def compose_retrieve(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=[f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}",
                                              "hardware=cpu", "tracking=none", "llm=none", *overrides])


def cdfrag(tmp_path: Path, models: Path, *overrides: str):
    return compose_retrieve(tmp_path, "method=cdfrag", f"method.retriever.models_dir={models}", *overrides)


@pytest.mark.slow  # the default run stays under 10 minutes on 2 cores (BENCHMARKS, test suite)
def test_cross_fitted_policy_never_scores_its_training_queries(tmp_path):
    metrics = retrieve.run(cdfrag(tmp_path, tmp_path / "models", "cv_folds=3"))
    assert metrics["queries"] == 6 and metrics["cv_folds"] == 3 and "recall@5" in metrics
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    scored = [q for fold in record["folds"] for q in fold["queries"]]
    assert sorted(scored) == [f"q{i}" for i in range(1, 7)]  # every query scored exactly once
    for fold in record["folds"]:
        artifact = read_record(fold["artifacts"]["policy"])
        assert artifact.task == "ppo" and artifact.dataset == "sample"
        assert not set(artifact.query_ids) & set(fold["queries"])  # trained on the other folds only
        assert set(artifact.query_ids) | set(fold["queries"]) == set(scored)
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"q{i}" for i in range(1, 7)]
    # the same policy scoring all six queries would score queries it trained on: refused, one line
    policy = record["folds"][0]["artifacts"]["policy"]
    with pytest.raises(InputError, match="was trained on 4 of the 6 queries being scored"):
        retrieve.run(cdfrag(tmp_path / "again", tmp_path / "models", f"method.retriever.policy={policy}"))
    # auto never picks an artifact that saw a scored query: here every saved policy did, so none is used
    plain = retrieve.run(cdfrag(tmp_path / "auto", tmp_path / "models", "method.retriever.policy=auto"))
    assert "cv_folds" not in plain


def test_cv_folds_leaves_methods_trained_on_no_question_as_they_are(tmp_path):
    metrics = retrieve.run(compose_retrieve(tmp_path, "method=dense", "cv_folds=3"))
    assert metrics["queries"] == 6 and "cv_folds" not in metrics


@pytest.mark.slow  # the default run stays under 10 minutes on 2 cores (BENCHMARKS, test suite)
def test_cross_fitted_policy_trains_with_the_run_s_llm(tmp_path):
    """With an LLM (the oracle here) each fold's policy trains on the actions that LLM carries out, with the
    hallucination term on, and its key names the LLM — what the retrieval of that fold deploys."""
    retrieve.run(cdfrag(tmp_path, tmp_path / "models", "cv_folds=2", "llm=oracle", "data.openie_source=file"))
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    for fold in record["folds"]:
        trained = json.loads(Path(fold["artifacts"]["policy"]).with_name("metrics.json").read_text())["metrics"]
        assert trained["hallucination_term"] == "answers"
    assert record["metrics"]["llm_kind"] == "oracle"
