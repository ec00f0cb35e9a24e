"""Cost growth per stage of the LLM-free indexes (issue 21): wall time and peak memory against corpus size.

    nice -n 10 python benchmarks/bench_scale.py                    # 500 .. 6,119 (2Wiki), 12.5K .. 100K synthetic
    python benchmarks/bench_scale.py --quick                       # a small run (real 120 passages, synthetic to 200)
    python benchmarks/bench_scale.py --sizes 1000,4000 --cap 120 --embed-max 500 --ball-epochs 2

Corpus at size ``n``: the first ``n`` passages of ``2wikimultihopqa_corpus/corpus.json`` (6,119), then synthetic
passages (:class:`scale_corpus.SyntheticCorpus`: a random real passage with its name words consistently renamed
from the corpus vocabulary). The corpus has no OpenIE file and no LLM is used: the knowledge graph's triples are
the LLM-free stand-in of ``bench_hugrag_scale.py`` (title → YAKE keyword, "mentions"; labelled stand-in).

Stages, each timed alone (the method's real code; the settings are the method configs' in ``hydra_configs/``):

* ``keywords`` — YAKE keyword sets (HyperRAG's ``keywords`` settings; also the stand-in triples' source);
* ``parse`` — the stand-in OpenIE file read and parsed into entities and facts (``read_openie`` + the parse step
  of ``build_knowledge_graph``; KG index of HippoRAG 2 / CatRAG / HugRAG);
* ``embed`` — all-MiniLM-L6-v2 on the entity names, fact texts and passages the index embeds, cold (an empty
  embedding cache per size), on sizes up to ``--embed-max``; beyond, extrapolated from the per-text rates of the
  largest embedded size (labelled). Every later stage, at every size, runs on **random unit embeddings** (one
  workload family across sizes; their cost does not depend on the vectors' values; synonym and alias links are
  then (almost) empty — said in the JSON);
* ``graph`` — relation and context edges, CSR tables, the ``KnowledgeGraph`` (``build_knowledge_graph``'s edge
  step, synonyms switched off there and timed next);
* ``synonyms`` — synonym kNN over the entity embeddings with the current exact operator
  (``hyperrag/ops/knn.py``, blockwise all-pairs), run through its ``row_range`` shard path so it can stop at the
  cap: a capped or sampled run is extrapolated from the rows done (labelled);
* ``leiden`` — HugRAG's recursive Leiden hierarchy on the entity graph (``build_hierarchy``, CPU backend);
* ``keyword_graph`` — HyperRAG's explicit keyword edges (``keyword_edges``) and key-entity links;
* ``ball`` — HyperRAG's Poincaré ball on the keyword forest (``BallIndex.train``: Lightning + Riemannian Adam,
  ``--ball-epochs`` epochs, saved like ``retrieve.py method=hyperrag`` saves it);
* ``causal_mining`` — CDF-RAG's per-passage causal records: connective / OpenIE candidates, rule priors, no
  classifier, no LLM (``compute_records``);
* ``causal_graph`` — CDF-RAG's causal graph from those records (``assemble_causal_graph``: nodes, edges, alias
  kNN over the node embeddings).

Synthetic sizes: the per-passage text stages (``keywords``, ``causal_mining``, ``embed``) are *not* rerun on the
synthetic passages — their outputs are the source passages' renamed (``status: derived``) and their time is
extrapolated linearly from the per-passage rate at the largest measured size (each passage is processed alone).

Memory: a thread samples the process RSS (``/proc/self/statm``) every 10 ms; per stage ``peak_rss_mb`` (the highest
sample while it ran) and ``rss_delta_mb`` (that minus the RSS when it started). Each size runs in its own process
(``ru_maxrss`` of that process reported too), so nothing of a smaller size is held. ``--cap`` seconds per stage:
a stage past it is stopped (SIGALRM, checked between Python steps) and reported ``capped``; it is not run at larger
sizes (the synonym kNN is sampled there instead). Growth exponents: least squares of log(seconds) on log(passages)
over the measured sizes (all, and the largest four), flagged when above 1.15 (faster than n log n).

Prints one JSON object last; writes it to ``--out`` (reports/scale.json) and the plot to ``--plot``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # hyperrag; this folder (scale_corpus) is on the path too

from scale_corpus import (
    SyntheticCorpus,
    default_corpus_path,
    load_rows,
    real_passages,
    stand_in_openie,
)

STAGES = ("keywords", "parse", "embed", "graph", "synonyms", "leiden", "keyword_graph", "ball", "causal_mining",
          "causal_graph")
PER_PASSAGE = ("keywords", "causal_mining")  # each passage processed alone: linear by construction
DEFAULT_SIZES = "500,1000,2000,4000,6119,12500,25000,50000,100000"
QUICK = {"sizes": "50,100,200", "real": 120, "embed_max": 50, "cap": 60.0, "ball_epochs": 1}
FLAG_EXPONENT = 1.15
SAMPLE_SECONDS = 20.0  # the synonym kNN, once capped: rows timed at larger sizes before extrapolating


# ---- measurement ---------------------------------------------------------------------------------------------
class RSSSampler:
    """Samples this process's resident set size every ``interval`` seconds in a daemon thread."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        """Bytes resident now."""
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self._page

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self.rss()))
            self._stop.wait(self.interval)

    def start(self) -> RSSSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def at(self, t: float) -> int:
        """The last sample taken at or before ``t`` (the current RSS when there is none)."""
        before = [r for s, r in self.samples if s <= t]
        return before[-1] if before else self.rss()

    def peak(self, t0: float, t1: float) -> int:
        """Highest sample in ``[t0, t1]`` (the current RSS when no sample fell inside)."""
        inside = [r for t, r in self.samples if t0 <= t <= t1]
        return max(inside) if inside else self.rss()


