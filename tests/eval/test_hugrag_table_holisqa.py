"""HugRAG's Table 3 commands (``experiment=hugrag_table``, then ``evaluate.py ... eval_caps=hugrag_table``) on a tiny
HolisQA fixture in its layout (``holisqa/<domain>/{queries,corpus}.jsonl``; ``paper_format`` holds only MuSiQue).

Every LLM step — the shared GraphRAG-style extraction, module summaries, gates, the causal path identification, the
answers, and the judge — is the **scripted fake server** (a test double speaking the OpenAI protocol on loopback;
``tests.llm.fake_server``): the test checks the commands' wiring (one row per method, the paper preset's prompts
and S*-only answer, the same evaluator caps for every method, HolisQA's full-answer F1), not a model's quality."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

from tests.hierarchy.fake_llm import paper_figure, prompt_of, schema_text
from tests.llm.fake_server import FakeOpenAIServer
from tests.test_evaluate_entry import compose_evaluate, evaluate
from tests.test_evaluate_entry import judge as judge_reply
from tests.test_retrieve_entry import compose_retrieve, retrieve

CORPUS = [
    {"id": "bio-p1", "title": "Phosphorus limitation in oil palm",
     "text": ("Under phosphorus limitation, oil palm roots raise acid phosphatase activity. Acid phosphatase "
              "releases phosphate from organic compounds in the soil.")},
    {"id": "bio-p2", "title": "Pti-interacting kinase",
     "text": ("Pti-interacting kinase activity rises in tolerant oil palm genotypes. The kinase signals root growth "
              "when phosphate is scarce.")},
    {"id": "bio-p3", "title": "Mycorrhizal fungi",
     "text": "Mycorrhizal fungi extend the root surface. They help plants take up phosphate from poor soils."},
    {"id": "bio-p4", "title": "Leaf chlorophyll",
     "text": "Chlorophyll content in leaves falls when nitrogen is scarce. Yellow leaves are the visible sign."},
]
QUERIES = [
    {"id": "holisqa-bio-00001", "question": "How do oil palm roots respond to phosphorus limitation?",
     "answers": [("Oil palm roots raise acid phosphatase activity under phosphorus limitation. Acid phosphatase "
                  "releases phosphate from organic compounds in the soil.")], "gold_ids": ["bio-p1"]},
    {"id": "holisqa-bio-00002", "question": "Which kinase activity rises in tolerant oil palm genotypes?",
     "answers": [("Pti-interacting kinase activity rises in tolerant genotypes. It signals root growth when phosphate "
                  "is scarce.")], "gold_ids": ["bio-p2"]},
]
# the GraphRAG-style extraction the scripted server returns per passage (by a word of its text)
ENTITIES = {"acid phosphatase": ["oil palm", "acid phosphatase", "phosphate"],
            "Pti-interacting": ["Pti-interacting kinase", "oil palm", "phosphate"],
            "Mycorrhizal": ["mycorrhizal fungi", "root surface", "phosphate"],
            "Chlorophyll": ["chlorophyll", "nitrogen", "yellow leaves"]}


def write_fixture(root: Path) -> Path:
    domain = root / "holisqa" / "biology"
    domain.mkdir(parents=True)
    (domain / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    (domain / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in QUERIES))
    return root


def scripted(body: dict) -> str:
    """SCRIPTED TEST SERVER: one reply per task, chosen by the reply schema it asks for."""
    spec, prompt = schema_text(body), prompt_of(body)
    figure = paper_figure(body)  # HugRAG's prompts=paper: Figs 5/7/9 as printed, no schema
    if figure == "9":  # causal gate: the bare token
        return "yes"
    if figure == "5":  # causal path identification: the first two items shown
        ids = re.findall(r"^([NME]\d+) \|", prompt, re.MULTILINE)
        return json.dumps({"precise": ids[:2], "ct_precise": ids[2:3], "p_answer": "acid phosphatase"})
    if figure == "7":  # the answer: free text
        return "Oil palm roots raise acid phosphatase activity. It releases phosphate."
    if '"relations"' in spec and '"entities"' in spec:  # openie_graphrag (the shared graph)
        names = next((v for k, v in ENTITIES.items() if k in prompt), ["oil palm"])
        return json.dumps({"entities": [{"name": n, "type": "concept", "description": f"{n} in the passage"}
                                        for n in names],
                           "relations": [{"source": a, "target": b, "description": "related", "strength": 5}
                                         for a, b in pairwise(names)]})
    if '"title"' in spec and '"keywords"' in spec:  # module summary
        return json.dumps({"title": "Module", "summary": prompt[-300:], "keywords": ["k"]})
    if '"yes"' in spec:  # causal gate (Fig 9: one token)
        return json.dumps({"answer": "yes"})
    if "ct_precise" in spec:  # causal path identification (Fig 5): the first two items shown
        ids = re.findall(r"^([NME]\d+) \|", prompt, re.MULTILINE)
        return json.dumps({"precise": ids[:2], "ct_precise": ids[2:3], "p_answer": "acid phosphatase"})
    if '"short_answer"' in spec:  # an explanatory answer (HugRAG's Fig 7 and the shared reader)
        return json.dumps({"answer": "Oil palm roots raise acid phosphatase activity. It releases phosphate.",
                           "short_answer": "acid phosphatase", "supporting_ids": []})
    if '"attributed_ids"' in spec:  # context recall: a reference statement is attributed iff its first word is
        context = prompt.split("Context:")[1].split("Reference answer statements:")[0].lower()  # in the context
        items = re.findall(r'<item id="(S\d+)">\n(\S+)', prompt)
        return json.dumps({"attributed_ids": [i for i, word in items if word.lower() in context]})
    return judge_reply(body)  # the judge: claims, their support, answer relevancy's questions


@pytest.mark.slow  # two retrieve.py runs of the table's preset and evaluate.py, in-process (~100 s on two shared cores)
def test_hugrag_table_commands_on_a_tiny_holisqa(tmp_path):
    paper = write_fixture(tmp_path / "paper_data")
    with FakeOpenAIServer(responder=scripted) as server:
        llm = ["llm=openai_compatible", f"llm.base_url={server.base_url}", "llm.model=scripted-server",
               "llm.show_usage=false", "llm.api_key_env=null"]
        for method in ("bm25", "hugrag_paper"):  # a baseline row with the shared reader, and HugRAG's row
            cfg = compose_retrieve(tmp_path / method, "experiment=hugrag_table", f"paper_data={paper}",
                                   "data.name=holisqa_biology", f"method={method}", "models=offline",
                                   "tracking=none", f"cache_dir={tmp_path / 'cache'}", *llm)
            retrieve.run(cfg)
        prompts = [prompt_of(b) for b in server.requests]
        assert any("-Real Data-" in p for p in prompts)  # the paper's prompts (Figs 9, 5, 7) are the preset's
        assert any("output them in 'precise'" in p for p in prompts)
        assert any("---Answer Format---\nConcise, direct, and neutral." in p for p in prompts)
        cfg = compose_evaluate(tmp_path, f"predictions={tmp_path}/*/run/predictions.jsonl", "eval_caps=hugrag_table",
                               "metrics=[qa,context_recall_claims,answer_relevancy]", *llm)
        records = evaluate.run(cfg)
    by_method = {r["method"]: r for r in records}
    assert set(by_method) == {"bm25", "hugrag"} and all(r["dataset"] == "holisqa_biology" for r in records)
    for r in records:  # the same evaluator caps for every row (eval_caps/hugrag_table.yaml)
        assert (r["context_top_n"], r["context_max_items"], r["context_max_tokens"]) == (3, 8, 1024)
        assert {"f1", "context_recall_claims", "answer_relevancy"} <= set(r["metrics"]), r["metrics"]
    rows = {m: [json.loads(x) for x in (tmp_path / m / "run" / "predictions.jsonl").read_text().splitlines()]
            for m in ("bm25", "hugrag_paper")}
    # HugRAG's answer read S* only (answer_passages 0): every evidence item is a kept row
    for row in rows["hugrag_paper"]:
        kinds = row["details"]["evidence_kinds"]
        assert kinds and set(kinds) == {"row"} and row["details"]["answer_ok"]
    # HolisQA's F1 scores the full answer (its gold answers are 2-4 sentences), not the short one
    for m in rows:
        assert json.loads((tmp_path / m / "run" / "metrics.json").read_text())["metrics"]["f1_answer"] == "full"
