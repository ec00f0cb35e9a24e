"""Which code printed a report, and whether that code is still the tree's.

Every report carries a line of its own ``printed by: git <sha>``: the commit of the code that printed it. A report
is *current* when no commit after ``<sha>`` changed the reporting code (:data:`REPORTING_PATHS`: the modules that
turn a report's committed values into its text; changes elsewhere in the tree do not stale a report):

    from hyperrag.reporting.provenance import stale_reason
    stale_reason(Path("reports/catrag_table/report.md"))   # None: current; else why not

A report whose per-query values are lost cannot be re-printed: its first line says it predates the current
statistics (:data:`PREDATES`), and it carries no ``printed by`` line.

The printing code is one half; the runs a report was printed from are the other. Each run records the commit of its
code (``run_info.json``: ``git.commit``, ``git.dirty``). A report's runs are *older than the tree* when the code
that produced them (:func:`run_code_paths`: the runner and metric code, the oracle's answers for an oracle-read
run, the method's retriever module, the classes it derives from and the ``hyperrag.retrievers`` modules it imports,
its method and experiment YAML) differs between the run's commit and HEAD, when a run was made with uncommitted
changes, or when its commit is not in the repository. The oracle's answers (``answers.py``: one function per task) are
compared per task: an oracle-read run predates a change there only when the change reaches a task the run called
(:func:`oracle_answer_changes`: the task's function and every module-level definition it reaches, the dispatch
included; a run that records no per-task usage is compared file by file). A report then says so in a line of its own right under its
``printed by`` line (:data:`RUNS_PREDATE` + :func:`runs_stale_reason`), computed when it is printed; the staleness
test recomputes it and fails when the line is missing or out of date (re-print with ``python report.py --all``;
rerun the experiment to remove it). Deeper dependencies (``hyperrag/ops``, ``index``, ``graph``, the data readers,
the embedder) are not followed: a change there does not mark the runs.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


#: the code every run's figures come from, whatever its method: the runner and the metric code behind metrics.json
#: (the per-query values a report prints are recomputed from predictions.jsonl by per_query.py, a reporting path)
RUN_PATHS = ("retrieve.py", "hyperrag/eval/retrieval.py", "hyperrag/eval/qa.py")
#: an oracle-read run's figures also come from the oracle's answers
ORACLE_PATHS = ("hyperrag/llm/oracle",)
#: the oracle's per-task answers, compared task by task (:func:`oracle_answer_changes`)
ORACLE_ANSWERS = "hyperrag/llm/oracle/answers.py"
#: the definitions every oracle reply goes through, whatever its task
_ORACLE_DISPATCH = ("oracle_reply", "oracle_for", "ORACLES")
#: the start of a report's line (under ``printed by``) saying its runs are older than the tree's code
RUNS_PREDATE = "> **Runs older than the tree's code**: "


def _module_path(module: str, root: Path) -> str | None:
    for rel in (module.replace(".", "/") + ".py", module.replace(".", "/") + "/__init__.py"):
        if (root / rel).is_file():
            return rel
    return None


@functools.cache
def method_code_paths(settings_target: str, root: Path = REPO_ROOT) -> tuple[str, ...]:
    """The files of a method's retriever at HEAD, from its settings class (``method.retriever._target_``): the
    retriever's module, the modules of the classes it derives from, and the ``hyperrag.retrievers`` modules those
    import (``settings.py``, the typing of every method, excepted). ``()`` when the class is not in the tree."""
    module, _, name = settings_target.rpartition(".")
    try:
        retriever = getattr(getattr(importlib.import_module(module), name), "retriever", None)
        rmod, _, rname = str(retriever).rpartition(".")
        cls = getattr(importlib.import_module(rmod), rname)
    except (ImportError, AttributeError, ValueError):
        return ()
    modules = {c.__module__ for c in cls.__mro__ if c.__module__.startswith("hyperrag.")}
    for mod in sorted(modules):
        rel = _module_path(mod, root)
        if rel is None:
            continue
        for node in ast.walk(ast.parse((root / rel).read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            modules |= {n for n in names if n.startswith("hyperrag.retrievers.")}
    modules.discard("hyperrag.retrievers.settings")
    return tuple(sorted(p for m in modules if (p := _module_path(m, root)) is not None))


def run_code_paths(run: Any, root: Path = REPO_ROOT) -> list[str]:
    """The paths (relative to the repository) whose code produced ``run``'s figures (a
    :class:`~hyperrag.reporting.collect.RunRecord`): :data:`RUN_PATHS`, :data:`ORACLE_PATHS` for an oracle-read
    run, :func:`method_code_paths` of its settings class, and its method and experiment YAML when named."""
    from hyperrag.reporting.collect import uses_oracle

    paths = list(RUN_PATHS) + (list(ORACLE_PATHS) if uses_oracle(run) else [])
    target = run.config.get("method.retriever._target_")
    if target:
        paths += method_code_paths(str(target), root)
    for group in ("method", "experiment"):
        name = run.overrides.get(group)
        if name and (root / "hydra_configs" / group / f"{name}.yaml").is_file():
            paths.append(f"hydra_configs/{group}/{name}.yaml")
    return list(dict.fromkeys(paths))


def run_llm_tasks(run: Any) -> set[str] | None:
    """The LLM tasks a run called (``metrics.json``'s per-task usage, a task's variant suffix after ``/`` dropped);
    ``None`` when the run records no usage."""
    usage = (run.inputs.get("record") or {}).get("llm_usage")
    if not isinstance(usage, dict):
        return None
    return {str(t).split("/", 1)[0] for t in usage if t != "total"}


def _definitions(tree: ast.Module) -> dict[str, ast.AST]:
    """A module's top-level definitions by name (functions, classes, assigned names), docstrings dropped."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
            out[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out[name.id] = node
    return out


def _handlers(defs: dict[str, ast.AST]) -> dict[str, str]:
    """Task name -> the name of the function registered for it (``@oracle_for("task", ...)``)."""
    out = {}
    for name, node in defs.items():
        for dec in getattr(node, "decorator_list", []):
            if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == "oracle_for":
                out.update({a.value: name for a in dec.args if isinstance(a, ast.Constant)})
    return out


def oracle_answer_signature(source: str, tasks: set[str]) -> dict[str, str]:
    """What of the oracle's answers (``answers.py``'s source) the ``tasks`` depend on: for each task the function
    registered for it (or none), and the ``ast.dump`` (positions and docstrings left out) of every top-level
    definition reachable by name from those functions and the dispatch, plus the module's imports."""
    tree = ast.parse(source)
    defs = _definitions(tree)
    handlers = _handlers(defs)
    sig = {f"task:{t}": handlers.get(t, "-") for t in sorted(tasks)}
    sig["imports"] = ast.dump(ast.Module([n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], []))
    todo = [n for n in (*_ORACLE_DISPATCH, *(handlers[t] for t in tasks if t in handlers)) if n in defs]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        sig[name] = ast.dump(defs[name])
        todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name) and n.id in defs and n.id not in seen]
    return sig


