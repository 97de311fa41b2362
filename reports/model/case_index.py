"""Every case of a run as plain data for the report's case browser: its scores (value, how the cell reads,
status), spread, tags, texts and claim-by-claim alignment, plus the metrics' names and whether each has a
card. Everything is computed here, including which cases the page carries and how (:func:`carry`,
:class:`Compact`); the page's script only sorts, filters and lays it out.
"""
from __future__ import annotations

import os

from harness.reports.analysis.alignment import align, units_by_case
from harness.reports.analysis.divergence import spread, spread_metrics
from harness.reports.model import sections as S

CARDS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cards")
"""Where the generated metric cards live (``reports/cards/<metric>.md``)."""


def card_text(metric: str) -> str | None:
    """The metric's generated card (Markdown), or None when it has none."""
    path = os.path.join(CARDS_DIR, f"{metric}.md")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def build(rep) -> dict:
    """``{"metrics": [...], "cases": [...]}``, JSON-ready (see the module docstring)."""
    data = rep.data
    divergent = {dv.case_id for dv in rep.divergences}
    by_case = units_by_case(data)
    compared = spread_metrics(data)
    metrics = [{"name": m, "short": rep.shorts[m], "display": rep.names[m], "card": m in rep.cards}
               for m in data.metrics]
    cases = []
    detailed = with_detail(data.case_ids, [dv.case_id for dv in rep.divergences])
    carried = carry(data.case_ids, rep.glance, rep.divergences, detailed)
    more = Compact()
    for pos, cid in enumerate(data.case_ids):
        if cid not in carried:
            continue
        cells = {m: rep.cells[(cid, m)] for m in data.metrics}
        s = spread({m: c.score for m, c in cells.items() if m in compared and c.status == "scored"})
        case = data.cases.get(cid)
        if cid not in detailed:   # scores only: the page keeps the texts of DETAIL_CASES cases
            more.add(cid, pos, list(case.tags) if case else [], round(s[0], 6) if s else None, cid in divergent,
                     [_score(c) for c in cells.values()])   # column by column (the page's script expands them)
            continue
        rows = align(case, by_case.get(cid, []))
        cases.append({
            "id": cid, "pos": pos, "tags": list(case.tags) if case else [],
            "spread": round(s[0], 6) if s else None, "divergent": cid in divergent,
            "scores": [_score(c) for c in cells.values()],
            "statuses": sorted({c.status for c in cells.values()}),
            "question": case.question if case else None, "answer": case.answer if case else None,
            "contexts": [{"id": c.id, "text": c.text} for c in case.contexts] if case else [],
            "rows": [{"kind": S.ROW_KIND.get(r.kind, r.kind), "text": r.text, "label": r.label,
                      "marks": [[{"text": S.mark_text(mk), "verdict": mk.unit.verdict} for mk in r.marks.get(m, [])]
                                for m in data.metrics]} for r in rows],
        })
    out = {"metrics": metrics, "cases": cases, "detail_cases": DETAIL_CASES,
           "open_divergent": len(rep.divergences) <= OPEN_DIVERGENT}
    if more.ids:   # past DETAIL_CASES cases only: a smaller run's page is as it was
        out["more"] = more.data()
        out["left"] = len(data.case_ids) - len(carried)
    out[PAGE] = {"statuses": sorted({s for c in cases for s in c["statuses"]} | {k["status"] for k in more.kinds}),
                 "tags": sorted({t for c in cases for t in c["tags"]} | {t for ts in more.tag_lists() for t in ts}),
                 "carried": len(carried), "cases": len(data.case_ids)}
    return out


PAGE = "page"
"""The key of what the page's controls and notes read (every status and tag of the carried cases, how many cases
it carries of how many); the renderer lays these out and leaves them out of the browser's data."""


