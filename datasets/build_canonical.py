#!/usr/bin/env python3
"""Build ``datasets/canonical.jsonl`` from the readable case definitions in this file.

Each case is written here as plain text: the question, the retrieved passages, the answer, and
for every claim the exact words of the answer that state it and the exact words of the passages
that support (or contradict) it. Every offset in the JSONL is computed by substring search, so
no offset is ever typed by hand. A substring that is missing, or that occurs more than once
without an ``occurrence`` index to choose between the matches, stops the build with an error
naming the case and the text.

Usage (from the repository root)::

    .venv/bin/python datasets/build_canonical.py            # write datasets/canonical.jsonl
    .venv/bin/python datasets/build_canonical.py --check    # build in memory, compare with the file
    .venv/bin/python datasets/build_canonical.py --show     # print each answer's sentences and labels

The output is deterministic: two runs give byte-identical files. After writing, the file is
loaded with ``harness.cases.load.load_cases`` and the build fails if that loader rejects it.

Facts come from the two seed articles in ``shared/seeds``; every sentence is written for this
project. Licence: Apache-2.0, like the rest of the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "canonical.jsonl")

LABELS = ("supported", "inference", "not_found", "contradicted")
S, I, N, X = LABELS  # short names used in the case table below
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_MARKER = re.compile(r"\[(\d+)\]")


class BuildError(ValueError):
    """A case definition that cannot be turned into a valid JSONL line."""


# --- the readable case model ------------------------------------------------------------------

@dataclass(frozen=True)
class Ev:
    """Evidence: the exact words of context ``ctx`` (``occurrence`` picks among repeats, 0-based)."""

    ctx: str
    quote: str
    occurrence: int | None = None


@dataclass(frozen=True)
class Cl:
    """A claim: its self-contained ``text``, the exact answer words ``says`` that state it, a label,
    evidence, and the context id the answer cites for it (``cited``), if any."""

    text: str
    says: str
    label: str
    evidence: tuple[Ev, ...] = ()
    cited: str | None = None
    occurrence: int | None = None


@dataclass(frozen=True)
class Case:
    """One case. ``contexts`` are in retrieval order and get the ids "1", "2", ... ."""

    id: str
    tags: tuple[str, ...]
    question: str
    contexts: tuple[str, ...]
    answer: str
    claims: tuple[Cl, ...] = ()
    answerable: bool = True
    abstention: bool = False
    abstains: str | None = None
    """The exact answer words that decline (required when ``abstention``)."""
    reference_answer: str | None = None


def ev(ctx: str, quote: str, occurrence: int | None = None) -> Ev:
    return Ev(ctx, quote, occurrence)


def claim(text: str, says: str, label: str, *evidence: Ev, cited: str | None = None,
          occurrence: int | None = None) -> Cl:
    return Cl(text, says, label, tuple(evidence), cited, occurrence)


# --- shared passages (own wording; facts from the seed articles) ------------------------------

COOKIES = (
    "Chewy chocolate chip cookies. Heat the oven to 350 F and line two baking sheets with "
    "parchment paper. Scoop the dough in rounded tablespoons, leaving about 2 inches between them. "
    "Bake for 8 to 10 minutes, until the edges are golden but the centres still look soft. Leave "
    "the cookies on the sheet for 2 minutes, then move them to a wire rack to cool completely."
)
HEADSET = (
    "Aurora X2 wireless headset, product page (last updated June 2025). Release date: March 2024. "
    "List price: 149 dollars. Battery life: up to 30 hours per charge."
)
REFUND_WINDOW = "Refund requests are accepted up to 30 days after the date of purchase."
REFUND_UNUSED = "To qualify for a refund, an item must be returned unused."
REFUND_METHOD = "Approved refunds are paid back to the original payment method."
PHONE_LINE = "Customer service can be reached by phone 24 hours a day, 7 days a week."
LEAVE = (
    "Parental leave policy. Employees are entitled to 39 weeks of parental leave in total. "
    "During the first 6 weeks of leave, pay is 90% of the employee's salary."
)
LEAVE_DE = (
    "Richtlinie zur Elternzeit. Beschäftigte haben Anspruch auf insgesamt 39 Wochen Elternzeit. "
    "In den ersten 6 Wochen werden 90 % des Gehalts weitergezahlt."
)
RATE_LIMIT_2022 = (
    "Public API rate limits (revised March 2022). Each API key may send up to 100 requests per "
    "minute to the public API. Requests above the limit are rejected with HTTP status 429."
)
POOL = (
    "Riverside Leisure Centre opening times. On weekdays the pool opens at 6:30 am. On Saturdays "
    "and Sundays it opens at 8 am. Lane swimming finishes at 9 pm every day."
)
STORE = (
    "Main Street store. Opening hours: Monday to Saturday, 9 am to 7 pm. The store is closed on "
    "Sundays and public holidays."
)
OFFICE_MAP = "Visitor guide. The customer support office is on the second floor of Building C."
OFFICE_HOURS = "Building hours. Building C closes at 6 pm on weekdays. Building A stays open until 8 pm."

# the seeds' similarity-shortcut example, retold: three short policy lines, five one-claim sentences
RETURNS = (
    "You can get your money back within 30 days of buying an item.",
    "Returned items have to be unused.",
    "The money is refunded to the payment method you used.",
)

# the same two leave claims recur across the leave cases
LEAVE_39 = claim("Employees are entitled to 39 weeks of parental leave.",
                 "You are entitled to 39 weeks of parental leave", S,
                 ev("1", "Employees are entitled to 39 weeks of parental leave"))
LEAVE_PAY = claim("Parental leave pay is 90% of salary for the first 6 weeks.",
                  "For the first 6 weeks you receive 90% of your salary", S,
                  ev("1", "During the first 6 weeks of leave, pay is 90% of the employee's salary"))


# --- the cases --------------------------------------------------------------------------------

CASES: tuple[Case, ...] = (
    Case(
        id="cookie-yield",
        tags=("classic", "not-found", "lenient-vs-strict"),
        question="How do I bake these chocolate chip cookies, and how many does the recipe make?",
        contexts=(COOKIES,),
        answer=("Bake the cookies at 350 F for 8 to 10 minutes. Let them cool on a wire rack. "
                "The recipe makes two dozen cookies."),
        claims=(
            claim("The cookies bake at 350 F.", "Bake the cookies at 350 F", S,
                  ev("1", "Heat the oven to 350 F")),
            claim("The cookies bake for 8 to 10 minutes.", "for 8 to 10 minutes", S,
                  ev("1", "Bake for 8 to 10 minutes")),
            claim("The cookies cool on a wire rack.", "Let them cool on a wire rack", S,
                  ev("1", "move them to a wire rack to cool completely")),
            claim("The recipe makes two dozen cookies.", "The recipe makes two dozen cookies", N),
        ),
    ),
    Case(
        id="product-age",
        tags=("inference", "date-arithmetic"),
        question="Is the Aurora X2 headset a new model?",
        contexts=(HEADSET,),
        answer="The Aurora X2 was released in March 2024. It is over a year old.",
        claims=(
            claim("The Aurora X2 was released in March 2024.",
                  "The Aurora X2 was released in March 2024", S,
                  ev("1", "Release date: March 2024")),
            claim("The Aurora X2 is over a year old.", "It is over a year old", I),
        ),
    ),
    Case(
        id="release-date-contradicted",
        tags=("contradicted", "date", "control"),
        question="When did the Aurora X2 come out, and what does it cost?",
        contexts=(HEADSET,),
        answer="The Aurora X2 came out in May 2024. Its list price is 149 dollars.",
        claims=(
            claim("The Aurora X2 was released in May 2024.", "The Aurora X2 came out in May 2024", X,
                  ev("1", "Release date: March 2024")),
            claim("The Aurora X2 has a list price of 149 dollars.", "Its list price is 149 dollars", S,
                  ev("1", "List price: 149 dollars")),
        ),
    ),
    Case(
        id="refund-invented",
        tags=("not-found", "invented-detail", "similarity-shortcut"),
        question="What is your refund policy?",
        contexts=(REFUND_WINDOW, REFUND_UNUSED, REFUND_METHOD),
        answer=("You can request a refund up to 30 days after you buy something. The item has to be "
                "unused. The money goes back to your original payment method. On top of that, you get "
                "a 10 dollar store credit. The refund is processed within 2 business days."),
        claims=(
            claim("Refunds can be requested up to 30 days after purchase.",
                  "You can request a refund up to 30 days after you buy something", S,
                  ev("1", "Refund requests are accepted up to 30 days after the date of purchase")),
            claim("A returned item must be unused.", "The item has to be unused", S,
                  ev("2", "an item must be returned unused")),
            claim("The refund is paid to the original payment method.",
                  "The money goes back to your original payment method", S,
                  ev("3", "paid back to the original payment method")),
            claim("The customer also receives a 10 dollar store credit.",
                  "you get a 10 dollar store credit", N),
            claim("Refunds are processed within 2 business days.",
                  "The refund is processed within 2 business days", N),
        ),
    ),
    Case(
        id="leave-grounded",
        tags=("leave-trio", "all-supported", "control"),
        question="How does parental leave work here?",
        contexts=(LEAVE,),
        answer=("You are entitled to 39 weeks of parental leave. "
                "For the first 6 weeks you receive 90% of your salary."),
        claims=(LEAVE_39, LEAVE_PAY),
    ),
    Case(
        id="leave-misread",
        tags=("leave-trio", "contradicted", "misread"),
        question="How does parental leave work here?",
        contexts=(LEAVE,),
        answer=("You are entitled to 39 weeks of parental leave. "
                "For the first 6 weeks you receive your full salary."),
        claims=(
            LEAVE_39,
            claim("Parental leave pay is full salary for the first 6 weeks.",
                  "For the first 6 weeks you receive your full salary", X,
                  ev("1", "pay is 90% of the employee's salary")),
        ),
    ),
    Case(
        id="leave-notice",
        tags=("leave-trio", "not-found", "true-but-ungrounded"),
        question="How does parental leave work here?",
        contexts=(LEAVE,),
        answer=("You are entitled to 39 weeks of parental leave. "
                "You have to notify your employer 8 weeks before the leave begins."),
        claims=(
            LEAVE_39,
            claim("Employees must give 8 weeks' notice before parental leave starts.",
                  "You have to notify your employer 8 weeks before the leave begins", N),
        ),
    ),
    Case(
        id="leave-months-paraphrase",
        tags=("inference", "paraphrase", "unit-conversion"),
        question="How long is parental leave?",
        contexts=(LEAVE,),
        answer=("Parental leave lasts about nine months. "
                "For the first 6 weeks you receive 90% of your salary."),
        claims=(
            claim("Parental leave lasts about nine months.", "Parental leave lasts about nine months", I),
            LEAVE_PAY,
        ),
    ),
    Case(
        id="leave-40-weeks",
        tags=("contradicted", "numeric", "subtle"),
        question="How many weeks of parental leave do I get?",
        contexts=(LEAVE,),
        answer=("You are entitled to 40 weeks of parental leave. "
                "For the first 6 weeks you receive 90% of your salary."),
        claims=(
            claim("Employees are entitled to 40 weeks of parental leave.",
                  "You are entitled to 40 weeks of parental leave", X,
                  ev("1", "Employees are entitled to 39 weeks of parental leave")),
            LEAVE_PAY,
        ),
    ),
    Case(
        id="rate-limit-stale",
        tags=("grounded-but-wrong", "correctness", "stale-context"),
        question="What is the rate limit on the public API?",
        contexts=(RATE_LIMIT_2022,),
        answer="Each API key can send up to 100 requests per minute to the public API.",
        claims=(
            claim("Each API key is limited to 100 requests per minute on the public API.",
                  "Each API key can send up to 100 requests per minute to the public API", S,
                  ev("1", "Each API key may send up to 100 requests per minute to the public API")),
        ),
        reference_answer=("The current limit is 1000 requests per minute for each API key; it was "
                          "raised from 100 in 2025, so the 2022 document is out of date."),
    ),
    Case(
        id="memory-correct",
        tags=("ungrounded-but-correct", "not-found", "retrieval-miss"),
        question="At what temperature does water boil at sea level?",
        contexts=(COOKIES,),
        answer="At sea level, water boils at 100 degrees Celsius.",
        claims=(
            claim("Water boils at 100 degrees Celsius at sea level.",
                  "At sea level, water boils at 100 degrees Celsius", N),
        ),
        answerable=False,
        reference_answer="100 degrees Celsius (212 F).",
    ),
    Case(
        id="abstain-answerable",
        tags=("abstention", "answerable", "over-refusal"),
        question="How many weeks of parental leave do I get?",
        contexts=(LEAVE,),
        answer="I'm sorry, but I don't know how many weeks of parental leave you are entitled to.",
        answerable=True,
        abstention=True,
        abstains="I'm sorry, but I don't know how many weeks of parental leave you are entitled to.",
        reference_answer="39 weeks.",
    ),
    Case(
        id="abstain-unanswerable",
        tags=("abstention", "unanswerable", "correct-refusal"),
        question="Can I get a refund for a digital download?",
        contexts=(REFUND_WINDOW, REFUND_UNUSED, REFUND_METHOD),
        answer="I can't tell from the documents I have whether digital downloads can be refunded.",
        answerable=False,
        abstention=True,
        abstains="I can't tell from the documents I have whether digital downloads can be refunded.",
    ),
    Case(
        id="citations-correct",
        tags=("citation", "all-supported"),
        question="How long do I have to ask for a refund, and how is the money paid back?",
        contexts=(REFUND_WINDOW, REFUND_METHOD),
        answer=("You have 30 days from the purchase date to ask for a refund [1]. "
                "The refund is paid back to your original payment method [2]."),
        claims=(
            claim("Refunds can be requested up to 30 days after purchase.",
                  "You have 30 days from the purchase date to ask for a refund", S,
                  ev("1", "Refund requests are accepted up to 30 days after the date of purchase"),
                  cited="1"),
            claim("The refund is paid to the original payment method.",
                  "The refund is paid back to your original payment method", S,
                  ev("2", "Approved refunds are paid back to the original payment method"),
                  cited="2"),
        ),
    ),
    Case(
        id="citation-misattributed",
        tags=("citation", "misattributed"),
        question="How long do I have to ask for a refund, and how is the money paid back?",
        contexts=(REFUND_WINDOW, REFUND_METHOD),
        answer=("Refund requests are accepted for 30 days after purchase [2]. "
                "The money goes back to your original payment method [2]."),
        claims=(
            claim("Refunds can be requested up to 30 days after purchase.",
                  "Refund requests are accepted for 30 days after purchase", S,
                  ev("1", "Refund requests are accepted up to 30 days after the date of purchase"),
                  cited="2"),
            claim("The refund is paid to the original payment method.",
                  "The money goes back to your original payment method", S,
                  ev("2", "Approved refunds are paid back to the original payment method"),
                  cited="2"),
        ),
    ),
    Case(
        id="verbatim-recital",
        tags=("verbatim", "degenerate-optimum"),
        question="What are the conditions for getting a refund?",
        contexts=(" ".join(("Returns and refunds.", REFUND_WINDOW, REFUND_UNUSED, REFUND_METHOD)),),
        answer=f"{REFUND_WINDOW} {REFUND_UNUSED}",
        claims=(
            claim("Refunds can be requested up to 30 days after purchase.",
                  "Refund requests are accepted up to 30 days after the date of purchase", S,
                  ev("1", "Refund requests are accepted up to 30 days after the date of purchase")),
            claim("A returned item must be unused.",
                  "To qualify for a refund, an item must be returned unused", S,
                  ev("1", "To qualify for a refund, an item must be returned unused")),
        ),
    ),
    Case(
        id="empty-answer",
        tags=("empty", "no-claims", "degenerate-input"),
        question="How long do the cookies need to bake?",
        contexts=(COOKIES,),
        answer="",
        reference_answer="8 to 10 minutes at 350 F.",
    ),
    Case(
        id="multi-hop",
        tags=("multi-hop", "supported"),
        question="What time does the customer support office close on weekdays?",
        contexts=(OFFICE_MAP, OFFICE_HOURS),
        answer="The customer support office closes at 6 pm on weekdays.",
        claims=(
            claim("The customer support office closes at 6 pm on weekdays.",
                  "The customer support office closes at 6 pm on weekdays", S,
                  ev("1", "The customer support office is on the second floor of Building C"),
                  ev("2", "Building C closes at 6 pm on weekdays")),
        ),
    ),
    Case(
        id="trivial-greeting",
        tags=("trivial-sentence", "all-supported"),
        question="What time does the pool open at the weekend?",
        contexts=(POOL,),
        answer=("Great question! The pool opens at 8 am on Saturdays and Sundays. "
                "Lane swimming runs until 9 pm."),
        claims=(
            claim("The pool opens at 8 am on Saturdays and Sundays.",
                  "The pool opens at 8 am on Saturdays and Sundays", S,
                  ev("1", "On Saturdays and Sundays it opens at 8 am")),
            claim("Lane swimming runs until 9 pm.", "Lane swimming runs until 9 pm", S,
                  ev("1", "Lane swimming finishes at 9 pm every day")),
        ),
    ),
    Case(
        id="mixed-sentence",
        tags=("sentence-level", "not-found", "shared-sentence"),
        question="What time does the Main Street store open?",
        contexts=(STORE,),
        answer="The Main Street store opens at 9 am from Monday to Saturday and offers free parking.",
        claims=(
            claim("The Main Street store opens at 9 am from Monday to Saturday.",
                  "The Main Street store opens at 9 am from Monday to Saturday", S,
                  ev("1", "Monday to Saturday, 9 am to 7 pm")),
            claim("The Main Street store offers free parking.", "offers free parking", N),
        ),
    ),
    Case(
        id="off-topic-true",
        tags=("relevance", "off-topic", "all-supported"),
        question="How long do I have to return an item for a refund?",
        contexts=(REFUND_WINDOW, PHONE_LINE),
        answer=("You have 30 days after purchase to request a refund. "
                "Our customer service phone line is open 24/7."),
        claims=(
            claim("Refunds can be requested up to 30 days after purchase.",
                  "You have 30 days after purchase to request a refund", S,
                  ev("1", "Refund requests are accepted up to 30 days after the date of purchase")),
            claim("The customer service phone line is open 24 hours a day, 7 days a week.",
                  "Our customer service phone line is open 24/7", S,
                  ev("2", "reached by phone 24 hours a day, 7 days a week")),
        ),
    ),
    Case(
        id="hedged-claim",
        tags=("hedge", "not-found"),
        question="Where will my refund be paid?",
        contexts=(REFUND_METHOD, REFUND_WINDOW),
        answer=("Your refund is paid back to the original payment method. "
                "It may take a few business days to appear in your account."),
        claims=(
            claim("The refund is paid to the original payment method.",
                  "Your refund is paid back to the original payment method", S,
                  ev("1", "Approved refunds are paid back to the original payment method")),
            claim("The refund may take a few business days to appear in the account.",
                  "It may take a few business days to appear in your account", N),
        ),
    ),
    Case(
        id="non-english",
        tags=("non-english", "de", "contradicted", "not-found"),
        question="Wie lange dauert die Elternzeit, und wird sie bezahlt?",
        contexts=(LEAVE_DE,),
        answer=("Sie haben Anspruch auf 39 Wochen Elternzeit. In den ersten 6 Wochen erhalten Sie Ihr "
                "volles Gehalt. Den Antrag müssen Sie 8 Wochen im Voraus stellen."),
        claims=(
            claim("Beschäftigte haben Anspruch auf 39 Wochen Elternzeit.",
                  "Sie haben Anspruch auf 39 Wochen Elternzeit", S,
                  ev("1", "Anspruch auf insgesamt 39 Wochen Elternzeit")),
            claim("In den ersten 6 Wochen der Elternzeit wird das volle Gehalt gezahlt.",
                  "In den ersten 6 Wochen erhalten Sie Ihr volles Gehalt", X,
                  ev("1", "In den ersten 6 Wochen werden 90 % des Gehalts weitergezahlt")),
            claim("Der Antrag auf Elternzeit muss 8 Wochen im Voraus gestellt werden.",
                  "Den Antrag müssen Sie 8 Wochen im Voraus stellen", N),
        ),
    ),
    Case(
        id="refund-similarity",
        tags=("similarity-shortcut", "cascade", "not-found", "invented-detail"),
        question="How do refunds work?",
        contexts=RETURNS,
        answer=("You have 30 days to ask for your money back. The item has to be unused. The money goes "
                "back to the card you paid with. You will also get a 10 dollar credit. Processing takes "
                "2 business days."),
        claims=(
            claim("A refund can be requested within 30 days.", "You have 30 days to ask for your money back", S,
                  ev("1", "You can get your money back within 30 days of buying an item")),
            claim("A returned item must be unused.", "The item has to be unused", S,
                  ev("2", "Returned items have to be unused")),
            claim("The refund goes to the payment method used for the purchase.",
                  "The money goes back to the card you paid with", S,
                  ev("3", "The money is refunded to the payment method you used")),
            claim("The customer also gets a 10 dollar credit.", "You will also get a 10 dollar credit", N),
            claim("Refunds are processed in 2 business days.", "Processing takes 2 business days", N),
        ),
    ),
)


# --- building ---------------------------------------------------------------------------------

def find(haystack: str, needle: str, occurrence: int | None, where: str) -> tuple[int, int]:
    """Offsets of ``needle`` in ``haystack``; the only match, or match number ``occurrence`` (0-based).

    >>> find("a b a", "b", None, "t")
    (2, 3)
    >>> find("a b a", "a", 1, "t")
    (4, 5)
    >>> try:
    ...     find("a b a", "a", None, "t")
    ... except BuildError as e:
    ...     print(e)
    t: 'a' occurs 2 times (at 0, 4); give occurrence=0..1 to choose one
    """
    if not needle or not needle.strip():
        raise BuildError(f"{where}: empty text (an empty string occurs everywhere; it is no evidence)")
    if needle != needle.strip():
        raise BuildError(f"{where}: {needle!r} has leading or trailing whitespace")
    starts, i = [], haystack.find(needle)
    while i != -1:
        starts.append(i)
        i = haystack.find(needle, i + 1)
    if not starts:
        raise BuildError(f"{where}: {needle!r} not found in {haystack!r}")
    if occurrence is None:
        if len(starts) > 1:
            raise BuildError(f"{where}: {needle!r} occurs {len(starts)} times (at "
                             f"{', '.join(map(str, starts))}); "
                             f"give occurrence=0..{len(starts) - 1} to choose one")
        occurrence = 0
    if not 0 <= occurrence < len(starts):
        raise BuildError(f"{where}: occurrence={occurrence} but {needle!r} occurs {len(starts)} time(s)")
    return starts[occurrence], starts[occurrence] + len(needle)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def build_case(case: Case) -> dict:
    """The JSON object of one case, with every offset computed and every rule checked."""
    where = case.id
    if not _ID.match(case.id):
        raise BuildError(f"{where}: id must be lowercase-kebab")
    if not case.tags:
        raise BuildError(f"{where}: tags are empty (say what the case probes)")
    contexts = {str(k): text for k, text in enumerate(case.contexts, start=1)}
    answer = case.answer
    for text in (case.question, answer, *case.contexts, *(c.text for c in case.claims)):
        if unicodedata.normalize("NFC", text) != text:
            raise BuildError(f"{where}: text is not in Unicode NFC form (offsets would depend on it): "
                             f"{text[:60]!r}")
    for m in _MARKER.finditer(answer):
        if m.group(1) not in contexts:
            raise BuildError(f"{where}: answer cites [{m.group(1)}] but there are {len(contexts)} contexts")

    claims, seen_texts, last_start = [], set(), -1
    for n, c in enumerate(case.claims):
        cw = f"{where} claim {n} ({c.text!r})"
        if c.label not in LABELS:
            raise BuildError(f"{cw}: label {c.label!r}; expected one of {', '.join(LABELS)}")
        if _norm(c.text) in seen_texts:
            raise BuildError(f"{cw}: claim text repeated within the case "
                             "(the judge maps text back to claims)")
        seen_texts.add(_norm(c.text))
        if _MARKER.search(c.says):
            raise BuildError(f"{cw}: the answer span must not include a citation marker")
        s, e = find(answer, c.says, c.occurrence, f"{cw} answer span")
        if s < last_start:
            raise BuildError(f"{cw}: claims must be listed in answer order")
        last_start = s
        if c.label in (S, X) and not c.evidence:
            raise BuildError(f"{cw}: a {c.label!r} claim needs evidence spans")
        if c.label in (I, N) and c.evidence:
            raise BuildError(f"{cw}: a {c.label!r} claim has no span stating it; give no evidence")
        evidence = []
        for j, e_ in enumerate(c.evidence):
            if e_.ctx not in contexts:
                raise BuildError(f"{cw} evidence {j}: no context {e_.ctx!r}")
            es, ee = find(contexts[e_.ctx], e_.quote, e_.occurrence, f"{cw} evidence {j} in context {e_.ctx}")
            evidence.append({"context_id": e_.ctx, "start": es, "end": ee, "quote": e_.quote})
        if c.cited is not None:
            if c.cited not in contexts:
                raise BuildError(f"{cw}: cites context {c.cited!r}, which does not exist")
            if not re.match(rf"\s*\[{re.escape(c.cited)}\]", answer[e:]):
                raise BuildError(f"{cw}: cited={c.cited!r} but no [{c.cited}] marker "
                                 "follows the claim's span")
        claims.append({
            "text": c.text,
            "answer_span": [s, e],
            "answer_quote": c.says,
            "label": c.label,
            "evidence": evidence,
            "cited_context_id": c.cited,
        })

    abst_span = None
    if case.abstention:
        if case.abstains is None:
            raise BuildError(f"{where}: abstention is true; give the declining words (abstains=...)")
        abst_span = list(find(answer, case.abstains, None, f"{where} abstention span"))
    elif case.abstains is not None:
        raise BuildError(f"{where}: abstains given but abstention is false")

    obj = {
        "id": case.id,
        "question": case.question,
        "contexts": [{"id": k, "text": t} for k, t in contexts.items()],
        "answer": answer,
    }
    if case.reference_answer is not None:
        obj["reference_answer"] = case.reference_answer
    obj["tags"] = list(case.tags)
    obj["annotation"] = {
        "answerable": case.answerable,
        "abstention": case.abstention,
        "abstention_span": abst_span,
        "claims": claims,
    }
    return obj


def render(cases: tuple[Case, ...] = CASES) -> str:
    """The whole JSONL file as text (one object a line, ending with a newline)."""
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise BuildError(f"duplicate case id(s): {', '.join(dup)}")
    lines = [json.dumps(build_case(c), ensure_ascii=False) for c in cases]
    return "\n".join(lines) + "\n"


def validate(path: str) -> int:
    """Load ``path`` with the harness loader; return the number of cases (raises on any problem)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from harness.cases.load import load_cases

    return len(load_cases(path))


