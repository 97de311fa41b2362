"""Every case of a run as plain data for the report's case browser: its scores (value, how the cell reads,
status), spread, tags, texts and claim-by-claim alignment, plus the metrics' names and whether each has a
card. Everything is computed here; the page's script only sorts, filters and lays it out.
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
    for pos, cid in enumerate(data.case_ids):
        cells = {m: rep.cells[(cid, m)] for m in data.metrics}
        s = spread({m: c.score for m, c in cells.items() if m in compared and c.status == "scored"})
        case = data.cases.get(cid)
        if cid not in detailed:   # scores only: the page keeps the texts of DETAIL_CASES cases
            cases.append({"id": cid, "pos": pos, "tags": list(case.tags) if case else [],
                          "spread": round(s[0], 6) if s else None, "divergent": cid in divergent,
                          "scores": [_score(c) for c in cells.values()],
                          "statuses": sorted({c.status for c in cells.values()}), "question": None, "answer": None,
                          "contexts": [], "rows": [], "detail": False})
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
    return {"metrics": metrics, "cases": cases, "detail_cases": DETAIL_CASES,
            "open_divergent": len(rep.divergences) <= OPEN_DIVERGENT}


def _score(c) -> dict:
    return {"v": c.score, "label": c.label, "status": c.status, "flags": list(c.flags), "reason": c.reason or ""}


OPEN_DIVERGENT = 60
"""Up to this many divergent cases, each shows its claim-by-claim view open in the case browser; past it they
open on a click (a page of 50 open views would be tens of thousands of pixels tall)."""
DETAIL_CASES = 2000
"""Cases whose texts and claim-by-claim view the report's page carries (the divergent ones first, largest spread
first, then the others in run order); every case keeps its scores. Past it, a case's view says where to read it
(``harness export``): the page's size stays bounded whatever the run."""


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
