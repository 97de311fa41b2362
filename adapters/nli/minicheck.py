"""``nli.minicheck``: the NLI check in MiniCheck's form, each answer sentence against each passage chunk.

Definition (MiniCheck, Tang, Laban and Durrett, EMNLP 2024): the answer is split into sentences
(the project's splitter, :func:`harness.core.spans.sentence_spans`); every passage is cut into
chunks of whole sentences (:mod:`harness.adapters.nli.chunks`); each sentence is checked against each chunk
and its support probability is the highest over all chunks of all passages; the sentence is
supported when that probability is above 0.5 (MiniCheck's ``pred_label``); the answer's score is the
share of supported sentences. MiniCheck leaves the aggregation over sentences to its user; the mean
of the sentence labels is the one its README points to (check each sentence, then combine). An
empty answer is unscored.

Two backends, chosen by the run:

- the judge (default): MiniCheck's yes/no prompt as a chat completion through the cell's gateway URL,
  so Bespoke-MiniCheck-7B, or any LLM served over HTTP, or the reference judge, is the checker. The
  probability comes from the reply's log-probabilities when the server returns them, else from the
  yes/no text (:mod:`harness.adapters.nli.prompt`). One call per (sentence, chunk) pair;
- a local cross-encoder (``harness run --nli-model PATH``): an ONNX NLI model run in the worker
  (:mod:`harness.adapters.nli.local`); no judge call at all.
"""
from __future__ import annotations

import asyncio

from harness.adapters.nli.chunks import JUDGE_CHUNK_WORDS, LOCAL_CHUNK_TOKENS, Chunk, chunk_case
from harness.adapters.nli.judge import LABEL_READING
from harness.adapters.nli.prompt import Support, request, support
from harness.core.records import Case, CellResult, UnitVerdict
from harness.core.spans import sentence_spans
from harness.metric import Endpoint, RunOption, register

THRESHOLD = 0.5
"""A sentence is supported when its best support probability is above this (MiniCheck: ``prob > 0.5``)."""
CONCURRENCY = 8
"""Judge calls of one cell in flight at once."""

CARD_NOTES = """
Each unit is one answer sentence; its raw verdict is its best support probability, and its detail keeps
every chunk's probability, where each came from (`logprobs`, `text`, `unreadable`, or `local`) and the best
chunk's passage. The request asks for `logprobs` with 5 alternatives and one token, as MiniCheck's own
checker does; servers that ignore the request are read from the reply's text. With `--nli-model` the
cell's detail names the model file's sha256 and the judge is not called.
"""


def check_chunk_size(size) -> int | None:
    """The chunk size as a positive int (None: the backend's default); ValueError otherwise.

    >>> check_chunk_size("300"), check_chunk_size(None)
    (300, None)
    """
    if size is None:
        return None
    n = int(size)
    if n < 1:
        raise ValueError(f"must be at least 1, got {size!r}")
    return n


def check_model_path(path) -> None:
    """ValueError naming the file and what is wrong when ``path`` is given and is not a model the local
    backend can use: the run stops before its first cell (exit 2), instead of every cell failing."""
    if path:
        from harness.adapters.nli.local import load  # noqa: PLC0415 - lazy: numpy and onnxruntime stay out of --help

        load(path)


RUN_OPTIONS = (
    RunOption("--nli-model", "model_path", str, None,
              "nli.minicheck: check with a local ONNX cross-encoder NLI model instead of the judge: a folder "
              "with model.onnx and tokenizer.json (none ships; see the metric's card)", metavar="PATH",
              check=check_model_path, label="NLI model", fmt="{}"),
    RunOption("--nli-chunk-size", "chunk_size", int, None,
              f"nli.minicheck: passage chunk size (default {JUDGE_CHUNK_WORDS} words for the judge, "
              f"{LOCAL_CHUNK_TOKENS} model tokens for --nli-model)", metavar="N", check=check_chunk_size,
              label="NLI chunk size", fmt="{}"),
)


