"""Gather finished runs from directories: ``metrics.json`` (+ ``evaluation.json``), the config and overrides
(``run_info.json`` or ``.hydra/``), and a label that tells the runs of a collection apart.

The label is the method name plus the *varying* settings: override keys whose value differs between runs of
the collection (e.g. ``damping=0.7`` in a damping sweep, ``ablation=no_anchoring`` in an ablation); launch
details (out, cache_dir, experiment, tracking, hardware) never count.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError
from hyperrag.eval.intervals import Interval
from hyperrag.eval.per_query import RunValues, run_per_query
from hyperrag.eval.runs import read_json_file
from hyperrag.reporting.csv_log import flatten

METHOD_ORDER = ("bm25", "dense", "hipporag2", "catrag", "linearrag", "hugrag", "hyperrag", "cdfrag")
# llm / reader_llm are not a variant: the run's tags say which LLM decided (LLM-free, oracle, model)
_SKIP_KEYS = re.compile(r"^(out|cache_dir|experiment|tracking(\..*)?|hardware(\..*)?|hydra(\..*)?|"
                        r"method|data|batch_size|top_k|llm|reader_llm|allow_llm_free|cv_folds)$")


@dataclass
class RunRecord:
    path: Path
    method: str
    dataset: str
    metrics: dict[str, float]
    overrides: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)   # flattened
    started: str = ""
    group: str | None = None
    variant: dict[str, str] = field(default_factory=dict)  # filled by label_runs
    #: what the figures are, from metrics.json: "LLM-free", "upper bound (oracle)", "transductive", ...
    tags: list[str] = field(default_factory=list)
    #: metrics.json's non-numeric entries: models_used, paper_models, data (sizes and digests), ...
    labels: dict[str, Any] = field(default_factory=dict)
    _per_query: RunValues | None | bool = field(default=False, repr=False, compare=False)
    #: what the report read of the run (``record``, ``evaluation``, ``info``): committed beside the report
    inputs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def commit(self) -> str:
        """The git commit of the code that ran it (``run_info.json``), ``""`` when not recorded."""
        return str(((self.inputs.get("info") or {}).get("git") or {}).get("commit") or "")

    @property
    def per_query(self) -> RunValues | None:
        """The run's per-query values (from ``predictions.jsonl`` + ``evaluation.jsonl``), read once; ``None`` when
        the run directory has no predictions."""
        if self._per_query is False:
            self._per_query = run_per_query(self.path, self.label) if (self.path / "predictions.jsonl").is_file() \
                else None
        return self._per_query  # type: ignore[return-value]

    def interval(self, metric: str) -> Interval | None:
        """The metric's 95% bootstrap interval over the run's queries, when its per-query values exist."""
        pq = self.per_query
        return pq.interval(metric) if pq is not None and pq.values.get(metric) else None

    @property
    def variant_text(self) -> str:
        return " ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in self.variant.items())

    @property
    def label(self) -> str:
        """The method — or the preset's own ``method.label``, e.g. "catrag_best (not the paper's)" — its varying
        settings and its tags."""
        tags = f" ({', '.join(self.tags)})" if self.tags else ""
        name = self.config.get("method.label") or self.method
        return f"{name} {self.variant_text}".strip() + tags


#: known stand-ins, by the digest of their corpus and queries (``metrics.json``'s ``data``): the name a report prints
STAND_INS = {
    # ../shared/data/musique_dev and ../shared/data/paper_format (the same 51 questions and 1,890 passages)
    ("dd70e717041b", "d6fb0e619e17"): "musique_dev",
    # ../shared/data/2wiki_dev (499 of the 1,000 2WikiMultiHopQA questions, the whole 6,119-passage corpus)
    ("38fa5d4c8d28", "139ce2c4c509"): "2wiki_dev",
}


def stand_in_name(data: dict[str, Any]) -> str | None:
    """The name of a known stand-in data set a run scored (``musique_dev``, ``2wiki_dev``), from its digests; else
    ``None``."""
    return STAND_INS.get((str(data.get("corpus_sha256")), str(data.get("queries_sha256"))))


#: the tag of a run some of whose steps gold decided (``oracle_steps``), e.g. "upper bound (oracle causal_gate)"
ORACLE_STEPS_TAG = "upper bound (oracle"


def uses_oracle(run: RunRecord) -> bool:
    """Whether gold informed any of the run's figures: the oracle LLM, or oracle steps under any LLM."""
    return any(t.startswith(ORACLE_STEPS_TAG) for t in run.tags)