def oracle_answer_changes(sha: str, tasks: set[str], root: Path = REPO_ROOT) -> list[str]:
    """The definitions of :data:`ORACLE_ANSWERS` reached by ``tasks`` that differ between ``sha`` and HEAD (a task
    whose registered function changed is named ``task:<name>``); ``[]``: those tasks' answers are HEAD's."""
    try:
        old = _git("show", f"{sha}:{ORACLE_ANSWERS}", root=root)
    except subprocess.CalledProcessError:
        old = ""
    new = (root / ORACLE_ANSWERS).read_text() if (root / ORACLE_ANSWERS).is_file() else ""
    if not old or not new:
        return [ORACLE_ANSWERS] if old != new else []
    before, after = oracle_answer_signature(old, tasks), oracle_answer_signature(new, tasks)
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _has_commit(sha: str, root: Path) -> bool:
    try:
        _git("cat-file", "-e", f"{sha}^{{commit}}", root=root)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def runs_stale_reason(runs: Sequence[Any], root: Path = REPO_ROOT) -> str | None:
    """Why a report's runs are older than the tree's code (``None``: every run's code is HEAD's): per run commit,
    the paths of :func:`run_code_paths` that differ between it and HEAD; runs made with uncommitted changes; runs
    whose commit is not in the repository or not recorded."""
    by_commit: dict[str, list[Any]] = {}
    for run in runs:
        by_commit.setdefault(run.commit, []).append(run)
    reasons = []
    for sha in sorted(by_commit):
        group = by_commit[sha]
        if not sha:
            reasons.append(f"{len(group)} run(s) record no commit")
            continue
        if not _has_commit(sha, root):
            reasons.append(f"runs at {sha[:10]}: the commit is not in this repository")
            continue
        paths = sorted({p for r in group for p in run_code_paths(r, root)})
        changed = set(_git("diff", "--name-only", sha, "HEAD", "--", *paths, root=root).split())
        if ORACLE_ANSWERS in changed:
            oracle_runs = [r for r in group if any(p in ORACLE_PATHS for p in run_code_paths(r, root))]
            tasks = [run_llm_tasks(r) for r in oracle_runs]
            if all(t is not None for t in tasks):  # every oracle run says which tasks it called: compare those
                called = set().union(*tasks)
                reached = oracle_answer_changes(sha, called, root)
                changed.discard(ORACLE_ANSWERS)
                if reached:
                    changed.add(f"{ORACLE_ANSWERS} ({', '.join(reached)})")
        if changed:
            reasons.append(f"runs at {sha[:10]} predate changes to {', '.join(sorted(changed))}")
        dirty = sum(bool(((r.inputs.get("info") or {}).get("git") or {}).get("dirty")) for r in group)
        if dirty:
            reasons.append(f"{dirty} run(s) at {sha[:10]} were made with uncommitted changes")
    return "; ".join(reasons) or None


