"""One writer per index directory (hyperrag/index/lock.py): concurrent writers land one after the other, a second
writer that waits too long stops with one line naming the holder, a kill -9 frees the lock and leaves the previous
generation readable, and readers never wait nor read half a generation."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus
from hyperrag.index.__main__ import main as cli_main
from hyperrag.index.kg_index import load_kg_directory, load_or_build_kg_index
from hyperrag.index.lock import (
    HOLDER_FILE,
    LOCK_FILE,
    IndexBusyError,
    index_entries,
    index_writer,
    lock_settings,
)
from hyperrag.index.update import insert_documents
from tests.conftest import REPO_ROOT
from tests.index.test_update import GRAPH, split_sample
from tests.reliability.doubles import HashEncoder

ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@contextmanager
def holding_lock(index: Path, label: str, seconds: float = 120) -> Iterator[subprocess.Popen]:
    """Another process holds ``index``'s writer lock as ``label`` (up to ``seconds``) while the block runs; yields
    it once the lock is held, killed on exit."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from hyperrag.index.lock import index_writer
        with index_writer({str(index)!r}, 0, {label!r}):
            print("held", flush=True)
            time.sleep({seconds})
    """)], cwd=REPO_ROOT, env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
# Writers run in processes forked from this one (modules already imported: no start-up cost), one torch thread
# each, as DataLoader workers do.
FORK = multiprocessing.get_context("fork")
SLEEP = 0.3  # seconds each encode call of a writer takes


class SlowEncoder(HashEncoder):
    """The test double encoder, slowed down: a second writer started at once finds the lock held meanwhile."""

    def __init__(self, sleep: float) -> None:
        super().__init__()
        self.sleep = sleep

    def encode(self, texts, desc="encode"):
        time.sleep(self.sleep)
        return super().encode(texts, desc)


def insert_part(index: Path, lo: int, hi: int, work: Path, go: Path, out: Path) -> None:
    """A writer process: insert passages [lo, hi) of the sample's tail once ``go`` exists; record its times."""
    torch.set_num_threads(1)
    _, new, new_openie, _ = split_sample(work)
    part = Corpus(new.passages[lo:hi], source=f"part {lo}-{hi}")
    oie = OpenIERecords(new_openie.entities[lo:hi], new_openie.triples[lo:hi], 0, f"part {lo}-{hi}")
    while not go.exists():
        time.sleep(0.005)
    t0 = time.time()
    result = insert_documents(index, part, oie, SlowEncoder(SLEEP))
    out.write_text(json.dumps({"start": t0, "end": time.time(), **result.summary()}))


def stalled_insert(index: Path, work: Path, marker: Path) -> None:
    """A writer process that stops for good between writing its generation's files and publishing the manifest."""
    from hyperrag.index import update

    def stall(self, *args, **kwargs):
        marker.touch()
        time.sleep(600)

    torch.set_num_threads(1)
    update.IndexDirectory.write_manifest = stall
    _, new, new_openie, _ = split_sample(work)
    insert_documents(index, new, new_openie, HashEncoder())


def built_index(tmp_path) -> Path:
    base, _, _, _ = split_sample(tmp_path)
    return load_or_build_kg_index(base, HashEncoder(), GRAPH, root=tmp_path / "idx").directory


def test_the_lock_setting_comes_from_the_yaml():
    assert lock_settings().timeout_s == 60  # hydra_configs/index_lock/default.yaml


def test_a_commands_lock_settings_reach_writers_given_no_timeout(tmp_path):
    """use_lock_settings (retrieve.py enters it with its composed index_lock node): a writer given no timeout waits
    the command's timeout_s; the YAML's comes back after."""
    from hyperrag.index.lock import LockSettings, use_lock_settings

    index = tmp_path / "idx"
    with use_lock_settings(LockSettings(timeout_s=0.2)):
        assert lock_settings().timeout_s == 0.2
        with use_lock_settings(LockSettings(timeout_s=0.0)):
            assert lock_settings().timeout_s == 0.0
        with index_writer(index, timeout=0):
            other = threading.Thread(target=lambda: waits.append(_waits(index)))
            waits: list[float] = []
            other.start()
            other.join()
        assert 0.2 <= waits[0] < 5
    assert lock_settings().timeout_s == 60


def _waits(index: Path) -> float:
    """How long a writer given no timeout waited before it gave up."""
    t0 = time.monotonic()
    with pytest.raises(IndexBusyError, match="waited 0.2 s"), index_writer(index):
        pass
    return time.monotonic() - t0


def test_two_concurrent_inserts_both_land_one_after_the_other(tmp_path):
    index = built_index(tmp_path)
    go = tmp_path / "go"
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    writers = []
    for (lo, hi), out in zip(((0, 2), (2, 4)), outs):
        (tmp_path / out.stem).mkdir()
        writers.append(FORK.Process(target=insert_part, args=(index, lo, hi, tmp_path / out.stem, go, out)))
        writers[-1].start()
    go.touch()
    for proc in writers:
        proc.join(120)
        assert proc.exitcode == 0
    runs = [json.loads(out.read_text()) for out in outs]
    assert all(r["added_passages"] == 2 for r in runs)
    # both started while the other was writing: the second waited for the first's commit, then read its generation
    assert max(r["start"] for r in runs) < min(r["end"] for r in runs)
    first, second = sorted(runs, key=lambda r: r["end"])
    assert second["end"] - first["end"] >= SLEEP  # the second's (slow) embedding began after the first had finished
    kg = load_kg_directory(index)
    assert len(kg.graph.passage_ids) == 12 and {"p08", "p09", "p10", "p11"} <= set(kg.graph.passage_ids)
    manifest = json.loads((index / "manifest.json").read_text())
    assert [u["op"] for u in manifest["updates"]] == ["insert", "insert"]
    assert cli_main(["verify", "--index", str(index)])["ok"]
    assert not (index / HOLDER_FILE).exists()  # released: the holder record is gone


