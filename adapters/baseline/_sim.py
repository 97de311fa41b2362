"""The similarity check shared by ``baseline.similarity`` and ``cascade.similarity_span``.

Each answer sentence is compared with every sentence of every passage; its score is the highest
cosine similarity, and it passes when that reaches the threshold. All texts of a cell go in one
OpenAI-compatible embeddings request through the cell's gateway URL: the gateway decides which model
serves it (the embedded all-MiniLM-L6-v2 by default, or ``--embed-url``/``--embed-model``), caches it
and counts it in the cell's ledger. Sentences are split by :func:`harness.core.spans.sentence_spans`
(end punctuation followed by whitespace), the same splitter for answers and passages.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.core.spans import sentence_spans
from harness.metric import RunOption

DEFAULT_THRESHOLD = 0.80
"""The seeds' threshold: a sentence is grounded when its best similarity is at least this."""
MODEL_ALIAS = "harness-embeddings"
"""The model id the adapters put in their requests; the gateway sends its configured model instead."""


@dataclass(frozen=True)
class Match:
    """One answer sentence and its best match among the passages' sentences."""

    span: tuple[int, int]
    """The sentence's span in the answer."""
    text: str
    """The answer sentence."""
    similarity: float
    """Highest cosine similarity to any passage sentence (-1 when there is no passage sentence)."""
    context_id: str | None
    """The passage of the best match."""
    best: str | None
    """The best-matching passage sentence."""

    def passes(self, threshold: float) -> bool:
        """Does the sentence reach the threshold?

        >>> Match((0, 1), "a", 0.8, "1", "b").passes(0.80), Match((0, 1), "a", 0.7999, "1", "b").passes(0.80)
        (True, False)
        """
        return self.similarity >= threshold


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros).

    >>> round(cosine([1.0, 0.0], [1.0, 1.0]), 4), cosine([0.0, 0.0], [1.0, 0.0])
    (0.7071, 0.0)
    """
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def passage_sentences(case) -> list[tuple[str, str]]:
    """(context id, sentence) for every sentence of every passage, in order."""
    return [(c.id, c.text[s:e]) for c in case.contexts for s, e in sentence_spans(c.text)]


def check_threshold(threshold) -> float:
    """The threshold as a float in [-1, 1]; ValueError otherwise.

    >>> check_threshold("0.75")
    0.75
    """
    t = float(threshold)
    if not -1.0 <= t <= 1.0 or math.isnan(t):
        raise ValueError(f"similarity threshold must be between -1 and 1, got {threshold!r}")
    return t


async def match_sentences(case, endpoint) -> tuple[list[Match], dict]:
    """Every answer sentence's best match, from one embeddings request; (matches, detail)."""
    spans = sentence_spans(case.answer)
    ctx = passage_sentences(case)
    texts = [case.answer[s:e] for s, e in spans] + [t for _, t in ctx]
    r = await endpoint.post_json("embeddings", {"model": MODEL_ALIAS, "input": texts, "encoding_format": "float"})
    try:
        vectors = [d["embedding"] for d in sorted(r["data"], key=lambda d: d["index"])]
    except (KeyError, TypeError) as e:
        raise ValueError(f"not an embeddings reply: {type(e).__name__} {e}") from None
    if len(vectors) != len(texts):
        raise ValueError(f"embeddings reply has {len(vectors)} vectors for {len(texts)} texts")
    ans, pas = vectors[:len(spans)], vectors[len(spans):]
    out = []
    for (s, e), v in zip(spans, ans):
        sims = [cosine(v, p) for p in pas]
        k = max(range(len(sims)), key=sims.__getitem__) if sims else None
        out.append(Match((s, e), case.answer[s:e], sims[k] if k is not None else -1.0,
                         ctx[k][0] if k is not None else None, ctx[k][1] if k is not None else None))
    return out, {"embedding_model": r.get("model"), "passage_sentences": len(ctx)}


class SimilarityThreshold:
    """What the metrics built on the similarity check share (``baseline.similarity`` and its cascade):
    the threshold, set by ``harness run --similarity-threshold``, and their place in the report."""

    in_divergence = False
    """A cheap stand-in for a judged metric: shown in the matrix and in its own report sections (agreement,
    cascade), left out of the divergence spread, which compares the judged definitions."""
    run_options = (RunOption("--similarity-threshold", "threshold", float, DEFAULT_THRESHOLD,
                             f"a sentence is grounded when its best cosine similarity reaches T (default "
                             f"{DEFAULT_THRESHOLD:.2f}); baseline.similarity and cascade.similarity_span",
                             metavar="T", check=lambda t: check_threshold(t), label="similarity threshold"),)
    uses_judge = False

    def __init__(self, threshold: float = DEFAULT_THRESHOLD):
        self.threshold = check_threshold(threshold)
