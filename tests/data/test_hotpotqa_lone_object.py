"""A HotpotQA file holding one JSON object instead of a list of records is named as such, not as a record missing
its 'question' (hyperrag/data/hotpotqa.py)."""

from __future__ import annotations

import json

import pytest

from hyperrag.data import hotpotqa_dataset
from hyperrag.errors import InputError
from tests.data.benchmark_fixtures import hotpotqa_records


def test_one_object_instead_of_a_list_names_the_file_and_the_list_it_expected(tmp_path):
    path = tmp_path / "hotpot_dev_distractor_v1.json"
    path.write_text(json.dumps({"data": hotpotqa_records(), "version": "1.1"}) + "\n")
    with pytest.raises(InputError) as err:
        hotpotqa_dataset(path, "hotpotqa")
    assert err.value.one_line() == (f"{path}: expected a JSON list of HotpotQA records "
                                    "([{\"_id\", \"question\", ...}, ...]), got one JSON object (keys: 'data', "
                                    "'version')")


def test_one_record_per_line_still_reads_and_a_bad_record_still_names_its_field(tmp_path):
    """JSONL stays accepted: a lone line that is a record reads; a record without 'question' among others is
    named by line and field as before."""
    records = hotpotqa_records()
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(records[0]) + "\n")
    assert [q.question for q in hotpotqa_dataset(one, "hotpotqa").queries] == [records[0]["question"]]
    two = tmp_path / "two.jsonl"
    two.write_text(json.dumps(records[0]) + "\n" + json.dumps({"_id": "x"}) + "\n")
    with pytest.raises(InputError) as err:
        hotpotqa_dataset(two, "hotpotqa")
    assert err.value.one_line().startswith(f"{two}:2: field 'question'")
