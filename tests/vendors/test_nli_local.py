"""``nli.minicheck``'s local backend (``--nli-model PATH``) on a tiny ONNX cross-encoder built by the test
(:mod:`tests.helpers.nli_fixtures`): loading each output shape, tokenisation of (chunk, sentence) pairs with segment
ids, batching with padding, truncation, chunking by model tokens, and a whole offline run with no judge call.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from harness.adapters.nli.local import NliModelError, load

import numpy as np
import pytest

from tests.conftest import CANONICAL, ROOT
from tests.helpers.nli_fixtures import NLI_CONFIG, columns, expected_logits, write_model

METRIC = "nli.minicheck"
PAIRS = [("Bake at 350 F.", "Bake at 350 F."),
         ("Cool on a rack.", "The recipe makes two dozen cookies."),
         ("Bake for 8 minutes. Cool on a rack.", "Never bake.")]
TOKENS = [(["bake", "at", "350", "f", "."], ["bake", "at", "350", "f", "."]),
          (["cool", "on", "a", "rack", "."], ["the", "recipe", "makes", "two", "dozen", "cookies", "."]),
          (["bake", "for", "8", "minutes", ".", "cool", "on", "a", "rack", "."], ["never", "bake", "."])]
"""The tokens of :data:`PAIRS`, written out by hand (the tokenizer is what is under test)."""


def _softmax(z):
    e = np.exp(z - np.max(z))
    return e / e.sum()


def _expected(outputs: int, segments: bool = True) -> list[float]:
    """Support probabilities of :data:`PAIRS` worked out from the tokens."""
    out = []
    for p, h in TOKENS:
        z = columns(expected_logits(p, h, segments)[None, :], outputs)[0].astype(np.float64)
        out.append(float(1 / (1 + math.exp(-z[0]))) if outputs == 1 else float(_softmax(z)[1]))
    return out


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return write_model(tmp_path_factory.mktemp("nli") / "tiny", config=NLI_CONFIG)


@pytest.mark.parametrize("outputs,segments,config", [
    (3, True, NLI_CONFIG),     # nli-deberta-style: three labels named by config.json
    (2, True, None),           # MiniCheck-style: two labels, index 1 supported
    (1, True, None),           # HHEM-style single score: its sigmoid
    (3, False, NLI_CONFIG),    # RoBERTa-style: no token_type_ids input
], ids=["3-labels", "2-labels", "1-score", "no-segments"])
def test_loads_each_output_shape_and_reads_the_entailment_probability(outputs, segments, config, tmp_path):
    model = load(write_model(tmp_path / "m", outputs=outputs, segments=segments, config=config))
    assert model.inputs == (("input_ids", "attention_mask", "token_type_ids") if segments
                            else ("input_ids", "attention_mask"))
    assert model.entailment == (None if outputs == 1 else 1)
    assert model.support(PAIRS) == pytest.approx(_expected(outputs, segments), abs=1e-5)
    assert len(model.sha256) == 64 and load(model.path) is model          # loaded once per process


def test_tokenisation_pairs_chunk_and_sentence_with_segment_ids(nli_dir):
    model = load(nli_dir)
    enc = model.encode(PAIRS[:1])
    vocab = {v: k for k, v in model.tokenizer.get_vocab().items()}
    assert [vocab[i] for i in enc["input_ids"][0]] == ["[CLS]", *TOKENS[0][0], "[SEP]", *TOKENS[0][1], "[SEP]"]
    assert enc["token_type_ids"][0].tolist() == [0] * 7 + [1] * 6
    assert enc["attention_mask"][0].tolist() == [1] * 13


def test_batches_pad_and_mask_so_batch_size_does_not_change_a_probability(nli_dir):
    model = load(nli_dir)
    enc = model.encode(PAIRS)
    assert enc["input_ids"].shape == (3, 2 + 10 + 1 + 3)                    # padded to the longest pair
    assert enc["attention_mask"][0].tolist() == [1] * 13 + [0] * 3
    one, all_at_once, twos = model.support(PAIRS, 1), model.support(PAIRS, 16), model.support(PAIRS, 2)
    assert one == pytest.approx(all_at_once, abs=1e-6) and twos == pytest.approx(all_at_once, abs=1e-6)
    assert all(p < 0.9 for p in all_at_once)   # the pad row adds 100 to entailment: a masked-out pad adds nothing


def test_truncates_to_max_length_from_the_folder(tmp_path):
    model = load(write_model(tmp_path / "m", config=NLI_CONFIG, settings={"max_length": 10}))
    enc = model.encode(PAIRS[2:])
    assert enc["input_ids"].shape == (1, 10)
    kept = ["bake", "for", "8", "minutes", "."]           # longest first: the long chunk loses its end
    assert model.support(PAIRS[2:]) == pytest.approx([float(_softmax(expected_logits(kept, ["never", "bake", "."]))[1])],
                                                     abs=1e-5)


def test_a_template_makes_one_text_of_each_pair(tmp_path):
    model = load(write_model(tmp_path / "m", config=NLI_CONFIG,
                             settings={"template": "{premise} . {hypothesis}"}))
    enc = model.encode(PAIRS[:1])
    assert enc["token_type_ids"].sum() == 0 and enc["input_ids"].shape == (1, 2 + 5 + 1 + 5)


@pytest.mark.parametrize("setup,message", [
    (lambda d: None, "no such file or folder"),
    (lambda d: (write_model(d), os.remove(os.path.join(d, "tokenizer.json"))), r"tokenizer.json \(the tokenizer\) does not exist"),
    (lambda d: write_model(d), "3 output labels and no config.json id2label"),
    (lambda d: write_model(d, config={"id2label": {"0": "a", "1": "b", "2": "c"}}), "names no single entailment label"),
    (lambda d: (write_model(d, config=NLI_CONFIG), open(os.path.join(d, "model.onnx"), "wb").write(b"junk")),
     "onnxruntime cannot load it"),
], ids=["missing", "no-tokenizer", "unlabelled", "bad-labels", "not-onnx"])
def test_a_folder_it_cannot_use_is_named(setup, message, tmp_path):
    d = str(tmp_path / "m")
    setup(d)
    with pytest.raises(NliModelError, match=message):
        load(d)


def test_chunks_by_model_tokens_and_takes_the_best_chunk(nli_dir, tmp_path, capsys):
    """A passage longer than the chunk size (in the model's tokens) is checked chunk by chunk; the sentence
    keeps the highest probability, and the run's option reaches the metric."""
    from harness.cases.load import case_to_json
    from harness.console import main
    from harness.core.records import Annotation, Case, Context

    text = "Bake at 350 F. Cool on a rack. Bake for 8 minutes."
    case = Case("chunked", "q", (Context("1", text),), "Bake at 350 F.", Annotation((), True, False))
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps(case_to_json(case)) + "\n")
    assert main(["run", "--cases", str(f), "--metrics", METRIC, "--nli-model", nli_dir, "--nli-chunk-size", "6",
                 "--out", str(tmp_path), "--run-id", "r", "--no-progress"]) == 0
    capsys.readouterr()
    from harness.store.runstore import RunStore

    s = RunStore.open(str(tmp_path / "r" / "store.sqlite"))
    try:
        ((calls, detail),) = s.rows("SELECT calls, detail FROM cells")
        ((unit,),) = s.rows("SELECT detail FROM units")
    finally:
        s.close()
    detail, unit = json.loads(detail), json.loads(unit)
    assert calls == 0 and detail["backend"] == "local" and detail["chunks"] == 3
    chunks = [["bake", "at", "350", "f", "."], ["cool", "on", "a", "rack", "."], ["bake", "for", "8", "minutes", "."]]
    want = [float(_softmax(expected_logits(c, chunks[0]))[1]) for c in chunks]
    assert [c["prob"] for c in unit["chunks"]] == pytest.approx(want, abs=1e-5)
    assert unit["prob"] == pytest.approx(max(want), abs=1e-5) and unit["chunks"][0]["source"] == "local"


