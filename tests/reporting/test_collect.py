"""Which metrics.json files a report counts as runs."""

from __future__ import annotations

import json

from hyperrag.reporting.collect import find_runs


def _run(path, recall):
    path.mkdir(parents=True)
    method = path.name.split("=")[-1] if "=" in path.name else "cdfrag"
    (path / "metrics.json").write_text(json.dumps({"dataset": "musique", "method": method,
                                                   "metrics": {"recall@5": recall}}))


def test_a_cross_fitted_runs_folds_are_parts_of_it_not_runs(tmp_path):
    _run(tmp_path / "sweep" / "method=cdfrag", 55.7)
    for k in range(3):
        _run(tmp_path / "sweep" / "method=cdfrag" / f"fold-{k}", 60.0 + k)
    _run(tmp_path / "sweep" / "method=dense", 58.7)
    runs = find_runs(str(tmp_path / "sweep"))
    assert sorted((r.method, r.metrics["recall@5"]) for r in runs) == [("cdfrag", 55.7), ("dense", 58.7)]


def test_run_tags_say_what_the_figures_are():
    from hyperrag.reporting.collect import run_tags

    assert run_tags({"llm_label": "LLM-free", "cv_folds": 5}) == ["LLM-free", "cross-fitted, 5 folds"]
    assert run_tags({"llm_label": "upper bound (oracle)", "transductive": True}) == ["upper bound (oracle)",
                                                                                     "transductive"]


def test_a_preset_s_own_label_names_its_report_rows(tmp_path):
    """experiment=catrag_best sets method.label: its rows never read as the paper's method."""
    for name, label in (("paper", None), ("best", "catrag_best (not the paper's)")):
        path = tmp_path / name
        path.mkdir()
        (path / "metrics.json").write_text(json.dumps({"dataset": "musique", "method": "catrag",
                                                       "metrics": {"recall@5": 70.0}}))
        (path / "run_info.json").write_text(json.dumps({"config": {"method": {"name": "catrag", "label": label}}}))
    labels = sorted(r.label for r in find_runs(str(tmp_path)))
    assert labels == ["catrag", "catrag_best (not the paper's)"]


def test_the_paper_preset_and_the_method_defaults_keep_a_row_each(tmp_path):
    """method=hugrag_paper and method=hugrag: two presets of one method, two labels, neither dropped by
    latest_only (review finding 4)."""
    from hyperrag.config import compose_config
    from hyperrag.reporting.collect import latest_only

    for preset in ("hugrag", "hugrag_paper"):
        path = tmp_path / preset
        path.mkdir()
        (path / "metrics.json").write_text(json.dumps({"dataset": "musique", "method": "hugrag",
                                                       "metrics": {"recall@5": 70.0}}))
        name = compose_config("retrieve", [f"method={preset}"]).method.name
        (path / "run_info.json").write_text(json.dumps({"config": {"method": {"name": name}}}))
    runs = latest_only(find_runs(str(tmp_path)))
    assert len(runs) == 2 and len({r.label for r in runs}) == 2


def test_oracle_steps_under_no_llm_are_an_upper_bound_not_llm_free(tmp_path):
    """gates.verifier=oracle with llm=none: gold judged the gates, so the run is no LLM-free baseline and gets no Δ
    against the paper (review finding 6)."""
    from hyperrag.reporting.ceiling import ceiling_pairs
    from hyperrag.reporting.collect import run_tags, uses_oracle

    tags = run_tags({"llm_label": "LLM-free", "transductive": True, "oracle_steps": ["causal_gate"]})
    assert tags == ["LLM-free", "transductive", "upper bound (oracle causal_gate)"]
    for name, steps in (("free", []), ("gated", ["causal_gate"])):
        path = tmp_path / name
        path.mkdir()
        (path / "metrics.json").write_text(json.dumps({"dataset": "musique", "method": "hugrag", "metrics": {
            "recall@5": 70.0, "llm_label": "LLM-free", **({"oracle_steps": steps} if steps else {})}}))
    runs = {r.path.name: r for r in find_runs(str(tmp_path))}
    assert uses_oracle(runs["gated"]) and not uses_oracle(runs["free"])
    assert ceiling_pairs(list(runs.values())) == []  # the gated run is neither the LLM-free nor the oracle side