class StageCapped(Exception):
    """Raised in the main thread when a stage runs past its cap."""


@contextmanager
def cap_after(seconds: float) -> Iterator[None]:
    """Raise :class:`StageCapped` after ``seconds`` (SIGALRM; takes effect at the next Python step)."""
    def _alarm(signum: int, frame: Any) -> None:
        raise StageCapped(f"past the {seconds:.0f} s cap")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def mb(n_bytes: float) -> float:
    return round(n_bytes / 2**20, 1)


class Stages:
    """Runs and records the stages of one size: seconds, status, memory window, extra figures."""

    def __init__(self, sampler: RSSSampler, cap: float, verbose: bool = True) -> None:
        self.sampler = sampler
        self.cap = cap
        self.verbose = verbose
        self.out: dict[str, dict[str, Any]] = {}

    def record(self, name: str, seconds: float | None, status: str, t0: float, t1: float, rss0: int,
               cpu_seconds: float | None = None, **extra: Any) -> dict[str, Any]:
        """One stage's row: wall ``seconds``, ``cpu_seconds`` (process CPU time, all threads), RSS over
        ``[t0, t1]`` against ``rss0`` (the RSS when it started), the load average, ``extra``."""
        peak = self.sampler.peak(t0, t1)
        row = {"seconds": None if seconds is None else round(seconds, 4), "status": status,
               "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds, 4), "peak_rss_mb": mb(peak), "rss_delta_mb": mb(max(0, peak - rss0)),
               "load_avg_1m": round(os.getloadavg()[0], 2), **extra}
        self.out[name] = row
        if self.verbose:
            print(f"  {name}: {status} {row['seconds']} s (cpu {row['cpu_seconds']}), peak {row['peak_rss_mb']} MB (+{row['rss_delta_mb']})",
                  file=sys.stderr, flush=True)
        return row

    @contextmanager
    def run(self, name: str, status: str = "measured", cap: bool = True, **extra: Any) -> Iterator[dict[str, Any]]:
        """Time the block as stage ``name``; ``extra`` (a dict the block may fill) goes into its record."""
        info: dict[str, Any] = dict(extra)
        rss0, t0, c0 = self.sampler.rss(), time.perf_counter(), time.process_time()
        try:
            with cap_after(self.cap) if cap else _nothing():
                yield info
        except StageCapped as err:
            self.record(name, time.perf_counter() - t0, "capped", t0, time.perf_counter(), rss0,
                        time.process_time() - c0, note=str(err), **info)
            raise
        self.record(name, time.perf_counter() - t0, status, t0, time.perf_counter(), rss0, time.process_time() - c0,
                    **info)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


class RandomUnitEncoder:
    """Random unit vectors in place of sentence embeddings (the stages after ``embed``; labelled in the output).

    Deterministic for a given sequence of calls (one seeded generator). ``calls`` records each call's
    ``(desc, texts, cpu time at start, cpu time at end)``: inside ``build_knowledge_graph`` the first call ends its
    parse step and the last starts its edge step, which gives those two steps' CPU times."""

    model_name = "random-unit"

    def __init__(self, dim: int = 384, seed: int = 0) -> None:
        import torch

        self._dim = dim
        self.model_key = f"random-unit-{dim}-{seed}"
        self._gen = torch.Generator().manual_seed(seed)
        self.calls: list[tuple[str, int, float, float]] = []

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Any, desc: str = "encode") -> Any:
        """N texts → FloatTensor [N, dim], unit rows."""
        import torch

        c0 = time.process_time()
        x = torch.nn.functional.normalize(torch.randn(len(texts), self._dim, generator=self._gen), dim=1)
        self.calls.append((desc, len(texts), c0, time.process_time()))
        return x


# ---- one size ---------------------------------------------------------------------------------------------
def stand_in_triples(passages: list[Any], keywords: list[frozenset[str]]) -> list[list[tuple[str, str, str]]]:
    """The stand-in triples of :func:`scale_corpus.stand_in_openie`, in memory (CDF-RAG's OpenIE input)."""
    out = []
    for p, kws in zip(passages, keywords):
        title = p.title.strip()
        out.append([(title, "mentions", k) for k in sorted(kws) if k.casefold() != title.casefold()])
    return out


class RealArtifacts:
    """The real passages' keyword sets and causal records, kept on disk for the synthetic passages (renamed).

    Written by the run at the size that covers every real passage (its timed outputs); computed untimed, once, when
    a synthetic size comes first."""

    def __init__(self, rows: list[dict], settings: dict[str, Any], work: Path) -> None:
        from hyperrag.utils.hashing import stable_digest

        key = stable_digest(rows, {k: asdict(v) for k, v in settings.items()}, length=12)
        self.folder = work / f"real-{len(rows)}-{key}"

    def save(self, keywords: list[frozenset[str]], records: list[Any]) -> None:
        from hyperrag.causal.records import save_records

        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "keywords.json").write_text(json.dumps([sorted(k) for k in keywords]))
        save_records(self.folder, records)

    def load(self) -> tuple[list[frozenset[str]], list[Any]] | None:
        from hyperrag.causal.records import RECORDS_FILE, PassageRecord

        if not (self.folder / "keywords.json").is_file() or not (self.folder / RECORDS_FILE).is_file():
            return None
        lines = (self.folder / RECORDS_FILE).read_text().splitlines()
        records = [PassageRecord.from_json(json.loads(line)) for line in lines if line.strip()]  # passage order
        keywords = [frozenset(k) for k in json.loads((self.folder / "keywords.json").read_text())]
        return (keywords, records) if len(keywords) == len(records) else None


