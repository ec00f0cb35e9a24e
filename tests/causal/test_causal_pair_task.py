"""``python train.py task=causal_pair data=unicausal`` on a tiny hand-written UniCausal-format directory: the reader,
a tiny real fine-tune with model selection on held-out train, per-split test P/R/F1, the artifact record, reuse."""

import csv
import json
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir

from hyperrag.data.unicausal import convert_markup, read_pair_file, unicausal_dataset
from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import train

COLUMNS = ["corpus", "doc_id", "sent_id", "eg_id", "index", "text", "text_w_pairs", "seq_label", "pair_label",
           "context", "num_sents"]
POSITIVE = ["<ARG0>Heavy rain</ARG0> caused <ARG1>the flood</ARG1> .",
            "<ARG1>The crash</ARG1> happened because <ARG0>the brakes failed</ARG0> .",
            "<ARG0>The drought</ARG0> led to <ARG1>crop failures</ARG1> .",
            "<ARG0>Smoking</ARG0> results in <ARG1>lung disease</ARG1> ."]
NEGATIVE = ["<ARG0>The town</ARG0> lies near <ARG1>the river</ARG1> .",
            "<ARG1>Maria</ARG1> met <ARG0>John</ARG0> in Paris .",
            "<ARG0>The museum</ARG0> opened in <ARG1>1990</ARG1> .",
            "<ARG0>Oak</ARG0> is a kind of <ARG1>tree</ARG1> ."]


def write_split(path: Path, corpus: str, rows: list[tuple[str, int]]) -> None:
    with path.open("w", newline="", encoding="utf-8-sig") as handle:  # the release's files start with a BOM
        w = csv.DictWriter(handle, fieldnames=COLUMNS)
        w.writeheader()
        for i, (text, label) in enumerate(rows):
            w.writerow({"corpus": corpus, "doc_id": "d", "sent_id": i, "eg_id": 0, "index": f"{corpus}_{i}",
                        "text": "", "text_w_pairs": text, "seq_label": label, "pair_label": label, "context": "",
                        "num_sents": 1})


