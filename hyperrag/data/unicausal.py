"""UniCausal's causal pair classification splits (Tan et al., 2023): the data CDF-RAG's pair classifier learns from.

A UniCausal directory holds one CSV per corpus and split (``altlex_train.csv``, ``ctb_test.csv``, ...). Each row
is one candidate pair in one sentence (or two adjacent sentences): ``text_w_pairs`` marks the candidate cause as
``<ARG0>…</ARG0>`` and the candidate effect as ``<ARG1>…</ARG1>`` (BECAUSE marks discontinuous arguments as several
spans of one ARG); ``pair_label`` is 1 when ARG0 causes ARG1 and 0 when the pair is not causal. The reader turns the
markup into the classifier's markers (``[E1] … [/E1]``, ``[E2] … [/E2]``: :mod:`hyperrag.causal.marking`) and
validates every row: a missing column, a label other than 0/1 or an empty corpus stops with one line naming the file,
line and field. Rows whose markup is broken in the release itself (tags that overlap or are cut, e.g. 50 rows of
``esl2_test.csv``: ``<ARG0>quake</<ARG1>ARG0></ARG1>``) cannot be read as a pair: they are skipped and counted
(:attr:`UniCausalPairs.skipped`), never silently.

    data = unicausal_dataset("../shared/data/unicausal")
    data.train            # every train split, in file order
    data.test["ctb"]      # one corpus's test split
"""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from hyperrag.errors import InputError

log = logging.getLogger(__name__)

REQUIRED_COLUMNS = ("corpus", "doc_id", "sent_id", "text_w_pairs", "pair_label")
_TAG = re.compile(r"\s*<(/?)ARG([01])>\s*")
_RESIDUE = re.compile(r"ARG[01]>|</?ARG")


@dataclass(frozen=True)
class PairExample:
    """One marked candidate pair.

    Attributes:
        text: the sentence with ``[E1] cause [/E1]`` and ``[E2] effect [/E2]`` markers.
        label: 1 = E1 causes E2, 0 = not causal.
        corpus: the source corpus (``altlex``, ``because``, ``ctb``, ``semeval2010t8``, ``esl2``).
        group: the sentence it comes from (``<corpus>/<doc_id>/<sent_id>``): pairs of one sentence stay on one side
            of a train / held-out split.
    """

    text: str
    label: int
    corpus: str
    group: str


@dataclass
class UniCausalPairs:
    """The train splits (concatenated) and the test split of each corpus.

    Attributes:
        name: the dataset name artifacts record (``unicausal``).
        train: every training example.
        test: ``{corpus: examples}``.
        source: the directory read.
        skipped: rows with broken markup left out, per file name (``{"esl2_test.csv": 50}``).
    """

    name: str
    train: list[PairExample]
    test: dict[str, list[PairExample]] = field(default_factory=dict)
    source: str = ""
    skipped: dict[str, int] = field(default_factory=dict)

    def corpora(self) -> list[str]:
        return sorted({e.corpus for e in self.train})


def convert_markup(text: str) -> str:
    """``<ARG0>x</ARG0> … <ARG1>y</ARG1>`` → ``[E1] x [/E1] … [E2] y [/E2]`` (whitespace around markers normalised;
    an argument of several spans keeps a marker pair per span).

    Raises:
        ValueError: the text does not mark both arguments, or their spans overlap or are cut.
    """
    open_arg: str | None = None
    spans = {"0": 0, "1": 0}
    for m in _TAG.finditer(text):
        closing, arg = bool(m.group(1)), m.group(2)
        if closing != (open_arg == arg) or (not closing and open_arg is not None):
            raise ValueError("must mark <ARG0>…</ARG0> and <ARG1>…</ARG1> spans that neither overlap nor are cut")
        open_arg = None if closing else arg
        spans[arg] += closing
    if open_arg is not None or not all(spans.values()) or _RESIDUE.search(_TAG.sub(" ", text)):
        raise ValueError("must mark <ARG0>…</ARG0> and <ARG1>…</ARG1> spans that neither overlap nor are cut")

    def repl(m: re.Match[str]) -> str:
        closing, arg = m.group(1), "1" if m.group(2) == "0" else "2"
        return f" [{closing}E{arg}] "

    return " ".join(_TAG.sub(repl, text).split())


def read_pair_file(path: str | Path, skipped: dict[str, int] | None = None) -> list[PairExample]:
    """The examples of one UniCausal CSV (the file's own ``corpus`` column names the corpus).

    Args:
        skipped: when given, rows with broken markup are skipped and counted here under the file name; when
            ``None`` such a row is an :class:`InputError`.
    """
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8-sig", newline="")
    except OSError as err:
        raise InputError(f"cannot read ({err.strerror})", path=path) from None
    out: list[PairExample] = []
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {missing}", path=path, line=1)
        for row in reader:
            line = reader.line_num
            label = (row.get("pair_label") or "").strip()
            if label not in ("0", "1"):
                raise InputError(f"must be 0 or 1, got {label!r}", path=path, line=line, field="pair_label")
            try:
                text = convert_markup(row.get("text_w_pairs") or "")
            except ValueError as err:
                if skipped is None:
                    raise InputError(str(err), path=path, line=line, field="text_w_pairs") from None
                skipped[path.name] = skipped.get(path.name, 0) + 1
                continue
            corpus = (row.get("corpus") or "").strip()
            if not corpus:
                raise InputError("empty", path=path, line=line, field="corpus")
            out.append(PairExample(text, int(label), corpus, f"{corpus}/{row['doc_id']}/{row['sent_id']}"))
    if not out:
        raise InputError("no rows", path=path)
    return out


def unicausal_dataset(dir: str | Path, corpora: list[str] | tuple[str, ...], extra_test: list[str] | tuple[str, ...] = (),
                      name: str = "unicausal") -> UniCausalPairs:
    """Read ``<corpus>_train.csv`` and ``<corpus>_test.csv`` of each corpus, and ``<corpus>_test.csv`` of the
    ``extra_test`` corpora (test-only, such as ESL).

    Args:
        dir: the UniCausal directory (``../shared/data/unicausal``).
        corpora: corpora with a train and a test split.
        extra_test: corpora with only a test split.
        name: the dataset name trained artifacts record.
    """
    root = Path(dir)
    if not root.is_dir():
        raise InputError("not a directory", path=root, field="data.dir")
    train: list[PairExample] = []
    test: dict[str, list[PairExample]] = {}
    skipped: dict[str, int] = {}
    for corpus in corpora:
        train += read_pair_file(root / f"{corpus}_train.csv", skipped)
        test[corpus] = read_pair_file(root / f"{corpus}_test.csv", skipped)
    for corpus in extra_test:
        test[corpus] = read_pair_file(root / f"{corpus}_test.csv", skipped)
    if skipped:
        log.warning("UniCausal rows with broken markup skipped: %s", skipped)
    return UniCausalPairs(name, train, test, str(root), skipped)


__all__ = ["PairExample", "UniCausalPairs", "convert_markup", "read_pair_file", "unicausal_dataset"]
