"""The cyclic collector is paused while OpenIE tables are built, and always restored."""

from __future__ import annotations

import gc

import pytest

from hyperrag.data import read_openie, sample_dataset
from hyperrag.errors import InputError
from hyperrag.utils.collector import paused_collector


def test_paused_collector_restores_the_previous_state():
    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_collector():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collector():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


def test_read_openie_runs_with_the_collector_paused_and_restores_it(tmp_path, monkeypatch):
    from hyperrag.data import openie

    ds = sample_dataset()
    seen = []
    real_load = openie.load_json
    monkeypatch.setattr(openie, "load_json", lambda path: seen.append(gc.isenabled()) or real_load(path))
    records = read_openie(ds.openie_path, ds.corpus)
    assert seen == [False] and gc.isenabled() and len(records.triples) == len(ds.corpus)
    bad = tmp_path / "openie.json"
    bad.write_text('{"docs": []}')
    with pytest.raises(InputError):
        read_openie(bad, ds.corpus)
    assert gc.isenabled()
