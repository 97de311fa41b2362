"""A tiny cross-encoder NLI model for the local backend's tests: an ONNX file written here, byte by byte.

The ``onnx`` package is not a dependency of the project, so the model is written as ONNX's protobuf
wire format directly (the field numbers of ``onnx.proto``: ModelProto, GraphProto, NodeProto,
TensorProto, ValueInfoProto). onnxruntime, which the project already uses, loads and runs it.

The model: each token's embedding (a row of ``EMBED``, one column per label) plus its segment's
embedding (``SEGMENT``, from ``token_type_ids``), masked by ``attention_mask`` and summed over the
tokens. Logits are therefore sums a test can work out by hand from the token list. The padding
token's row is large on purpose: a batch whose mask were ignored would show it at once.

The tokenizer is a word-level ``tokenizer.json`` built with ``tokenizers`` (lower-cased, split on
whitespace and punctuation, BERT-style pair template ``[CLS] A [SEP] B [SEP]`` with segment ids 0/1).
"""
from __future__ import annotations

import json

import numpy as np

WORDS = ("bake", "at", "350", "f", "cool", "on", "a", "rack", "the", "recipe", "makes", "two", "dozen", "cookies",
         "not", "never", ".", "for", "8", "minutes")
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
VOCAB = {t: i for i, t in enumerate(SPECIAL + WORDS)}
LABELS = ("contradiction", "entailment", "neutral")
"""Label order of the tiny model (nli-deberta-v3's order)."""


def embed_row(token: str) -> list[float]:
    """A token's logit contribution [contradiction, entailment, neutral].

    >>> embed_row("[PAD]"), embed_row("not"), embed_row("bake")
    ([0.0, 100.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.25, 0.0])
    """
    if token == "[PAD]":
        return [0.0, 100.0, 0.0]
    if token in ("not", "never"):
        return [3.0, 0.0, 0.0]
    if token in ("dozen", "two"):
        return [0.0, 0.0, 2.0]
    if token in SPECIAL or token == ".":
        return [0.0, 0.0, 0.0]
    return [0.0, 0.25, 0.0]


EMBED = np.array([embed_row(t) for t in VOCAB], dtype=np.float32)
SEGMENT = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.2]], dtype=np.float32)
"""Segment 1 (the hypothesis) adds 0.2 to neutral per token: a model that ignored token_type_ids differs."""


def expected_logits(premise_tokens: list[str], hypothesis_tokens: list[str], segments: bool = True) -> np.ndarray:
    """The tiny model's logits for a pair, worked out from the tokens (no tokenizer involved); ``segments``:
    the model reads token_type_ids."""
    seg0 = ["[CLS]", *premise_tokens, "[SEP]"]
    seg1 = [*hypothesis_tokens, "[SEP]"]
    rows = [embed_row(t) for t in seg0] + [np.add(embed_row(t), SEGMENT[1] if segments else 0.0) for t in seg1]
    return np.sum(np.array(rows, dtype=np.float64), axis=0)


# --- protobuf wire format --------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _str(field: int, s: str) -> bytes:
    return _bytes(field, s.encode())


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2: FLOAT 1, INT64 7), name (8), raw_data (9)."""
    kind = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}[array.dtype]
    return (b"".join(_int(1, d) for d in array.shape) + _int(2, kind) + _str(8, name)
            + _bytes(9, np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()))


def value_info(name: str, elem: int, dims: list) -> bytes:
    """ValueInfoProto with a tensor type; a dim is an int (dim_value) or a str (dim_param)."""
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _str(2, d)) for d in dims)
    return _str(1, name) + _bytes(2, _bytes(1, _int(1, elem) + _bytes(2, shape)))


def node(op: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    """NodeProto with INT attributes (AttributeProto: name 1, i 3, type 20 = INT 2)."""
    attrs = b"".join(_bytes(5, _str(1, k) + _int(3, v) + _int(20, 2)) for k, v in ints.items())
    return b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs) + _str(4, op) + attrs


def columns(table: np.ndarray, outputs: int) -> np.ndarray:
    """The label columns of a model with ``outputs`` outputs: 3 as :data:`LABELS`; 2 as MiniCheck's
    [unsupported, supported] (neutral, entailment); 1 a single score (entailment minus neutral)."""
    if outputs == 1:
        return (table[:, 1] - table[:, 2])[:, None].astype(np.float32)
    return table[:, [2, 1]].astype(np.float32) if outputs == 2 else table.astype(np.float32)


def model_bytes(outputs: int = 3, segments: bool = True) -> bytes:
    """The tiny model as an ONNX file (opset 13). ``outputs``: 3 (NLI labels), 2 (MiniCheck's) or 1 (a
    single score); ``segments``: declare ``token_type_ids`` (RoBERTa-style models do not)."""
    embed, segment = columns(EMBED, outputs), columns(SEGMENT, outputs)
    nodes = [node("Gather", ["embed", "input_ids"], ["tok"])]
    summed = "tok"
    if segments:
        nodes += [node("Gather", ["segment", "token_type_ids"], ["seg"]), node("Add", ["tok", "seg"], ["both"])]
        summed = "both"
    nodes += [node("Cast", ["attention_mask"], ["maskf"], to=1),
              node("Unsqueeze", ["maskf", "last"], ["mask3"]),
              node("Mul", [summed, "mask3"], ["masked"]),
              node("ReduceSum", ["masked", "tokens_axis"], ["logits"], keepdims=0)]
    inits = [tensor("embed", embed.astype(np.float32)), tensor("last", np.array([-1], dtype=np.int64)),
             tensor("tokens_axis", np.array([1], dtype=np.int64))]
    if segments:
        inits.append(tensor("segment", segment.astype(np.float32)))
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if segments else [])
    graph = (b"".join(_bytes(1, n) for n in nodes) + _str(2, "tiny-nli") + b"".join(_bytes(5, t) for t in inits)
             + b"".join(_bytes(11, value_info(n, 7, ["batch", "tokens"])) for n in names)
             + _bytes(12, value_info("logits", 1, ["batch", embed.shape[1]])))
    return _int(1, 8) + _str(2, "groundedness-harness tests") + _bytes(7, graph) + _bytes(8, _int(2, 13))


def tokenizer_json() -> str:
    """A word-level ``tokenizer.json`` over :data:`VOCAB` with a BERT-style pair template."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])])
    return tok.to_str()


def write_model(folder, outputs: int = 3, segments: bool = True, config: dict | None = None,
                settings: dict | None = None) -> str:
    """Write model.onnx, tokenizer.json and (optionally) config.json / harness-nli.json into ``folder``."""
    import os

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "model.onnx"), "wb") as fh:
        fh.write(model_bytes(outputs, segments))
    with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as fh:
        fh.write(tokenizer_json())
    for name, data in (("config.json", config), ("harness-nli.json", settings)):
        if data is not None:
            with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
                json.dump(data, fh)
    return str(folder)


NLI_CONFIG = {"id2label": {str(i): lab for i, lab in enumerate(LABELS)}}
"""``config.json`` naming the tiny model's labels."""
