"""How a bench reports: one JSON object, written to ``--out`` when given and printed as the last line (shared by the
CDF-RAG benches, ``bench_hugrag_gate_judges.py`` and ``cv_hugrag_budget.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def emit(result: dict[str, Any], out: str | None) -> None:
    """The bench's result: written to ``out`` (when given) and printed as the last line, one JSON object."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