def runs_predate_line(runs: Sequence[Any], root: Path = REPO_ROOT) -> str | None:
    """The report's line saying its runs are older than the tree's code, or ``None`` (see :func:`runs_stale_reason`)."""
    try:
        why = runs_stale_reason(runs, root)
    except (OSError, subprocess.SubprocessError):
        return RUNS_PREDATE + "unknown (no git checkout to compare the runs' commits with)."
    if why is None:
        return None
    return (RUNS_PREDATE + why + ". The figures are those runs'; rerun the experiment and `python report.py "
            "runs=<dir>` to replace them.")


def printed_runs_line(text: str) -> str | None:
    """The :data:`RUNS_PREDATE` line a report's text carries, or ``None``."""
    return next((line for line in text.splitlines() if line.startswith(RUNS_PREDATE)), None)


def stale_runs_reason(report: Path, root: Path = REPO_ROOT) -> str | None:
    """Why a committed report's line about its runs (:data:`RUNS_PREDATE`) is missing or out of date — recomputed
    from its ``values.json`` at HEAD; ``None``: it is right (or the report has no values: see :data:`PREDATES`)."""
    from hyperrag.reporting.snapshot import VALUES_FILE, load_values

    values = report.parent / VALUES_FILE
    if not values.is_file():
        return None
    _, runs = load_values(values)
    want, have = runs_predate_line(runs, root), printed_runs_line(report.read_text())
    if want == have:
        return None
    if want is None:
        return "it says its runs are older than the tree's code, and they no longer are: re-print it"
    return (f"its runs are older than the tree's code ({want[len(RUNS_PREDATE):].split('. The figures')[0]}) and "
            "the report does not say so as of HEAD: re-print it with `python report.py --all`, or rerun its runs")
