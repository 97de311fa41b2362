"""Passage chunks for the NLI check, cut the way MiniCheck cuts a long document.

MiniCheck splits a document into sentences and packs consecutive sentences into a chunk while the
chunk's size stays within ``chunk_size``; a sentence that would overflow starts the next chunk (a
single sentence longer than the limit is a chunk of its own: the checker truncates it). Its
Flan-T5 checker counts whitespace words, its encoder checkers count their tokenizer's tokens: here
the size function is a parameter, words by default (the judge backend) and the local model's tokens
for the ONNX backend. Sentences come from the project's splitter (:func:`harness.core.spans.sentence_spans`),
and the chunk keeps its character span in the passage, so a reader can see which part of which
passage a verdict is about.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from harness.core.spans import sentence_spans

JUDGE_CHUNK_WORDS = 500
"""Default chunk size of the judge backend, in words (MiniCheck's word-counted default, its Flan-T5 checker)."""
LOCAL_CHUNK_TOKENS = 400
"""Default chunk size of the local backend, in model tokens (MiniCheck's RoBERTa/DeBERTa default)."""


@dataclass(frozen=True)
class Chunk:
    """One piece of one passage that a sentence is checked against."""

    context_id: str | None
    """The passage's id (None: the case has no passage; the chunk is empty)."""
    index: int
    """Position of the chunk within its passage (0-based)."""
    span: tuple[int, int]
    """Characters of the passage the chunk covers."""
    text: str
    """The chunk as sent: its sentences joined by one space, as MiniCheck joins them."""


def word_count(text: str) -> int:
    """Whitespace-separated words, as MiniCheck's word-counted chunking counts them.

    >>> word_count("Bake at 350 F.  Cool."), word_count("")
    (5, 0)
    """
    return len(text.split())


def chunk_passage(context_id: str | None, text: str, size: int,
                  count: Callable[[str], int] = word_count) -> list[Chunk]:
    """The passage cut into chunks of at most ``size`` (measured by ``count``) whole sentences each.

    An empty passage is one empty chunk (MiniCheck checks a claim against an empty document rather
    than skipping it).

    >>> t = "One two. Three four five. Six."
    >>> [c.text for c in chunk_passage("1", t, 5)]
    ['One two. Three four five.', 'Six.']
    >>> [c.text for c in chunk_passage("1", t, 2)]
    ['One two.', 'Three four five.', 'Six.']
    >>> [(c.text, c.span) for c in chunk_passage("1", "", 5)]
    [('', (0, 0))]
    """
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    spans = sentence_spans(text)
    if not spans:
        return [Chunk(context_id, 0, (0, 0), "")]
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    used = 0
    for s, e in spans:
        n = count(text[s:e])
        if current and used + n > size:
            groups.append(current)
            current, used = [], 0
        current.append((s, e))
        used += n
    groups.append(current)
    return [Chunk(context_id, i, (g[0][0], g[-1][1]), " ".join(text[s:e] for s, e in g))
            for i, g in enumerate(groups)]


def chunk_case(case, size: int, count: Callable[[str], int] = word_count) -> list[Chunk]:
    """Every passage's chunks, passage by passage; one empty chunk when the case has no passage."""
    out = [c for ctx in case.contexts for c in chunk_passage(ctx.id, ctx.text, size, count)]
    return out or [Chunk(None, 0, (0, 0), "")]