class Compact:
    """The cases the page carries with their scores only, column by column: ids, run positions, tags (an index
    into the distinct tag lists), spreads, divergent or not (0/1), and each case's cells as indexes into the
    distinct cells (a cell as :func:`_score` gives it). About 80 bytes a case of 10 metrics, where the same case as
    an object of :func:`build` is about 1.1 kB; the page's script (``case_browser_more.js``) turns them back into
    those objects.

    >>> one, nil = ({"v": v, "label": f"{v:.2f}", "status": "scored", "flags": [], "reason": ""} for v in (1.0, 0.0))
    >>> c = Compact(); c.add("a", 0, ["t"], 0.5, True, [one, dict(one)]); c.add("b", 1, [], None, False, [nil])
    >>> d = c.data(); d["cells"], [k["v"] for k in d["kinds"]], d["tags"], d["tag_lists"], d["divergent"]
    ([[0, 0], [1]], [1.0, 0.0], [0, 1], [['t'], []], [1, 0])
    """

    def __init__(self):
        self.ids, self.pos, self.tags, self.spread, self.divergent, self.cells = [], [], [], [], [], []
        self._tags: dict[tuple, int] = {}
        self._kinds: dict[tuple, int] = {}
        self.kinds: list[dict] = []
        """The distinct cells, in the order first seen."""

    def add(self, cid: str, pos: int, tags: list[str], spread, divergent: bool, scores: list[dict]) -> None:
        self.ids.append(cid)
        self.pos.append(pos)
        self.tags.append(self._tags.setdefault(tuple(tags), len(self._tags)))
        self.spread.append(spread)
        self.divergent.append(int(divergent))
        row = []
        for sc in scores:
            key = (sc["v"], sc["label"], sc["status"], tuple(sc["flags"]), sc["reason"])
            k = self._kinds.get(key)
            if k is None:
                k = self._kinds[key] = len(self.kinds)
                self.kinds.append(sc)
            row.append(k)
        self.cells.append(row)

    def tag_lists(self) -> list[list[str]]:
        return [list(t) for t in self._tags]

    def data(self) -> dict:
        return {"ids": self.ids, "pos": self.pos, "tags": self.tags, "tag_lists": self.tag_lists(),
                "spread": self.spread, "divergent": self.divergent, "cells": self.cells, "kinds": self.kinds}


def _score(c) -> dict:
    return {"v": c.score, "label": c.label, "status": c.status, "flags": list(c.flags), "reason": c.reason or ""}


OPEN_DIVERGENT = 60
"""Up to this many divergent cases, each shows its claim-by-claim view open in the case browser; past it they
open on a click (a page of 50 open views would be tens of thousands of pixels tall)."""
DETAIL_CASES = 2000
"""Cases whose texts and claim-by-claim view the report's page carries (the divergent ones first, largest spread
first, then the others in run order); every case keeps its scores. Past it, a case's view says where to read it
(``harness export``): the page's size stays bounded whatever the run."""


CARRIED_CASES = 20_000
"""Cases the page carries at most (with their scores; :data:`DETAIL_CASES` of them with their texts too): past
it the case browser counts the rest and names ``cases.csv`` and ``harness export``, so the page's size stays
bounded whatever the run. Which ones: :func:`carry`."""
LINKED_FIRST = 200
"""The first cases in run order, which the score matrix links (``harness.reports.render.html.MATRIX_ROWS``)."""
LINKED_PER_REASON = 110
"""The first cases of each divergence reason, which the divergence section shows or links (five in full and a
hundred links at most, ``harness.reports.render.html_divergence``)."""


def carry(case_ids: list[str], glance: list, divergences: list, detailed: set[str], cap: int | None = None) -> set[str]:
    """The cases the page carries (see :data:`CARRIED_CASES`): every case up to the cap; past it, the ones with
    their texts, then the ones other sections link (the first in run order, the first of each divergence
    reason: ``glance``, the divergences grouped by reason), then the other divergent ones in the report's order,
    then the rest in run order.

    >>> from types import SimpleNamespace as N
    >>> ids, dv = [f"c{i}" for i in range(300)], N(case_id="c299", reason="r")
    >>> got = carry(ids, [N(reason="r", divergences=[dv])], [dv], {"c250"}, cap=202)
    >>> len(got), "c250" in got, "c0" in got and "c199" in got, "c299" in got, "c200" in got
    (202, True, True, True, False)
    """
    cap = CARRIED_CASES if cap is None else cap
    if len(case_ids) <= cap:
        return set(case_ids)
    order = [c for c in case_ids if c in detailed] + case_ids[:LINKED_FIRST]
    for g in glance:
        order += [dv.case_id for dv in g.divergences[:LINKED_PER_REASON]]
    order += [dv.case_id for dv in divergences]
    out: set[str] = set()
    for cid in (*order, *case_ids):
        if len(out) >= cap:
            break
        out.add(cid)
    return out


def with_detail(case_ids: list[str], divergent: list[str], cap: int | None = None) -> set[str]:
    """The cases whose view the page carries (see :data:`DETAIL_CASES`).

    >>> sorted(with_detail(["a", "b", "c", "d"], ["d"], cap=2))
    ['a', 'd']
    """
    cap = DETAIL_CASES if cap is None else cap
    if len(case_ids) <= cap:
        return set(case_ids)
    out = list(dict.fromkeys(divergent))[:cap]
    seen = set(out)
    for cid in case_ids:
        if len(out) >= cap:
            break
        if cid not in seen:
            out.append(cid)
            seen.add(cid)
    return set(out)
