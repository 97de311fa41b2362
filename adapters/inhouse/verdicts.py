"""Reading the verify step's batch reply as real models write it, and the one re-ask for missing verdicts.

A batch reply is read claim by claim (:func:`read_verdicts`): each entry names its claim by number
(an integer, or digits in a string), by the claim's own text, or by its position when it names
none; a verdict is read whatever its case or separator (``"Supported"``, ``"not found"``,
``"NOT_FOUND"``); ``evidence`` may be one object instead of a list. A claim whose entry is missing,
unreadable or contradicted by a second entry is *missing*; an entry naming a claim that was not
asked is ignored (and noted). Nothing missing is ever read as "unsupported".

:func:`verify_claims` asks for every claim in one call; if some claims' verdicts are missing (a
small model that copies the prompt's one-entry example, or stops early), it asks once more, for just
those claims, numbered afresh, with the verdict list's length fixed in the schema
(:func:`exact_count_schema`); the cell records which claims were re-asked (its reason, its detail,
and one more verify call in its calls). If verdicts are still missing after that, :class:`ReplyError`
makes the cell unscored with both replies' shortfall in the reason. At most one re-ask per cell.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from harness.adapters.inhouse.ask import VERDICTS, VERDICTS_SCHEMA, ReplyError, _ask, _json, verify_messages

MAX_REASKS = 1
"""Re-asks per verify step: one, for just the missing claims."""


@dataclass(frozen=True)
class Reading:
    """What one batch reply said, claim by claim (claims numbered from 1)."""

    verdicts: dict
    """Claim number -> verdict entry (``verdict`` normalised, ``evidence`` a list of dicts)."""
    missing: tuple[int, ...]
    """Claim numbers with no readable verdict."""
    notes: tuple[str, ...] = ()
    """Entries ignored, and why."""


@dataclass(frozen=True)
class Verified:
    """Every claim's verdict, in claim order, and whether a re-ask was needed."""

    verdicts: list
    reasked: tuple[int, ...] = ()
    """Claim numbers (1-based) whose verdicts came from the re-ask."""
    note: str = ""
    """One line for the cell's reason; "" when the first reply was complete."""


def _verdict(value) -> str | None:
    """A verdict as a model writes it, in the metric's words.

    >>> [_verdict(v) for v in ("supported", "Supported", "NOT FOUND", "not-found", "Contradicted.", "maybe", 1)]
    ['supported', 'supported', 'not_found', 'not_found', 'contradicted', None, None]
    """
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s\-]+", "_", value.strip().strip(".").lower())
    return key if key in VERDICTS else None


def _claim_number(value, claims: list[str]):
    """The claim an entry names: a number (int or digits), or a claim's own text; None if it names none."""
    if isinstance(value, bool):
        return "bad"
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        m = re.fullmatch(r"(?:claim\s*)?#?\s*(\d+)\.?", text, re.I)
        if m:
            return int(m.group(1))
        folded = " ".join(text.split()).lower()
        hits = [i for i, c in enumerate(claims, start=1) if " ".join(c.split()).lower() == folded]
        return hits[0] if len(hits) == 1 else "bad"
    return None if value is None else "bad"


def read_verdicts(content: str, claims: list[str]) -> Reading:
    """Read a batch reply for ``claims`` (see the module docstring). A reply with no list of
    verdicts at all (not JSON, or no ``verdicts`` key) has every claim missing, with a note."""
    n = len(claims)
    try:
        data = _json(content)
    except ReplyError as e:
        return Reading({}, tuple(range(1, n + 1)), (str(e),))
    items = data.get("verdicts") if isinstance(data, dict) else None
    if isinstance(data, list):
        items = data
    if not isinstance(items, list):
        return Reading({}, tuple(range(1, n + 1)), ("the reply lacks a list under 'verdicts'",))
    got: dict[int, dict] = {}
    clash: set[int] = set()
    notes = []
    for pos, v in enumerate(items, start=1):
        if not isinstance(v, dict):
            notes.append(f"entry {pos} is not an object")
            continue
        idx = _claim_number(v.get("claim"), claims)
        idx = pos if idx is None else idx
        if idx == "bad" or not 1 <= idx <= n:
            notes.append(f"entry {pos} names claim {v.get('claim')!r}, not one of 1..{n}")
            continue
        verdict, ev = _verdict(v.get("verdict")), v.get("evidence") or []
        ev = [ev] if isinstance(ev, dict) else ev
        if verdict is None or not isinstance(ev, list) or not all(isinstance(e, dict) for e in ev):
            notes.append(f"entry {pos} (claim {idx}) is unreadable: {str(v)[:80]}")
            clash.add(idx)
            continue
        entry = {**v, "claim": idx, "verdict": verdict, "evidence": ev}
        if idx in got and (got[idx]["verdict"], got[idx]["evidence"]) != (verdict, ev):
            notes.append(f"claim {idx} has two different verdicts")
            clash.add(idx)
        got.setdefault(idx, entry)
    for idx in clash:
        got.pop(idx, None)
    missing = tuple(i for i in range(1, n + 1) if i not in got)
    return Reading(got, missing, tuple(notes))


def exact_count_schema(k: int) -> dict:
    """The verify schema with its verdict list fixed at ``k`` entries (``minItems`` = ``maxItems`` = k),
    for the re-ask: a server that honours json_schema (llama.cpp, vLLM, OpenAI) then cannot stop at
    the prompt's one-entry example again. The first batch call keeps the plain schema.

    >>> exact_count_schema(2)["schema"]["properties"]["verdicts"]["minItems"]
    2
    >>> "minItems" in VERDICTS_SCHEMA["schema"]["properties"]["verdicts"]
    False
    """
    schema = copy.deepcopy(VERDICTS_SCHEMA)
    schema["schema"]["properties"]["verdicts"].update(minItems=k, maxItems=k)
    return schema


def _shortfall(reading: Reading, n: int) -> str:
    """One phrase: what a reply lacked."""
    s = f"judge returned {n - len(reading.missing)} verdicts for {n} claims (missing: {list(reading.missing)})"
    return s + (f"; {reading.notes[0]}" if reading.notes else "")


async def verify_claims(endpoint, case, claims: list[str]) -> Verified:
    """Every claim's verdict through the cell's endpoint: one batch call, plus at most one re-ask
    for the claims whose verdicts it lacked. ReplyError if some are still missing."""
    first = read_verdicts(await _ask(endpoint, verify_messages(case, claims), VERDICTS_SCHEMA), claims)
    if not first.missing:
        return Verified([first.verdicts[i] for i in range(1, len(claims) + 1)])
    asked = list(first.missing)
    texts = [claims[i - 1] for i in asked]
    again = read_verdicts(await _ask(endpoint, verify_messages(case, texts), exact_count_schema(len(texts))), texts)
    found = {asked[j - 1]: {**v, "claim": asked[j - 1], "_reasked": True} for j, v in again.verdicts.items()}
    still = [asked[j - 1] for j in again.missing]
    why = _shortfall(first, len(claims))
    if still:
        raise ReplyError(f"{why}; re-asked once for claims {asked}: still missing {still}")
    merged = {**first.verdicts, **found}
    note = f"re-asked the judge once for claims {asked}: its batch reply had no readable verdict for them ({why})"
    return Verified([merged[i] for i in range(1, len(claims) + 1)], tuple(asked), note)
