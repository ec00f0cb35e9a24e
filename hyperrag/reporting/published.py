"""The papers' published numbers, typed from ``../shared/papers`` into ``hyperrag/reporting/published/*.yaml``.

One YAML file per paper (``catrag``, ``hyperrag``, ``hugrag``, ``cdfrag``; ``hipporag2`` for the HippoRAG 2 numbers
the others quote). A report prints a table's rows as ``paper (published)`` reference rows beside ours:

    from hyperrag.reporting.published import tables_for_experiment
    for table in tables_for_experiment("catrag_table"):          # CatRAG Tables 2-4
        for row in table.rows:                                   # row.method: our method name, or None
            row.values["musique"]["recall@5"]                    # as printed (percent, or a fraction)

File schema (every field is checked; a bad file stops with one line naming the file and the field)::

    paper: "<title as printed> (<authors>, <year>)"
    file: <the paper's text in ../shared/papers>
    tables:
      - id: <paper>_table<N> | <paper>_fig<N>[_<part>]   # unique over all files
        experiment: <hydra_configs/experiment/<name>.yaml that reproduces it> | null
        table: "Table 2"                                 # as the paper numbers it
        where: "§5 Results, Table 2"                     # section (+ page where the text shows pages)
        caption: "..."                                   # short
        setting: "..."                                   # models / protocol the paper states for it
        note: "..."                                      # optional: how it was typed, what was inferred
        scale: percent | fraction                        # how ratio metrics are printed (default percent)
        values_from_plot: false                          # true: values only in a plot, rows: []
        metrics: {"<paper's column name>": <our metric key>}     # keys of KNOWN_METRICS
        sizes: {<dataset>: {queries: 1000, passages: 11656}}     # the paper's query / corpus sizes (required for
                                                         #   a table with an experiment: every dataset of its
                                                         #   rows); null: the paper does not state it;
                                                         #   corpus_chars: a corpus size in characters
        sizes_note: "..."                                # optional: where the sizes come from, what is unstated
        rows:
          - label: "HippoRAG 2"                          # as printed
            method: hipporag2 | null                     # hydra_configs/method/<name>.yaml, null if we have none
            variant: null                                # an ablation / stage name, a backbone, a setting
            values: {<dataset>: {<metric key>: <value as printed> | null}}   # null: printed '—' / 'N/A'
            note: "..."                                  # optional
            uncertain: "..."                             # optional: why a value may be misread or inferred

Datasets are keys of :data:`KNOWN_DATASETS`; a row's metric keys must be among its table's ``metrics``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hyperrag.errors import InputError

PUBLISHED_DIR = Path(__file__).with_name("published")

#: Our metric keys: key -> (what it is, whether it is a ratio that ``scale`` applies to).
KNOWN_METRICS: dict[str, tuple[str, bool]] = {
    **{f"recall@{k}": (f"passage recall at {k}", True) for k in (2, 5, 10)},
    **{f"fcr@{k}": (f"full-chain retrieval at {k}: every gold passage in the top {k}", True) for k in (2, 5, 10)},
    "em": ("exact match", True),
    "f1": ("token F1 of the answer", True),
    "precision": ("token precision of the answer (beside F1, CDF-RAG)", True),
    "recall": ("token recall of the answer (beside F1, CDF-RAG)", True),
    "match_acc": ("gold answer contained in the response (HyperRAG's Match-Acc)", True),
    "judge_acc": ("LLM-judged accuracy (HyperRAG's GPT-Acc)", True),
    "jsr": ("joint success rate: full chain retrieved and answer correct (CatRAG)", True),
    "accuracy": ("accuracy: multiple-choice option / HoVer label / answer correct (CDF-RAG)", True),
    "context_recall_claims": ("Ragas-style context recall (HugRAG's CR)", True),
    "answer_relevancy": ("Ragas answer relevancy (HugRAG's AR)", True),
    "groundedness": ("LLM-judged claim support of the answer", True),
    "groundedness_span": ("answer sentences traced by span alignment to the evidence (CDF-RAG §4.2, Fig. 3)", True),
    "groundedness_emb": ("answer sentences' best sentence-embedding cosine with the evidence (CDF-RAG §4.3, Table 3)",
                         True),
    "hallucination_rate": ("share of responses flagged as hallucinated", True),
    "context_relevance": ("mean SBERT cosine of question and retrieved items (CDF-RAG)", True),
    "crc": ("causal retrieval coverage (CDF-RAG)", True),
    "srs": ("semantic refinement score: cosine of original and refined query (CDF-RAG)", True),
    "ccd": ("causal chain depth, in hops (CDF-RAG)", False),
    "latency_seconds": ("mean total time per query, seconds", False),
    "seed_latency_seconds": ("mean time per query to the PPR seeds, seconds (CatRAG Table 6)", False),
    "edge_weighting_latency_seconds": ("mean time per query of dynamic edge weighting, seconds (CatRAG)", False),
    "api_cost_usd_per_1000_queries": ("LLM API cost per 1,000 queries, US dollars (CatRAG Table 6)", False),
    "llm_calls_per_query": ("LLM calls per query", False),
    "tokens_per_query": ("LLM tokens per query (HyperRAG Fig. 3)", False),
    "s_ppr": ("PPR-weighted node strength S_ppr, mean over queries (CatRAG Eq. 4, Fig. 2)", False),
    "hub_mass": ("share of the top entities' PPR mass on super-hubs, top 1% by strength (CatRAG §6.1)", True),
    "hyperbolic_distance_max": ("largest Poincaré distance, query to its top-k passages (HyperRAG Table 3)", False),
    "hyperbolic_distance_min": ("smallest Poincaré distance, query to its top-k passages", False),
    "hyperbolic_distance_mean": ("mean Poincaré distance, query to its top-k passages", False),
    "euclidean_distance_max": ("largest Euclidean distance, query to its top-k passages", False),
    "euclidean_distance_min": ("smallest Euclidean distance, query to its top-k passages", False),
    "euclidean_distance_mean": ("mean Euclidean distance, query to its top-k passages", False),
    "num_nodes": ("graph nodes (HugRAG Tables 5-6)", False),
    "num_edges": ("graph edges", False),
    "num_modules": ("hierarchy modules, all levels", False),
    **{f"modules_l{i}": (f"hierarchy modules at level L{i}", False) for i in range(4)},
    "corpus_chars": ("corpus size in characters", False),
    "reachability": ("share of queries with a gold node in the retrieved subgraph (HugRAG Fig. 13)", True),
    "depth_weighted": ("depth-weighted reachability 1 / (1 + min hops) (HugRAG Fig. 13)", True),
    "coverage": ("share of a query's gold nodes retrieved (HugRAG Fig. 13)", True),
    "min_hops": ("mean fewest hops to a retrieved gold node (HugRAG Fig. 13)", False),
    "mean_f1_cr_ar": ("mean of F1, context recall and answer relevancy (HugRAG Fig. 4)", True),
}

#: Dataset names: the HippoRAG 2 release's, HoVer, and the other papers' sets in lower case.
KNOWN_DATASETS: dict[str, str] = {
    "musique": "MuSiQue (HippoRAG 2 release)",
    "2wikimultihopqa": "2WikiMultiHopQA (HippoRAG 2 release; HugRAG's 'TwoWiki' sample)",
    "hotpotqa": "HotpotQA (HippoRAG 2 release; HugRAG's own sample)",
    "nq": "Natural Questions (HippoRAG 2 release; HugRAG's own sample)",
    "popqa": "PopQA (HippoRAG 2 release)",
    "hover": "HoVer, 3-4-hop claims (CatRAG)",
    "msmarco": "MS MARCO (HugRAG)",
    "qasc": "QASC (HugRAG)",
    "holisqa_medicine": "HolisQA, Medicine (HugRAG)",
    "holisqa_computer_science": "HolisQA, Computer Science (HugRAG)",
    "holisqa_business": "HolisQA, Business (HugRAG)",
    "holisqa_biology": "HolisQA, Biology (HugRAG)",
    "holisqa_psychology": "HolisQA, Psychology (HugRAG)",
    "cosmosqa": "CosmosQA (CDF-RAG)",
    "adversarialqa": "AdversarialQA (CDF-RAG)",
    "medqa": "MedQA (CDF-RAG)",
    "medmcqa": "MedMCQA (CDF-RAG)",
    "unspecified": "the paper does not name the dataset (HyperRAG Table 3)",
}

_ID = re.compile(r"^[a-z0-9]+_(table|fig)[0-9a-z_]*$")


class PublishedRow(BaseModel):
    """One printed row: a method (or a method in one setting) and its values per dataset and metric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1)
    method: str | None = None
    variant: str | None = None
    values: dict[str, dict[str, float | None]]
    note: str | None = None
    uncertain: str | None = None

    @field_validator("values")
    @classmethod
    def _known_keys(cls, values: dict[str, dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
        for dataset, metrics in values.items():
            if dataset not in KNOWN_DATASETS:
                raise ValueError(f"unknown dataset '{dataset}' (known: {', '.join(KNOWN_DATASETS)})")
            if not metrics:
                raise ValueError(f"dataset '{dataset}' has no values")
            for key in metrics:
                if key not in KNOWN_METRICS:
                    raise ValueError(f"unknown metric key '{key}' under '{dataset}' (see KNOWN_METRICS)")
        return values


class PublishedTable(BaseModel):
    """A table or figure of a paper, with the paper it comes from (``paper``, ``file``: the file's top level)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paper: str = Field(min_length=1)
    file: str = Field(min_length=1)
    id: str = Field(pattern=_ID.pattern)
    experiment: str | None
    table: str = Field(min_length=1)
    where: str = Field(min_length=1)
    caption: str = Field(min_length=1)
    setting: str = Field(min_length=1)
    note: str | None = None
    scale: Literal["percent", "fraction"] = "percent"
    values_from_plot: bool = False
    metrics: dict[str, str]
    rows: list[PublishedRow]
    #: the paper's query and passage counts (or corpus characters) per dataset, ``None`` where the paper does not
    #: state one: a run of another size, or of a size the paper does not state, is not comparable to its rows
    sizes: dict[str, dict[Literal["queries", "passages", "corpus_chars"], int | None]] = Field(default_factory=dict)
    sizes_note: str | None = None

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, metrics: dict[str, str]) -> dict[str, str]:
        for name, key in metrics.items():
            if key not in KNOWN_METRICS:
                raise ValueError(f"'{name}' maps to unknown metric key '{key}' (see KNOWN_METRICS)")
        return metrics

    @field_validator("sizes")
    @classmethod
    def _known_size_datasets(cls, sizes: dict[str, dict[str, int | None]]) -> dict[str, dict[str, int | None]]:
        for dataset in sizes:
            if dataset not in KNOWN_DATASETS:
                raise ValueError(f"unknown dataset '{dataset}' (known: {', '.join(KNOWN_DATASETS)})")
        return sizes

    @model_validator(mode="after")
    def _rows_match_table(self) -> PublishedTable:
        if self.values_from_plot and self.rows:
            raise ValueError("values_from_plot: true takes no rows (the values are only in the plot)")
        if not self.values_from_plot and not self.rows:
            raise ValueError("no rows: type the printed values, or set values_from_plot: true")
        if not self.values_from_plot and not self.metrics:
            raise ValueError("no metrics: map the paper's column names to our metric keys")
        unsized = [d for d in self.datasets if d not in self.sizes]
        if self.experiment is not None and unsized:
            raise ValueError(f"no sizes for {', '.join(unsized)}: give the paper's query / passage counts (null "
                             "where the paper does not state one) — a run is compared with the paper only at its size")
        ours = set(self.metrics.values())
        seen: set[tuple[str, str | None]] = set()
        for i, row in enumerate(self.rows):
            if (row.label, row.variant) in seen:
                raise ValueError(f"rows[{i}]: label '{row.label}' with variant {row.variant!r} appears twice")
            seen.add((row.label, row.variant))
            for dataset, values in row.values.items():
                for key in values:
                    if key not in ours:
                        raise ValueError(f"rows[{i}] ('{row.label}'): metric '{key}' under '{dataset}' is not "
                                         f"one of the table's metrics {sorted(ours)}")
        return self

    @property
    def datasets(self) -> list[str]:
        """The datasets any row has values for, in first-seen order."""
        return list(dict.fromkeys(d for row in self.rows for d in row.values))

    def rows_for_method(self, method: str) -> list[PublishedRow]:
        """The rows whose ``method`` is ``method`` (several when the paper varies a setting)."""
        return [row for row in self.rows if row.method == method]

    def as_percent(self, metric: str, value: float | None) -> float | None:
        """A printed value in percent, as our metrics are: a ratio printed as a fraction is x100; values of
        non-ratio metrics (seconds, hops, counts, distances) and ``None`` come back unchanged."""
        if value is None or self.scale == "percent" or not KNOWN_METRICS[metric][1]:
            return value
        return value * 100.0


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (PyYAML keeps the last one silently)."""


def _mapping_without_duplicates(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key '{key}' given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _read_yaml(path: Path) -> Any:
    try:
        loader = _UniqueKeyLoader(path.read_text(encoding="utf-8"))  # a SafeLoader: plain data only
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise InputError(f"not valid YAML: {err.problem or err}", path=path,
                         line=None if mark is None else mark.line + 1) from err


def load_file(path: str | Path) -> list[PublishedTable]:
    """The tables of one paper's YAML file.

    Raises:
        InputError: the file is not valid YAML or breaks the schema (one line naming the file and the field).
    """
    path = Path(path)
    doc = _read_yaml(path)
    if not isinstance(doc, dict):
        raise InputError("expected a mapping with paper, file and tables", path=path)
    for key in ("paper", "file", "tables"):
        if key not in doc:
            raise InputError("missing", path=path, field=key)
    extra = sorted(set(doc) - {"paper", "file", "tables"})
    if extra:
        raise InputError("unknown top-level field (expected paper, file, tables)", path=path, field=extra[0])
    if not isinstance(doc["tables"], list) or not doc["tables"]:
        raise InputError("expected a non-empty list of tables", path=path, field="tables")
    tables = []
    for i, entry in enumerate(doc["tables"]):
        if not isinstance(entry, dict):
            raise InputError("expected a mapping", path=path, field=f"tables[{i}]")
        for key in ("paper", "file"):
            if key in entry:
                raise InputError(f"'{key}' belongs at the top of the file", path=path, field=f"tables[{i}].{key}")
        try:
            tables.append(PublishedTable.model_validate({**entry, "paper": doc["paper"], "file": doc["file"]}))
        except ValidationError as err:
            first = err.errors()[0]
            message = str(first["msg"]).removeprefix("Value error, ")
            raise InputError(message, path=path, field=_field(("tables", i, *first["loc"]))) from err
    return tables


def load_published(directory: str | Path | None = None) -> list[PublishedTable]:
    """Every table of every ``*.yaml`` in ``directory`` (default: the package's ``published/`` folder), in file
    name order.

    Raises:
        InputError: a bad file, or a table id used twice (the second file and its field are named).
    """
    root = PUBLISHED_DIR if directory is None else Path(directory)
    tables: list[PublishedTable] = []
    first_file: dict[str, Path] = {}
    for path in sorted(root.glob("*.yaml")):
        for i, table in enumerate(load_file(path)):
            if table.id in first_file:
                raise InputError(f"table id '{table.id}' is already used in {first_file[table.id].name}",
                                 path=path, field=f"tables[{i}].id")
            first_file[table.id] = path
            tables.append(table)
    return tables


def tables_for_experiment(name: str, tables: list[PublishedTable] | None = None) -> list[PublishedTable]:
    """The published tables that ``experiment=<name>`` reproduces (from :func:`load_published` unless given)."""
    return [t for t in (load_published() if tables is None else tables) if t.experiment == name]