def test_an_offline_run_of_the_canonical_set_with_a_local_model_calls_no_judge(nli_dir, tmp_path):
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", CANONICAL, "--metrics", METRIC,
                        "--nli-model", nli_dir, "--out", str(tmp_path), "--run-id", "local", "--no-progress",
                        "--workers", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    from harness.store.runstore import RunStore

    s = RunStore.open(str(tmp_path / "local" / "store.sqlite"))
    try:
        rows = s.rows("SELECT case_id, status, calls, detail FROM cells")
    finally:
        s.close()
    assert len(rows) == 24 and sum(c for _, _, c, _ in rows) == 0
    assert {st for cid, st, _, _ in rows if cid != "empty-answer"} == {"scored"}
    sha = {json.loads(d).get("model_sha256") for cid, _, _, d in rows if cid != "empty-answer"}
    assert sha == {load(nli_dir).sha256}


@pytest.mark.parametrize("broken", [False, True], ids=["missing", "not-onnx"])
def test_a_bad_model_exits_2_naming_the_option_and_the_file(broken, tmp_path):
    where = tmp_path / "nowhere"
    if broken:
        write_model(where, config=NLI_CONFIG)
        (where / "model.onnx").write_bytes(b"not a model")
    r = subprocess.run([sys.executable, "-m", "harness", "run", "--metrics", METRIC, "--nli-model", str(where),
                        "--out", str(tmp_path), "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    want = (f"harness: --nli-model: {where / 'model.onnx'}: onnxruntime cannot load it" if broken
            else f"harness: --nli-model: {where}: no such file or folder")
    assert line.startswith(want), line
