"""Frozen, typed records the whole harness passes around.

The case records mirror the JSONL case format (see ``datasets/README.md``); the result records are
what an adapter returns and what the run store keeps. Everything here is plain data: no I/O, no
vendor imports.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.core.aligner import locate_unit
from harness.core.spans import overlaps, sentence_spans, words
from harness.core.vocab import CELL_STATUSES

Label = Literal["supported", "inference", "not_found", "contradicted"]
"""A human claim label. ``inference``: follows from the context but no span states it."""

LABELS: tuple[str, ...] = ("supported", "inference", "not_found", "contradicted")

Normalised = Literal["supported", "unsupported", "ambiguous", "excluded"]
"""A vendor verdict on one unit, normalised across vendors (the raw verdict is kept beside it)."""

NORMALISED: tuple[str, ...] = ("supported", "unsupported", "ambiguous", "excluded")

Status = Literal["scored", "unscored", "vendor_nan", "not_applicable", "error"]
"""How a cell ended.

- ``scored``: a number, exactly as the metric computes it (degenerate values are flagged, not changed);
- ``unscored``: the harness's own metric declines to score (e.g. no claims), with a reason;
- ``vendor_nan``: the vendor returned NaN (or its own "unparsable" sentinel), kept with a reason;
- ``not_applicable``: the metric does not apply to this case (e.g. citation check, no [N] markers);
- ``error``: the cell failed (judge fault, vendor exception); never scored 0.
"""

STATUSES: tuple[str, ...] = CELL_STATUSES
"""The values of :data:`Status`, from the one vocabulary (:mod:`harness.core.vocab`; a test keeps the two equal)."""


@dataclass(frozen=True)
class Context:
    """One retrieved passage."""

    id: str
    """Identifier, unique within the case; citations ``[N]`` and evidence refer to it."""
    text: str
    """The passage text, exactly as retrieved."""


@dataclass(frozen=True)
class Evidence:
    """A character span of one context that states (part of) a claim."""

    context_id: str
    """Which context the span is in."""
    start: int
    """Start offset in that context's text (inclusive)."""
    end: int
    """End offset (exclusive)."""


@dataclass(frozen=True)
class Claim:
    """One atomic claim of the answer, as a human annotator labelled it."""

    text: str
    """The claim as a self-contained statement."""
    answer_span: tuple[int, int]
    """Where the claim sits in the answer: ``answer[start:end]``."""
    label: Label
    """supported | inference | not_found | contradicted."""
    evidence: tuple[Evidence, ...] = ()
    """Spans that state the claim (several for a multi-hop claim); empty when no span states it.
    For a contradicted claim, the spans that contradict it."""
    cited_context_id: str | None = None
    """The context the answer cites for this claim with an ``[N]`` marker, if any."""


@dataclass(frozen=True)
class HallucinationSpan:
    """A RAGTruth-style human span on the answer, for imported data without a claim list."""

    start: int
    """Start offset in the answer."""
    end: int
    """End offset in the answer (exclusive)."""
    label: Literal["not_found", "contradicted"]
    """What kind of hallucination the span is."""


@dataclass(frozen=True)
class Annotation:
    """The human labels of one case."""

    claims: tuple[Claim, ...]
    """Atomic claims of the answer, in answer order. Empty for an empty answer or a pure abstention."""
    answerable: bool
    """Can the contexts answer the question?"""
    abstention: bool
    """Does the answer decline to answer?"""
    abstention_span: tuple[int, int] | None = None
    """Where the abstention sits in the answer; defaults to the whole answer when ``abstention``."""
    spans: tuple[HallucinationSpan, ...] | None = None
    """Optional RAGTruth-style spans; used only when ``claims`` is empty and spans are given."""


