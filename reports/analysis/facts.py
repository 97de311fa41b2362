"""Behaviour facts as data: per metric, the answer to every probe of :mod:`harness.reports.analysis.behaviours`.

A fact comes from this run when one of its cases shows the probe (by tags, never by case id) and the
metric scored it; otherwise from the metric's facts file beside its card
(``reports/cards/<metric>.facts.json``, written by ``harness cards`` from a reference run of the
canonical set). The decision table reads these facts and nothing parsed out of Markdown.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from harness.reports.analysis.alignment import located_units
from harness.reports.analysis.behaviours import BY_KEY, PROBES, answers, showing

CARDS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cards")
SUFFIX = ".facts.json"
FORMAT = 1
FACTS_TITLE = "Behaviour facts"


@dataclass(frozen=True)
class Fact:
    """One probe answered for one metric."""

    key: str
    """The probe's key."""
    answer: str
    """yes | no | partly | mixed | a status label."""
    value: str
    """The cell value(s) that answered it."""
    cases: tuple[str, ...]
    """The cases that showed it (in the run or in the canonical run the card came from)."""
    source: str
    """``run`` or ``card``."""


def from_run(data, cells) -> dict[str, dict[str, Fact]]:
    """metric -> probe key -> fact, from the run's own cells (probes no case of the run shows are absent)."""
    cases = [data.cases[c] for c in data.case_ids if c in data.cases]
    shown = showing(cases)
    located = located_units(data)   # the citation probe's units, read once for every metric
    out: dict[str, dict[str, Fact]] = {}
    for m in data.metrics:
        mine = {}
        for a in answers(cells, m, cases, None, shown, span=data.info[m].scale, claims=located.get(m, {})):
            if any(getattr(cells.get((c, m)), "status", "missing") != "missing" for c in a.case_ids):
                mine[a.probe.key] = Fact(a.probe.key, a.answer, a.value, a.case_ids, "run")
        out[m] = mine
    return out


def document(metric: str, facts: dict[str, Fact]) -> dict:
    """The facts file of one metric (JSON-ready, keys in probe order)."""
    return {"format": FORMAT, "metric": metric,
            "source": "a reference-judge run of the canonical set (harness cards)",
            "facts": {p.key: {"property": p.text, "tags": sorted(p.tags), "answer": facts[p.key].answer,
                              "value": facts[p.key].value, "shown_by": list(facts[p.key].cases)}
                      for p in PROBES if p.key in facts}}


def dumps(metric: str, facts: dict[str, Fact]) -> str:
    """The facts file's text (stable: sorted keys where order does not matter, one trailing newline)."""
    return json.dumps(document(metric, facts), indent=2, ensure_ascii=False) + "\n"


def from_card(metric: str, cards_dir: str = CARDS_DIR) -> dict[str, Fact]:
    """probe key -> fact from the metric's facts file ({} when there is none).

    >>> from_card("inhouse.span")["passes-unstated"].answer
    'no'
    >>> from_card("no.such.metric")
    {}
    """
    path = os.path.join(cards_dir, metric + SUFFIX)
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    return {k: Fact(k, f["answer"], f.get("value", ""), tuple(f.get("shown_by") or ()), "card")
            for k, f in (doc.get("facts") or {}).items() if k in BY_KEY}


def merged(data, cells, cards_dir: str = CARDS_DIR) -> dict[str, dict[str, Fact]]:
    """metric -> probe key -> fact: the run's own where it has one, else the card's. Read once per loaded run and
    cells (the decision table and the facts section both ask)."""
    key = (id(cells), cards_dir)
    kept = getattr(data, "_facts_merged", None)
    if kept is not None and kept[0] == key and kept[1] is cells:
        return kept[2]
    run = from_run(data, cells)
    out = {m: {**from_card(m, cards_dir), **run.get(m, {})} for m in data.metrics}
    try:
        data._facts_merged = (key, cells, out)
    except AttributeError:   # a read-only stand-in: read again next time
        pass
    return out


def said(facts: dict[str, dict[str, Fact]], metric: str, key: str) -> str | None:
    """The answer of one fact, None when neither the run nor the card has it."""
    f = facts.get(metric, {}).get(key)
    return f.answer if f else None


def sources(facts: dict[str, dict[str, Fact]]) -> str:
    """Where the facts came from, in one sentence."""
    n_run = sum(f.source == "run" for m in facts.values() for f in m.values())
    n_card = sum(f.source == "card" for m in facts.values() for f in m.values())
    if not n_card:
        return f"Every fact ({n_run}) is read from this run's cells, on the cases tagged for each behaviour."
    return (f"{n_run} fact(s) are read from this run's cells and {n_card} from the metrics' facts files (a "
            "reference run of the canonical set), where no case of this run is tagged for the behaviour.")
