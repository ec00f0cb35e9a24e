"""Reports that cannot go stale or let a comparison through (issue 48): the committed reports are current (printed
by the tree's reporting code, or saying in their first line that they predate it), a report re-prints from its
committed values alone, a served name never hides the model, the extraction model is a role, and LLM-free,
stand-in-metric, unsized and unlabelled runs get no Δ against a paper."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from hyperrag.reporting.collect import RunRecord
from hyperrag.reporting.paper_rows import not_comparable
from hyperrag.reporting.provenance import (
    PREDATES,
    RUNS_PREDATE,
    last_reporting_change,
    printed_by,
    runs_stale_reason,
    stale_reason,
    stale_runs_reason,
)
from hyperrag.reporting.published import load_published
from tests.conftest import REPO_ROOT
from tests.test_report_entry import compose_report, make_run, report


def _git_history() -> bool:
    try:
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-list", "--count", "HEAD"], capture_output=True,
                             text=True, check=True, timeout=30).stdout.strip()
        shallow = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--is-shallow-repository"],
                                 capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return int(out) > 0 and shallow != "true"


@pytest.mark.skipif(not _git_history(), reason="needs the repository's full git history (not a shallow clone)")
def test_no_committed_report_was_printed_by_reporting_code_older_than_the_trees():
    """Each reports/*/report.md names the commit that printed it (``printed by: git <sha>``), and no commit after
    it changed the reporting code (provenance.REPORTING_PATHS) — or its first line says it predates the current
    statistics. Re-print with ``python report.py --all`` after changing the reporting code."""
    reports = sorted((REPO_ROOT / "reports").glob("*/report.md"))
    assert reports
    stale = {str(p.relative_to(REPO_ROOT)): why for p in reports if (why := stale_reason(p, REPO_ROOT))}
    assert not stale, stale
    for p in reports:  # a current report has its values beside it; one that predates says so first
        assert (p.parent / "values.json").is_file() or p.read_text().startswith(PREDATES), p
    assert last_reporting_change(REPO_ROOT)


@pytest.mark.skipif(not _git_history(), reason="needs the repository's full git history (not a shallow clone)")
def test_a_committed_report_says_whether_its_runs_are_older_than_the_trees_code():
    """The printing code is half of a report; its runs are the other. Each report with values says, in a line
    under ``printed by``, whether the code that produced its runs (provenance.run_code_paths) differs from HEAD's —
    recomputed here: a change to a method after its runs, without a re-print, fails."""
    reports = sorted((REPO_ROOT / "reports").glob("*/report.md"))
    wrong = {str(p.relative_to(REPO_ROOT)): why for p in reports if (why := stale_runs_reason(p, REPO_ROOT))}
    assert not wrong, wrong


def test_benchmarks_links_only_current_reports():
    text = (REPO_ROOT / "BENCHMARKS.md").read_text()
    for name in sorted({part.split("/")[0] for part in text.split("(reports/")[1:]}):
        path = REPO_ROOT / "reports" / name / "report.md"
        if path.is_file():
            assert not path.read_text().startswith(PREDATES), f"BENCHMARKS.md links {name}, which predates"