def sentence_unit(i: int, span: tuple[int, int], text: str, checks: list[tuple[Chunk, Support]]) -> UnitVerdict:
    """One sentence's verdict from its checks against every chunk."""
    readable = [(c, s) for c, s in checks if s.prob is not None]
    best = max(readable, key=lambda cs: cs[1].prob, default=None)
    prob = best[1].prob if best else None
    if prob is not None and prob > THRESHOLD:
        verdict = "supported"
    elif len(readable) < len(checks):
        verdict = "ambiguous"        # an unreadable reply might have said yes: never counted as a no
    else:
        verdict = "unsupported"
    where = f"passage {best[0].context_id} chunk {best[0].index}" if best else "no readable reply"
    reason = (f"best support probability {prob:.4f} ({where})" if prob is not None else where)
    if verdict == "ambiguous":
        reason += f"; {len(checks) - len(readable)} of {len(checks)} replies unreadable"
    detail = {"prob": None if prob is None else round(prob, 6), "threshold": THRESHOLD,
              "context_id": best[0].context_id if best else None,
              "chunks": [{"context_id": c.context_id, "chunk": c.index, "span": list(c.span),
                          "prob": None if s.prob is None else round(s.prob, 6), "source": s.source,
                          **({"reply": s.reply} if s.source == "unreadable" else {})} for c, s in checks]}
    return UnitVerdict(index=i, text=text, verdict=verdict,
                       raw_verdict="unreadable" if prob is None else f"{prob:.4f}",
                       kind="sentence", reason=reason, span=span, detail=detail)


def result_of(units: list[UnitVerdict], detail: dict) -> CellResult:
    """The cell from its sentence units: the share of supported sentences, unless one is undecided."""
    undecided = [u for u in units if u.verdict == "ambiguous"]
    supported = sum(u.verdict == "supported" for u in units)
    detail = {**detail, "sentences": len(units), "supported": supported}
    if undecided:
        return CellResult.unscored(f"{len(undecided)} sentence(s) undecided: a judge reply was neither yes nor "
                                   f"no (first: {undecided[0].text[:60]!r})", units, detail=detail)
    return CellResult.scored(supported / len(units), units, detail=detail)


@register
class NliMiniCheck:
    """MiniCheck's sentence-by-chunk NLI check (see the module docstring)."""

    name = "nli.minicheck"
    version = "1"
    display_name = "MiniCheck NLI check (sentence x chunk)"
    short_name = "minicheck"
    order = 60
    higher_is_better = True
    vendor = "nli"
    vendor_package = None
    unit = "sentence"
    score_range = (0.0, 1.0)
    definition = ("Share of answer sentences that some passage chunk supports with probability above 0.5, each "
                  "sentence checked against each chunk with MiniCheck's yes/no prompt (or a local NLI model).")
    card_notes = CARD_NOTES
    shims = ()
    flags = ()
    label_reading = LABEL_READING
    judge = "harness.adapters.nli.judge:minicheck_reply"
    run_options = RUN_OPTIONS

    def __init__(self, model_path: str | None = None, chunk_size: int | None = None):
        self.model_path = model_path or None
        self.chunk_size = check_chunk_size(chunk_size)

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        spans = sentence_spans(case.answer)
        if not spans:
            return CellResult.unscored("no sentences: the answer is empty")
        sentences = [case.answer[s:e] for s, e in spans]
        if self.model_path is None:
            chunks = chunk_case(case, self.chunk_size or JUDGE_CHUNK_WORDS)
            checks, detail = await self._judge(sentences, chunks, endpoint), {"backend": "judge"}
        else:
            checks, chunks, detail = await asyncio.to_thread(self._local, case, sentences)
        detail.update(chunks=len(chunks), checks=len(sentences) * len(chunks))
        units = [sentence_unit(i, sp, t, checks[i * len(chunks):(i + 1) * len(chunks)])
                 for i, (sp, t) in enumerate(zip(spans, sentences))]
        return result_of(units, detail)

    async def _judge(self, sentences: list[str], chunks: list[Chunk], endpoint: Endpoint) -> list:
        sem = asyncio.Semaphore(CONCURRENCY)

        async def one(sentence: str, chunk: Chunk):
            async with sem:
                reply = await endpoint.post_json("chat/completions", request(endpoint.model, chunk.text, sentence))
            return chunk, support(reply)

        return list(await asyncio.gather(*(one(s, c) for s in sentences for c in chunks)))

    def _local(self, case: Case, sentences: list[str]):
        from harness.adapters.nli.local import load  # noqa: PLC0415 - lazy: onnxruntime only for --nli-model

        model = load(self.model_path)
        chunks = chunk_case(case, self.chunk_size or LOCAL_CHUNK_TOKENS, model.tokens)
        probs = model.support([(c.text, s) for s in sentences for c in chunks])
        pairs = [(s, c) for s in sentences for c in chunks]
        checks = [(c, Support(p, "local", "")) for (_, c), p in zip(pairs, probs)]
        return checks, chunks, {"backend": "local", "model_sha256": model.sha256, "inputs": list(model.inputs)}
