"""benchmarks/linearrag_title_gap.py (issue 50): how a gold passage's title is found among its graph entities, and
which gold passages make the gap between two runs."""

from __future__ import annotations

from tests.conftest import load_benchmark


def load():
    return load_benchmark("linearrag_title_gap")


def test_entity_levels_from_exact_to_absent():
    gap = load()
    title = "Ma Femme S'Appelle Maurice"
    assert gap.entity_level(title, ["Paris", title]) == "exact"
    assert gap.entity_level("The Baltic Sea", ["baltic sea"]) == "normalised"
    assert gap.entity_level(title, ["Ma Femme S'Appelle Maurice\nMa Femme"]) == "inside"
    assert gap.entity_level(title, ["s'appelle Maurice\nMa"]) == "absent"  # garbled across the line break
    assert gap.entity_level(title, ["Maurice"]) == "fragment"
    assert gap.entity_level("Lothair II", []) == "absent"
    assert gap.entity_level("Henry King (director)", ["Henry King"]) == "normalised"


def test_gold_passages_are_lost_found_or_missed_by_both():
    gap = load()
    linear = {"q1": {"question": "?", "type": "compositional", "ranked_ids": ["a", "x"], "gold_ids": ["a", "b", "c"]},
              "q2": {"question": "?", "type": "comparison", "ranked_ids": [], "gold_ids": ["d"]}}
    hippo = {"q1": {"ranked_ids": ["b", "a"]}, "q2": {"ranked_ids": ["d"]}}
    got = {(r["gold"], r["group"]) for r in gap.classify(linear, hippo, {"compositional"}, k=2)}
    assert got == {("a", "found"), ("b", "lost"), ("c", "both_missed")}  # q2's type is not asked for


def test_normalisation_and_bare_title_are_the_shared_definitions():
    """``norm`` is the oracle's normalisation (case-folded: "ß" → "ss"), ``bare`` the spaCy pipeline's title entity."""
    from hyperrag.extraction.spacy_openie import title_entity
    from hyperrag.llm.oracle.gold import normalize

    gap = load()
    assert gap.norm("Straße_Nord") == normalize("Straße_Nord") == "strasse nord"
    assert gap.norm("The Baltic Sea") == "baltic sea"
    for title in ("Henry King (director)", "The Who's (band)", "Lothair II"):
        assert gap.bare(title) == title_entity(title)
    assert gap.bare("(film)") == "(film)"  # a title naming no entity stays itself
