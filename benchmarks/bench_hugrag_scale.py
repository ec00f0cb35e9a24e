"""HugRAG's cost against corpus size (the shape of its Fig 4, 5K to 1.5M characters) on 2WikiMultiHopQA slices.

    nice -n 10 python benchmarks/bench_hugrag_scale.py [--chars 5000,20000,...] [--plot reports/hugrag_scale.png]

Each slice is the first passages of ``2wikimultihopqa_corpus/corpus.json`` up to the character target. The corpus
ships no OpenIE file and no LLM is assumed, so the entity graph is an LLM-free *stand-in*: each passage's title and
its YAKE keywords are entities, linked title → keyword ("mentions"). On it the whole LLM-free HugRAG index is built
and timed (KG with embeddings, dedup, Leiden hierarchy to one context window, stand-in module texts and their
embeddings, expansion graph), and ``--queries`` title questions are retrieved (time per query).

The LLM work HugRAG would do on the slice is *counted* (calls) and *estimated* (prompt tokens: the real prompts'
words × 1.3 where they can be built, else the capped input sizes; completion tokens bounded by each task's
``max_tokens``): GraphRAG extraction (one call per passage), module summaries (one per module), causal gates
(Algorithm 2 at this size, the most calls — no gate ever found — and the fewest — every candidate gated —, with and
without the cosine prefilter) and the two calls per query (causal path identification and the answer).

Prints one JSON object last; ``--plot`` draws index / query time and LLM calls against characters.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # hyperrag; this folder (scale_corpus) is on the path too

DEFAULT_CHARS = "5000,20000,50000,150000,500000,1500000"

from scale_corpus import load_rows, slice_passages, stand_in_openie


def tokens(text: str) -> int:
    from hyperrag.hierarchy.tokens import approx_tokens

    return approx_tokens(text)


def message_tokens(task, inputs) -> int:  # type: ignore[no-untyped-def]
    return sum(tokens(m["content"]) for m in task.messages(inputs))


def llm_cost(ret, passages, n_queries: int) -> dict:  # type: ignore[no-untyped-def]
    """LLM calls HugRAG would make on this index, and their estimated tokens."""
    from hyperrag.hierarchy.gates import GateBuilder
    from hyperrag.hierarchy.store import entity_graph
    from hyperrag.llm.tasks.causal_gate import CausalGate
    from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection
    from hyperrag.llm.tasks.module_summary import ModuleSummary
    from hyperrag.llm.tasks.openie_graphrag import GraphExtraction
    from hyperrag.llm.tasks.subgraph_answer import AnswerFromSubgraph

    s = ret.settings
    extraction = GraphExtraction()
    ext_prompt = sum(message_tokens(extraction, {"passage": p.content}) for p in passages)
    summary_overhead = message_tokens(ModuleSummary(), {"entities": ["x"], "max_words": s.summaries.max_words})
    module_tokens = ret.node_tokens[ret.graph.num_entities:]
    sum_prompt = int(sum(summary_overhead + min(s.summaries.input_tokens, int(t)) for t in module_tokens))
    edges = entity_graph(ret.graph, s.hierarchy.edge_types)[0]
    gate_cut = [" ".join(t.split()[: s.gates.text_words]) for t in ret.module_texts]
    per_gate = (message_tokens(CausalGate(), {"a_text": "", "b_text": ""})
                + 2 * (sum(tokens(t) for t in gate_cut) / max(len(gate_cut), 1)))
    gates = {}
    for prefilter in (False, True):
        for verdict in (False, True):
            g = replace(s.gates, prefilter=prefilter, max_calls=None, verifier="none")
            calls = GateBuilder(None, g, None, progress=False).count(ret.tree, ret.module_texts, ret.module_emb,
                                                                     edges, verdict=verdict)["verified"]
            gates[f"prefilter={prefilter} {'most' if not verdict else 'fewest'}"] = {
                "calls": calls, "prompt_tokens": int(calls * per_gate),
                "completion_tokens_max": calls * CausalGate.max_tokens}
    table = s.path_selection.max_rows * s.node_tokens
    query_prompt = (message_tokens(CausalPathSelection(), {"query": "q", "candidates": ["x"]}) + table
                    + message_tokens(AnswerFromSubgraph(), {"question": "q", "evidence": ["x"]})
                    + s.path_selection.max_selected * s.node_tokens + s.path_selection.answer_passages * 150)
    return {
        "extraction": {"calls": len(passages), "prompt_tokens": ext_prompt,
                       "completion_tokens_max": len(passages) * extraction.max_tokens},
        "summaries": {"calls": ret.tree.num_modules, "prompt_tokens": sum_prompt,
                      "completion_tokens_max": ret.tree.num_modules * ModuleSummary.max_tokens},
        "gates": gates,
        "per_query": {"calls": 2, "prompt_tokens": int(query_prompt),
                      "completion_tokens_max": CausalPathSelection.max_tokens + AnswerFromSubgraph.max_tokens},
        "queries_timed": n_queries}


def plot(results: list[dict], path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["chars"] for r in results]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.plot(x, [r["index_seconds"] for r in results], "o-", color="#d62728", label="index (LLM-free), s")
    a.plot(x, [1000 * r["query_seconds"] for r in results], "s-", color="#1f77b4", label="per query (LLM-free), ms")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("corpus characters")
    a.legend(fontsize=8)
    a.set_title("time (2 CPU cores)")
    cost = [r["llm"] for r in results]
    b.plot(x, [c["extraction"]["calls"] for c in cost], "o-", label="GraphRAG extraction")
    b.plot(x, [c["summaries"]["calls"] for c in cost], "o-", label="module summaries")
    b.plot(x, [c["gates"]["prefilter=False most"]["calls"] for c in cost], "^-", color="#d62728",
           label="gates, Algorithm 2 (most)")
    b.plot(x, [c["gates"]["prefilter=False fewest"]["calls"] for c in cost], "v--", color="#d62728",
           label="gates, Algorithm 2 (fewest)")
    b.plot(x, [c["gates"]["prefilter=True most"]["calls"] for c in cost], "^:", color="#9467bd",
           label="gates with prefilter (most)")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("corpus characters")
    b.set_title("LLM calls to index (counted)")
    b.legend(fontsize=7)
    fig.suptitle("HugRAG cost vs corpus size, 2WikiMultiHopQA slices (LLM-free stand-in graph)")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data")
                    + "/2wikimultihopqa_corpus/corpus.json")
    ap.add_argument("--chars", default=DEFAULT_CHARS)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--plot", default="reports/hugrag_scale.png")
    args = ap.parse_args()

    from hyperrag.config import method_settings
    from hyperrag.data import Corpus, Dataset, Passage, Query
    from hyperrag.embedding import TextEncoder
    from hyperrag.embedding.encoder import default_cache_dir
    from hyperrag.passage_graph.keywords import KeywordSettings, extract_keywords
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    rows = load_rows(args.corpus)
    encoder = TextEncoder()
    work = default_cache_dir() / "bench_hugrag_scale"
    work.mkdir(parents=True, exist_ok=True)
    kw_settings = KeywordSettings(language="en", max_ngram=2, top=8, dedup_threshold=0.9)
    results = []
    for target in (int(c) for c in args.chars.split(",")):
        part = slice_passages(rows, target)
        passages = [Passage(f"2wiki-{i}", r["title"], r["text"]) for i, r in enumerate(part)]
        t0 = time.perf_counter()
        keywords = extract_keywords([p.content for p in passages], kw_settings, cache_dir=work, show_progress=False)
        openie = stand_in_openie(passages, keywords, work / f"openie-{len(passages)}.json")
        extract_s = time.perf_counter() - t0
        queries = [Query(f"q{i}", f"What is known about {passages[j].title}?", (), (passages[j].id,))
                   for i, j in enumerate(range(0, len(passages), max(1, len(passages) // args.queries)))][: args.queries]
        dataset = Dataset(f"2wiki-{len(passages)}", Corpus(passages), queries, openie)
        settings = method_settings("hugrag", extraction="none", index_root=str(work / "index"),
                                   hierarchy={"backend": "cpu"})
        ret = HugRAGRetriever(settings, encoder=encoder, llm=None, device="cpu")
        t0 = time.perf_counter()
        ret.index(dataset)
        index_s = time.perf_counter() - t0
        questions = [q.question for q in queries]
        t0 = time.perf_counter()
        ret.retrieve(questions, 10)
        query_s = (time.perf_counter() - t0) / max(len(questions), 1)
        row = {"chars": sum(len(p.title) + len(p.text) for p in passages), "passages": len(passages),
               "entities": ret.graph.num_entities, "modules": ret.tree.num_modules,
               "levels": int(ret.tree.level.max()) if ret.tree.num_modules else 0,
               "keyword_seconds": round(extract_s, 2), "index_seconds": round(index_s, 2),
               "query_seconds": round(query_s, 4), "llm": llm_cost(ret, passages, len(questions))}
        results.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "llm"}), file=sys.stderr, flush=True)
    out = {"bench": "hugrag_scale", "graph": "YAKE stand-in (LLM-free)", "results": results}
    if args.plot:
        out["plot"] = plot(results, args.plot)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