def write_unicausal(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for corpus in ("altlex", "ctb"):
        train_rows = [(t, 1) for t in POSITIVE] + [(t, 0) for t in NEGATIVE]
        write_split(root / f"{corpus}_train.csv", corpus, train_rows * 2)
        write_split(root / f"{corpus}_test.csv", corpus, [(POSITIVE[0], 1), (NEGATIVE[0], 0), (POSITIVE[1], 1)])
    broken = "A <ARG0>quake</<ARG1>ARG0></ARG1> struck ."  # as in the released esl2_test.csv
    write_split(root / "esl2_test.csv", "esl2", [(POSITIVE[2], 1), (broken, 0), (NEGATIVE[1], 0)])
    return root


def test_markup_conversion_and_reader_errors(tmp_path):
    assert convert_markup("<ARG0>Heavy rain</ARG0> caused <ARG1>the flood</ARG1> .") == \
        "[E1] Heavy rain [/E1] caused [E2] the flood [/E2] ."
    # BECAUSE's discontinuous arguments keep a marker pair per span
    assert convert_markup("<ARG0>we</ARG0> prevent <ARG1>crises</ARG1> from <ARG1>arising</ARG1>") == \
        "[E1] we [/E1] prevent [E2] crises [/E2] from [E2] arising [/E2]"
    for bad in ("no markup", "<ARG0>a</ARG0> b", "<ARG0>a <ARG1>b</ARG0></ARG1>", "<ARG0>a</AR<ARG1>G0></ARG1>"):
        with pytest.raises(ValueError):
            convert_markup(bad)
    root = write_unicausal(tmp_path / "uc")
    data = unicausal_dataset(root, ["altlex", "ctb"], ["esl2"])
    assert len(data.train) == 32 and data.corpora() == ["altlex", "ctb"] and len(data.test["esl2"]) == 2
    assert data.skipped == {"esl2_test.csv": 1} and data.train[0].text.startswith("[E1] Heavy rain")
    with pytest.raises(InputError, match=r"esl2_test.csv:3: field 'text_w_pairs'"):
        read_pair_file(root / "esl2_test.csv")  # strict without a skip counter
    write_split(tmp_path / "bad_train.csv", "bad", [(POSITIVE[0], 2)])
    with pytest.raises(InputError, match=r"bad_train.csv:2: field 'pair_label': must be 0 or 1"):
        read_pair_file(tmp_path / "bad_train.csv")


def compose_train(tmp_path: Path, *overrides: str):
    root = write_unicausal(tmp_path / "uc")
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("train", overrides=[
            f"out={tmp_path / 'run'}", f"models_dir={tmp_path / 'models'}", f"cache_dir={tmp_path / 'cache'}",
            "hardware=cpu", "torch_threads=2", "task=causal_pair", "data=unicausal", f"data.dir={root}",
            "data.corpora=[altlex,ctb]", "task.model.max_length=32", "task.model.freeze_layers=5",
            "task.model.max_steps=4", "task.val_every=2", "task.model.head_lr=0.01", "task.datamodule.batch_size=8",
            "task.datamodule.val_fraction=0.25", "trainer.enable_progress_bar=false", *overrides])


def test_causal_pair_training_end_to_end(tmp_path):
    metrics = train.run(compose_train(tmp_path, "logger=csv"))
    ckpt = next((tmp_path / "models" / "causal_pair").glob("unicausal-*/model.ckpt"))
    assert (tmp_path / "run" / "causal_pair_eval.png").read_bytes()[:4] == b"\x89PNG"
    for corpus in ("altlex", "ctb", "esl2"):
        for m in ("precision", "recall", "f1"):
            assert 0.0 <= metrics[f"test_{corpus}_{m}"] <= 100.0
    assert metrics["test_altlex_examples"] == 3 and metrics["test_esl2_examples"] == 2
    assert metrics["test_altlex_anchor_f1"] == 84.76 and "test_esl2_anchor_f1" not in metrics
    assert metrics["skipped_rows_esl2_test.csv"] == 1
    # model selection on the held-out part of train: two passes (steps 2 and 4), the best one kept
    assert metrics["heldout_examples"] > 0 and metrics["selected_step"] in (2, 4) and metrics["fit_seconds"] > 0
    record = json.loads(ckpt.with_name("artifact.json").read_text())
    from hyperrag.causal.classifier import CausalPairClassifier, classifier_compatibility

    assert record == {"task": "causal_pair", "dataset": "unicausal", "query_ids": [],
                      "compatibility": classifier_compatibility("all-MiniLM-L6-v2"), "transductive": False}
    model = CausalPairClassifier.load_from_checkpoint(str(ckpt), map_location="cpu")
    assert [r["step"] for r in model.selection] == [2, 4] and sum(r["selected"] for r in model.selection) == 1
    p = model.predict_proba(["The [E1] storm [/E1] caused [E2] floods [/E2].", "No [E1] markers [/E1] [E2] x [/E2]"])
    assert p.shape == (2,) and bool(((p > 0) & (p < 1)).all())
    assert model.tokenizer.convert_tokens_to_ids("[E1]") != model.tokenizer.unk_token_id
    # a second run finds the model and only evaluates it
    again = train.run(compose_train(tmp_path, "logger=none"))
    assert again["fit_seconds"] == 0.0 and again["test_ctb_f1"] == pytest.approx(metrics["test_ctb_f1"])


def test_a_retrieval_dataset_is_refused(tmp_path):
    from tests.causal.corpus import write_jsonl

    corpus, queries, _ = write_jsonl(tmp_path)
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cfg = compose("train", overrides=[f"out={tmp_path / 'run'}", f"models_dir={tmp_path / 'models'}",
                                          "task=causal_pair", "data=jsonl", f"data.corpus={corpus}",
                                          f"data.queries={queries}", "logger=none"])
    with pytest.raises(Exception) as err:
        train.run(cfg)
    from hyperrag.errors import find_input_error

    assert "use data=unicausal" in str(find_input_error(err.value))


def test_classifier_learns_direction_on_a_separable_toy():
    """A few real optimisation steps on one marked pair and its reversal move the logits apart."""
    from hyperrag.causal.classifier import CausalPairClassifier
    from hyperrag.config import task_arguments

    torch.manual_seed(0)
    # constant rates (no schedule: the loop below steps the optimiser only), the encoder's rate as before
    model = CausalPairClassifier(**task_arguments("causal_pair", max_length=32, freeze_layers=6, head_lr=0.01,
                                                  dropout=0.0, lr=5e-5, max_steps=None))
    texts = ["Rain [E1] storms [/E1] caused [E2] floods [/E2].", "Rain [E2] storms [/E2] caused [E1] floods [/E1]."]
    labels = torch.tensor([1, 0])
    opt = model.configure_optimizers()
    for _ in range(15):
        loss, _, _ = model._loss((texts, labels, ["x", "x"]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    p = model.predict_proba(texts)
    assert p[0] > 0.5 > p[1]