def test_a_second_writer_stops_with_one_line_naming_the_holder(tmp_path, capsys):
    index = built_index(tmp_path)
    with holding_lock(index, "python -m hyperrag.index insert (test holder)") as holder:
        t0 = time.monotonic()
        with pytest.raises(SystemExit) as exc:
            cli_main(["delete", "--index", str(index), "--ids", "p01", "--lock-timeout", "0.5"])
        waited = time.monotonic() - t0
        assert exc.value.code == 2 and 0.5 <= waited < 10
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert f"pid {holder.pid} on " in err and "python -m hyperrag.index insert (test holder)" in err
        assert str(index) in err and "waited 0.5 s" in err
        with pytest.raises(IndexBusyError, match=f"pid {holder.pid}"):  # the Python API's writers alike
            insert_documents(index, *split_sample(tmp_path / "x")[1:3], HashEncoder(), lock_timeout=0.2)
    assert len(load_kg_directory(index).graph.passage_ids) == 8  # nothing was written meanwhile


def test_kill_9_of_the_writer_frees_the_lock_and_keeps_the_previous_generation(tmp_path):
    """The writer is killed between writing its generation's files and publishing the manifest."""
    index = built_index(tmp_path)
    marker = tmp_path / "writing"
    (tmp_path / "k").mkdir()
    proc = FORK.Process(target=stalled_insert, args=(index, tmp_path / "k", marker))
    proc.start()
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    assert (index / "gen-1").is_dir() and json.loads((index / HOLDER_FILE).read_text())["pid"] == proc.pid
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    assert proc.exitcode == -signal.SIGKILL
    # the previous generation is what readers get, verified
    assert len(load_kg_directory(index).graph.passage_ids) == 8
    assert cli_main(["verify", "--index", str(index)])["ok"]
    # the lock is free at once (no wait), though the dead writer's record is still there
    with index_writer(index, timeout=0):
        pass
    _, new, new_openie, _ = split_sample(tmp_path / "n")
    insert_documents(index, new, new_openie, HashEncoder(), lock_timeout=0)
    assert len(load_kg_directory(index).graph.passage_ids) == 12
    assert sorted(p.name for p in index_entries(index)) == ["gen-2", "manifest.json"]  # half-written gen-1 gone


def test_a_reader_whose_generation_is_collected_under_it_reads_the_new_one(tmp_path, monkeypatch):
    from hyperrag.index import kg_index

    index = built_index(tmp_path)
    _, new, new_openie, _ = split_sample(tmp_path / "n")
    real = kg_index.read_kg_files
    calls = []

    def read_then_lose_the_race(directory, manifest):
        calls.append(manifest["key"])
        if len(calls) == 1:  # a writer publishes gen-1 and collects the files this reader's manifest lists
            insert_documents(index, new, new_openie, HashEncoder())
        return real(directory, manifest)

    monkeypatch.setattr(kg_index, "read_kg_files", read_then_lose_the_race)
    kg = load_kg_directory(index)
    assert len(calls) == 2 and calls[0] != calls[1]  # read again with the new manifest
    assert len(kg.graph.passage_ids) == 12


def test_threads_of_one_process_take_turns_and_nested_writers_reenter(tmp_path):
    index = tmp_path / "idx"
    order: list[str] = []
    with index_writer(index, timeout=0):
        with index_writer(index, timeout=0):  # the API's insert around the index's insert: re-entered, no wait
            order.append("nested")
        other = threading.Thread(target=lambda: order.append(_try(index, 0.2)))
        other.start()
        other.join()
        assert order == ["nested", "busy"]
    assert _try(index, 0) == "held"
    assert (index / LOCK_FILE).exists() and index_entries(index) == []  # the lock's files are not index content


def _try(index: Path, timeout: float) -> str:
    try:
        with index_writer(index, timeout=timeout):
            return "held"
    except IndexBusyError:
        return "busy"


@pytest.mark.slow
def test_two_cli_inserts_at_once_both_land(tmp_path, encoder):
    """The issue's scenario with the real command and embedder: two ``python -m hyperrag.index insert``."""
    from hyperrag.data import sample_dataset
    from hyperrag.index.kg_index import build_kg_directory, graph_settings

    ds = sample_dataset()
    docs = json.loads(ds.openie_path.read_text())["docs"]
    base, _, _, _ = split_sample(tmp_path)
    index = tmp_path / "cli_idx"
    build_kg_directory(index, base.corpus, base.openie_path, encoder, graph_settings())
    procs = []
    for lo, hi in ((8, 10), (10, 12)):
        corpus = tmp_path / f"new{lo}.jsonl"
        corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n"
                                  for p in ds.corpus.passages[lo:hi]))
        openie = tmp_path / f"new{lo}_openie.json"
        openie.write_text(json.dumps({"docs": [{**d, "idx": i} for i, d in enumerate(docs[lo:hi])]}))
        procs.append(subprocess.Popen([sys.executable, "-m", "hyperrag.index", "insert", "--index", str(index),
                                       "--corpus", str(corpus), "--openie", str(openie)], cwd=REPO_ROOT,
                                      env={**ENV, "HYPERRAG_CACHE": os.environ.get("HYPERRAG_CACHE", "")
                                           or str(tmp_path / "cache")},
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1])["added_passages"] == 2
    assert cli_main(["verify", "--index", str(index)])["ok"]
    assert len(load_kg_directory(index).graph.passage_ids) == 12
