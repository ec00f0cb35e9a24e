"""The papers' published numbers (hyperrag/reporting/published/*.yaml): every file loads, every key and name it
uses exists here, values verified twice against the papers are what the files hold, and a bad file stops with
one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from hyperrag.errors import InputError
from hyperrag.reporting.published import (
    KNOWN_DATASETS,
    KNOWN_METRICS,
    PublishedTable,
    load_file,
    load_published,
    tables_for_experiment,
)
from tests.conftest import REPO_ROOT

CONFIGS = REPO_ROOT / "hydra_configs"
PAPERS = REPO_ROOT.parent / "shared" / "papers"


@pytest.fixture(scope="module")
def tables() -> dict[str, PublishedTable]:
    return {t.id: t for t in load_published()}


def value(table: PublishedTable, label: str, dataset: str, metric: str, variant: str | None = None) -> float | None:
    (row,) = [r for r in table.rows if r.label == label and (variant is None or r.variant == variant)]
    return row.values[dataset][metric]


def test_every_paper_has_a_file_and_every_table_loads(tables):
    assert {t.id.split("_")[0] for t in tables.values()} == {"catrag", "hyperrag", "hugrag", "cdfrag", "hipporag2"}
    assert len(tables) == len(load_published())  # ids are unique across files
    for wanted in ("catrag_table2", "catrag_table3", "catrag_table4", "catrag_table5", "catrag_table6",
                   "hyperrag_table1", "hyperrag_table2", "hyperrag_table3", "hyperrag_fig3_right",
                   "hugrag_table3", "hugrag_table4", "hugrag_fig3",
                   "cdfrag_table1", "cdfrag_table2", "cdfrag_table3", "cdfrag_table4", "cdfrag_table5"):
        assert wanted in tables


def test_metric_keys_and_datasets_are_the_documented_ones(tables):
    for t in tables.values():
        assert set(t.metrics.values()) <= set(KNOWN_METRICS), t.id
        for row in t.rows:
            assert set(row.values) <= set(KNOWN_DATASETS), (t.id, row.label)
            for metrics in row.values.values():
                assert set(metrics) <= set(t.metrics.values()), (t.id, row.label)


def test_methods_experiments_and_variants_name_existing_configs(tables):
    for t in tables.values():
        if t.experiment is not None:
            assert (CONFIGS / "experiment" / f"{t.experiment}.yaml").is_file(), (t.id, t.experiment)
        for row in t.rows:
            if row.method is not None:
                assert (CONFIGS / "method" / f"{row.method}.yaml").is_file(), (t.id, row.label, row.method)
    # ablation rows name the ablation / stage config their experiment sweeps
    for row in tables["catrag_table5"].rows:
        assert (CONFIGS / "ablation" / f"{row.variant}.yaml").is_file(), row.variant
    for row in tables["cdfrag_table3"].rows:
        assert (CONFIGS / "cdfrag_stage" / f"{row.variant}.yaml").is_file(), row.variant


@pytest.mark.skipif(not PAPERS.is_dir(), reason="../shared/papers is not on this machine")
def test_each_file_names_a_paper_text_that_exists(tables):
    for t in tables.values():
        assert (PAPERS / t.file).is_file(), (t.id, t.file)


def test_values_quoted_in_the_papers_prose(tables):
    """Cells the papers repeat in their text (each read from the table and from the prose)."""
    cat2, cat3, cat4 = tables["catrag_table2"], tables["catrag_table3"], tables["catrag_table4"]
    assert value(cat4, "CatRAG", "musique", "fcr@5") == 34.6        # "an FCR of 34.6% on MuSiQue"
    assert value(cat4, "CatRAG", "2wikimultihopqa", "fcr@5") == 67.6
    assert value(cat4, "CatRAG", "hover", "jsr") == 31.1             # "+18.7% / +21.5% relative" over 26.2 / 25.6
    assert value(cat4, "HippoRAG 2", "hover", "jsr") == 26.2
    assert value(cat2, "CatRAG", "musique", "recall@5") == 64.9      # "surpasses text-embedding-3-small by 9.5%"
    assert value(cat2, "text-embedding-3-small", "musique", "recall@5") == 55.4
    assert value(cat3, "PropRAG", "musique", "f1") == 46.1            # "46.1% vs. 45.0%"
    assert value(cat3, "CatRAG", "hover", "accuracy") == 69.0
    assert value(cat3, "None", "hover", "accuracy") is None           # printed '—'
    abl = tables["catrag_table5"]                                     # "a 3.2% drop on HoVer"
    assert value(abl, "CatRAG", "hover", "recall@5") - value(abl, "w/o Symbolic anchor", "hover", "recall@5") \
        == pytest.approx(3.2)
    cdf1, cdf5 = tables["cdfrag_table1"], tables["cdfrag_table5"]
    assert value(cdf1, "CDF-RAG", "medmcqa", "accuracy", "GPT-4") == 0.94   # §4.1
    assert value(cdf5, "CDF-RAG", "medmcqa", "f1", "GPT-4") == 0.92         # B.4.1: "an F1 of 0.920 and HR of 0.04"
    assert value(cdf5, "CDF-RAG", "medmcqa", "hallucination_rate", "GPT-4") == 0.04
    assert value(tables["cdfrag_table2"], "CDF-RAG", "adversarialqa", "crc", "GPT-4") == 0.89  # §4.2
    assert value(tables["cdfrag_table3"], "+ Causal Graph", "adversarialqa", "ccd") == 1.92    # "1.70 to 1.92"


def test_values_checked_against_another_table(tables):
    """HyperRAG's Table 2 repeats Table 1's GPT-Acc; CDF-RAG's Tables 4-5 repeat Table 1's accuracy."""
    h1, h2 = tables["hyperrag_table1"], tables["hyperrag_table2"]
    for ds in ("hotpotqa", "2wikimultihopqa", "musique"):
        assert value(h2, "Semantic retrieval", ds, "judge_acc") == value(h1, "Retrieval (Top-3)", ds, "judge_acc")
        assert value(h2, "HyperRAG", ds, "judge_acc") == value(h1, "HyperRAG (single-step)", ds, "judge_acc")
    acc = {(r.label, r.variant, ds): v["accuracy"] for r in tables["cdfrag_table1"].rows for ds, v in r.values.items()}
    quality = [(r, ds, v) for t in ("cdfrag_table4", "cdfrag_table5") for r in tables[t].rows
               for ds, v in r.values.items()]
    assert len(quality) == 95  # 4 datasets x 4 backbones x 6 methods, less one row the extraction lost
    for row, ds, v in quality:
        assert v["accuracy"] == acc[(row.label, row.variant, ds)], (row.label, row.variant, ds)
    assert value(tables["hugrag_table4"], "HugRAG (ours)", "nq", "f1") == 49.50


def test_reconstructed_and_damaged_values_are_flagged(tables):
    (multi,) = [r for r in tables["hyperrag_table1"].rows if r.label == "HyperRAG (multi-step)"]
    assert multi.uncertain and "reconstructed" in multi.uncertain
    (gym,) = [r for r in tables["cdfrag_table4"].rows if r.label == "Gym-RAG" and r.variant == "GPT-4"]
    assert gym.values["cosmosqa"]["f1"] is None and gym.uncertain
    assert all(r.uncertain for r in tables["catrag_table6"].rows)


def test_plot_only_entries_have_no_rows_and_lookups(tables):
    assert tables["hyperrag_fig3_right"].values_from_plot and not tables["hyperrag_fig3_right"].rows
    assert [t.id for t in tables_for_experiment("catrag_table")] == ["catrag_table2", "catrag_table3",
                                                                      "catrag_table4"]
    assert [t.id for t in tables_for_experiment("catrag_ablation")] == ["catrag_table5"]
    assert tables_for_experiment("no_such_experiment") == []
    assert [r.label for r in tables["catrag_table2"].rows_for_method("dense")] == [
        "Contriever", "GTR (T5-base)", "text-embedding-3-small"]


def test_as_percent_scales_ratios_printed_as_fractions_only(tables):
    cdf = tables["cdfrag_table3"]
    assert cdf.as_percent("f1", 0.86) == pytest.approx(86.0)
    assert cdf.as_percent("ccd", 2.02) == 2.02               # hops, not a ratio
    assert cdf.as_percent("f1", None) is None
    assert tables["catrag_table2"].as_percent("recall@5", 64.9) == 64.9


GOOD = """\
paper: "A paper (someone, 2025)"
file: 002_9551f4bd0e857b37.txt
tables:
  - id: x_table1
    experiment: null
    table: "Table 1"
    where: "§1"
    caption: "c"
    setting: "s"
    metrics: {"Recall@5": recall@5}
    rows:
      - label: "A"
        method: null
        variant: null
        values:
          musique: {recall@5: 1.0}
