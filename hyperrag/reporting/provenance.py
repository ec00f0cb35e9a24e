"""Which code printed a report, and whether that code is still the tree's.

Every report carries a line of its own ``printed by: git <sha>``: the commit of the code that printed it. A report
is *current* when no commit after ``<sha>`` changed the reporting code (:data:`REPORTING_PATHS`: the modules that
turn a report's committed values into its text; changes elsewhere in the tree do not stale a report):

    from hyperrag.reporting.provenance import stale_reason
    stale_reason(Path("reports/catrag_table/report.md"))   # None: current; else why not

A report whose per-query values are lost cannot be re-printed: its first line says it predates the current
statistics (:data:`PREDATES`), and it carries no ``printed by`` line.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

#: the code that prints a report from its committed values (paths relative to the repository root); a commit
#: changing any of them stales every report printed before it
REPORTING_PATHS = (
    "report.py",
    "hydra_configs/report.yaml",
    "hyperrag/reporting/report.py",
    "hyperrag/reporting/collect.py",
    "hyperrag/reporting/snapshot.py",
    "hyperrag/reporting/provenance.py",
    "hyperrag/reporting/paper_rows.py",
    "hyperrag/reporting/published.py",
    "hyperrag/reporting/published",
    "hyperrag/reporting/significance.py",
    "hyperrag/reporting/roles.py",
    "hyperrag/reporting/run_info.py",  # substituted_roles: the judge and extraction roles are checked at print time
    "hyperrag/reporting/tables.py",
    "hyperrag/reporting/plots.py",
    "hyperrag/reporting/ceiling.py",
    "hyperrag/reporting/cost.py",
    "hyperrag/reporting/csv_log.py",
    "hyperrag/eval/intervals/__init__.py",
    "hyperrag/eval/per_query.py",
)
PRINTED_BY = "printed by: git "
#: the first line of a report that today's code cannot re-print (its per-query values were not kept)
PREDATES = ("> **Predates the current statistics**: printed before the current reporting code, and its runs' "
            "per-query values were not kept, so it cannot be re-printed; its intervals, tests and comparisons with "
            "the papers are not today's. Rerun its experiment and `python report.py runs=<dir>` to replace it.")
_PRINTED_RE = re.compile(r"^printed by: git ([0-9a-f]{7,40})( \+ uncommitted changes)?$", re.MULTILINE)
REPO_ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str, root: Path = REPO_ROOT) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30,
                          check=True).stdout.strip()


def printed_by_line(root: Path = REPO_ROOT) -> str:
    """``printed by: git <sha>`` of the checkout's HEAD, `` + uncommitted changes`` when the reporting code differs
    from it (such a report is never current); ``printed by: git unknown`` outside a git checkout."""
    try:
        sha = _git("rev-parse", "HEAD", root=root)
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", *REPORTING_PATHS, root=root)
    except (OSError, subprocess.SubprocessError):
        return PRINTED_BY + "unknown"
    return PRINTED_BY + sha + (" + uncommitted changes" if dirty else "")


def printed_by(text: str) -> tuple[str, bool] | None:
    """The commit a report's text says printed it and whether the reporting code had uncommitted changes;
    ``None`` when it names none."""
    match = _PRINTED_RE.search(text)
    return None if match is None else (match.group(1), bool(match.group(2)))


def last_reporting_change(root: Path = REPO_ROOT) -> str:
    """The newest commit (of HEAD's history) that changed any of :data:`REPORTING_PATHS`."""
    return _git("log", "-1", "--format=%H", "HEAD", "--", *REPORTING_PATHS, root=root)


def stale_reason(report: Path, root: Path = REPO_ROOT) -> str | None:
    """Why a committed report is not current (``None``: it is, or it says in its first line that it predates the
    current statistics and so claims nothing current)."""
    text = report.read_text()
    if text.startswith(PREDATES):
        return None
    found = printed_by(text)
    if found is None:
        return "no 'printed by: git <sha>' line and no first line saying it predates the current statistics"
    sha, dirty = found
    if dirty:
        return f"printed by {sha[:10]} with uncommitted changes to the reporting code"
    last = last_reporting_change(root)
    try:
        _git("merge-base", "--is-ancestor", last, sha, root=root)
    except subprocess.CalledProcessError:
        return (f"printed by {sha[:10]}, older than (or not descended from) {last[:10]}, the last change to the "
                "reporting code: re-print it with `python report.py --all`")
    return None