@dataclass(frozen=True)
class Case:
    """One case: a question, its retrieved contexts, an answer, and (optionally) the human labels.

    The annotation views are methods (``judged_claims``, ``claims_in``, ``claim_for_text``,
    ``abstention_at``, ``unit_span``): what the human labels say, read the one way every part of
    the project reads them (reference-judge handlers, adapters' unit spans, reports' alignment)."""

    id: str
    """Unique identifier within the file."""
    question: str
    """The user's question."""
    contexts: tuple[Context, ...]
    """Retrieved passages, in retrieval order."""
    answer: str
    """The generated answer under evaluation (may be empty)."""
    annotation: Annotation | None
    """Claim-level human labels; None for an unannotated case (a real judge needs none; the
    reference judge cannot answer one)."""
    reference_answer: str | None = None
    """A correct answer, where the case has one (groundedness never reads it)."""
    tags: tuple[str, ...] = ()
    """What the case probes: inference, abstention, citation, numeric, multi-hop, ..."""
    source: str = ""
    """``file:line`` the case was loaded from."""

    @property
    def annotated(self) -> bool:
        """Does the case carry human labels?"""
        return self.annotation is not None

    def context(self, context_id: str) -> Context:
        """The context with this id (KeyError naming the known ids otherwise)."""
        for ctx in self.contexts:
            if ctx.id == context_id:
                return ctx
        raise KeyError(f"case {self.id!r} has no context {context_id!r}; "
                       f"known: {', '.join(c.id for c in self.contexts)}")

    def evidence_text(self, ev: Evidence) -> str:
        """The text an evidence span points at."""
        return self.context(ev.context_id).text[ev.start:ev.end]

    @property
    def context_texts(self) -> list[str]:
        """The passages' texts, in order (what vendors take as ``retrieved_contexts``)."""
        return [c.text for c in self.contexts]

    def judged_claims(self) -> list[Claim]:
        """The claims the annotation states: its claims, or, for RAGTruth-style data (``spans`` given,
        even an empty list, and no claims), one claim per answer sentence labelled by the spans it
        overlaps (contradicted wins over not_found).

        Span labels say where the answer is wrong, not where the passages support it, so a supported
        sentence of such data gets as evidence the passage sentence sharing the most words with it
        (:meth:`span_evidence`): the verdict comes from the labels, only the quote is looked up, so a
        span-level rubric (the in-house verbatim check) can be answered at all.

        >>> from harness.core.records import Annotation, Case, HallucinationSpan
        >>> c = Case("x", "q", (), "It is red. It is big.",
        ...          Annotation((), True, False, spans=(HallucinationSpan(11, 21, "not_found"),)))
        >>> [(k.text, k.label) for k in c.judged_claims()]
        [('It is red.', 'supported'), ('It is big.', 'not_found')]
        """
        ann = self.annotation
        if ann is None:
            return []
        if ann.claims or ann.spans is None:
            return list(ann.claims)
        out = []
        for s, e in sentence_spans(self.answer):
            hit = [sp.label for sp in ann.spans if overlaps((s, e), (sp.start, sp.end))]
            label = "contradicted" if "contradicted" in hit else ("not_found" if hit else "supported")
            ev = self.span_evidence(self.answer[s:e]) if label == "supported" else ()
            out.append(Claim(self.answer[s:e], (s, e), label, ev))
        return out

    def span_evidence(self, text: str) -> tuple:
        """The passage sentence sharing the most words with ``text``, as evidence (empty when none shares any).

        >>> from harness.core.records import Annotation, Case, Context
        >>> c = Case("x", "q", (Context("1", "The sky is blue. Grass is green."),), "", Annotation((), True, False))
        >>> [c.evidence_text(e) for e in c.span_evidence("Grass looks green.")]
        ['Grass is green.']
        """

        want = set(words(text))
        best, score = None, 0
        for ctx in self.contexts:
            for s, e in sentence_spans(ctx.text):
                n = len(want & set(words(ctx.text[s:e])))
                if n > score:
                    best, score = Evidence(ctx.id, s, e), n
        return (best,) if best is not None else ()

    def claims_in(self, span: tuple[int, int]) -> list[Claim]:
        """The judged claims whose answer span overlaps ``span``."""
        return [c for c in self.judged_claims() if overlaps(c.answer_span, span)]

    def claim_for_text(self, text: str) -> Claim | None:
        """The judged claim whose text is ``text`` (whitespace- and case-insensitive), or None."""
        key = " ".join(text.split()).lower()
        for c in self.judged_claims():
            if " ".join(c.text.split()).lower() == key:
                return c
        return None

    def abstention_at(self) -> tuple[int, int] | None:
        """Where the answer abstains, if it does (the whole answer unless the annotation says where)."""
        ann = self.annotation
        if ann is None or not ann.abstention:
            return None
        return ann.abstention_span or (0, len(self.answer))

    def unit_span(self, text: str) -> tuple[int, int] | None:
        """Span of a unit of judgement in the answer, from the answer aligner
        (:func:`harness.core.aligner.locate_unit`: a judged claim with that text gives its annotated span;
        then exact, normalised, fuzzy; None: not located)."""

        return locate_unit(self, text).span


@dataclass(frozen=True)
class Quote:
    """Evidence a judge quoted for a unit, and whether it really occurs in the context."""

    text: str
    """The quote as the judge gave it."""
    context_id: str | None = None
    """The context the judge named, or where the quote was found."""
    start: int | None = None
    """Offset of the quote in that context, when it occurs there."""
    end: int | None = None
    """End offset (exclusive)."""
    verbatim: bool | None = None
    """True: occurs verbatim (whitespace and quote marks normalised); False: it does not;
    None: not checked (e.g. the judge quoted nothing)."""
    match: str | None = None
    """How the quote was located where a metric locates near-verbatim quotes: ``exact``, ``near``
    (case, punctuation, whitespace, ellipses or a passage prefix differ) or ``sentence`` (the quote named
    the sentence by number); None: not located, or not checked."""


