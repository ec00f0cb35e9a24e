"""runs.csv (one header, union of columns) and run_info.json contents."""

from omegaconf import OmegaConf

from hyperrag.reporting.csv_log import append_row, flatten, read_rows
from hyperrag.reporting.run_info import collect_run_info, find_seeds, git_state, package_versions


def test_csv_rows_with_new_columns_rewrite_the_header(tmp_path):
    path = tmp_path / "runs.csv"
    append_row(path, {"name": "a", "recall@5": 50.0})
    append_row(path, {"name": "b", "recall@5": 60.0})
    append_row(path, {"name": "c", "cfg.damping": 0.7, "recall@5": 70.0})
    rows = read_rows(path)
    assert list(rows[0]) == ["name", "recall@5", "cfg.damping"]
    assert [(r["name"], r["recall@5"], r["cfg.damping"]) for r in rows] == [("a", "50.0", ""), ("b", "60.0", ""),
                                                                            ("c", "70.0", "0.7")]
    assert path.read_text().count("name,") == 1


def test_flatten():
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "d": None}) == {"a.b": 1, "a.c": "[1, 2]", "d": None}


def test_run_info_records_seeds_versions_and_commit():
    cfg = OmegaConf.create({"seed": 3, "out": "x", "method": {"retriever": {"hierarchy": {"seed": "${seed}"}}},
                            "llm": {"sampling": {"seed": 0}}})
    info = collect_run_info(cfg)
    assert info["seed"] == 3
    assert info["seeds"] == {"seed": 3, "method.retriever.hierarchy.seed": 3, "llm.sampling.seed": 0}
    assert info["config"]["method"]["retriever"]["hierarchy"]["seed"] == 3  # resolved
    assert {"torch", "hydra-core", "lightning", "wandb"} <= set(info["packages"]) == set(package_versions())
    git = git_state()
    if git is not None:  # a source checkout
        assert info["git"]["commit"] == git["commit"] and len(git["commit"]) == 40 and "dirty" in git
    assert find_seeds({"a": [{"seed": 1}], "data_seed": 2}) == {"a[0].seed": 1, "data_seed": 2}


def test_run_info_records_pythonhashseed(monkeypatch):
    """Issue 47: HippoRAG 2's reference seed ties follow a Python set's order, fixed only by PYTHONHASHSEED."""
    cfg = OmegaConf.create({"seed": 0})
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    info = collect_run_info(cfg)
    assert info["python_hash_seed"] == "0" and info["env"]["PYTHONHASHSEED"] == "0"
    monkeypatch.delenv("PYTHONHASHSEED")
    assert collect_run_info(cfg)["python_hash_seed"] == "random"
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert collect_run_info(cfg)["python_hash_seed"] == "random"
