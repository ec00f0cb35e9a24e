"""A report's inputs, committed beside it: every run's record and per-query values, so that today's code can
re-print the report without rerunning its experiments.

``reports/<name>/values.json`` = the report's settings (what ``report.py`` was given) and, per run, what the report
read of it: ``metrics.json`` (``record``), ``evaluation.json`` (``evaluation``), ``run_info.json``'s overrides,
config, start, tracking and git (``info``) and the per-query values behind every mean (``per_query``: metric →
query id → value, as :func:`hyperrag.eval.per_query.run_per_query` read them from ``predictions.jsonl`` and
``evaluation.jsonl``).

    python report.py --all                  # re-print every reports/*/report.md from its values.json
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError
from hyperrag.eval.per_query import RunValues
from hyperrag.reporting.collect import RunRecord, label_runs, run_from_inputs

VALUES_FILE = "values.json"
#: the file's layout version: a reader refuses another
VERSION = 1


def save_values(folder: Path, runs: Sequence[RunRecord], settings: dict[str, Any]) -> Path:
    """Write ``<folder>/values.json``: the report's ``settings`` and each run's inputs and per-query values."""
    entries = []
    for r in runs:
        pq = r.per_query
        entries.append({"path": str(r.path), "inputs": r.inputs,
                        "per_query": None if pq is None else {m: {q: float(v) for q, v in vals.items()}
                                                              for m, vals in pq.values.items()}})
    path = folder / VALUES_FILE
    # exact floats (a BCa interval of discrete values moves with the last digit) and the runs' own key order (the
    # order a report lists roles and metrics in)
    path.write_text(json.dumps({"version": VERSION, "settings": settings, "runs": entries}, separators=(",", ":"),
                               default=str) + "\n")
    return path


def load_values(path: str | Path) -> tuple[dict[str, Any], list[RunRecord]]:
    """A report's settings and its runs (labelled as :func:`hyperrag.reporting.collect.find_runs` labels them),
    from its ``values.json``.

    Raises:
        InputError: the file is missing, not JSON, or of another layout version.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the report's values: {err}", path=path) from err
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise InputError(f"expected layout version {VERSION}", path=path, field="version")
    runs = label_runs([run_from_inputs(Path(entry["path"]), entry["inputs"]) for entry in doc["runs"]])
    for run, entry in zip(runs, doc["runs"]):
        pq = entry.get("per_query")
        run._per_query = None if pq is None else RunValues(run.label, None, pq)
    return doc["settings"], runs