@dataclass(frozen=True)
class UnitVerdict:
    """A metric's verdict on one unit of the answer (claim, statement, sentence or the whole answer)."""

    index: int
    """Position of the unit in the metric's own list."""
    text: str
    """The unit as the metric saw it (a generated statement, a claim, a sentence)."""
    verdict: Normalised
    """supported | unsupported | ambiguous | excluded (normalised across vendors)."""
    raw_verdict: str
    """The vendor's own verdict value, e.g. ``borderline``, ``1``, ``2/3``, ``not_found``."""
    kind: str = "claim"
    """What the unit is: claim | statement | sentence | answer | judge."""
    reason: str | None = None
    """The judge's or the metric's reason for the verdict."""
    span: tuple[int, int] | None = None
    """The unit's character span in the answer, where it can be located."""
    quotes: tuple[Quote, ...] = ()
    """Evidence the judge quoted for the unit, with the verbatim check."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Vendor-specific extras (JSON-serialisable)."""


@dataclass(frozen=True)
class CellResult:
    """What an adapter returns for one (case, metric) cell."""

    status: Status
    """How the cell ended (see ``Status``)."""
    score: float | None = None
    """The score exactly as the metric computes it; None unless ``status == "scored"``."""
    reason: str | None = None
    """Why the cell is not scored, or the vendor's own reason string."""
    units: tuple[UnitVerdict, ...] = ()
    """Per-unit verdicts."""
    flags: tuple[str, ...] = ()
    """Degenerate-value flags, e.g. ``no_claims_scored_1``, ``all_trivial_scored_0``."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Vendor-specific extras kept for the report (JSON-serialisable): truths, raw ratings, ..."""

    @classmethod
    def scored(cls, score: float, units=(), *, reason=None, flags=(), detail=None) -> "CellResult":
        """A scored cell. A NaN score is turned into ``vendor_nan`` so it never hides as a number."""
        if score is None or (isinstance(score, float) and math.isnan(score)):
            return cls.vendor_nan(reason or "the vendor returned NaN", units, detail=detail, flags=flags)
        return cls("scored", float(score), reason, tuple(units), tuple(flags), dict(detail or {}))

    @classmethod
    def unscored(cls, reason: str, units=(), *, flags=(), detail=None) -> "CellResult":
        """Declined by the harness's own metric (never 1.0, never 0)."""
        return cls("unscored", None, reason, tuple(units), tuple(flags), dict(detail or {}))

    @classmethod
    def vendor_nan(cls, reason: str, units=(), *, flags=(), detail=None) -> "CellResult":
        """The vendor returned NaN or its unparsable sentinel: unscored by the vendor."""
        return cls("vendor_nan", None, reason, tuple(units), tuple(flags), dict(detail or {}))

    @classmethod
    def not_applicable(cls, reason: str, *, detail=None) -> "CellResult":
        """The metric does not apply to this case."""
        return cls("not_applicable", None, reason, (), (), dict(detail or {}))

    @classmethod
    def error(cls, reason: str, units=(), *, detail=None) -> "CellResult":
        """The cell failed; the reason is short and names the cause."""
        return cls("error", None, reason, tuple(units), (), dict(detail or {}))


@dataclass(frozen=True)
class Ledger:
    """Judge traffic of one cell, as the gateway counted it."""

    calls: int = 0
    """Requests the cell sent (cache hits included)."""
    prompt_tokens: int = 0
    """Prompt tokens of every reply the cell got (billed + cached)."""
    completion_tokens: int = 0
    """Completion tokens of every reply the cell got (billed + cached)."""
    latency_ms: float = 0.0
    """Summed wall time of the cell's requests at the gateway."""
    cache_hits: int = 0
    """Requests answered from the cache."""
    errors: int = 0
    """Requests that ended in an error response (after the gateway's retries)."""
    retries: int = 0
    """Upstream attempts beyond the first, summed over requests."""
    last_error: str | None = None
    """The last error the gateway returned to this cell, if any."""
    billed_prompt_tokens: int = 0
    """Prompt tokens of replies the upstream judge served live (what it bills)."""
    billed_completion_tokens: int = 0
    """Completion tokens of replies the upstream judge served live."""
    cached_prompt_tokens: int = 0
    """Prompt tokens of replies served from the cache (billed once, earlier)."""
    cached_completion_tokens: int = 0
    """Completion tokens of replies served from the cache."""
    usage_missing: int = 0
    """Live replies that carried no (readable) ``usage``: their tokens are unknown, not counted."""
    format_misfits: int = 0
    """Replies that did not fit the requested ``response_format`` (an observation: handed on as they came)."""
    judge_ms: float = 0.0
    """Summed time in the judge of the cell's requests: from each attempt leaving the gateway to its reply,
    the waits in the pace and between retries left out; cache hits count 0 (the embedded embedding model's
    compute time for its calls). Unlike ``latency_ms`` it does not grow with the run's queue."""
