"""HugRAG's Table 4 readers: MS MARCO QnA (columnar release or records) and QASC (release JSONL), through the
paper_data registry; bad rows name the file, record / line and field."""

import json

import pytest

from hyperrag.data.msmarco import read_msmarco
from hyperrag.data.paper_data import PAPER_DATASETS, paper_dataset
from hyperrag.data.qasc import read_qasc
from hyperrag.errors import InputError

MSMARCO = {
    "query_id": {"0": 101, "1": 102, "2": 103},
    "query": {"0": "what is a brine pool", "1": "who founded norland bank", "2": "why is the sky blue"},
    "passages": {
        "0": [{"passage_text": "A brine pool is a volume of brine on the sea floor.", "is_selected": 1, "url": "u"},
              {"passage_text": "Shared passage.", "is_selected": 0, "url": "v"}],
        "1": [{"passage_text": "Shared passage.", "is_selected": 1, "url": "v"}],
        "2": [{"passage_text": "Rayleigh scattering.", "is_selected": 0, "url": "w"}]},
    "answers": {"0": ["A volume of brine collected in a seafloor depression."], "1": ["Ilse Varga"],
                "2": ["No Answer Present."]},
    "wellFormedAnswers": {"0": "[]", "1": ["Norland Bank was founded by Ilse Varga."], "2": "[]"},
}

QASC = [
    {"id": "q1", "question": {"stem": "What do plants need to grow?", "choices": [
        {"text": "sunlight", "label": "A"}, {"text": "darkness", "label": "B"}]}, "answerKey": "A",
     "fact1": "Plants need light to make food.", "fact2": "Sunlight is light."},
    {"id": "q2", "question": {"stem": "What is light?", "choices": [
        {"text": "energy", "label": "A"}, {"text": "matter", "label": "B"}]}, "answerKey": "A",
     "fact1": "Sunlight is light.", "fact2": "Light is energy."},
]


def test_msmarco_columnar_release(tmp_path):
    path = tmp_path / "msmarco.json"
    path.write_text(json.dumps(MSMARCO))
    ds = read_msmarco(path)
    assert [q.id for q in ds.queries] == ["101", "102"]  # "No Answer Present." left out
    assert len(ds.corpus) == 3  # the shared passage once
    assert ds.queries[0].gold_ids == ("msmarco-0",) and ds.queries[1].gold_ids == ("msmarco-1",)
    assert ds.queries[1].answers == ("Ilse Varga", "Norland Bank was founded by Ilse Varga.")


def test_msmarco_records_and_errors(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"query_id": 7, "query": "q?", "passages": [{"passage_text": "p", "is_selected": 1}],
                                "answers": ["a"]}) + "\n" + json.dumps({"query_id": 8, "query": "q2?",
                                                                        "passages": "oops", "answers": ["b"]}) + "\n")
    with pytest.raises(InputError, match="passages") as err:
        read_msmarco(path)
    assert "rows.jsonl:2" in str(err.value)  # the file and its line


def test_qasc_release_jsonl(tmp_path):
    path = tmp_path / "qasc.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in QASC) + "\n")
    ds = read_qasc(path)
    assert len(ds.corpus) == 3  # "Sunlight is light." shared
    q1, q2 = ds.queries
    assert q1.options == ("sunlight", "darkness") and q1.answer_index == 0 and q1.answers == ("sunlight",)
    assert q1.gold_ids == ("qasc-0", "qasc-1") and q2.gold_ids == ("qasc-1", "qasc-2")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**QASC[0], "answerKey": "H"}) + "\n")
    with pytest.raises(InputError, match="answerKey"):
        read_qasc(bad)


def test_registry_reads_them_and_names_holisqa_domains(tmp_path):
    (tmp_path / "msmarco.json").write_text(json.dumps(MSMARCO))
    (tmp_path / "qasc.jsonl").write_text("\n".join(json.dumps(r) for r in QASC) + "\n")
    assert all(PAPER_DATASETS[n].reader_issue is None for n in ("msmarco", "qasc"))
    assert paper_dataset(tmp_path, "msmarco").name == "msmarco" and len(paper_dataset(tmp_path, "qasc").queries) == 2
    for domain in ("medicine", "computer_science", "business", "biology", "psychology"):
        entry = PAPER_DATASETS[f"holisqa_{domain}"]
        assert entry.files[0] == f"{domain}/all_abstracts.txt"  # the release first (issue 49)
        assert ("jsonl", (f"holisqa/{domain}/queries.jsonl", f"holisqa/{domain}/corpus.jsonl")) in entry.alternates


@pytest.mark.slow  # a retrieve.py multirun in a subprocess (~15 s): in .ci/run's slow call
def test_hugrag_table_command_runs_the_datasets_present(tmp_path):
    """HugRAG's table has no MuSiQue: its command runs on MS MARCO and QASC fixtures in their releases' layouts and
    names the eight missing datasets (baseline row only; substituted models, oracle: offline)."""
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    data = tmp_path / "paper_data"
    data.mkdir()
    (data / "msmarco.json").write_text(json.dumps(MSMARCO))
    (data / "qasc.jsonl").write_text("\n".join(json.dumps(r) for r in QASC) + "\n")
    sweep = tmp_path / "multirun"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline",
               HYPERRAG_CACHE=os.environ.get("HYPERRAG_CACHE", str(tmp_path / "cache")))
    proc = subprocess.run([sys.executable, "retrieve.py", "-m", "experiment=hugrag_table", f"paper_data={data}",
                           "models=offline", "llm=oracle", "tracking=none", "method=bm25", "shared_graph=null",
                           f"hydra.sweep.dir={sweep}"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sum(x.startswith("missing dataset holisqa_") for x in proc.stderr.splitlines()) == 5
    done = {json.loads(p.read_text())["dataset"] for p in sweep.rglob("metrics.json")}
    assert done == {"msmarco", "qasc"}
