"""Facts a metric card states, each read from a run or from the metric's class (the card generator passes
the installed class, :mod:`harness.reports.cards.generate`), never typed by hand: the metric's row of the
reference label table, the verdicts its units got per annotation label, judge calls per answer from the
ledger, and the shims and notes its class declares."""
from __future__ import annotations

import os
from collections import Counter, defaultdict

from harness.metric.paths import card_text_path
from harness.reports.analysis.alignment import align, units_from_frame


def reference_row(cls) -> tuple[dict, str] | None:
    """The reference judge's reading of each label for this metric, and what that answer is (None:
    it reads no claim label)."""
    reading = cls.label_reading
    return None if reading is None else (reading.answers, reading.meaning)


def observed_verdicts(data, metric: str) -> dict[str, list[tuple[str, str, str]]]:
    """label -> [(raw verdict, normalised verdict, first case)] the metric's units got on claims with
    that label, over the run (units aligned to claims by span; whole-answer units left out)."""

    u = data.units[data.units["metric"] == metric]
    by_case = defaultdict(list)
    for unit, cid in zip(units_from_frame(u), u["case_id"]):
        by_case[cid].append(unit)
    seen: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
    for cid in data.case_ids:
        case = data.cases.get(cid)
        if case is None or cid not in by_case:
            continue
        for row in align(case, by_case[cid]):
            if row.kind not in ("claim", "abstention", "other"):
                continue
            label = row.label or "no claim (trivial or other text)"
            for mk in row.marks.get(metric, []):
                seen[label].setdefault((mk.unit.raw_verdict, mk.unit.verdict), cid)
    return {lab: [(raw, v, cid) for (raw, v), cid in pairs.items()] for lab, pairs in seen.items()}


def calls_per_answer(data, metric: str) -> list[tuple[int, list[str]]]:
    """[(judge calls, case ids)] from the ledger, most common first (ties: fewer calls first)."""
    df = data.cells[data.cells["metric"] == metric]
    groups: dict[int, list[str]] = defaultdict(list)
    order = {c: i for i, c in enumerate(data.case_ids)}
    for cid, n in sorted(zip(df["case_id"], df["calls"]), key=lambda t: order.get(t[0], 10**6)):
        groups[int(n)].append(cid)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def tokens_per_answer(data, metric: str) -> tuple[float, float] | None:
    """Mean (prompt, completion) tokens per answer that reached the judge."""
    df = data.cells[(data.cells["metric"] == metric) & (data.cells["calls"] > 0)]
    if not len(df):
        return None
    return float(df["prompt_tokens"].mean()), float(df["completion_tokens"].mean())


def adapter_notes(cls) -> str | None:
    """The adapter's own card notes (``card_notes`` on its class)."""
    notes = cls.card_notes
    return notes.strip() if isinstance(notes, str) and notes.strip() else None


def documented_shims(cls) -> list[tuple[str, str]]:
    """(module, text) for every shim the metric's class declares, in its order."""
    return [(shim.where, " ".join(shim.text.split())) for shim in cls.shims]


def card_text(cls) -> dict[str, str]:
    """Hand-written sections from the metric's ``card_text/<metric>.md`` ("## Title" -> text)."""
    path = card_text_path(cls)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def label_counts(case) -> str:
    """The case's claim labels in answer order, as letters (S I N C), or a dash for none.

    >>> from harness.core.records import Annotation, Case, Claim
    >>> c = Case("x", "q", (), "a b", Annotation((Claim("a", (0, 1), "supported"), Claim("b", (2, 3), "not_found")), True, False))
    >>> label_counts(c)
    'S N'
    """
    letters = {"supported": "S", "inference": "I", "not_found": "N", "contradicted": "C"}
    claims = case.judged_claims()
    return " ".join(letters[c.label] for c in claims) or "\u2013"


def status_counts(cells: dict, metric: str, case_ids) -> Counter:
    return Counter(cells[(c, metric)].status for c in case_ids)