def run_tags(metrics: dict[str, Any]) -> list[str]:
    """The labels a run's figures carry: which LLM decided (LLM-free / upper bound (oracle) / model), whether the
    reader was another backend, whether the method saw its evaluation questions at index time, and whether its
    query-trained artifacts were cross-fitted (``cv_folds``: each question scored by one that never saw it)."""
    tags = []
    if isinstance(metrics.get("llm_label"), str):
        tags.append(metrics["llm_label"])
    if isinstance(metrics.get("reader_llm_label"), str):
        tags.append(f"reader: {metrics['reader_llm_label']}")
    if metrics.get("transductive") is True:
        tags.append("transductive")
    if isinstance(metrics.get("oracle_steps"), list) and metrics["oracle_steps"]:
        tags.append(f"{ORACLE_STEPS_TAG} {', '.join(map(str, metrics['oracle_steps']))})")
    if isinstance(metrics.get("cv_folds"), int) and metrics["cv_folds"] > 1:
        tags.append(f"cross-fitted, {metrics['cv_folds']} folds")
    if metrics.get("models") == "substituted":
        tags.append("substituted models")
    if isinstance(metrics.get("protocol"), str) and metrics["protocol"] not in ("", "transductive"):
        tags.append(str(metrics["protocol"]))
    return tags


def _overrides(run_dir: Path, info: dict[str, Any]) -> list[str]:
    if info.get("hydra") and info["hydra"].get("overrides") is not None:
        return list(info["hydra"]["overrides"])
    path = run_dir / ".hydra" / "overrides.yaml"
    if path.is_file():
        import yaml

        return [str(o) for o in (yaml.safe_load(path.read_text()) or [])]
    return []


def _config(run_dir: Path, info: dict[str, Any]) -> dict[str, Any]:
    if info.get("config"):
        return info["config"]
    path = run_dir / ".hydra" / "config.yaml"
    if path.is_file():
        import yaml

        return yaml.safe_load(path.read_text()) or {}
    return {}


def load_run(metrics_path: Path) -> RunRecord | None:
    """A retrieval run from its ``metrics.json`` (other files named so, e.g. training's, return None)."""
    record = read_json_file(metrics_path)  # a broken run record is named, not skipped as "no runs found"
    if not isinstance(record, dict) or "dataset" not in record or not isinstance(record.get("metrics"), dict):
        return None
    run_dir = metrics_path.parent
    info: dict[str, Any] = {}
    if (run_dir / "run_info.json").is_file():
        info = read_json_file(run_dir / "run_info.json")
    evaluation = run_dir / "evaluation.json"
    scored: dict[str, Any] | None = None
    if evaluation.is_file():  # re-scored metrics (evaluate.py) extend the run's own
        scored = read_json_file(evaluation)
        if not isinstance(scored, dict) or not isinstance(scored.get("metrics", {}), dict):
            raise InputError("expected a JSON object with a 'metrics' object", path=evaluation)
    inputs = {"record": record, "evaluation": scored,
              "info": {"hydra": {"overrides": _overrides(run_dir, info)}, "config": _config(run_dir, info),
                       "started_at": info.get("started_at") or str(int(metrics_path.stat().st_mtime)),
                       "tracking": info.get("tracking") or {}, "git": info.get("git") or {}}}
    if not isinstance(record["metrics"].get("extraction"), dict):  # not recorded: inferred here, where the data is
        from hyperrag.reporting.roles import infer_extraction

        used = record["metrics"].get("models_used")
        llm = used.get("llm") if isinstance(used, dict) else None
        method = str(record.get("method") or "")
        inputs["extraction_inferred"] = infer_extraction(method, flatten(inputs["info"]["config"]), llm)
    return run_from_inputs(run_dir, inputs)


