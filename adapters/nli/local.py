"""The local backend: a cross-encoder NLI model in ONNX, run with onnxruntime, tokenised with ``tokenizers``.

``harness run --nli-model PATH`` names a folder holding ``model.onnx`` and ``tokenizer.json`` (or the
``.onnx`` file itself, with ``tokenizer.json`` beside it). No model ships with the harness. What the
folder may also hold:

- ``config.json`` (Hugging Face's, exported next to the model): ``id2label`` tells which output is
  entailment (a label containing ``entail``, ``support`` or ``consistent``);
- ``harness-nli.json``: ``{"entailment_index": int, "max_length": int, "template": str}``, for a model
  whose export says neither (``template``, with ``{premise}`` and ``{hypothesis}``, turns each pair
  into one text, e.g. for HHEM-2.1-open's prompt).

The model's inputs are fed by name, of those it declares: ``input_ids``, ``attention_mask``,
``token_type_ids`` (int64, batch x tokens). Its first output is the scores: ``batch x labels`` (a
softmax, the entailment column is the support probability, as MiniCheck reads its encoder
checkers) or ``batch`` / ``batch x 1`` (one logit: its sigmoid). Without a label map, 2 labels mean
MiniCheck's (index 1 is supported); 3 labels without one is refused, since NLI exports order them
differently. Pairs are (chunk, sentence), truncated from the chunk to ``max_length`` (512 unless said
otherwise, longest first as MiniCheck truncates), padded per batch of 16 (MiniCheck's default).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import string
from dataclasses import dataclass

import numpy as np  # the engine's own dependency, like onnxruntime and tokenizers (imported lazily below)

BATCH_SIZE = 16
"""Pairs per model call (MiniCheck's default batch size)."""
DEFAULT_MAX_LENGTH = 512
"""Tokens per pair unless the folder says otherwise (MiniCheck's RoBERTa limit)."""
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ENTAILMENT_WORDS = ("entail", "support", "consistent")
PAD_TOKENS = ("[PAD]", "<pad>", "<|pad|>")


class NliModelError(ValueError):
    """A model folder the local backend cannot use (the message names the file and what is wrong)."""


@dataclass(frozen=True)
class NliModel:
    """A loaded local NLI model (one per process and file: see :func:`load`)."""

    path: str
    """The ``model.onnx`` file."""
    sha256: str
    """The model file's digest (kept in each cell's detail)."""
    session: object
    """The ``onnxruntime.InferenceSession``."""
    tokenizer: object
    """The ``tokenizers.Tokenizer``, truncating each pair to ``max_length`` (padding is done here)."""
    inputs: tuple[str, ...]
    """The model's inputs, of :data:`INPUTS`, in the model's order."""
    entailment: int | None
    """Column of the entailment score; None: a single logit."""
    max_length: int
    template: str | None
    pad_id: int

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` without special tokens (the chunker's measure, as MiniCheck counts)."""
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def encode(self, pairs: list[tuple[str, str]]) -> dict:
        """The model's input arrays for one batch of (premise, hypothesis) pairs, padded to the longest."""
        if self.template is not None:
            encs = [self.tokenizer.encode(self.template.format(premise=p, hypothesis=h)) for p, h in pairs]
        else:
            encs = [self.tokenizer.encode(p, h) for p, h in pairs]
        width = max(len(e.ids) for e in encs)
        arrays = {k: np.zeros((len(encs), width), dtype=np.int64) for k in INPUTS}
        arrays["input_ids"].fill(self.pad_id)
        for i, e in enumerate(encs):
            n = len(e.ids)
            arrays["input_ids"][i, :n] = e.ids
            arrays["attention_mask"][i, :n] = e.attention_mask
            arrays["token_type_ids"][i, :n] = e.type_ids
        return {k: arrays[k] for k in self.inputs}

    def support(self, pairs: list[tuple[str, str]], batch_size: int = BATCH_SIZE) -> list[float]:
        """The support probability of each (chunk, sentence) pair, in order, ``batch_size`` pairs a call."""
        out: list[float] = []
        for i in range(0, len(pairs), batch_size):
            scores = np.asarray(self.session.run(None, self.encode(pairs[i:i + batch_size]))[0], dtype=np.float64)
            out.extend(self.probabilities(scores))
        return out

    def probabilities(self, scores: np.ndarray) -> list[float]:
        """Support probabilities from one batch of raw scores."""
        if self.entailment is None:
            return [float(p) for p in 1.0 / (1.0 + np.exp(-scores.reshape(len(scores))))]
        z = scores - scores.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        return [float(x) for x in p[:, self.entailment]]


def files(path: str) -> tuple[str, str]:
    """(model.onnx, tokenizer.json) for a folder or an ``.onnx`` file; NliModelError naming what is missing."""
    if os.path.isdir(path):
        model, folder = os.path.join(path, "model.onnx"), path
    elif os.path.isfile(path):
        model, folder = path, os.path.dirname(os.path.abspath(path))
    else:
        raise NliModelError(f"{path}: no such file or folder")
    tok = os.path.join(folder, "tokenizer.json")
    for f, what in ((model, "the ONNX model"), (tok, "the tokenizer")):
        if not os.path.isfile(f):
            raise NliModelError(f"{f} ({what}) does not exist")
    return model, tok


def _json(folder: str, name: str) -> dict:
    p = os.path.join(folder, name)
    if not os.path.isfile(p):
        return {}
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as e:
        raise NliModelError(f"{p}: not readable JSON ({e})") from None
    if not isinstance(data, dict):
        raise NliModelError(f"{p}: not a JSON object")
    return data


SETTINGS = ("entailment_index", "max_length", "template")
"""The keys ``harness-nli.json`` may hold."""


def check_settings(settings: dict, where: str) -> None:
    """NliModelError naming ``where`` (the ``harness-nli.json`` path) and the key for a setting the backend
    cannot use: checked before the first cell, so a bad template never fails every cell instead.

    >>> check_settings({"max_length": 256, "template": "{premise} / {hypothesis}"}, "h.json")
    >>> check_settings({"template": "{premise}"}, "h.json")
    Traceback (most recent call last):
    ...
    harness.adapters.nli.local.NliModelError: h.json: template '{premise}' does not hold {hypothesis}
    """
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise NliModelError(f"{where}: unknown setting {unknown[0]!r} (known: {', '.join(SETTINGS)})")
    if "max_length" in settings:
        n = settings["max_length"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise NliModelError(f"{where}: max_length {n!r:.40} is not a whole number of tokens (1 or more)")
    if "template" in settings:
        _check_template(settings["template"], where)


def _check_template(t, where: str) -> None:
    if not isinstance(t, str):
        raise NliModelError(f"{where}: template {t!r:.40} is not a string holding {{premise}} and {{hypothesis}}")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(t) if f is not None]
    except ValueError as e:
        raise NliModelError(f"{where}: template {t!r:.60} is not a format string ({e})") from None
    for f in fields:
        if f not in ("premise", "hypothesis"):
            raise NliModelError(f"{where}: template {t!r:.60} names {{{f}}}; it may name only {{premise}} and "
                                "{hypothesis} (double a brace to write it)")
    for f in ("premise", "hypothesis"):
        if f not in fields:
            raise NliModelError(f"{where}: template {t!r:.60} does not hold {{{f}}}")


def _id2label(config: dict, where: str) -> dict[int, str]:
    """config.json's ``id2label`` as column -> label (NliModelError naming the file when it is not one)."""
    raw = config.get("id2label") or {}
    if not isinstance(raw, dict):
        raise NliModelError(f"{where}: id2label is not an object of column -> label")
    out = {}
    for k, v in raw.items():
        try:
            out[int(k)] = str(v)
        except ValueError:
            raise NliModelError(f"{where}: id2label key {k!r:.40} is not a column number") from None
    return out


def sha256_of(path: str, block: int = 1 << 20) -> str:
    """The file's sha256, read ``block`` bytes at a time (a model of any size is never held in memory whole)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            h.update(chunk)
    return h.hexdigest()


def entailment_column(n: int | None, settings: dict, config: dict, where: str) -> int | None:
    """Which output column is entailment (None: a single logit).

    >>> entailment_column(3, {}, {"id2label": {"0": "contradiction", "1": "entailment", "2": "neutral"}}, "m")
    1
    >>> entailment_column(2, {}, {}, "m"), entailment_column(1, {}, {}, "m")
    (1, None)
    """
    if n in (None, 1):
        return None
    if "entailment_index" in settings:
        k = settings["entailment_index"]
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n:
            raise NliModelError(f"{where}: harness-nli.json entailment_index {k!r} is not a column of {n}")
        return k
    labels = _id2label(config, where)
    hits = [k for k, v in labels.items() if any(w in v.lower() for w in ENTAILMENT_WORDS)]
    if len(hits) == 1 and 0 <= hits[0] < n:
        return hits[0]
    if labels:
        raise NliModelError(f"{where}: config.json id2label {labels} names no single entailment label; "
                            f"set entailment_index in harness-nli.json")
    if n == 2:
        return 1
    raise NliModelError(f"{where}: {n} output labels and no config.json id2label: cannot tell which is "
                        f"entailment; set entailment_index in harness-nli.json")


@functools.lru_cache(maxsize=4)
def _load(model_path: str, tok_path: str, stamp: tuple) -> NliModel:
    import onnxruntime  # noqa: PLC0415 - lazy: only a run with --nli-model loads a session
    from tokenizers import Tokenizer  # noqa: PLC0415 - lazy: as onnxruntime

    folder = os.path.dirname(model_path)
    settings, config = _json(folder, "harness-nli.json"), _json(folder, "config.json")
    check_settings(settings, os.path.join(folder, "harness-nli.json"))
    _id2label(config, os.path.join(folder, "config.json"))
    sha = sha256_of(model_path)
    try:
        opts = onnxruntime.SessionOptions()
        opts.intra_op_num_threads = 1   # one core per worker process, as the embedded MiniLM runs
        session = onnxruntime.InferenceSession(model_path, opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types for a bad file
        raise NliModelError(f"{model_path}: onnxruntime cannot load it ({str(e)[:200]})") from None
    try:
        tokenizer = Tokenizer.from_file(tok_path)
    except Exception as e:  # noqa: BLE001 - tokenizers raises a plain Exception for a bad file
        raise NliModelError(f"{tok_path}: not a tokenizers file ({str(e)[:200]})") from None
    names = tuple(i.name for i in session.get_inputs())
    unknown = [n for n in names if n not in INPUTS]
    if "input_ids" not in names or unknown:
        raise NliModelError(f"{model_path}: inputs {list(names)}; the local backend feeds {list(INPUTS)} "
                            f"and needs input_ids")
    shape = session.get_outputs()[0].shape
    n = shape[1] if len(shape) == 2 and isinstance(shape[1], int) else (None if len(shape) <= 2 else -1)
    if n == -1:
        raise NliModelError(f"{model_path}: first output has shape {shape}; expected batch x labels or batch")
    max_length = settings.get("max_length") or (tokenizer.truncation or {}).get("max_length") or DEFAULT_MAX_LENGTH
    pad = (tokenizer.padding or {}).get("pad_id")
    if pad is None:
        pad = next((tokenizer.token_to_id(t) for t in PAD_TOKENS if tokenizer.token_to_id(t) is not None), 0)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    tokenizer.enable_truncation(int(max_length))   # longest first, as MiniCheck's truncation=True
    return NliModel(model_path, sha, session, tokenizer, names, entailment_column(n, settings, config, model_path),
                    int(max_length), settings.get("template"), pad)


def load(path: str) -> NliModel:
    """The model at ``path``, loaded once per process (reloaded when the file changes)."""
    model, tok = files(path)
    st = os.stat(model)
    return _load(os.path.abspath(model), os.path.abspath(tok), (st.st_size, st.st_mtime_ns))
