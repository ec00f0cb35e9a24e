from hyperrag.causal.candidates import extract_candidates
from hyperrag.causal.labels import build_silver_set, mark_candidate, mark_pair, split_by_group
from hyperrag.data import read_openie
from tests.causal.corpus import causal_dataset


def test_mark_pair_orders_and_crops():
    s = "The storm caused floods in the city."
    assert mark_pair(s, (4, "storm"), (-1, "floods in the city")) == \
        "The [E1] storm [/E1] caused [E2] floods in the city [/E2]."
    assert mark_pair(s, (-1, "floods"), (-1, "storm")) == "The [E2] storm [/E2] caused [E1] floods [/E1] in the city."
    assert mark_pair(s, (-1, "storm caused"), (-1, "caused floods")) is None  # overlapping spans
    assert mark_pair(s, (-1, "hail"), (-1, "storm")) is None  # not in the sentence
    long = "x " * 200 + "The storm caused floods." + " y" * 200
    marked = mark_pair(long, (-1, "storm"), (-1, "floods"), window=10)
    assert marked.startswith("… ") and marked.endswith(" …") and len(marked) < 80


def test_silver_set_sources_and_labels(tmp_path):
    ds = causal_dataset(tmp_path)
    cands = extract_candidates(ds.corpus, read_openie(ds.openie_path, ds.corpus).triples)
    silver = build_silver_set(cands, negative_ratio=1.0, mask_rate=0.0)
    counts = silver.counts()
    assert counts["source_connective"] == 10 and counts["source_reversed"] == 10
    assert counts["positive"] == 10 and counts["source_openie_negative"] >= 2
    by_text = {e.text: e.label for e in silver.examples}
    strong = next(c for c in cands.pairs if c.connective == "resulted in" and c.source == "connective")
    assert by_text[mark_candidate(strong, mask_connective=False)] == 1
    assert by_text[mark_candidate(strong, reverse=True, mask_connective=False)] == 0
    assert all(e.label == 0 for e in silver.examples if e.source != "connective")
    # weak connectives and causal OpenIE relations never become labels without an LLM
    weak = {mark_candidate(c, mask_connective=m) for c in cands.pairs if c.strength != "strong" for m in (True, False)}
    assert weak and not weak & {e.text for e in silver.examples if e.label == 1}


def test_split_by_group_keeps_passages_whole(tmp_path):
    ds = causal_dataset(tmp_path)
    silver = build_silver_set(extract_candidates(ds.corpus))
    train, val = split_by_group(silver.examples, val_fraction=0.3, seed=1)
    assert train and val and not set(train) & set(val) and len(train) + len(val) == len(silver)
    assert not {silver.examples[i].group for i in train} & {silver.examples[i].group for i in val}
    assert split_by_group(silver.examples, 0.3, seed=1) == (train, val)


def test_connective_dropout(tmp_path):
    from hyperrag.causal.candidates import connective_candidates

    (c,) = connective_candidates(["Heavy logging led to severe soil erosion."], 0)
    assert mark_candidate(c) == "[E1] Heavy logging [/E1] [C] [E2] severe soil erosion [/E2]."
    assert mark_candidate(c, reverse=True) == "[E2] Heavy logging [/E2] [C] [E1] severe soil erosion [/E1]."
    assert mark_candidate(c, mask_connective=False) == "[E1] Heavy logging [/E1] led to [E2] severe soil erosion [/E2]."
    ds = causal_dataset(tmp_path)
    cands = extract_candidates(ds.corpus, read_openie(ds.openie_path, ds.corpus).triples)
    always = build_silver_set(cands, mask_rate=1.0)
    assert all("[C]" in e.text and e.masked for e in always.examples)  # adjacent pairs get [C] at the join
    never = build_silver_set(cands, mask_rate=0.0)
    assert not any("[C]" in e.text or e.masked for e in never.examples)
    half = build_silver_set(cands, mask_rate=0.5, seed=3)
    assert 0 < half.counts()["masked"] < len(half)
    # a positive and its reversal share the draw
    pairs = [(a, b) for a, b in zip(half.examples, half.examples[1:]) if a.source == "connective"]
    assert pairs and all(a.masked == b.masked and b.source == "reversed" for a, b in pairs)
