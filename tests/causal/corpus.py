"""A small hand-written corpus with explicit causal chains (the bundled sample has almost no connectives)."""

from __future__ import annotations

import json
from pathlib import Path

from hyperrag.data.types import Corpus, Dataset, Passage, Query

PASSAGES = [
    ("c00", "Deforestation", ("Heavy logging in the Varden valley led to severe soil erosion on the hillsides. "
     "The valley was once covered by oak forest.")),
    ("c01", "Soil erosion", ("Severe soil erosion on the hillsides caused the silting of the Varden reservoir. "
     "As a result, the town of Varden lost its drinking water supply.")),
    ("c02", "Varden", ("Varden is a small town in the north of the country. It was founded in 1820 by settlers "
     "from the coast.")),
    ("c03", "Drought", ("The Varden region suffered a long drought in 1990. Crop failures followed because the "
     "drought dried the wells of the farms.")),
    ("c04", "Famine", ("The famine of 1991 resulted in mass migration to the coast. Due to the migration, the "
     "port city of Maren grew rapidly.")),
    ("c05", "Maren", "Maren is a port city on the western coast. Its harbour handles timber and grain."),
    ("c06", "Bridge", ("The old bridge of Maren collapsed because of corrosion of its steel cables. The collapse "
     "led to the closure of the coastal road.")),
    ("c07", "Festival", ("The Maren festival is held every summer. Musicians from many countries perform on the "
     "harbour stage.")),
    ("c08", "Flood", ("Torrential rain in the spring of 2004 caused a flood in the lower valley. The flood "
     "destroyed two hundred houses, so that the council built a new levee.")),
    ("c09", "Levee", "The new levee was completed in 2007. Since its completion, no flood has reached the town."),
    ("c10", "Oak", "The oak is a tree of the beech family. Oak wood is hard and durable."),
    ("c11", "Railway", ("The Varden railway opened in 1885. After the railway opened, the timber trade of the "
     "valley expanded quickly.")),
]

QUERIES = [
    ("k1", "Why did the town of Varden lose its drinking water supply?", ["logging", "soil erosion"], ["c01", "c00"]),
    ("k2", "What made the port city of Maren grow rapidly?", ["migration"], ["c04"]),
    ("k3", "Why was the coastal road near Maren closed?", ["bridge collapse"], ["c06"]),
    ("k4", "What did the council build after the flood destroyed houses?", ["a new levee"], ["c08"]),
    ("k5", "What happened to crops in the Varden region during the drought?", ["crop failures"], ["c03"]),
    ("k6", "When was the town of Varden founded?", ["1820"], ["c02"]),
]

OPENIE = [
    [["Heavy logging", "led to", "soil erosion"], ["Varden valley", "was covered by", "oak forest"]],
    [["soil erosion", "caused", "silting of the Varden reservoir"]],
    [["Varden", "is located in", "the north"], ["Varden", "was founded in", "1820"]],
    [["Varden region", "suffered", "long drought"]],
    [["famine of 1991", "resulted in", "mass migration"]],
    [["Maren", "is a", "port city"], ["harbour", "handles", "timber"]],
    [["corrosion", "led to", "collapse of the old bridge"]],
    [["Maren festival", "is held", "every summer"]],
    [["Torrential rain", "caused", "flood"]],
    [["new levee", "was completed in", "2007"]],
    [["oak", "is a", "tree"], ["Oak wood", "is", "hard"]],
    [["Varden railway", "opened in", "1885"]],
]


def causal_dataset(tmp_path: Path | None = None, name: str = "causal_toy") -> Dataset:
    """The corpus as a :class:`Dataset`; with ``tmp_path`` an OpenIE file is written and attached."""
    corpus = Corpus([Passage(i, t, x) for i, t, x in PASSAGES], source="tests/causal/corpus.py")
    queries = [Query(i, q, tuple(a), tuple(g)) for i, q, a, g in QUERIES]
    openie = None
    if tmp_path is not None:
        openie = Path(tmp_path) / f"{name}_openie.json"
        docs = [{"idx": i, "passage": f"{t}\n{x}", "extracted_entities": [], "extracted_triples": tr}
                for i, ((_, t, x), tr) in enumerate(zip(PASSAGES, OPENIE))]
        openie.write_text(json.dumps({"docs": docs}))
    return Dataset(name, corpus, queries, openie)


def write_jsonl(tmp_path: Path) -> tuple[Path, Path, Path]:
    """corpus.jsonl, queries.jsonl and openie.json for ``data=jsonl`` runs."""
    tmp_path = Path(tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in PASSAGES))
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"id": i, "question": q, "answers": a, "gold_ids": g}) + "\n"
                               for i, q, a, g in QUERIES))
    ds = causal_dataset(tmp_path)
    return corpus, queries, ds.openie_path