"""


def _write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_good_file_loads(tmp_path):
    (table,) = load_file(_write(tmp_path, GOOD))
    assert table.paper.startswith("A paper") and table.rows[0].values == {"musique": {"recall@5": 1.0}}


@pytest.mark.parametrize(("old", "new", "field", "says"), [
    ("{recall@5: 1.0}\n", "{recall@50: 1.0}\n", "tables[0].rows[0].values", "unknown metric key 'recall@50'"),
    ("musique: {", "musiq: {", "tables[0].rows[0].values", "unknown dataset 'musiq'"),
    ('{"Recall@5": recall@5}', '{"Recall@5": f1}', "tables[0]", "metric 'recall@5' under 'musique'"),
    ("    caption: \"c\"\n", "", "tables[0].caption", "Field required"),
    ("{recall@5: 1.0}", "{recall@5: high}", "tables[0].rows[0].values.musique.recall@5", "number"),
    ("    experiment: null\n", "    experiment: null\n    values_from_plot: true\n", "tables[0]",
     "takes no rows"),
    ("id: x_table1", "id: Table-1", "tables[0].id", "pattern"),
    ("        variant: null\n", "        variant: null\n        colour: red\n", "tables[0].rows[0].colour",
     "Extra inputs"),
])
def test_a_bad_file_stops_with_one_line_naming_file_and_field(tmp_path, old, new, field, says):
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(InputError) as err:
        load_file(path)
    line = err.value.one_line()
    assert "\n" not in line and str(path) in line and f"field '{field}'" in line and says in line, line


def test_a_key_given_twice_is_refused_with_its_line(tmp_path):
    path = _write(tmp_path, GOOD.replace("musique: {recall@5: 1.0}", "musique: {recall@5: 1.0}\n"
                                                                     "          musique: {recall@5: 2.0}"))
    with pytest.raises(InputError, match=r"x\.yaml:17: .*key 'musique' given twice"):
        load_file(path)


def test_bad_yaml_and_a_table_id_used_twice(tmp_path):
    with pytest.raises(InputError, match=r"bad\.yaml:\d+: not valid YAML"):
        load_file(_write(tmp_path, GOOD.replace("tables:", "tables: ["), "bad.yaml"))
    (tmp_path / "bad.yaml").unlink()
    _write(tmp_path, GOOD, "a.yaml")
    _write(tmp_path, GOOD, "b.yaml")
    with pytest.raises(InputError, match=r"b\.yaml: field 'tables\[0\]\.id': table id 'x_table1' is already used "
                                         r"in a\.yaml"):
        load_published(tmp_path)