@pytest.mark.slow  # two reports with plots and bootstrap intervals (~5 s idle)
def test_a_report_reprints_from_its_committed_values_alone(tmp_path):
    """The run directories gone, ``values.json`` re-prints the same tables, intervals and tests."""
    root = tmp_path / "multirun" / "catrag_table" / "stamp"
    runs = []
    for method, hits in (("dense", [["g1", "x"]] * 8 + [["g1", "g2"]] * 4), ("catrag", [["g1", "g2"]] * 12)):
        run = make_run(root, method, method, "musique", (50.0, 60.0, 70.0), ["experiment=catrag_table",
                       f"method={method}"])
        rows = [{"id": f"q{i}", "question": "?", "ranked_ids": h, "gold_ids": ["g1", "g2"]} for i, h in enumerate(hits)]
        (run / "predictions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        runs.append(run)
    path = report.run(compose_report(tmp_path, f"runs={root}", "test_metrics=[recall@5,fcr@5]",
                                     "equivalence_margin=2"))
    first = path.read_text()
    assert "not ≡ ±2" in first and "two one-sided tests" in first  # +16.7 is no equivalence within ±2
    assert printed_by(first) is not None and "Runs' code: git abc1234567" in first
    assert (path.parent / "values.json").is_file()
    shutil.rmtree(tmp_path / "multirun")
    from hyperrag.reporting.report import reprint_all

    assert reprint_all(tmp_path / "reports") == [path]
    again = path.read_text()

    def body(text: str) -> str:
        return "\n".join(line for line in text.splitlines() if "generated" not in line)

    assert body(again) == body(first) and "## Paired tests" in again and "[" in again


def test_a_served_name_never_hides_the_model_it_serves():
    """``llm=vllm llm.served_model_name=gpt-4o-mini`` under a GPT-4o-mini preset: Qwen answers, so the run is
    'substituted models'; the served name is recorded beside the model."""
    import retrieve

    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cfg = compose("retrieve", overrides=["experiment=hyperrag_paper", "llm=vllm", "tracking=none",
                                             "llm.served_model_name=gpt-4o-mini"])
    labels = retrieve.substituted_models(cfg)
    assert labels["models_used"]["llm"] == "Qwen/Qwen2.5-7B-Instruct"
    assert labels["models_used"]["llm_served_as"] == "gpt-4o-mini"
    assert labels["models"] == "substituted" and "llm" in labels["substituted_roles"]


def test_the_cdfrag_and_hugrag_presets_name_their_roles():
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cdf = compose("retrieve", overrides=["experiment=cdfrag_table", "method=cdfrag", "tracking=none"])
        abl = compose("retrieve", overrides=["experiment=hugrag_ablation", "tracking=none"])
    assert cdf.paper_models.embedder == "all-MiniLM-L6-v2" and "UniCausal" in cdf.paper_models.causal_classifier
    from hyperrag.reporting.run_info import role_models

    assert "causal_classifier" in role_models(cdf)  # ours: a checkpoint or the rule priors, printed as such
    assert abl.paper_models.llm == "gpt-5-nano" and abl.paper_models.extraction == "gpt-5-nano"


def test_a_run_on_released_gpt35_triples_names_the_extraction_model_in_its_report(tmp_path):
    root = tmp_path / "multirun" / "catrag_table" / "stamp"
    released = tmp_path / "openie_results_ner_gpt-3.5-turbo-1106.json"
    for method in ("hipporag2", "catrag"):
        run = make_run(root, method, method, "musique", (50.0, 60.0, 70.0),
                       ["experiment=catrag_table", f"method={method}"], llm_label="model:gpt-4o-mini",
                       models_used={"llm": "gpt-4o-mini", "reader": "gpt-4o-mini"},
                       paper_models={"llm": "gpt-4o-mini", "extraction": "gpt-4o-mini"})
        if method == "catrag":  # recorded by the run; hipporag2's is inferred from its config's OpenIE file
            saved = json.loads((run / "metrics.json").read_text())
            saved["metrics"]["extraction"] = {"source": "file", "model": "gpt-3.5-turbo-1106", "path": str(released)}
            (run / "metrics.json").write_text(json.dumps(saved))
        else:
            info = json.loads((run / "run_info.json").read_text())
            info["config"]["data"]["openie"] = str(released)
            (run / "run_info.json").write_text(json.dumps(info))
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    assert ("extraction `gpt-3.5-turbo-1106 (released file openie_results_ner_gpt-3.5-turbo-1106.json)` "
            "(paper: gpt-4o-mini)") in text
    assert "gpt-3.5-turbo-1106 (released file openie_results_ner_gpt-3.5-turbo-1106.json, inferred)" in text
    assert "substituted models" in text  # another extraction model than the paper's


def _run(dataset: str, queries: int, tags: list[str], data: bool = True, passages: int | None = None) -> RunRecord:
    labels = {"data": {"name": dataset, "queries": queries, "passages": passages}} if data else {}
    return RunRecord(Path("run"), "catrag", dataset, {"queries": queries}, tags=tags, labels=labels)


def _table(table_id: str):
    return next(t for t in load_published() if t.id == table_id)


def test_llm_free_unsized_unlabelled_and_stand_in_runs_are_not_comparable():
    catrag2 = _table("catrag_table2")
    # an LLM-free run at the paper's size (1,000 q / 11,656 p)
    why = not_comparable(_run("musique", 1000, ["LLM-free"], passages=11656), catrag2, "recall@5", "recall@5")
    assert why == "LLM-free fallback, not the paper's LLM steps"
    assert not_comparable(_run("musique", 1000, ["model:gpt-4o-mini"], passages=11656), catrag2) is None
    # no data label: no size or digest to check
    assert "records no data label" in not_comparable(_run("musique", 1000, [], data=False), catrag2)
    # a CDF-RAG Table 1 run of 16 queries: the paper states no per-set count, ours is 16
    cdf1 = _table("cdfrag_table1")
    why = not_comparable(_run("adversarialqa", 16, ["model:gpt-4"]), cdf1, "accuracy", "em")
    assert "the paper states no query count" in why and "em stands in for the paper's accuracy" in why
    assert all(t.sizes for t in load_published() if t.experiment and t.rows)


def test_the_cdfrag_table1_section_prints_not_comparable_for_16_queries(tmp_path):
    root = tmp_path / "multirun" / "cdfrag_table" / "stamp"
    run = make_run(root, "cdfrag", "cdfrag", "adversarialqa", (50.0, 60.0, 70.0),
                   ["experiment=cdfrag_table", "method=cdfrag"], llm_label="LLM-free", accuracy=40.0, queries=16,
                   data={"name": "adversarialqa", "queries": 16, "passages": 30})
    assert run.is_dir()
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    table1 = text.split("## Paper vs ours: Table 1")[1].split("## ")[0]
    delta = next(x for x in table1.splitlines() if x.startswith("| Δ ours − paper"))
    assert "not comparable (LLM-free fallback, not the paper's LLM steps; size the paper states no query count)" \
        in delta


def test_staleness_follows_the_reporting_code_only(tmp_path):
    """In a scratch repository: a report printed at commit A is current; a later change elsewhere keeps it
    current; a later change to a reporting module stales it; uncommitted reporting changes never count as current."""
    from hyperrag.reporting.provenance import printed_by_line

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q")
    (tmp_path / "hyperrag" / "reporting").mkdir(parents=True)
    (tmp_path / "hyperrag" / "reporting" / "tables.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("y = 1\n")
    git("add", "-A")
    git("commit", "-qm", "a")
    report = tmp_path / "reports" / "r" / "report.md"
    report.parent.mkdir(parents=True)
    report.write_text(f"# r\n\n{printed_by_line(tmp_path)}\n")
    assert stale_reason(report, tmp_path) is None
    (tmp_path / "other.py").write_text("y = 2\n")
    git("commit", "-qam", "elsewhere")
    assert stale_reason(report, tmp_path) is None
    (tmp_path / "hyperrag" / "reporting" / "tables.py").write_text("x = 2\n")
    assert "uncommitted" in printed_by_line(tmp_path)
    git("commit", "-qam", "reporting")
    assert "older than" in stale_reason(report, tmp_path)
    report.write_text(PREDATES + "\n\n# r\n")
    assert stale_reason(report, tmp_path) is None


def test_our_lightrag_hybrid_run_meets_the_papers_lightrag_row(tmp_path):
    """``method=lightrag`` names its runs ``lightrag-hybrid``; the papers' "LightRAG" rows (method ``lightrag``) meet
    that run — with its interval and a "not comparable (reason)" Δ — and no other LightRAG mode."""
    from hyperrag.reporting.paper_rows import paper_method

    root = tmp_path / "multirun" / "hyperrag_baselines" / "stamp"
    data = {"name": "musique", "queries": 51, "passages": 1890}
    for name, method in (("hybrid", "lightrag-hybrid"), ("local", "lightrag-local")):
        make_run(root, name, method, "musique", (50.0, 60.0, 70.0), ["experiment=hyperrag_baselines",
                 f"method=lightrag{'' if name == 'hybrid' else '_' + name}"], llm_label="LLM-free",
                 match_acc=40.0 if name == "hybrid" else 30.0, data=data, queries=51)
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    table1 = text.split("## Paper vs ours: Table 1")[1].split("\n## ")[0]
    lines = table1.splitlines()
    paper = next(i for i, x in enumerate(lines) if x.startswith("| paper (published): LightRAG |"))
    assert lines[paper + 1].startswith("| ours: lightrag-hybrid")
    delta = lines[paper + 2]
    assert delta.startswith("| Δ ours − paper (LightRAG)") and "not comparable (LLM-free fallback" in delta
    assert "40.0" in lines[paper + 1] and "lightrag-local" not in table1
    run = RunRecord(Path("run"), "lightrag-hybrid", "musique", {})
    assert paper_method(run) == "lightrag"
    assert paper_method(RunRecord(Path("run"), "lightrag-local", "musique", {})) == "lightrag-local"


def test_an_llm_free_run_at_the_papers_size_prints_not_comparable_in_its_report(tmp_path):
    """CatRAG Table 2 (musique: 1,000 q / 11,656 p): an LLM-free CatRAG run of exactly that size gets no Δ — its
    report prints "not comparable (LLM-free fallback, ...)" and nothing else as the reason."""
    root = tmp_path / "multirun" / "catrag_table" / "stamp"
    make_run(root, "catrag", "catrag", "musique", (50.0, 60.0, 70.0), ["experiment=catrag_table", "method=catrag"],
             llm_label="LLM-free", queries=1000, data={"name": "musique", "queries": 1000, "passages": 11656})
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    table2 = text.split("## Paper vs ours: Table 2")[1].split("\n## ")[0]
    delta = next(x for x in table2.splitlines() if x.startswith("| Δ ours − paper"))
    assert "| not comparable (LLM-free fallback, not the paper's LLM steps) |" in delta
    assert "1,000 q / 11,656 p; paper 1,000 / 11,656" in table2  # the sizes agree: the reason is the fallback alone


def _git_in(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_runs_are_older_than_the_tree_when_their_methods_code_changed(tmp_path):
    """In a scratch repository: a dense run is current until dense's own code (its retriever module, the base
    class, its YAML, the runner or the metric code) changes; a change to another method keeps it current; a run
    made with uncommitted changes, or at a commit the repository lacks, is never current."""
    from hyperrag.reporting.provenance import method_code_paths, run_code_paths

    files = ["retrieve.py", "hyperrag/eval/retrieval.py", "hyperrag/eval/qa.py", "hyperrag/retrievers/base.py",
             "hyperrag/retrievers/dense.py", "hyperrag/retrievers/bm25.py", "hydra_configs/method/dense.yaml"]
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x = 1\n")
    _git_in(tmp_path, "init", "-q")
    _git_in(tmp_path, "add", "-A")
    _git_in(tmp_path, "commit", "-qm", "a")
    sha = _git_in(tmp_path, "rev-parse", "HEAD")

    def dense(commit: str, dirty: bool = False) -> RunRecord:
        run = RunRecord(Path("run"), "dense", "musique", {"queries": 3}, overrides={"method": "dense"},
                        config={"method.retriever._target_": "hyperrag.retrievers.settings.DenseSettings"},
                        tags=["LLM-free"])
        run.inputs = {"info": {"git": {"commit": commit, "dirty": dirty}}}
        return run

    target = "hyperrag.retrievers.settings.DenseSettings"
    assert method_code_paths(target, tmp_path) == ("hyperrag/retrievers/base.py", "hyperrag/retrievers/dense.py")
    assert "hydra_configs/method/dense.yaml" in run_code_paths(dense(sha), tmp_path)
    assert runs_stale_reason([dense(sha)], tmp_path) is None
    (tmp_path / "hyperrag/retrievers/bm25.py").write_text("x = 2\n")
    _git_in(tmp_path, "commit", "-qam", "another method")
    assert runs_stale_reason([dense(sha)], tmp_path) is None
    (tmp_path / "hyperrag/retrievers/dense.py").write_text("x = 2\n")
    _git_in(tmp_path, "commit", "-qam", "dense changed")
    assert runs_stale_reason([dense(sha)], tmp_path) == \
        f"runs at {sha[:10]} predate changes to hyperrag/retrievers/dense.py"
    head = _git_in(tmp_path, "rev-parse", "HEAD")
    assert runs_stale_reason([dense(head)], tmp_path) is None
    assert "made with uncommitted changes" in runs_stale_reason([dense(head, dirty=True)], tmp_path)
    assert "not in this repository" in runs_stale_reason([dense("0" * 40)], tmp_path)
    assert "record no commit" in runs_stale_reason([dense("")], tmp_path)


def test_a_report_from_runs_the_repository_cannot_place_says_so_under_printed_by(tmp_path):
    root = tmp_path / "multirun" / "hipporag2_damping" / "stamp"
    for d in ("0.5", "0.85"):
        make_run(root, d, "hipporag2", "musique", (50.0, 60.0, 70.0), ["experiment=hipporag2_damping",
                 f"method.retriever.damping={d}"], llm_label="LLM-free")
    path = report.run(compose_report(tmp_path, f"runs={root}"))
    lines = path.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("printed by: git "))
    assert lines[at + 2].startswith(RUNS_PREDATE + "runs at abc1234567: the commit is not in this repository")
    assert stale_runs_reason(path) is None  # recomputed from values.json: the same line
    path.write_text(path.read_text().replace(lines[at + 2], "no line"))
    assert "does not say so" in stale_runs_reason(path)


def test_a_passage_only_run_names_no_extraction_model_and_claims_none_of_the_papers(tmp_path):
    """BM25 extracts no triples: its extraction role reads ``none (no extraction)``, never "unknown model" or "(the
    paper's)"; HippoRAG 2 on the released GPT-3.5 file beside it still names that model against the paper's."""
    root = tmp_path / "multirun" / "hipporag2_table" / "stamp"
    paper = {"llm": "meta-llama/Llama-3.3-70B-Instruct", "extraction": "meta-llama/Llama-3.3-70B-Instruct"}
    for method, extraction in (("bm25", {"source": "none", "model": None, "path": None}),
                               ("hipporag2", {"source": "file", "model": "gpt-3.5-turbo-1106",
                                              "path": "x/openie_results_ner_gpt-3.5-turbo-1106.json"})):
        run = make_run(root, method, method, "musique", (50.0, 60.0, 70.0), ["experiment=hipporag2_table",
                       f"method={method}"], llm_label="upper bound (oracle)", models_used={"llm": "oracle"},
                       paper_models=paper)
        saved = json.loads((run / "metrics.json").read_text())
        saved["metrics"]["extraction"] = extraction
        (run / "metrics.json").write_text(json.dumps(saved))
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    bm25 = next(x for x in text.splitlines() if x.startswith("- ") and x.endswith("— bm25"))
    assert "extraction `none (no extraction)` — bm25" in bm25 and "unknown model" not in text
    assert ("extraction `gpt-3.5-turbo-1106 (released file openie_results_ner_gpt-3.5-turbo-1106.json)` "
            "(paper: meta-llama/Llama-3.3-70B-Instruct)") in text


def test_a_cdfrag_run_names_the_causal_classifier_it_used_not_its_auto_setting(tmp_path):
    """``classifier: auto`` is recorded before the retriever looks for a checkpoint; the run's record says what it
    found (``classifier``: a checkpoint, or ``None`` for the rule priors), and the report prints that against the
    paper's UniCausal BERT."""
    root = tmp_path / "multirun" / "cdfrag_table" / "stamp"
    paper = {"llm": "gpt-4", "reader": "gpt-4", "embedder": "all-MiniLM-L6-v2",
             "causal_classifier": "UniCausal BERT (bert-base-cased, Causal Pair Classification)"}
    auto = "auto: newest models/causal_pair/* on all-MiniLM-L6-v2, else rule priors"
    for name, found in (("priors", None), ("trained", "models/causal_pair/x/model.ckpt")):
        run = make_run(root, name, "cdfrag", "adversarialqa", (50.0, 60.0, 70.0),
                       ["experiment=cdfrag_table", "method=cdfrag", f"seed={len(name)}"], llm_label="model:gpt-4",
                       models_used={"llm": "gpt-4", "reader": "gpt-4", "embedder": "all-MiniLM-L6-v2",
                                    "causal_classifier": auto},
                       paper_models=paper, models="substituted", substituted_roles=["causal_classifier"])
        saved = json.loads((run / "metrics.json").read_text())
        saved["classifier"] = found
        (run / "metrics.json").write_text(json.dumps(saved))
    text = report.run(compose_report(tmp_path, f"runs={root}")).read_text()
    assert ("causal_classifier `rule priors (auto: no trained pair classifier found)` (paper: UniCausal BERT "
            "(bert-base-cased, Causal Pair Classification))") in text
    assert "causal_classifier `models/causal_pair/x/model.ckpt (auto)` (paper: UniCausal BERT" in text
    assert auto not in text and "substituted models" in text


ANSWERS_V1 = '''"""oracle answers"""
from x import y

ORACLES = {}


def oracle_for(*names):
    def register(fn):
        for n in names:
            ORACLES[n] = fn
        return fn
    return register


def oracle_reply(task, inputs):
    return ORACLES[task](inputs)


def helper(q):
    return q.strip()


@oracle_for("fact_filter")
def fact_filter(inputs):
    """Keep the gold facts."""
    return helper(inputs)


@oracle_for("question_routing")
def question_routing(inputs):
    return inputs
'''


def test_an_oracle_run_predates_only_the_changes_that_reach_the_tasks_it_called(tmp_path):
    """In a scratch repository: a change to answers.py's question_routing leaves a run that called only fact_filter
    current and stales one that called question_routing; a change to a helper fact_filter reaches stales the first;
    a docstring does not count; a run that records no per-task usage is compared file by file."""
    from hyperrag.reporting.provenance import ORACLE_ANSWERS, oracle_answer_changes

    for f in ["retrieve.py", "hyperrag/eval/retrieval.py", "hyperrag/eval/qa.py", "hyperrag/llm/oracle/gold.py"]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x = 1\n")
    (tmp_path / ORACLE_ANSWERS).write_text(ANSWERS_V1)
    _git_in(tmp_path, "init", "-q")
    _git_in(tmp_path, "add", "-A")
    _git_in(tmp_path, "commit", "-qm", "a")
    sha = _git_in(tmp_path, "rev-parse", "HEAD")

    def oracle_run(tasks: list[str] | None) -> RunRecord:
        run = RunRecord(Path("run"), "bm25", "musique", {"queries": 3}, tags=["upper bound (oracle)"])
        record = {} if tasks is None else {"llm_usage": {**{t: {} for t in tasks}, "total": {}}}
        run.inputs = {"info": {"git": {"commit": sha, "dirty": False}}, "record": record}
        return run

    def change(old: str, new: str) -> None:
        path = tmp_path / ORACLE_ANSWERS
        path.write_text(path.read_text().replace(old, new))
        _git_in(tmp_path, "commit", "-qam", "change")

    change('"""Keep the gold facts."""', '"""Keep only the gold facts."""')  # a docstring: nothing changes
    assert runs_stale_reason([oracle_run(["fact_filter/max5"])], tmp_path) is None
    change("    return inputs\n", "    return [inputs]\n")  # question_routing
    assert runs_stale_reason([oracle_run(["fact_filter/max5", "hipporag_qa"])], tmp_path) is None
    assert oracle_answer_changes(sha, {"question_routing"}, tmp_path) == ["question_routing"]
    assert runs_stale_reason([oracle_run(["question_routing"])], tmp_path) == \
        f"runs at {sha[:10]} predate changes to {ORACLE_ANSWERS} (question_routing)"
    assert runs_stale_reason([oracle_run(None)], tmp_path) == f"runs at {sha[:10]} predate changes to {ORACLE_ANSWERS}"
    # a mixed report: one run with the changed task stales it
    assert "question_routing" in runs_stale_reason([oracle_run(["fact_filter"]), oracle_run(["question_routing"])],
                                                   tmp_path)
    change("return q.strip()", "return q.lower()")  # a helper fact_filter reaches
    assert oracle_answer_changes(sha, {"fact_filter"}, tmp_path) == ["helper"]
    # a task newly answered by the oracle (it fell back at the run's commit) counts as a change for that task
    change('@oracle_for("question_routing")', '@oracle_for("question_routing", "entity_summary")')
    assert oracle_answer_changes(sha, {"entity_summary"}, tmp_path) == ["question_routing", "task:entity_summary"]
    # the gold file is still compared file by file
    (tmp_path / "hyperrag/llm/oracle/gold.py").write_text("x = 2\n")
    _git_in(tmp_path, "commit", "-qam", "gold")
    assert "hyperrag/llm/oracle/gold.py" in runs_stale_reason([oracle_run(["hipporag_qa"])], tmp_path)