class SizeRun:
    """Every stage at corpus size ``n`` (see the module docstring), in order; each stage method records itself.

    Args:
        n: passages.
        opts: the command line.
        capped: stages capped at a smaller size (not run again; the synonym kNN is sampled instead).
        sampler: the RSS sampler of this process.
        warm_up: an untimed pass on a few passages that loads every lazily imported library (torch_geometric,
            Lightning, graspologic, pysbd, YAKE's stop words) before the timed pass: nothing is saved.
    """

    def __init__(self, n: int, opts: argparse.Namespace, capped: set[str], sampler: RSSSampler,
                 warm_up: bool = False) -> None:
        from hyperrag.config import method_settings
        from hyperrag.data import Corpus

        self.n, self.opts, self.capped, self.warm_up = n, opts, capped, warm_up
        self.rows = load_rows(opts.corpus)[: opts.real]
        self.real = len(self.rows)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"size{n}-", dir=opts.work))
        self.hyper = method_settings("hyperrag", graph="explicit", implicit_queries="none",
                                     index_root=str(self.tmp / "index"), models_dir=str(self.tmp / "models"),
                                     train={"max_epochs": opts.ball_epochs})
        self.hug = method_settings("hugrag", extraction="none", hierarchy={"backend": "cpu"})
        self.causal = method_settings("cdfrag").causal
        self.stages = Stages(sampler, opts.cap, verbose=not warm_up)
        self.sampler = sampler
        self.synth = SyntheticCorpus(self.rows, seed=opts.seed)
        self.passages = real_passages(self.rows, n)
        self.syn, self.sources, self.mappings = self.synth.passages(n)
        self.passages += self.syn
        self.texts = [p.content for p in self.passages]
        self.corpus = Corpus(self.passages)
        self.encoder = RandomUnitEncoder(seed=opts.seed)
        self.artifacts = RealArtifacts(self.rows, {"keywords": self.hyper.keywords, "causal": self.causal},
                                       Path(opts.work))
        self.real_art: tuple[list[frozenset[str]], list[Any]] | None = None
        self.kg: Any = None
        self.emb: Any = None
        self.keywords: list[frozenset[str]] | None = None
        self.explicit: Any = None
        self.entity: Any = None
        self.records: list[Any] | None = None
        self.out: dict[str, Any] = {
            "passages": n, "real_passages": min(n, self.real), "synthetic_passages": max(0, n - self.real),
            "corpus": "2wiki" if n <= self.real else "2wiki+synthetic", "stages": self.stages.out,
            "load_avg_start": [round(x, 2) for x in os.getloadavg()]}

    # ---- helpers --------------------------------------------------------------------------------------------
    def skipped(self, name: str, why: str, **extra: Any) -> None:
        self.stages.out[name] = {"seconds": None, "status": "skipped", "note": why, **extra}

    def attempt(self, name: str, fn: Any, needs: tuple[str, ...] = ()) -> bool:
        """Run stage ``name`` unless it was capped at a smaller size or an input is missing; False when it did
        not finish (capped now: recorded by :meth:`Stages.run`)."""
        missing = [x for x in needs if getattr(self, x) is None]
        if missing:
            self.skipped(name, f"needs {', '.join(missing)} (an earlier stage did not finish)")
            return False
        if name in self.capped and name not in ("synonyms", "embed"):  # these two say what they would have done
            self.skipped(name, "capped at a smaller size")
            return False
        try:
            fn()
            return True
        except StageCapped:
            return False

    def run(self) -> dict[str, Any]:
        import shutil

        if self.syn:
            self.real_art = self.artifacts.load()
            if self.real_art is None:
                print(f"  computing the {self.real} real passages' keywords and causal records (untimed, once)",
                      file=sys.stderr, flush=True)
                self.real_art = self.compute_real()
                self.artifacts.save(*self.real_art)
        self.attempt("keywords", self.keywords_stage)
        self.attempt("parse", self.parse_and_graph_stages, needs=("keywords",))
        self.attempt("embed", self.embed_stage, needs=("kg",))
        self.attempt("synonyms", self.synonyms_stage, needs=("kg",))
        self.attempt("leiden", self.leiden_stage, needs=("kg",))
        self.attempt("keyword_graph", self.keyword_graph_stage, needs=("keywords",))
        self.attempt("ball", self.ball_stage, needs=("explicit",))
        self.attempt("causal_mining", self.causal_mining_stage, needs=("keywords",))
        self.attempt("causal_graph", self.causal_graph_stage, needs=("records",))
        self.out["max_rss_mb"] = mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        self.out["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.out

    def compute_real(self) -> tuple[list[frozenset[str]], list[Any]]:
        """Keyword sets and causal records of every real passage (untimed)."""
        from hyperrag.causal.records import compute_records
        from hyperrag.passage_graph.keywords import extract_keywords

        real = real_passages(self.rows, self.real)
        keywords = extract_keywords([p.content for p in real], self.hyper.keywords, cache_dir=None,
                                    show_progress=False)
        records, _ = compute_records(real, stand_in_triples(real, keywords), self.causal)
        return keywords, records

    # ---- stages ---------------------------------------------------------------------------------------------
    def keywords_stage(self) -> None:
        """YAKE on every passage (real sizes); the sources' sets renamed (synthetic sizes)."""
        from hyperrag.passage_graph.keywords import extract_keywords

        if self.syn:
            assert self.real_art is not None
            with self.stages.run("keywords", status="derived", note="synthetic passages: the source's YAKE set "
                                 "renamed (not extracted); real passages: as extracted at the real size") as info:
                base = self.real_art[0]
                kw = base + [self.synth.keywords(base[s], m) for s, m in zip(self.sources, self.mappings)]
                info["keywords_per_passage"] = round(sum(map(len, kw)) / self.n, 2)
        else:
            with self.stages.run("keywords", settings=asdict(self.hyper.keywords)) as info:
                kw = extract_keywords(self.texts, self.hyper.keywords, cache_dir=None, show_progress=False)
                info["keywords_per_passage"] = round(sum(map(len, kw)) / self.n, 2)
        self.keywords = kw

    def parse_and_graph_stages(self) -> None:
        """One ``build_knowledge_graph`` call (random unit embeddings, synonyms off): its parse and edge sections
        are the ``parse`` and ``graph`` stages (its own section timers; memory over each section's window)."""
        from hyperrag.data.openie import read_openie
        from hyperrag.graph.build import build_knowledge_graph

        gs = self.hug.graph
        openie_path = stand_in_openie(self.passages, self.keywords, self.tmp / "openie.json")
        rss0, t0, c0 = self.sampler.rss(), time.perf_counter(), time.process_time()
        first_call = len(self.encoder.calls)
        try:
            with cap_after(2 * self.opts.cap):
                openie = read_openie(openie_path, self.corpus)
                t_read = time.perf_counter()
                kg, emb = build_knowledge_graph(self.corpus, openie, self.encoder,
                                                synonym_threshold=gs.synonym_threshold, synonym_topk=gs.synonym_topk,
                                                synonym_min_chars=10**9, fact_template=gs.fact_template)
        except StageCapped as err:
            t1 = time.perf_counter()
            self.stages.record("parse", t1 - t0, "capped", t0, t1, rss0, note=f"parse + graph {err}")
            self.skipped("graph", "capped with parse (one call)")
            raise
        c1 = time.process_time()
        calls = self.encoder.calls[first_call:]
        sec = kg.stats["seconds"]
        t_parse_end = t_read + sec["parse"]
        self.stages.record("parse", (t_read - t0) + sec["parse"], "measured", t0, t_parse_end, rss0,
                           calls[0][2] - c0, read_openie_s=round(t_read - t0, 4), triples=sum(map(len, openie.triples)),
                           entities=kg.num_entities, facts=len(kg.facts), triples_source="LLM-free stand-in")
        t_graph0 = t_parse_end + sec["embed"]
        self.stages.record("graph", sec["edges_and_synonyms"], "measured", t_graph0, time.perf_counter(),
                           self.sampler.at(t_graph0), c1 - calls[-1][3], edges=kg.num_edges, nodes=kg.num_nodes,
                           random_embedding_s=round(sec["embed"], 4))
        self.out.update(entities=kg.num_entities, facts=len(kg.facts))
        self.kg, self.emb = kg, emb

    def embed_stage(self) -> None:
        """all-MiniLM-L6-v2, empty cache, on the texts the index embeds; chunks of each kind in turn, so a capped
        run still has a rate for every kind."""
        kg, gs = self.kg, self.hug.graph
        texts = {"passages": self.texts, "entities": list(kg.entity_names),
                 "facts": [gs.fact_template.format(s=s, r=r, o=o) for s, r, o in kg.facts]}
        counts = {k: len(v) for k, v in texts.items()}
        if self.n > self.opts.embed_max or "embed" in self.capped:
            why = "capped at a smaller size" if "embed" in self.capped else f"above --embed-max {self.opts.embed_max}"
            self.skipped("embed", why, texts=counts)
            return
        from hyperrag.embedding import TextEncoder

        minilm = TextEncoder(device="cpu", cache_dir=self.tmp / "embedding-cache", show_progress=False)
        minilm.encode(["warm-up: the model loads outside the timed stage"])
        chunk = 64  # the encoder's batch: every kind gets a rate within its first few seconds
        done = dict.fromkeys(texts, 0)
        spent = dict.fromkeys(texts, 0.0)
        try:
            with self.stages.run("embed", model=minilm.model_name, texts=counts, texts_done=done,
                                 seconds_by_kind=spent, chunk=chunk):
                while any(done[k] < counts[k] for k in texts):
                    for kind, items in texts.items():
                        if done[kind] < counts[kind]:
                            t = time.perf_counter()
                            minilm.encode(items[done[kind]: done[kind] + chunk], desc=kind)
                            spent[kind] += time.perf_counter() - t
                            done[kind] = min(counts[kind], done[kind] + chunk)
        except StageCapped:
            row = self.stages.out["embed"]
            if all(done[k] for k in texts if counts[k]):
                row["extrapolated_seconds"] = round(sum(counts[k] * spent[k] / done[k] for k in texts if counts[k]), 1)
                row["note"] += "; whole job extrapolated from the texts done, per kind"
            raise
        finally:
            self.stages.out["embed"]["seconds_by_kind"] = {k: round(v, 3) for k, v in spent.items()}

    def synonyms_stage(self) -> None:
        """The exact blockwise kNN over the synonym-eligible entities, one operator block per ``row_range`` call
        (the same work as one call), stopping at the cap; sampled (``SAMPLE_SECONDS``) once capped."""
        import torch

        from hyperrag.graph.build import synonym_eligible
        from hyperrag.graph.knowledge_graph import EdgeType
        from hyperrag.graph.utils import undirected_edges
        from hyperrag.ops.knn import topk_cosine_neighbors

        kg, gs = self.kg, self.hug.graph
        cand = synonym_eligible(kg.entity_names, gs.synonym_min_chars).nonzero().squeeze(1)
        x = self.emb.entity[cand].contiguous()
        rows = int(cand.shape[0])
        block = max(1, min(rows, (1 << 27) // max(rows, 1)))  # the operator's default block
        sampling = "synonyms" in self.capped
        limit = SAMPLE_SECONDS if sampling else self.opts.cap
        info = {"entities": rows, "block_rows": block, "k": gs.synonym_topk,
                "operator": "hyperrag.ops.knn.topk_cosine_neighbors (exact, blockwise)"}
        rss0, t0, c0 = self.sampler.rss(), time.perf_counter(), time.process_time()
        done, parts = 0, []
        while done < rows and time.perf_counter() - t0 < limit:
            hi = min(rows, done + block)
            parts.append(topk_cosine_neighbors(x, gs.synonym_topk, gs.synonym_threshold, row_range=(done, hi)))
            done = hi
        elapsed = time.perf_counter() - t0
        if done < rows:
            cpu = time.process_time() - c0
            self.stages.record("synonyms", elapsed, "sampled" if sampling else "capped", t0, time.perf_counter(),
                               rss0, cpu, rows_done=done, extrapolated_seconds=round(elapsed * rows / max(done, 1), 1),
                               extrapolated_cpu_seconds=round(cpu * rows / max(done, 1), 1),
                               note=f"{done} of {rows} rows in {elapsed:.1f} s, the whole job extrapolated from "
                                    "them; no synonym edges enter the graph at this size", **info)
            return
        if parts:
            src, dst, sim = (torch.cat([p[i] for p in parts]) for i in range(3))
            syn_index, syn_weight = undirected_edges(torch.stack([cand[src], cand[dst]]), sim, kg.num_nodes, "max")
        else:
            syn_index, syn_weight = torch.empty(2, 0, dtype=torch.long), torch.empty(0)
        kind = torch.full((syn_index.shape[1],), EdgeType.SYNONYM, dtype=torch.uint8)
        self.kg = replace(kg, edge_index=torch.cat([kg.edge_index, syn_index], 1),
                          edge_weight=torch.cat([kg.edge_weight, syn_weight.float()]),
                          edge_type=torch.cat([kg.edge_type, kind]))
        t1 = time.perf_counter()
        self.stages.record("synonyms", t1 - t0, "measured", t0, t1, rss0, time.process_time() - c0, rows_done=done,
                           synonym_edges=int(syn_index.shape[1]), **info)

    def leiden_stage(self) -> None:
        """HugRAG's recursive Leiden hierarchy (entity graph, entity texts' tokens, ``build_hierarchy``)."""
        import torch

        from hyperrag.hierarchy import build_hierarchy, count_tokens, entity_graph, entity_texts

        hs = self.hug.hierarchy
        with self.stages.run("leiden") as info:
            ei, w = entity_graph(self.kg, hs.edge_types)
            tokens = torch.tensor(count_tokens(entity_texts(self.kg, hs.entity_text), hs.token_counter))
            hier = build_hierarchy(ei, w, self.kg.num_entities, tokens, hs)
            info.update(entity_graph_edges=int(ei.shape[1]), levels=hier.num_levels,
                        modules=sum(hier.num_modules(level) for level in range(1, hier.num_levels + 1)),
                        leiden_calls=hier.stats.get("leiden_calls"), backend=hier.stats.get("backend"))

    def keyword_graph_stage(self) -> None:
        """HyperRAG's explicit keyword edges and key-entity links (``BallIndex._link_passages``'s two calls)."""
        from hyperrag.passage_graph import key_entity_edges, keyword_edges

        titles = [p.title or "" for p in self.passages]
        with self.stages.run("keyword_graph") as info:
            t = time.perf_counter()
            explicit = keyword_edges(self.keywords, self.hyper.explicit)
            info["keyword_edges_s"] = round(time.perf_counter() - t, 4)
            t = time.perf_counter()
            entity = key_entity_edges(titles, self.texts, self.hyper.key_entity)
            info["key_entity_s"] = round(time.perf_counter() - t, 4)
            info.update(keyword_edges=len(explicit), key_entity_edges=len(entity))
        self.explicit, self.entity = explicit, entity

    def ball_stage(self) -> None:
        """HyperRAG's ball on the keyword forest: ``BallIndex.train`` (fit + checkpoint + graph files)."""
        from hyperrag.hyperbolic.ball_index import BallIndex, PassageTable
        from hyperrag.passage_graph import PassageGraph

        emb = self.emb.passage if self.emb is not None else self.encoder.encode(self.texts, desc="passages")
        table = PassageTable.of(self.passages, emb, self.keywords)
        graph = PassageGraph(len(table), implicit_first=self.hyper.fusion == "implicit_first")
        graph.explicit, graph.entity = self.explicit, self.entity
        ball = BallIndex(self.hyper, table, graph, self.encoder, None, device="cpu")
        t = self.hyper.train
        with self.stages.run("ball", epochs=self.opts.ball_epochs, forest="explicit (keyword edges)",
                             torch_threads=t.torch_threads, batch_size=t.batch_size,
                             num_negatives=t.num_negatives) as info, _quiet():
            run = ball.train(self.tmp / "ball")
            meta = json.loads((self.tmp / "ball" / "meta.json").read_text())
            info.update(relations=meta["relations"], fit_s=round(run.seconds, 3))

    def causal_mining_stage(self) -> None:
        """CDF-RAG's per-passage records (rule priors, no classifier, no LLM); the sources' renamed (synthetic)."""
        from hyperrag.causal.records import compute_records

        if self.syn:
            assert self.real_art is not None
            base = self.real_art[1]
            with self.stages.run("causal_mining", status="derived", note="synthetic passages: the source's "
                                 "records renamed (not mined); real passages: as mined at the real size") as info:
                records = base + [self.synth.records(base[s], p, m)
                                  for s, p, m in zip(self.sources, self.syn, self.mappings)]
                info["accepted_pairs"] = sum(len(r.pairs) for r in records)
        else:
            triples = stand_in_triples(self.passages, self.keywords)
            with self.stages.run("causal_mining", classifier=None, llm=None, scores="rule priors") as info:
                records, counts = compute_records(self.passages, triples, self.causal)
                info.update(candidates=counts["candidates"], accepted_pairs=sum(len(r.pairs) for r in records))
            if self.n == self.real and not self.warm_up:
                self.artifacts.save(self.keywords, records)
        self.records = records

    def causal_graph_stage(self) -> None:
        """CDF-RAG's causal graph from the records (``assemble_causal_graph``; alias kNN on random vectors)."""
        from hyperrag.causal.graph import assemble_causal_graph

        with self.stages.run("causal_graph") as info:
            cg = assemble_causal_graph(self.corpus, self.records, self.encoder, self.causal)
            info.update(nodes=cg.num_nodes, edges=cg.num_edges, alias_links=cg.stats["alias_links"])


@contextmanager
def _quiet() -> Iterator[None]:
    """Lightning's banners and progress bar to /dev/null (stderr of the stage only)."""
    import contextlib

    with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink), contextlib.redirect_stdout(sink):
        yield


def run_size(n: int, opts: argparse.Namespace, capped: set[str], sampler: RSSSampler) -> dict[str, Any]:
    """Warm up on a few passages (untimed), then every stage at size ``n``."""
    warm = argparse.Namespace(**{**vars(opts), "embed_max": 0, "cap": 10**6})
    SizeRun(min(24, opts.real, n), warm, set(), sampler, warm_up=True).run()
    return SizeRun(n, opts, capped, sampler).run()


# ---- growth, extrapolation, plot ----------------------------------------------------------------------------
def fit_exponent(points: list[tuple[int, float]]) -> dict[str, Any] | None:
    """Least squares of log(seconds) on log(passages): ``{"exponent", "r2", "sizes"}`` (None under 2 sizes)."""
    pts = [(n, t) for n, t in points if t and t > 0]
    if len(pts) < 2:
        return None
    xs = [math.log(n) for n, _ in pts]
    ys = [math.log(t) for _, t in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (my + slope * (x - mx))) ** 2 for x, y in zip(xs, ys))
    return {"exponent": round(slope, 3), "r2": round(1 - ss_res / ss_tot, 4) if ss_tot else 1.0,
            "sizes": [n for n, _ in pts]}


def growth(results: list[dict[str, Any]], min_seconds: float) -> dict[str, Any]:
    """Per stage: fits of wall time and of CPU time over every measured size (wall time at least ``min_seconds``)
    and over the largest four. The flag (faster than n log n) reads the CPU-time fits where there are any: on a
    shared machine the load changes between sizes and moves wall time far more than CPU time."""
    fits: dict[str, Any] = {}
    for stage in STAGES:
        rows = [(r["passages"], r["stages"][stage]) for r in results
                if r["stages"].get(stage, {}).get("status") == "measured"
                and (r["stages"][stage]["seconds"] or 0) >= min_seconds]
        out: dict[str, Any] = {}
        for kind, key in (("wall", "seconds"), ("cpu", "cpu_seconds")):
            pts = [(n, row.get(key)) for n, row in rows if row.get(key)]
            out[kind] = fit_exponent(pts)
            out[f"{kind}_largest_four"] = fit_exponent(pts[-4:]) if len(pts) > 4 else None
        basis = "cpu" if out["cpu"] is not None else "wall"
        exps = [f["exponent"] for f in (out[basis], out[f"{basis}_largest_four"]) if f is not None]
        out["exponent"] = out[basis]["exponent"] if out[basis] else None
        out["flag_basis"] = basis
        out["faster_than_n_log_n"] = bool(exps) and max(exps) > FLAG_EXPONENT
        if not exps:
            out["note"] = "fewer than 2 measured sizes"
        fits[stage] = out
    return fits


def extrapolate(results: list[dict[str, Any]]) -> None:
    """Fill ``extrapolated_seconds`` where a per-passage stage or ``embed`` was not measured: linear in passages
    (in texts of each kind for ``embed``) from the largest size with a measured rate, labelled with that size."""
    for stage in PER_PASSAGE:
        measured = [r for r in results if r["stages"].get(stage, {}).get("status") == "measured"]
        if not measured:
            continue
        ref = measured[-1]
        rate = ref["stages"][stage]["seconds"] / ref["passages"]
        cpu_rate = (ref["stages"][stage].get("cpu_seconds") or 0) / ref["passages"]
        for r in results:
            target = r["stages"].get(stage)
            if target is not None and target["status"] != "measured":
                target["extrapolated_seconds"] = round(rate * r["passages"], 3)
                if cpu_rate:
                    target["extrapolated_cpu_seconds"] = round(cpu_rate * r["passages"], 3)
                target["extrapolated_from"] = f"per-passage rate at {ref['passages']} passages (linear)"
    with_rate = [r for r in results if r["stages"].get("embed", {}).get("seconds_by_kind")
                 and all(r["stages"]["embed"]["texts_done"].values())]
    if with_rate:
        ref = with_rate[-1]["stages"]["embed"]
        rate = {k: ref["seconds_by_kind"][k] / max(ref["texts_done"][k], 1) for k in ref["seconds_by_kind"]}
        for r in results:
            target = r["stages"].get("embed")
            if target is not None and target["status"] != "measured" and "texts" in target \
                    and "extrapolated_seconds" not in target:
                target["extrapolated_seconds"] = round(sum(target["texts"][k] * rate[k] for k in rate), 3)
                target["extrapolated_from"] = f"per-text rates at {with_rate[-1]['passages']} passages (linear)"
        for r in with_rate:
            row = r["stages"]["embed"]
            done = sum(row["texts_done"].values())
            row["texts_per_second"] = round(done / max(sum(row["seconds_by_kind"].values()), 1e-9), 1)


def plot(results: list[dict[str, Any]], real: int, path: str) -> str:
    """Log-log wall time, CPU time and peak RSS increase per stage against passages."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"] + ["#000000", "#8c564b"]

    def points(stage: str, key: str, status: tuple[str, ...] = ("measured",)) -> list[tuple[int, float]]:
        return [(r["passages"], r["stages"][stage][key]) for r in results
                if r["stages"].get(stage, {}).get("status") in status and r["stages"][stage].get(key)]

    for i, stage in enumerate(STAGES):
        c = colors[i % len(colors)]
        for ax, key, est_key in ((axes[0], "seconds", "extrapolated_seconds"),
                                 (axes[1], "cpu_seconds", "extrapolated_cpu_seconds")):
            meas = points(stage, key)
            est = sorted(points(stage, est_key, ("capped", "sampled", "skipped", "derived")))
            if meas:
                ax.plot(*zip(*meas), "o-", color=c, label=stage)
            if est:
                ax.plot(*zip(*est), "x--", color=c, alpha=0.7, label=None if meas else f"{stage} (extrapolated)")
        mem = points(stage, "rss_delta_mb", ("measured", "capped", "sampled"))
        if mem:
            axes[2].plot(*zip(*mem), "o-", color=c, label=stage)
    axes[2].plot([r["passages"] for r in results], [r["max_rss_mb"] for r in results], "k^:",
                 label="process max RSS")
    ns = [r["passages"] for r in results]
    for ax in axes[:2]:  # reference slopes through the first size: n and n^2
        lo, hi = min(ns), max(ns)
        ax.plot([lo, hi], [1, hi / lo], color="grey", lw=0.6, ls="-.", label="slope 1")
        ax.plot([lo, hi], [1, (hi / lo) ** 2], color="grey", lw=0.6, ls=":", label="slope 2")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axvline(real, color="grey", lw=0.8, ls=":")
        ax.set_xlabel(f"passages (2Wiki up to {real}, synthetic beyond)")
        ax.legend(fontsize=7, ncol=2)
    axes[0].set_ylabel("seconds (x: extrapolated)")
    axes[0].set_title("wall time per stage")
    axes[1].set_ylabel("CPU seconds, all threads (x: extrapolated)")
    axes[1].set_title("CPU time per stage")
    axes[2].set_ylabel("MB")
    axes[2].set_title("peak RSS increase per stage (10 ms samples)")
    loads = [r["load_avg_start"][0] for r in results if r.get("load_avg_start")]
    load = f", 1-min load average {min(loads):.1f}–{max(loads):.1f} at the sizes' starts" if loads else ""
    fig.suptitle(f"Cost growth of the LLM-free index stages ({os.cpu_count()} CPU cores{load})")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---- orchestration ------------------------------------------------------------------------------------------
def child_main(opts: argparse.Namespace) -> None:
    sampler = RSSSampler().start()
    capped = set(filter(None, opts.capped.split(",")))
    result = run_size(opts.child, opts, capped, sampler)
    sampler.stop()
    print(json.dumps(result))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=default_corpus_path(os.environ.get("HYPERRAG_SHARED_DATA",
                                                                             str(ROOT.parent / "shared" / "data"))))
    ap.add_argument("--sizes", default=None, help=f"passages per run (default {DEFAULT_SIZES})")
    ap.add_argument("--real", type=int, default=None, help="real passages used at most (default: the whole corpus)")
    ap.add_argument("--cap", type=float, default=None, help="seconds per stage before it is stopped (default 300)")
    ap.add_argument("--embed-max", type=int, default=None, help="largest size embedded with MiniLM (default 1000)")
    ap.add_argument("--ball-epochs", type=int, default=None, help="Poincaré ball epochs per size (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-fit-seconds", type=float, default=0.05, help="times below this are left out of fits")
    ap.add_argument("--quick", action="store_true", help="a small run: " + json.dumps(QUICK))
    ap.add_argument("--in-process", action="store_true", help="run the sizes in this process (memory figures "
                                                               "then include what earlier sizes left)")
    ap.add_argument("--out", default="reports/scale.json")
    ap.add_argument("--plot", default="reports/scale.png")
    ap.add_argument("--resume", default=None, help="a JSON this benchmark wrote: keep its sizes, run the others")
    ap.add_argument("--work", default=None, help="scratch folder (default $HYPERRAG_CACHE/bench_scale)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--capped", default="", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    base = QUICK if opts.quick else {"sizes": DEFAULT_SIZES, "real": None, "embed_max": 1000, "cap": 300.0,
                                     "ball_epochs": 2}
    for key, value in base.items():
        if getattr(opts, key) is None:
            setattr(opts, key, value)
    if opts.work is None:
        from hyperrag.embedding.encoder import default_cache_dir

        opts.work = str(default_cache_dir() / "bench_scale")
    return opts


def main(argv: list[str] | None = None) -> None:
    opts = parse_args(argv)
    if not Path(opts.corpus).is_file():
        print(f"--corpus: {opts.corpus} not found (the 2Wiki corpus of ../shared/data)", file=sys.stderr)
        raise SystemExit(2)
    Path(opts.work).mkdir(parents=True, exist_ok=True)
    total_rows = len(load_rows(opts.corpus))
    opts.real = min(opts.real or total_rows, total_rows)
    if opts.child is not None:
        child_main(opts)
        return
    try:
        sizes = sorted({int(s) for s in str(opts.sizes).split(",") if s.strip()})
    except ValueError:
        print(f"--sizes: expected comma-separated integers, got {opts.sizes!r}", file=sys.stderr)
        raise SystemExit(2) from None
    if not sizes or sizes[0] < 2:
        print("--sizes: every size must be at least 2 passages", file=sys.stderr)
        raise SystemExit(2)
    t_start, load_start = time.perf_counter(), os.getloadavg()
    results: list[dict[str, Any]] = []
    if opts.resume:  # sizes already run (their own load averages stay with them)
        results = [r for r in json.loads(Path(opts.resume).read_text())["results"] if r["passages"] in sizes]
    capped = {stage for r in results for stage, rec in r["stages"].items() if rec["status"] in ("capped", "sampled")}
    done = {r["passages"] for r in results}
    sampler = RSSSampler().start() if opts.in_process else None
    for n in sizes:
        if n in done:
            continue
        print(f"size {n}", file=sys.stderr, flush=True)
        if opts.in_process:
            row = run_size(n, opts, capped, sampler)
        else:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(n), "--capped", ",".join(capped),
                   "--corpus", opts.corpus, "--real", str(opts.real), "--cap", str(opts.cap),
                   "--embed-max", str(opts.embed_max), "--ball-epochs", str(opts.ball_epochs),
                   "--seed", str(opts.seed), "--work", opts.work]
            backstop = opts.cap * (len(STAGES) + 2) + 600  # a stage stuck in native code past its SIGALRM
            try:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=backstop, cwd=ROOT, check=False)
            except subprocess.TimeoutExpired:
                print(f"size {n}: killed after {backstop:.0f} s", file=sys.stderr)
                break
            lines = proc.stdout.strip().splitlines()
            if proc.returncode != 0 or not lines:
                print(f"size {n}: child failed (exit {proc.returncode})", file=sys.stderr)
                break
            row = json.loads(lines[-1])
        results.append(row)
        for stage, rec in row["stages"].items():
            if rec["status"] in ("capped", "sampled"):
                capped.add(stage)
    if sampler is not None:
        sampler.stop()
    results.sort(key=lambda r: r["passages"])
    extrapolate(results)
    fits = growth(results, opts.min_fit_seconds)
    summary = {
        "bench": "scale", "date": time.strftime("%Y-%m-%d"), "machine": {
            "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "load_avg_start": [round(x, 2) for x in load_start], "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        "wall_seconds": round(time.perf_counter() - t_start, 1),
        "settings": {"sizes": sizes, "real_passages": opts.real, "cap_s": opts.cap, "embed_max": opts.embed_max,
                     "ball_epochs": opts.ball_epochs, "seed": opts.seed, "in_process": opts.in_process,
                     "resumed_from": opts.resume, "runs_from_resume": sorted(done),
                     "triples": "LLM-free stand-in: title -> YAKE keyword ('mentions')",
                     "embeddings_after_embed_stage": "random unit vectors (384-d) at every size",
                     "memory": "RSS sampled every 10 ms from /proc/self/statm; each size in its own process"
                               if not opts.in_process else "RSS sampled every 10 ms; all sizes in one process"},
        "results": results, "growth": fits,
        "faster_than_n_log_n": sorted(s for s, f in fits.items() if f.get("faster_than_n_log_n")),
    }
    if opts.plot and results:
        summary["plot"] = plot(results, opts.real, opts.plot)
    if opts.out:
        Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