def run_from_inputs(run_dir: Path, inputs: dict[str, Any]) -> RunRecord:
    """A run from what a report reads of it (``inputs``): ``record`` (``metrics.json``), ``evaluation``
    (``evaluation.json`` or ``None``) and ``info`` (``run_info.json``'s overrides, config, start, tracking and git)
    — from the run's directory (:func:`load_run`) or from a report's committed values
    (:mod:`hyperrag.reporting.snapshot`)."""
    record, info, scored = inputs["record"], inputs.get("info") or {}, inputs.get("evaluation")
    metrics = {k: v for k, v in record["metrics"].items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    judge = None
    if scored:
        metrics.update(scored.get("metrics", {}))
        judge = scored.get("llm")  # the judge model of its LLM-judged metrics, if any
    overrides = {}
    for o in _overrides(run_dir, info):
        key, _, value = o.lstrip("+~").partition("=")
        overrides[key] = value
    config = flatten(_config(run_dir, info))
    method = record.get("method") or config.get("method.name") or "?"
    labels = {k: v for k, v in record["metrics"].items() if not isinstance(v, (int, float)) or isinstance(v, bool)}
    tags = run_tags(record["metrics"])
    resolve_causal_classifier(record, labels)
    extraction = labels.get("extraction") if isinstance(labels.get("extraction"), dict) else \
        inputs.get("extraction_inferred")
    if extraction:
        tags += extraction_tags(extraction, labels, tags)
    if judge:
        tags += judge_tags(str(judge), labels)
    run = RunRecord(run_dir, str(method), str(record["dataset"]), metrics, overrides, config,
                    str(info.get("started_at") or ""), (info.get("tracking") or {}).get("group"), tags=tags,
                    labels=labels)
    run.inputs = inputs
    return run


#: the causal classifier role of a CDF-RAG run whose ``auto`` found no trained checkpoint
AUTO_RULE_PRIORS = "rule priors (auto: no trained pair classifier found)"


def resolve_causal_classifier(record: dict[str, Any], labels: dict[str, Any]) -> None:
    """The causal classifier a run used, in place of the ``auto`` setting it was started with: the role is recorded
    before the retriever looks for a checkpoint (``auto: newest models/causal_pair/* ..., else rule priors``), and
    the run's record names what it found (CDF-RAG's ``classifier``: the checkpoint, or ``None`` for the rule
    priors). Runs that record no ``classifier`` keep the setting."""
    used = labels.get("models_used")
    if not isinstance(used, dict) or "classifier" not in record:
        return
    role = used.get("causal_classifier")
    if not isinstance(role, str) or not role.startswith("auto:"):
        return
    found = record.get("classifier")
    labels["models_used"] = {**used, "causal_classifier": f"{found} (auto)" if found else AUTO_RULE_PRIORS}


def extraction_tags(extraction: dict[str, Any], labels: dict[str, Any], tags: list[str]) -> list[str]:
    """The extraction role (where the graph's triples came from), recorded in ``models_used``; an extraction
    model other than the one the paper names (``paper_models.extraction``) makes the run 'substituted models'."""
    from hyperrag.reporting.roles import extraction_id, extraction_model
    from hyperrag.reporting.run_info import substituted_roles

    labels["models_used"] = {**(labels.get("models_used") or {}), "extraction": extraction_id(extraction)}
    model = extraction_model(extraction)
    named = (labels.get("paper_models") or {}).get("extraction")
    if model is None or not substituted_roles({"extraction": named}, {"extraction": model}):
        return []
    labels["substituted_roles"] = [*(labels.get("substituted_roles") or []), "extraction"]
    if labels.get("models") != "substituted" and "substituted models" not in tags:
        labels["models"] = "substituted"
        return ["substituted models"]
    return []


def judge_tags(judge: str, labels: dict[str, Any]) -> list[str]:
    """The judge of ``evaluate.py``'s LLM-judged metrics: its tag, recorded in ``models_used``; a judge other than
    the one the paper names (``paper_models.judge``) makes the run 'substituted models'."""
    from hyperrag.reporting.run_info import substituted_roles

    labels["models_used"] = {**(labels.get("models_used") or {}), "judge": judge}
    tags = [f"judge: {judge}"]
    if substituted_roles({"judge": (labels.get("paper_models") or {}).get("judge")}, {"judge": judge}):
        labels["substituted_roles"] = [*(labels.get("substituted_roles") or []), "judge"]
        if labels.get("models") != "substituted":
            labels["models"] = "substituted"
            tags.append("substituted models")
    return tags


def find_runs(specs: str | list[str] | tuple[str, ...]) -> list[RunRecord]:
    """Every retrieval run under the given directories / globs (searched recursively)."""
    if isinstance(specs, str):
        specs = [specs]
    found: set[Path] = set()
    for spec in specs:
        paths = [Path(p) for p in glob.glob(str(spec), recursive=True)] if glob.has_magic(str(spec)) else [Path(spec)]
        for p in paths:
            if p.is_file() and p.name == "metrics.json":
                found.add(p)
            elif p.is_dir():
                found.update(m for m in p.rglob("metrics.json") if "wandb" not in m.parts)
    # a run's own sub-runs (a cross-fitted run's fold-K/ directories) are parts of it, not runs of their own
    run_dirs = {m.parent for m in found}
    found = {m for m in found if not any(parent in run_dirs for parent in m.parent.parents)}
    runs = [r for r in (load_run(p) for p in sorted(found)) if r is not None]
    return label_runs(runs)


def label_runs(runs: list[RunRecord]) -> list[RunRecord]:
    """Fill each run's ``variant``: the override keys whose values differ across the collection, and the method
    preset (``method.name`` of its YAML) where one method runs under several presets (``hyperrag_paper`` and
    ``hyperrag_paper_single_step`` are both ``hyperrag``)."""
    keys = sorted({k for r in runs for k in r.overrides if not _SKIP_KEYS.match(k)})
    for key in keys:
        values = {r.overrides.get(key, str(r.config.get(key, "default"))) for r in runs}
        if len(values) > 1:
            for r in runs:
                r.variant[key] = r.overrides.get(key, str(r.config.get(key, "default")))
    for method in {r.method for r in runs}:
        same = [r for r in runs if r.method == method]
        presets = {str(r.config.get("method.name", method)) for r in same}
        if len(presets) > 1:
            for r in same:
                r.variant["preset"] = str(r.config.get("method.name", method))
    return runs


def _natural(text: str) -> list[Any]:
    return [float(t) if re.fullmatch(r"-?\d+(\.\d+)?", t) else t for t in re.split(r"(-?\d+(?:\.\d+)?)", text)]


def sort_key(run: RunRecord) -> tuple[Any, ...]:
    rank = METHOD_ORDER.index(run.method) if run.method in METHOD_ORDER else len(METHOD_ORDER)
    return rank, run.method, [str(x) if isinstance(x, str) else f"{x:020.6f}" for x in _natural(run.variant_text)]


def latest_only(runs: list[RunRecord]) -> list[RunRecord]:
    """One run per (label, dataset): the most recently started."""
    best: dict[tuple[str, str], RunRecord] = {}
    for r in sorted(runs, key=lambda r: r.started):
        best[(r.label, r.dataset)] = r
    return sorted(best.values(), key=sort_key)