def show(cases: tuple[Case, ...] = CASES) -> None:
    """Print each answer's Punkt sentences (as TruLens splits them) with the labels of their claims."""
    try:
        import punkt
        split = punkt.sent_tokenize
    except ImportError:  # pragma: no cover - the venv has it
        from nltk.tokenize import sent_tokenize as split
    for case in cases:
        obj = build_case(case)
        ann = obj["annotation"]
        print(f"{case.id}: {' '.join(c['label'] for c in ann['claims']) or '(no claims)'}")
        pos = 0
        for sent in split(obj["answer"]) if obj["answer"] else []:
            s = obj["answer"].index(sent, pos)
            e = pos = s + len(sent)
            labels = [c["label"] for c in ann["claims"]
                      if c["answer_span"][0] < e and s < c["answer_span"][1]]
            ab = ann["abstention_span"]
            if ab and ab[0] < e and s < ab[1]:
                labels.append("abstention")
            print(f"    [{', '.join(labels) or 'trivial'}] {sent}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh build with the file; write nothing")
    ap.add_argument("--show", action="store_true", help="print sentences and claim labels; write nothing")
    ap.add_argument("--out", default=OUT, help=f"output path (default {os.path.relpath(OUT, ROOT)})")
    args = ap.parse_args(argv)
    try:
        text = render()
    except BuildError as e:
        print(f"build_canonical: {e}", file=sys.stderr)
        return 1
    if args.show:
        show()
        return 0
    if args.check:
        try:
            with open(args.out, encoding="utf-8", newline="") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current != text:
            print(f"build_canonical: {args.out} is out of date; rerun without --check", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date ({validate(args.out)} cases)")
        return 0
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    try:
        n = validate(tmp)
    except Exception:
        os.remove(tmp)
        raise
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {n} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
